"""A slow, literal re-implementation of upstream's preemption decision (semantics §4).

Written from ``/work/shared/reference/kubernetes-semantics.md`` §4.2-§4.7 and §4.9, step
by step, to check ``scheduler.preemption.Evaluator`` (which may index, cache and cut
corners for speed) on random clusters. Nothing here is shared with the evaluator except
the filters themselves: "does the pod fit on this node with these pods" is answered by
the profile's real Filter plugins with nominated pods (§5) on a NodeInfo built from
scratch for every question, after a fresh PreFilter. No clones, no PreFilter
extensions, no indexes: that restricts it to clusters without inter-pod affinity and
topology spreading, whose PreFilter state does not depend on other pods.

Randomness is consumed exactly where upstream consumes it (and where the evaluator
models it): one ``randrange(N)`` for the candidate offset (§4.3, only when there are
potential nodes), and one draw among fully tied candidates standing for Go's map order in
``pickOneNodeForPreemption`` (only when two or more candidates tie on every criterion).
"""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime

from kubeprio.api.core import Node, Pod
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.selectors import label_selector_as_selector
from kubeprio.scheduler.framework import Code, CycleState, PodInfo, Status
from kubeprio.scheduler.scheduler import Scheduler
from kubeprio.scheduler.snapshot import NodeInfo

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


@dataclasses.dataclass(frozen=True)
class Decision:
    """What preemption decided for one pod.

    ``node``: None when PostFilter returns no result (not eligible, error), "" when no
    candidate was found (the nomination is cleared), else the chosen node.
    """

    node: str | None
    victims: tuple[str, ...] = ()
    pdb_violations: int = 0
    message: str = ""


def _nanos(text: str | None, now: int) -> int:
    """§4.5 step 5: ``status.startTime`` in ns; a pod without one counts as now."""
    if not text:
        return now
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return round(parsed.timestamp() * 1_000_000_000)


def _importance(pod: PodInfo, now: int) -> tuple[int, int]:
    """``MoreImportantPod``: higher priority first, then the earlier start first."""
    start = pod.pod.status.start_time if pod.pod.status else None
    return (-pod.priority, _nanos(start, now))


def _terminating_by_preemption(pod: Pod) -> bool:
    """§4.2: deleting, with DisruptionTarget=True, reason PreemptionByScheduler."""
    if not pod.metadata.deletion_timestamp:
        return False
    for condition in (pod.status.conditions if pod.status else None) or ():
        if condition.type == "DisruptionTarget":
            return condition.status == "True" and condition.reason == "PreemptionByScheduler"
    return False


def _histogram_message(num_nodes: int, statuses: dict[str, Status], absent_reason: str) -> str:
    """§4.9: ``0/N nodes are available: <sorted "count reason">.``"""
    counts: dict[str, int] = {}
    for status in statuses.values():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_nodes - len(statuses)
    if absent:
        counts[absent_reason] = counts.get(absent_reason, 0) + absent
    parts = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"0/{num_nodes} nodes are available: {', '.join(parts)}."


