"""A real scheduler over the in-process API, for preemption and scheduling-cycle tests.

Upstream's preemption tests build a framework over a fake clientset and a hand-made
snapshot (``default_preemption_test.go``); here the same cases run against the real
``ApiService`` and the scheduler ``setup.new_scheduler`` builds, so victims are really
patched and deleted and events really recorded. ``Harness`` exposes the Evaluator steps
upstream's tests call directly (``DryRunPreemption``, ``SelectCandidate``, ``Preempt``)
and a small driver (``settle``/``advance``) that also runs kubelets when a test needs
victims to take time to exit.

Priorities and resource sizes are upstream's test constants.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.core import Event, Node, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.policy import (
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
    PodDisruptionBudgetStatus,
)
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.clock import rfc3339
from kubeprio.kubelet.kubelet import Kubelet, KubeletConfig
from kubeprio.scheduler.framework import CycleState, NodeToStatus, PodInfo, Status
from kubeprio.scheduler.plugins.defaultpreemption import DefaultPreemption
from kubeprio.scheduler.preemption import Candidate, Evaluator
from kubeprio.scheduler.profile import SchedulerConfig
from kubeprio.scheduler.scheduler import Scheduler
from kubeprio.scheduler.setup import new_scheduler
from kubeprio.store.memory import MemoryStore
from tests.builders import label_selector
from tests.conftest import EPOCH, ManualClock

# default_preemption_test.go: negPriority, lowPriority, midPriority, highPriority, veryHighPriority
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}


def node_obj(name: str, capacity: dict[str, str] | None = None, **labels: str) -> Node:
    """``st.MakeNode().Name(name).Capacity(capacity)``: 32 pods unless given."""
    from tests.builders import node

    resources = {"pods": "32", **(VERY_LARGE if capacity is None else capacity)}
    builder = node(name).resources(resources)
    if labels:
        builder = builder.labels(**labels)
    return builder.build()


def preemption_config(percentage: int, absolute: int) -> SchedulerConfig:
    """A default profile whose ``DefaultPreemptionArgs`` are (percentage, absolute)."""
    from kubeprio.scheduler.setup import load_config

    return load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "pluginConfig": [
                        {
                            "name": "DefaultPreemption",
                            "args": {
                                "minCandidateNodesPercentage": percentage,
                                "minCandidateNodesAbsolute": absolute,
                            },
                        }
                    ],
                }
            ],
        }
    )


class Harness:
    """ApiService + the default scheduler, driven by hand on a ManualClock."""

    default_fast_path = False
    """Whether harnesses use the vectorised fast path unless told (see ``both_paths``)."""

    def __init__(
        self,
        *,
        seed: int = 0,
        fast_path: bool | None = None,
        config: SchedulerConfig | None = None,
    ) -> None:
        if fast_path is None:
            fast_path = self.default_fast_path
        self.clock = ManualClock()
        self.api = ApiService(
            MemoryStore(), clock=self.clock, rng=random.Random(seed), admission=AdmissionChain()
        )
        self.scheduler: Scheduler = new_scheduler(
            self.api,
            clock=self.clock,
            rng=random.Random(seed + 1),
            config=config,
            fast_path=fast_path,
            retry_unschedulable_on_timer=False,
        )
        self.kubelets: dict[str, Kubelet] = {}
        self._kubelet_informers: list[Informer[Pod]] = []
        self.started = False

    # --- building the cluster ---------------------------------------------------------------

    def add_nodes(self, *nodes: Node) -> None:
        for obj in nodes:
            self.api.create(obj)
        self.pump()

    def namespace(self, name: str) -> None:
        """Create namespace ``name`` unless it exists."""
        from kubeprio.api.core import Namespace

        if self.pod_namespace_exists(name):
            return
        self.api.create(Namespace(metadata=ObjectMeta(name=name)))

    def pod_namespace_exists(self, name: str) -> bool:
        from kubeprio.api.core import Namespace

        try:
            self.api.get(Namespace, name)
        except Exception:
            return False
        return True

    def add_pod(self, obj: Pod, *, start: float | None = None) -> Pod:
        """Create ``obj``; a bound pod gets phase Running and ``startTime`` EPOCH+``start``."""
        self.namespace(obj.metadata.namespace or "default")
        created = self.api.create(obj)
        if start is not None or (created.spec and created.spec.node_name):
            status = {"phase": "Running"}
            if start is not None:
                status["startTime"] = rfc3339(EPOCH + start)
            created = self.api.patch(
                Pod,
                created.metadata.name or "",
                {"status": status},
                namespace=created.metadata.namespace,
                subresource="status",
            )
        self.pump()
        return created

    def add_pods(self, *pods: Pod) -> None:
        for obj in pods:
            self.add_pod(obj)

    def add_pdb(
        self,
        name: str,
        labels: dict[str, str] | None,
        *,
        allowed: int,
        disrupted: Iterable[str] = (),
        namespace: str = "default",
    ) -> PodDisruptionBudget:
        """A PDB selecting ``labels`` (None: no selector) whose status allows ``allowed``."""
        self.namespace(namespace)
        pdb = PodDisruptionBudget(
            metadata=ObjectMeta(name=name, namespace=namespace),
            spec=PodDisruptionBudgetSpec(
                selector=label_selector(labels) if labels is not None else None,
                min_available=1,
            ),
        )
        created = self.api.create(pdb)
        status = PodDisruptionBudgetStatus(
            disruptions_allowed=allowed,
            disrupted_pods={pod: rfc3339(self.clock.now()) for pod in disrupted} or None,
            current_healthy=0,
            desired_healthy=0,
            expected_pods=0,
        )
        updated = self.api.update_status(dataclasses.replace(created, status=status))
        self.pump()
        return updated

    def kubelet(self, name: str) -> Kubelet:
        """Run a kubelet for an existing node (so pods run and terminate gracefully)."""
        kubelet = Kubelet(
            self.api, name, clock=self.clock, rng=random.Random(7), config=KubeletConfig()
        )
        kubelet.start()
        informer = kubelet.informer()
        informer.start()
        self._kubelet_informers.append(informer)
        self.kubelets[name] = kubelet
        return kubelet

    def force_delete(self, name: str, namespace: str = "default") -> None:
        """Delete a pod with grace period 0 (upstream test utils' ``DeletePod``)."""
        from kubeprio.client.protocol import DeleteRequest

        self.api.delete(Pod, name, namespace, options=DeleteRequest(grace_period_seconds=0))
        self.pump()

    # --- driving ------------------------------------------------------------------------------

    def start(self) -> Harness:
        self.scheduler.start()
        self.started = True
        self.pump()
        return self

    def pump(self) -> int:
        if not self.started:
            return 0
        handled = self.scheduler.pump()
        return handled + sum(informer.pump() for informer in self._kubelet_informers)

    def _run_kubelets(self) -> bool:
        now = self.clock.now()
        ran = False
        for kubelet in self.kubelets.values():
            wakeup = kubelet.next_wakeup()
            if wakeup is not None and wakeup <= now:
                kubelet.run_once()
                ran = True
        return ran

    def schedule_one(self) -> bool:
        """Deliver events, then one scheduling attempt (False if nothing was ready)."""
        self.pump()
        return self.scheduler.run_once()

    def settle(self, max_rounds: int = 500) -> None:
        """Everything due now, until quiet: events, kubelets, scheduling attempts."""
        for _ in range(max_rounds):
            pumped = self.pump()
            ran = self._run_kubelets()
            scheduled = self.scheduler.run_once()
            if not (pumped or ran or scheduled):
                return
        raise AssertionError("did not settle")

    def next_wakeup(self) -> float | None:
        wakeups = [w for k in self.kubelets.values() if (w := k.next_wakeup()) is not None]
        if (w := self.scheduler.next_wakeup()) is not None:
            wakeups.append(w)
        return min(wakeups) if wakeups else None

    def advance(self, seconds: float) -> None:
        """Walk the clock ``seconds`` forward, settling at every wakeup on the way."""
        target = self.clock.now() + seconds
        self.settle()
        while (wakeup := self.next_wakeup()) is not None and wakeup <= target:
            self.clock.time = max(self.clock.time, wakeup)
            self.settle()
        self.clock.time = target
        self.settle()

    # --- looking ----------------------------------------------------------------------------------

    def pod(self, name: str, namespace: str = "default") -> Pod | None:
        try:
            return self.api.get(Pod, name, namespace)
        except Exception:
            return None

    def node_of(self, name: str) -> str | None:
        current = self.pod(name)
        return current.spec.node_name if current and current.spec else None

    def nominated(self, name: str) -> str | None:
        current = self.pod(name)
        return current.status.nominated_node_name if current and current.status else None

    def events(self, *, reason: str | None = None, name: str | None = None) -> list[Event]:
        # The scheduler defers its events until it is idle; a reader sees them written.
        self.scheduler.recorder.flush()
        found = [
            e
            for e in self.api.list(Event).items
            if (reason is None or e.reason == reason)
            and (name is None or (e.involved_object is not None and e.involved_object.name == name))
        ]
        # The scheduler's events carry eventTime (events.k8s.io), the others firstTimestamp.
        return sorted(
            found,
            key=lambda e: (e.event_time or e.first_timestamp or "", e.metadata.name or ""),
        )

    def messages(self, name: str, reason: str = "FailedScheduling") -> list[str]:
        return [e.message or "" for e in self.events(reason=reason, name=name)]

    # --- the Evaluator, as upstream's unit tests call it -----------------------------------------

    @property
    def evaluator(self) -> Evaluator:
        for plugin in self.scheduler.framework.post_filter_plugins:
            if isinstance(plugin, DefaultPreemption):
                return plugin.evaluator
        raise AssertionError("DefaultPreemption is not enabled")

    def pod_info(self, obj: Pod) -> PodInfo:
        """The informer's copy of ``obj`` (created through the API first if needed)."""
        current = self.scheduler.current_pod(obj)
        if current is None:
            self.add_pod(obj)
            current = self.scheduler.current_pod(obj)
        assert current is not None
        return PodInfo.of(current)

    def pre_filter(self, preemptor: Pod) -> tuple[CycleState, PodInfo]:
        """``RunPreFilterPlugins`` for ``preemptor`` (upstream tests' first step)."""
        info = self.pod_info(preemptor)
        state = CycleState()
        _result, status, _narrowing = self.scheduler.framework.run_pre_filter_plugins(
            state, info, self.scheduler.node_infos()
        )
        assert status is None, status
        return state, info

    def sorted_nodes(self) -> list[Any]:
        return sorted(self.scheduler.node_infos(), key=lambda n: n.name)

    def dry_run(
        self,
        preemptor: Pod,
        *,
        offset: int = 0,
        wanted: int | None = None,
        pdbs: Sequence[PodDisruptionBudget] | None = None,
    ) -> tuple[list[Candidate], NodeToStatus]:
        """``DryRunPreemption`` over every node sorted by name, as upstream's test does."""
        state, info = self.pre_filter(preemptor)
        nodes = self.sorted_nodes()
        if wanted is None:
            from kubeprio.scheduler.preemption import number_of_candidates

            wanted = number_of_candidates(len(nodes), self.evaluator.args)
        return self.evaluator.dry_run_preemption(
            state,
            info,
            nodes,
            list(pdbs) if pdbs is not None else self.scheduler.pdb_list(),
            offset,
            wanted,
        )

    def preempt(self, preemptor: Pod, statuses: dict[str, Status] | None = None) -> Any:
        """``DefaultPreemption.PostFilter`` with every node Unschedulable unless given."""
        state, info = self.pre_filter(preemptor)
        if statuses is None:
            from kubeprio.scheduler.framework import unschedulable

            statuses = {n.name: unschedulable() for n in self.scheduler.node_infos()}
        plugin = next(
            p
            for p in self.scheduler.framework.post_filter_plugins
            if isinstance(p, DefaultPreemption)
        )
        return plugin.post_filter(state, info, NodeToStatus(dict(statuses)))


@pytest.fixture(params=[False, True], ids=["framework", "fastpath"])
def both_paths(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Run a test once on the framework path and once with the vectorised fast path on
    (the default profile's production setting)."""
    monkeypatch.setattr(Harness, "default_fast_path", request.param)
    return bool(request.param)


def victims_by_node(candidates: Sequence[Candidate]) -> dict[str, tuple[list[str], int]]:
    """node -> (victim names sorted, PDB violations), as upstream's test compares them."""
    return {
        c.node_name: (
            sorted(v.pod.metadata.name or "" for v in c.victims.pods),
            c.victims.num_pdb_violations,
        )
        for c in candidates
    }
