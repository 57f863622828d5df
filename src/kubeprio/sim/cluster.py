"""A whole simulated cluster in one process, wired through the ``Client`` protocol.

Composition root for virtual time: a ``MemoryStore`` behind the ``ApiService`` (with the
default admission chain), the scheduler built from the scheduler configuration, the
ReplicaSet, Deployment, Job, disruption and garbage-collection controllers, one
simulated kubelet per Node, and the ``Recorder`` — all driven by the ``Engine``. Every
component gets its own ``random.Random`` derived from the seed, so adding randomness to
one component never shifts another's choices.
"""

from __future__ import annotations

import random
from typing import Any, Final

from kubeprio.admission.defaults import default_chain
from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.batch import Job
from kubeprio.api.core import Event, Node, Pod
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.deployment import DeploymentController
from kubeprio.controllers.disruption import DisruptionController
from kubeprio.controllers.garbagecollector import GarbageCollector
from kubeprio.controllers.job import JobController
from kubeprio.controllers.replicaset import ReplicaSetController
from kubeprio.kubelet.kubelet import KubeletConfig
from kubeprio.kubelet.router import PodRouter
from kubeprio.scheduler.profile import SchedulerConfig
from kubeprio.scheduler.setup import new_scheduler
from kubeprio.sim.drive import Due, Informers, KubeletFleet
from kubeprio.sim.engine import Engine, SimClock
from kubeprio.sim.recorder import Recorder
from kubeprio.store.memory import MemoryStore

NODE_INDEX: Final = "spec.nodeName"
"""Pod informer index: the pods bound to a node (a starting kubelet lists them)."""


def derived_rng(seed: int, component: str) -> random.Random:
    """A generator for one component, independent of every other's."""
    return random.Random(f"{seed}:{component}")


class SimCluster:
    """Store, API, scheduler, controllers, kubelets and recorder, driven by one engine."""

    def __init__(
        self,
        *,
        seed: int = 0,
        scheduler_config: SchedulerConfig | None = None,
        kubelet_config: KubeletConfig | None = None,
    ) -> None:
        self.seed = seed
        self.clock = SimClock()
        self.store = MemoryStore()
        self.api = ApiService(
            self.store,
            clock=self.clock,
            rng=derived_rng(seed, "apiserver"),
            auto_create_namespaces=True,
        )
        self.api.admission = default_chain(self.api.listers)
        api, clock = self.api, self.clock
        self.pods: Informer[Pod] = Informer(api, Pod)
        self.nodes: Informer[Node] = Informer(api, Node)
        self.replicasets: Informer[ReplicaSet] = Informer(api, ReplicaSet)
        self.deployments: Informer[Deployment] = Informer(api, Deployment)
        self.jobs: Informer[Job] = Informer(api, Job)
        self.pdbs: Informer[PodDisruptionBudget] = Informer(api, PodDisruptionBudget)
        self.events: Informer[Event] = Informer(api, Event)
        self.recorder = Recorder(clock)
        router = PodRouter()
        self.pods.add_index(
            NODE_INDEX, lambda p: [p.spec.node_name] if p.spec and p.spec.node_name else []
        )
        self.pods.add_handler(router)
        self.pods.add_handler(self.recorder)
        self.events.add_handler(self.recorder)
        self.nodes.add_handler(self.recorder)
        self.fleet = KubeletFleet(
            api,
            clock=clock,
            rng=derived_rng(seed, "kubelet"),
            router=router,
            config=kubelet_config or KubeletConfig(register_node=False),
            bound_pods=lambda name: self.pods.by_index(NODE_INDEX, name),
        )
        self.nodes.add_handler(self.fleet)
        self.scheduler = new_scheduler(
            api,
            clock=clock,
            rng=derived_rng(seed, "scheduler"),
            config=scheduler_config,
            retry_unschedulable_on_timer=False,
        )

        def rng(name: str) -> random.Random:
            return derived_rng(seed, name)

        controllers: list[Any] = [
            ReplicaSetController(
                api,
                clock=clock,
                rng=rng("replicaset"),
                pods=self.pods,
                replicasets=self.replicasets,
            ),
            DeploymentController(
                api,
                clock=clock,
                rng=rng("deployment"),
                deployments=self.deployments,
                replicasets=self.replicasets,
                pods=self.pods,
            ),
            JobController(api, clock=clock, rng=rng("job"), jobs=self.jobs, pods=self.pods),
            DisruptionController(
                api,
                clock=clock,
                rng=rng("disruption"),
                pods=self.pods,
                pdbs=self.pdbs,
                replicasets=self.replicasets,
                deployments=self.deployments,
            ),
            GarbageCollector(
                api,
                clock=clock,
                rng=rng("gc"),
                owners=[self.deployments, self.replicasets, self.jobs],
                dependents=[self.replicasets, self.pods],
            ),
        ]
        self.informers = Informers(
            [
                self.nodes,
                self.pdbs,
                self.deployments,
                self.replicasets,
                self.jobs,
                self.pods,
                self.events,
            ]
        )
        self.engine = Engine(
            clock,
            [self.informers, self.scheduler, *(Due(c, clock) for c in controllers), self.fleet],
            seed=seed,
        )

    def start(self) -> None:
        """List and watch everything; components start working at the first settle."""
        self.informers.start()
        self.scheduler.start()
