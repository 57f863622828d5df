"""Replay a ``ScenarioSpec`` end to end: ApiService + SimClock + ``new_scheduler``.

The driver is deterministic: pods arrive at the step the scenario says, terminating
pods finish (are deleted with grace 0, as a kubelet would) when the scenario's finalize
pattern says so or when the scheduler is idle, and virtual time jumps to the queue's
next wakeup when nothing else can happen. Two clusters built from the same scenario
therefore see the same sequence of API calls unless their schedulers decide
differently.

Observations, all through public seams:

* ``steps``: per scheduling attempt, the rotation index afterwards, the Events written
  (reason, object, message) and the Pod changes (node, nomination, deleting);
* ``api_trace``: every Pod and Event watch event as canonical JSON (the whole API
  write history, byte for byte);
* ``preemptions``: per PostFilter call, the preemptor, the decision (node, victims,
  message) and whether the preemptor fits on the node once the victims are gone —
  recorded by wrapping the DefaultPreemption plugin and the evaluator's ``Executor``
  (a documented replaceable seam), both delegating to the real ones;
* with ``reference=True``, the slow reference decision (``preemption_reference``)
  computed from the same state and the same rng state just before each PostFilter.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api import errors
from kubeprio.api.core import Event, Node, NodeSpec, Pod
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import DeleteRequest, PatchType
from kubeprio.clock import rfc3339
from kubeprio.scheduler.framework import (
    CycleState,
    NodeToStatus,
    PodInfo,
    PostFilterResult,
    Status,
)
from kubeprio.scheduler.plugins.defaultpreemption import DefaultPreemption
from kubeprio.scheduler.preemption import Candidate, Executor
from kubeprio.scheduler.scheduler import Scheduler
from kubeprio.scheduler.setup import new_scheduler
from kubeprio.sim.engine import SimClock
from kubeprio.store.memory import MemoryStore
from tests.unit.scheduler import cluster_strategies as cs
from tests.unit.scheduler.preemption_reference import Decision, ReferencePreemption

STEP_SECONDS = 0.5


@dataclasses.dataclass
class PreemptionRecord:
    """One PostFilter call and what came of it."""

    preemptor: str
    priority: int
    never: bool
    decision: Decision
    victim_priorities: tuple[int, ...] = ()
    fits_after_eviction: bool | None = None
    """Whether the preemptor's requests fit on the chosen node without the victims."""
    expected: Decision | None = None
    """The reference decision (``reference=True`` only)."""
    diagnosis_mismatch: tuple[tuple[str, Any, Any], ...] = ()
    """Nodes whose cycle status differs from the reference's fresh evaluation."""


def requests_fit(pod: PodInfo, node_allocatable: dict[str, int], pods: list[PodInfo]) -> bool:
    """The pod's requests fit next to ``pods`` (upstream ``fitsRequest`` arithmetic):
    pod count, and every resource the pod requests a positive amount of."""
    if len(pods) + 1 > node_allocatable.get("pods", 0):
        return False
    for name, amount in pod.requests.items():
        if amount <= 0:
            continue
        used = sum(p.requests.get(name, 0) for p in pods)
        if amount > node_allocatable.get(name, 0) - used:
            return False
    return True


class _RecordingExecutor:
    """Delegates to the real executor; notes the chosen candidate first."""

    def __init__(self, inner: Executor, cluster: SimCluster) -> None:
        self.inner = inner
        self.cluster = cluster
        self.last: Candidate | None = None
        self.fits: bool | None = None

    def prepare_candidate(self, candidate: Candidate, preemptor: PodInfo) -> Status | None:
        self.last = candidate
        node = self.cluster.scheduler.node_info(candidate.node_name)
        assert node is not None
        gone = {victim.uid for victim in candidate.victims.pods}
        remaining = [p for p in node.pods if p.uid not in gone]
        self.fits = requests_fit(preemptor, dict(node.allocatable), remaining)
        return self.inner.prepare_candidate(candidate, preemptor)