class ReferencePreemption:
    """Upstream ``Evaluator.Preempt`` (decision only), against a scheduler's current view."""

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        min_candidate_nodes_percentage: int = 10,
        min_candidate_nodes_absolute: int = 100,
    ) -> None:
        self.scheduler = scheduler
        self.percentage = min_candidate_nodes_percentage
        self.absolute = min_candidate_nodes_absolute

    # --- the filters, from scratch --------------------------------------------------------------

    def status(self, pod: PodInfo, node: Node, pods: list[PodInfo]) -> Status | None:
        """Filters with nominated pods (§5) for ``pod`` on ``node`` hosting exactly ``pods``."""
        framework = self.scheduler.framework
        info = NodeInfo(node, pods)
        state = CycleState()
        _result, status, _ = framework.run_pre_filter_plugins(
            state, pod, self.scheduler.node_infos()
        )
        assert status is None, status
        return framework.run_filter_plugins_with_nominated_pods(state, pod, info)

    # --- §4.6 ---------------------------------------------------------------------------------------

    @staticmethod
    def split_by_pdb(
        pods: list[PodInfo], pdbs: list[PodDisruptionBudget]
    ) -> tuple[list[PodInfo], list[PodInfo]]:
        """(violating, non-violating), each in the given order."""
        budget = {
            i: (pdb.status.disruptions_allowed or 0) if pdb.status else 0
            for i, pdb in enumerate(pdbs)
        }
        violating: list[PodInfo] = []
        non_violating: list[PodInfo] = []
        for pod in pods:
            labels = pod.pod.metadata.labels or {}
            violated = False
            for i, pdb in enumerate(pdbs):
                if not labels or pdb.metadata.namespace != pod.pod.metadata.namespace:
                    continue
                selector = label_selector_as_selector(pdb.spec.selector if pdb.spec else None)
                if selector.is_empty() or not selector.matches(labels):
                    continue
                disrupted = (pdb.status.disrupted_pods if pdb.status else None) or {}
                if pod.pod.metadata.name in disrupted:
                    continue
                budget[i] -= 1
                if budget[i] < 0:
                    violated = True
            (violating if violated else non_violating).append(pod)
        return violating, non_violating

    # --- §4.5 ---------------------------------------------------------------------------------------

    def select_victims(
        self,
        pod: PodInfo,
        node: Node,
        pods: list[PodInfo],
        pdbs: list[PodDisruptionBudget],
        now: int,
    ) -> tuple[list[PodInfo], int, Status | None]:
        """``SelectVictimsOnNode``: (victims most important first, PDB violations, failure)."""
        potential = [p for p in pods if p.priority < pod.priority]
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
        kept = [p for p in pods if not p.priority < pod.priority]
        status = self.status(pod, node, kept)
        if status is not None:
            return [], 0, status
        potential = sorted(potential, key=lambda p: _importance(p, now))
        violating, non_violating = self.split_by_pdb(potential, pdbs)
        victims: list[PodInfo] = []
        violations = 0
        for group, counts in ((violating, True), (non_violating, False)):
            for candidate in group:
                if self.status(pod, node, [*kept, candidate]) is None:
                    kept.append(candidate)
                else:
                    victims.append(candidate)
                    violations += counts
        if violating and non_violating:
            victims.sort(key=lambda p: _importance(p, now))
        return victims, violations, None

    # --- §4.2-§4.4, §4.7 ------------------------------------------------------------------------------

    def preempt(self, pod: PodInfo, rng: random.Random) -> tuple[Decision, dict[str, Status]]:
        """The decision for ``pod``, and every node's filter status (the cycle's diagnosis)."""
        scheduler = self.scheduler
        latest = scheduler.current_pod(pod.pod)
        assert latest is not None
        pod = PodInfo.of(latest)
        now = round(scheduler.clock.now() * 1_000_000_000)
        world = [(info.node, list(info.pods)) for info in scheduler.node_infos()]
        nodes: list[tuple[Node, list[PodInfo]]] = [(n, p) for n, p in world if n is not None]
        statuses: dict[str, Status] = {}
        for node, pods in nodes:
            status = self.status(pod, node, pods)
            assert status is not None, "preemption runs only when no node fits"
            statuses[node.metadata.name or ""] = status
        # §4.2 eligibility.
        if latest.spec is not None and latest.spec.preemption_policy == "Never":
            return Decision(
                None, message="preemption: not eligible due to preemptionPolicy=Never."
            ), statuses
        nominated = (latest.status.nominated_node_name if latest.status else None) or ""
        if nominated:
            nominated_status = statuses.get(nominated)
            unresolvable = (
                nominated_status is None
                or nominated_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            )
            if not unresolvable:
                for node, pods in nodes:
                    if node.metadata.name != nominated:
                        continue
                    for other in pods:
                        if other.priority < pod.priority and _terminating_by_preemption(other.pod):
                            return Decision(
                                None,
                                message="preemption: not eligible due to a terminating pod "
                                "on the nominated node.",
                            ), statuses
        # §4.3 candidate discovery: exactly Unschedulable nodes only.
        potential = [
            (node, pods)
            for node, pods in nodes
            if statuses[node.metadata.name or ""].code is Code.UNSCHEDULABLE
        ]
        if not potential:
            return Decision(
                "", message="preemption: " + _histogram_message(len(nodes), {}, NOT_HELPFUL)
            ), statuses
        pdbs = scheduler.pdb_list()
        count = len(potential)
        wanted = max(count * self.percentage // 100, self.absolute)
        wanted = min(wanted, count)
        offset = rng.randrange(count)
        # §4.4 dry run, from the offset with wrap-around.
        non_violating: list[tuple[str, list[PodInfo], int]] = []
        violating: list[tuple[str, list[PodInfo], int]] = []
        failures: dict[str, Status] = {}
        for i in range(count):
            node, pods = potential[(offset + i) % count]
            name = node.metadata.name or ""
            victims, violations, status = self.select_victims(pod, node, pods, pdbs, now)
            if status is None and not victims:
                status = Status(Code.ERROR, (f'expected at least one victim pod on node "{name}"',))
            if status is not None:
                failures[name] = status
                continue
            target = non_violating if violations == 0 else violating
            if len(target) < wanted:
                target.append((name, victims, violations))
            if non_violating and len(non_violating) + len(violating) >= wanted:
                break
        candidates = non_violating + violating
        if not candidates:
            errors = [s for s in failures.values() if s.code is Code.ERROR]
            if errors:
                return Decision(None, message="preemption: " + errors[0].message), statuses
            return Decision(
                "",
                message="preemption: " + _histogram_message(len(nodes), failures, NOT_HELPFUL),
            ), statuses
        # §4.7 choosing the node.
        if len(candidates) > 1:
            for key in (
                lambda c: -c[2],
                lambda c: -c[1][0].priority,
                lambda c: -sum(p.priority + 2**31 for p in c[1]),
                lambda c: -len(c[1]),
                lambda c: min(
                    _nanos(p.pod.status.start_time if p.pod.status else None, now)
                    for p in c[1]
                    if p.priority == c[1][0].priority
                ),
            ):
                best = max(key(c) for c in candidates)
                candidates = [c for c in candidates if key(c) == best]
                if len(candidates) == 1:
                    break
            else:
                # Tied on every criterion: upstream's Go map order is random; one uniform
                # draw among the ties in candidate order (docs/design.md, "Decisions").
                candidates = [candidates[rng.randrange(len(candidates))]]
        name, victims, violations = candidates[0]
        return Decision(name, tuple(v.pod.metadata.name or "" for v in victims), violations), (
            statuses
        )
