"""A whole simulated cluster in one process, wired through the ``Client`` protocol.

Composition root for virtual time: the components of ``sim.controlplane.ControlPlane``
(API service, scheduler, controllers, kubelets) over a ``MemoryStore`` on a ``SimClock``,
plus the ``Recorder`` — all driven by the ``Engine``.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubeprio.admission import plugins
from kubeprio.admission.resourcequota import LimitedResource
from kubeprio.api.core import Event
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.client.informer import Informer
from kubeprio.controllers.base import object_key
from kubeprio.kubelet.kubelet import KubeletConfig
from kubeprio.scheduler.profile import SchedulerConfig
from kubeprio.sim.controlplane import NODE_INDEX, ControlPlane, derived_rng
from kubeprio.sim.drive import Scheduled
from kubeprio.sim.duegroup import DueGroup
from kubeprio.sim.engine import Driven, Engine, SimClock
from kubeprio.sim.recorder import Recorder
from kubeprio.store.memory import MemoryStore

__all__ = ["NODE_INDEX", "SimCluster", "derived_rng"]


SIM_WATCH_HISTORY = 10_000
"""Watch events a simulation's store keeps for replay (informers never fall behind)."""


class SimCluster(ControlPlane):
    """Store, API, scheduler, controllers, kubelets and recorder, driven by one engine."""

    def __init__(
        self,
        *,
        seed: int = 0,
        scheduler_config: SchedulerConfig | None = None,
        kubelet_config: KubeletConfig | None = None,
        limited_resources: Sequence[LimitedResource] = (),
        admission_plugins: plugins.EnabledPlugins = plugins.DEFAULT,
    ) -> None:
        clock = SimClock()
        super().__init__(
            # Every watcher in a simulation is an in-process informer pumped at each step,
            # so a short replay window suffices; a long one only holds old object versions.
            MemoryStore(history_limit=SIM_WATCH_HISTORY),
            clock=clock,
            seed=seed,
            scheduler_config=scheduler_config,
            kubelet_config=kubelet_config,
            limited_resources=limited_resources,
            admission_plugins=admission_plugins,
            retry_unschedulable_on_timer=False,
            auto_create_namespaces=True,
            pod_gc_of_unseen_nodes=False,
        )
        self.clock: SimClock = clock
        self.recorder = Recorder(clock)
        # Only the report reads Events: the cluster itself (and ``serve``) never watches them.
        self.events: Informer[Event] = Informer(self.api, Event)
        self.informers.add(self.events)
        self.pods.add_handler(self.recorder)
        self.events.add_handler(self.recorder)
        self.nodes.add_handler(self.recorder)
        self.attach_fleet()
        self.controller_group = DueGroup(self.controllers, clock)
        self.engine = Engine(clock, self.components, seed=seed)

    @property
    def timed_components(self) -> list[Driven | Scheduled]:
        """The engine's components, the controller group as its members (what a stall
        detector asks for their next wake-ups)."""
        return [
            member
            for component in self.engine.components
            for member in (
                self.controller_group.members if component is self.controller_group else [component]
            )
        ]

    def _controller_components(self) -> list[Driven]:
        """The controllers as one ``DueGroup`` (it runs them as their ``Due`` wrappers
        would, asking only those that may be due)."""
        return [self.controller_group]

    def observe_quota(self, quota: ResourceQuota) -> None:
        """Give a just-submitted ResourceQuota its status now, before the next submission.

        Upstream's admission ignores a quota until its controller has written
        ``status.hard`` (a second or so after it is created); a simulation's inputs stand
        for a cluster whose quotas were observed, so the objects after a quota in the
        input are charged to it even when submitted at the same instant. The informers
        deliver what was submitted so far (their handlers only queue work; nothing runs
        before the instant settles), then the controller syncs this quota.
        """
        self.informers.pump()
        self.quota_controller.reconcile(object_key(quota))