class _ObservedPreemption:
    """The DefaultPreemption plugin, observed (and checked against the reference)."""

    def __init__(self, inner: DefaultPreemption, cluster: SimCluster, reference: bool) -> None:
        self.name = inner.name
        self.inner = inner
        self.cluster = cluster
        self.executor = _RecordingExecutor(inner.evaluator.executor, cluster)
        inner.evaluator.executor = self.executor
        self.reference = ReferencePreemption(cluster.scheduler) if reference else None

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        expected: Decision | None = None
        mismatch: list[tuple[str, Any, Any]] = []
        if self.reference is not None:
            rng = random.Random()
            rng.setstate(self.inner.evaluator.rng.getstate())
            expected, statuses = self.reference.preempt(pod, rng)
            for name, status in statuses.items():
                got = filtered.get(name)
                if (got.code, got.reasons) != (status.code, status.reasons):
                    mismatch.append((name, (got.code, got.reasons), (status.code, status.reasons)))
        self.executor.last = None
        self.executor.fits = None
        result, status = self.inner.post_filter(state, pod, filtered)
        candidate = self.executor.last
        node = result.nominated_node_name if result is not None else None
        victims = candidate.victims.pods if candidate is not None and node else ()
        decision = Decision(
            node,
            tuple(v.pod.metadata.name or "" for v in victims),
            candidate.victims.num_pdb_violations if candidate is not None and node else 0,
            status.message if status is not None else "",
        )
        spec = pod.pod.spec
        self.cluster.preemptions.append(
            PreemptionRecord(
                preemptor=pod.pod.metadata.name or "",
                priority=pod.priority,
                never=bool(spec and spec.preemption_policy == "Never"),
                decision=decision,
                victim_priorities=tuple(v.priority for v in victims),
                fits_after_eviction=self.executor.fits if node else None,
                expected=expected,
                diagnosis_mismatch=tuple(mismatch),
            )
        )
        return result, status


@dataclasses.dataclass(frozen=True)
class Step:
    """One scheduling attempt as the API saw it."""

    start_index: int
    events: tuple[tuple[str, str, str], ...]
    pods: tuple[tuple[str, str, str, str, bool], ...]


class SimCluster:
    """A scenario loaded into an in-process control plane with one scheduler."""

    def __init__(
        self, scenario: cs.ScenarioSpec, *, fast_path: bool = True, reference: bool = False
    ) -> None:
        self.scenario = scenario
        self.clock = SimClock()
        self.api = ApiService(
            MemoryStore(),
            clock=self.clock,
            rng=random.Random(scenario.seed),
            admission=AdmissionChain(),
        )
        self.steps: list[Step] = []
        self.api_trace: list[str] = []
        self.preemptions: list[PreemptionRecord] = []
        self._arrived: set[str] = set()
        for node in scenario.nodes:
            self.api.create(cs.build_node(node))
        for pod in scenario.bound:
            self._create_bound(pod)
        for pdb in scenario.pdbs:
            self._create_pdb(pdb)
        self._arrive(0)
        self.scheduler: Scheduler = new_scheduler(
            self.api,
            clock=self.clock,
            rng=random.Random(scenario.seed + 1),
            fast_path=fast_path,
            retry_unschedulable_on_timer=False,
        )
        plugins = self.scheduler.framework.post_filter_plugins
        for i, plugin in enumerate(plugins):
            if isinstance(plugin, DefaultPreemption):
                plugins[i] = _ObservedPreemption(plugin, self, reference)  # type: ignore[call-overload]
        self._pod_watch = self.api.watch(Pod)
        self._event_watch = self.api.watch(Event)
        self.scheduler.start()
        self._observe()

    # --- setup -------------------------------------------------------------------------------

    def _status_patch(self, kind: type[Any], name: str, status: dict[str, Any]) -> None:
        self.api.patch(
            kind,
            name,
            {"status": status},
            namespace="default",
            patch_type=PatchType.MERGE_PATCH,
            subresource="status",
        )

    def _create_bound(self, spec: cs.PodSpecGen) -> None:
        self.api.create(cs.build_pod(spec))
        status: dict[str, Any] = {"phase": "Running"}
        if spec.start is not None:
            status["startTime"] = rfc3339(self.clock.now() + spec.start)
        if spec.by_preemption:
            status["conditions"] = [
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "PreemptionByScheduler",
                    "message": "default-scheduler: preempting to accommodate a higher priority pod",
                }
            ]
        self._status_patch(Pod, spec.name, status)
        if spec.terminating:
            self.api.delete(Pod, spec.name, "default")

    def _create_pdb(self, spec: cs.PdbSpecGen) -> None:
        self.api.create(cs.build_pdb(spec))
        status: dict[str, Any] = {"disruptionsAllowed": spec.allowed}
        if spec.disrupted:
            status["disruptedPods"] = {name: rfc3339(self.clock.now()) for name in spec.disrupted}
        self._status_patch(PodDisruptionBudget, spec.name, status)

    def _arrive(self, step: int) -> None:
        for spec in self.scenario.pending:
            if spec.name in self._arrived or spec.arrival > step:
                continue
            self._arrived.add(spec.name)
            self.api.create(cs.build_pod(spec))
            if spec.nominated:
                self._status_patch(Pod, spec.name, {"nominatedNodeName": spec.nominated})

    def _pods_on(self, node: str) -> list[Pod]:
        return [
            p
            for p in self._pods()
            if p.spec is not None
            and p.spec.node_name == node
            and not p.metadata.deletion_timestamp
            and (p.status.phase if p.status else None) not in ("Succeeded", "Failed")
        ]

    def _change(self, step: int) -> None:
        """Apply the scenario's cluster changes due at ``step`` (skipped if moot)."""
        for change in self.scenario.changes:
            if change.step != step:
                continue
            try:
                self._apply(change)
            except errors.NotFoundError:
                continue

    def _apply(self, change: cs.ChangeSpec) -> None:
        kind, target = change.kind, change.target
        assert change.node is not None
        if kind == "add_node":
            self.api.create(cs.build_node(change.node))
        elif kind == "delete_node":
            self.api.delete(Node, target)
        elif kind in ("cordon", "retaint", "resize"):
            current = self.api.get(Node, target)
            wanted = cs.build_node(dataclasses.replace(change.node, name=target))
            spec = current.spec or NodeSpec()
            if kind == "cordon":
                spec = dataclasses.replace(spec, unschedulable=not spec.unschedulable or None)
                self.api.update(dataclasses.replace(current, spec=spec))
            elif kind == "retaint":
                spec = dataclasses.replace(spec, taints=wanted.spec.taints if wanted.spec else None)
                self.api.update(dataclasses.replace(current, spec=spec))
            else:
                self.api.update_status(dataclasses.replace(current, status=wanted.status))
        else:
            pods = self._pods_on(target)
            if not pods:
                return
            name = pods[0].metadata.name or ""
            if kind == "complete":
                self._status_patch(Pod, name, {"phase": "Succeeded"})
            else:
                self.api.delete(Pod, name, "default")

    # --- driving ------------------------------------------------------------------------------

    def _pods(self) -> list[Pod]:
        listed = self.api.list(Pod, "default")
        return sorted(listed.items, key=lambda p: p.metadata.name or "")

    def _terminating(self) -> list[Pod]:
        return sorted(
            (p for p in self._pods() if p.metadata.deletion_timestamp),
            key=lambda p: p.metadata.name or "",
        )

    def _finish_one_terminating(self) -> bool:
        """A kubelet finishing the first terminating pod (by name): delete it for good."""
        terminating = self._terminating()
        if not terminating:
            return False
        name = terminating[0].metadata.name or ""
        self.api.delete(Pod, name, "default", options=DeleteRequest(grace_period_seconds=0))
        return True

    def run(self, max_steps: int = 60) -> SimCluster:
        """Drive the cluster until it settles or ``max_steps`` attempts/idle rounds pass."""
        pattern = self.scenario.finalize or (False,)
        last_arrival = max(
            [p.arrival for p in self.scenario.pending] + [c.step for c in self.scenario.changes],
            default=0,
        )
        for step in range(1, max_steps + 1):
            self.clock.time += STEP_SECONDS
            self._arrive(step)
            self._change(step)
            if pattern[step % len(pattern)]:
                self._finish_one_terminating()
            self.scheduler.pump()
            if self.scheduler.run_once():
                self._record_step()
                continue
            if step < last_arrival or self._finish_one_terminating():
                continue
            wakeup = self.scheduler.next_wakeup()
            if wakeup is None:
                break
            self.clock.time = max(self.clock.time, wakeup)
        self._observe()
        return self

    # --- observing ------------------------------------------------------------------------------

    def _observe(self) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str, str, bool]]]:
        events: list[tuple[str, str, str]] = []
        pods: list[tuple[str, str, str, str, bool]] = []
        for change in self._event_watch.poll():
            event = change.object
            self.api_trace.append(json.dumps([change.type, to_dict(event)], sort_keys=True))
            involved = event.involved_object.name if event.involved_object else ""
            events.append((event.reason or "", involved or "", event.message or ""))
        for change in self._pod_watch.poll():
            pod = change.object
            self.api_trace.append(json.dumps([change.type, to_dict(pod)], sort_keys=True))
            pods.append(
                (
                    str(change.type),
                    pod.metadata.name or "",
                    (pod.spec.node_name if pod.spec else None) or "",
                    (pod.status.nominated_node_name if pod.status else None) or "",
                    bool(pod.metadata.deletion_timestamp),
                )
            )
        return events, pods

    def _record_step(self) -> None:
        events, pods = self._observe()
        self.steps.append(Step(self.scheduler.next_start_node_index, tuple(events), tuple(pods)))

    def decisions(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """(pod, node or failure message, victims) per attempt, from the Events written."""
        out: list[tuple[str, str, tuple[str, ...]]] = []
        for step in self.steps:
            victims = tuple(
                sorted(name for reason, name, _ in step.events if reason == "Preempted")
            )
            for reason, name, message in step.events:
                if reason in ("Scheduled", "FailedScheduling"):
                    out.append((name, message, victims))
        return out
