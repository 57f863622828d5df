"""The preemption Evaluator: upstream's DefaultPreemption algorithm, step by step.

Mirrors ``pkg/scheduler/framework/preemption/preemption.go`` (``Preempt``,
``findCandidates``, ``DryRunPreemption``, ``SelectCandidate``,
``pickOneNodeForPreemption``, ``prepareCandidate``) and the DefaultPreemption policy
pieces of ``plugins/defaultpreemption/default_preemption.go`` (``SelectVictimsOnNode``,
``PodEligibleToPreemptOthers``, ``filterPodsWithPDBViolation``, candidate counts).
Semantics §4 is the specification; each function names its upstream twin.

Where upstream is random (the candidate offset; map order in the final tie-break) the
evaluator uses the injected ``random.Random``. Where upstream sorts unstably, this code
sorts stably. Victims are removed through the ``Client``: a ``DisruptionTarget``
condition first, then a graceful delete, then a ``Preempted`` event.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Final, Protocol

from kubeprio.api.core import PREEMPT_NEVER, Pod
from kubeprio.api.model import INT64_MIN, evolve
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.selectors import Selector, SelectorError, label_selector_as_selector
from kubeprio.clock import Clock, parse_rfc3339
from kubeprio.scheduler.framework import (
    Code,
    CycleState,
    Handle,
    NodeToStatus,
    PodInfo,
    PostFilterResult,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from kubeprio.scheduler.metrics import SchedulerMetrics
from kubeprio.scheduler.rowstatus import error_statuses, reason_counts
from kubeprio.scheduler.snapshot import NodeInfo

NO_VICTIMS: Final = "No preemption victims found for incoming pod"
NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
NEVER_POLICY: Final = "not eligible due to preemptionPolicy=Never."
TERMINATING_ON_NOMINATED: Final = "not eligible due to a terminating pod on the nominated node."
NO_CANDIDATE: Final = "no candidate node for preemption"
DISRUPTION_TARGET: Final = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"
INT32_SHIFT: Final = 2**31


@dataclasses.dataclass(frozen=True, slots=True)
class PreemptionArgs:
    """``DefaultPreemptionArgs`` (kubescheduler.config.k8s.io/v1), with upstream defaults."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclasses.dataclass(frozen=True, slots=True)
class Victims:
    """The pods to evict on one node, most important first, and how many violate PDBs."""

    pods: tuple[PodInfo, ...]
    num_pdb_violations: int


@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    """A node where preemption would let the pod fit."""

    node_name: str
    victims: Victims


@dataclasses.dataclass(frozen=True, slots=True)
class DryRunFailure:
    """No candidate node: the dry run's errors (in evaluation order), else how many of the
    ``evaluated`` nodes failed with each reason."""

    errors: tuple[str, ...]
    counts: dict[str, int]
    evaluated: int


class IndexedPreemption(Protocol):
    """A faster way to the same decision for the pods it ``applies`` to (``fastpreemption``)."""

    def applies(self, pod: PodInfo, pdbs: Sequence[PodDisruptionBudget]) -> bool:
        """Whether ``find_best`` gives the general path's answer for ``pod``."""
        ...

    def find_best(
        self,
        pod: PodInfo,
        filtered: NodeToStatus,
        *,
        rng: random.Random,
        args: PreemptionArgs,
        now_nanos: int,
    ) -> Candidate | DryRunFailure:
        """``findCandidates`` + ``DryRunPreemption`` + ``SelectCandidate``, with the same
        use of ``rng``."""
        ...


class Executor(Protocol):
    """Carries out a chosen preemption (upstream ``Executor``): replaceable for tests."""

    def prepare_candidate(self, candidate: Candidate, preemptor: PodInfo) -> Status | None:
        """Evict the victims and clear lower-priority nominations; None on success."""
        ...


def pod_start_nanos(pod: Pod, now_nanos: int) -> int:
    """``util.GetPodStartTime`` in integer nanoseconds; a pod without one counts as now."""
    start = pod.status.start_time if pod.status else None
    if not start:
        return now_nanos
    return round(parse_rfc3339(start) * 1_000_000_000)


def importance_key(pod: PodInfo, now_nanos: int) -> tuple[int, int]:
    """Sort key for ``util.MoreImportantPod``: higher priority, then earlier start, first."""
    return (-pod.priority, pod_start_nanos(pod.pod, now_nanos))


def is_terminating_by_preemption(pod: Pod) -> bool:
    """Upstream ``podTerminatingByPreemption``: deleting, with DisruptionTarget=True/PreemptionByScheduler."""
    if not pod.metadata.deletion_timestamp:
        return False
    for condition in (pod.status.conditions if pod.status else None) or ():
        if condition.type == DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == PREEMPTION_BY_SCHEDULER
    return False


def pods_with_pdb_violation(
    pods: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Upstream ``filterPodsWithPDBViolation``: (violating, non-violating), order kept."""
    allowed = [(pdb.status.disruptions_allowed or 0) if pdb.status else 0 for pdb in pdbs]
    parsed = [pdb_selector(pdb) for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in pods:
        pod = info.pod
        labels = pod.metadata.labels or {}
        violated = False
        if labels:
            for i, pdb in enumerate(pdbs):
                if pdb.metadata.namespace != pod.metadata.namespace:
                    continue
                selector = parsed[i]
                if selector is None or selector.is_empty() or not selector.matches(labels):
                    continue
                disrupted = pdb.status.disrupted_pods if pdb.status else None
                if disrupted and (pod.metadata.name or "") in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating


def pdb_selector(pdb: PodDisruptionBudget) -> Selector | None:
    """The PDB's selector, or None when it does not parse (upstream skips such a PDB)."""
    try:
        return label_selector_as_selector(pdb.spec.selector if pdb.spec else None)
    except SelectorError:
        return None


def number_of_candidates(num_nodes: int, args: PreemptionArgs) -> int:
    """Upstream ``calculateNumCandidates``."""
    n = num_nodes * args.min_candidate_nodes_percentage // 100
    n = max(n, args.min_candidate_nodes_absolute)
    return min(n, num_nodes)


class Evaluator:
    """Runs preemption for one profile."""

    def __init__(
        self,
        handle: Handle,
        *,
        executor: Executor,
        pdbs: Callable[[], Sequence[PodDisruptionBudget]],
        current_pod: Callable[[Pod], Pod | None],
        clock: Clock,
        rng: random.Random,
        args: PreemptionArgs | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self.handle = handle
        self.metrics = metrics
        self.executor = executor
        self._pdbs = pdbs
        self._current_pod = current_pod
        self.clock = clock
        self.rng = rng
        self.args = args or PreemptionArgs()
        self.indexed: IndexedPreemption | None = None
        """Set by ``setup`` when the fast path is on: used for the pods it applies to."""

    def _now_nanos(self) -> int:
        return round(self.clock.now() * 1_000_000_000)

    # --- Preempt ------------------------------------------------------------------------------

    def preempt(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Upstream ``Evaluator.Preempt``; the status message is not yet prefixed."""
        latest = self._current_pod(pod.pod)
        if latest is None:
            # The generated pod lister's NotFound names the singular resource.
            return None, error(f'pod "{pod.pod.metadata.name}" not found')
        if latest is not pod.pod:
            pod = evolve(pod, pod=latest)
        nominated = (latest.status.nominated_node_name if latest.status else None) or ""
        eligible, message = self.pod_eligible_to_preempt_others(
            pod, filtered.get(nominated) if nominated else None
        )
        if not eligible:
            return None, unschedulable(message)
        all_nodes = self.handle.node_infos()
        indexed = self.indexed
        if indexed is not None:
            pdbs = self._pdbs()
            if indexed.applies(pod, pdbs):
                found = indexed.find_best(
                    pod, filtered, rng=self.rng, args=self.args, now_nanos=self._now_nanos()
                )
                if isinstance(found, DryRunFailure):
                    if found.errors:
                        return None, error(aggregate_message(found.errors))
                    counts = dict(found.counts)
                    absent = len(all_nodes) - found.evaluated
                    if absent > 0:
                        counts[NOT_HELPFUL] = counts.get(NOT_HELPFUL, 0) + absent
                    message = format_fit_error(len(all_nodes), counts)
                    return PostFilterResult(""), unschedulable(message)
                return self._prepare(found, pod)
        candidates, statuses = self.find_candidates(state, all_nodes, pod, filtered)
        if not candidates:
            errors = [s.message for s in error_statuses(statuses.statuses)]
            if errors:
                return None, error(aggregate_message(errors))
            message = fit_error_message(
                len(all_nodes), NodeToStatus(statuses.statuses, unresolvable(NOT_HELPFUL))
            )
            return PostFilterResult(""), unschedulable(message)
        best = self.select_candidate(candidates)
        if best is None or not best.node_name:
            return None, unschedulable(NO_CANDIDATE)
        return self._prepare(best, pod)

    def _prepare(self, best: Candidate, pod: PodInfo) -> tuple[PostFilterResult | None, Status]:
        """Upstream ``prepareCandidate`` through the executor; the nominated node on success.

        The victims are counted (``scheduler_preemption_victims``) once all are evicted,
        where upstream observes them."""
        status = self.executor.prepare_candidate(best, pod)
        if status is not None:
            return None, status
        if self.metrics is not None:
            self.metrics.preemption_victims.observe(len(best.victims.pods))
        return PostFilterResult(best.node_name), Status(Code.SUCCESS)

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Upstream ``PodEligibleToPreemptOthers``."""
        spec = pod.pod.spec
        if spec is not None and spec.preemption_policy == PREEMPT_NEVER:
            return False, NEVER_POLICY
        status = pod.pod.status
        nominated = (status.nominated_node_name if status else None) or ""
        if nominated:
            if (
                nominated_node_status is not None
                and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            node = self.handle.node_info(nominated)
            if node is not None:
                for other in node.pods:
                    if other.priority < pod.priority and is_terminating_by_preemption(other.pod):
                        return False, TERMINATING_ON_NOMINATED
        return True, ""

    # --- candidates -----------------------------------------------------------------------------

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: PodInfo, filtered: NodeToStatus
    ) -> tuple[list[Candidate], NodeToStatus]:
        """Upstream ``findCandidates``: only nodes whose status is exactly Unschedulable."""
        potential = [
            node for node in all_nodes if filtered.get(node.name).code is Code.UNSCHEDULABLE
        ]
        if not potential:
            return [], NodeToStatus({})
        pdbs = self._pdbs()
        offset = self.rng.randrange(len(potential))
        wanted = number_of_candidates(len(potential), self.args)
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, wanted)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        wanted: int,
    ) -> tuple[list[Candidate], NodeToStatus]:
        """Upstream ``DryRunPreemption``, evaluated in order from ``offset`` (wrapping)."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        count = len(potential)
        for i in range(count):
            node = potential[(offset + i) % count]
            victims, status = self.select_victims_on_node(state.clone(), pod, node.clone(), pdbs)
            if status is None and victims is not None and victims.pods:
                target = non_violating if victims.num_pdb_violations == 0 else violating
                if len(target) < wanted:
                    target.append(Candidate(node.name, victims))
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
                continue
            if status is None:
                status = error(f'expected at least one victim pod on node "{node.name}"')
            statuses[node.name] = status
        return non_violating + violating, NodeToStatus(statuses)

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[Victims | None, Status | None]:
        """Upstream ``SelectVictimsOnNode`` on a copy of the node and cycle state."""
        handle = self.handle
        potential = [other for other in node.pods if other.priority < pod.priority]
        if not potential:
            return None, unresolvable(NO_VICTIMS)
        for other in potential:
            node.remove_pod(other)
            status = handle.run_pre_filter_extension_remove_pod(state, pod, other, node)
            if status is not None:
                return None, error(status.message)
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node)
        if status is not None:
            return None, status
        now = self._now_nanos()
        potential.sort(key=lambda info: importance_key(info, now))
        violating, non_violating = pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violations = 0

        def reprieve(other: PodInfo) -> bool:
            node.add_pod(other)
            added = handle.run_pre_filter_extension_add_pod(state, pod, other, node)
            if added is not None:
                raise _DryRunError(added.message)
            fits = handle.run_filter_plugins_with_nominated_pods(state, pod, node) is None
            if not fits:
                node.remove_pod(other)
                removed = handle.run_pre_filter_extension_remove_pod(state, pod, other, node)
                if removed is not None:
                    raise _DryRunError(removed.message)
                victims.append(other)
            return fits

        try:
            for other in violating:
                if not reprieve(other):
                    num_violations += 1
            for other in non_violating:
                reprieve(other)
        except _DryRunError as exc:
            return None, error(str(exc))
        if violating and non_violating:
            victims.sort(key=lambda info: importance_key(info, now))
        return Victims(tuple(victims), num_violations), None

    # --- choosing the node ------------------------------------------------------------------------

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """Upstream ``SelectCandidate`` + ``pickOneNodeForPreemption``.

        Upstream ranges over a Go map, so among candidates tied on every criterion it takes
        whichever the map yields first: a random one. kubeprio draws it with one seeded
        ``randrange`` over the tied candidates in candidate order (each equally likely, as a
        shuffle would make them; the indexed path draws the same way).
        """
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        now = self._now_nanos()
        remaining = list(candidates)
        for score in (
            lambda c: -c.victims.num_pdb_violations,
            lambda c: -c.victims.pods[0].priority,
            lambda c: -sum(p.priority + INT32_SHIFT for p in c.victims.pods),
            lambda c: -len(c.victims.pods),
            lambda c: earliest_start_of_top_victims(c.victims, now),
        ):
            best_score: int | None = None
            selected: list[Candidate] = []
            for candidate in remaining:
                value = score(candidate)
                if best_score is None or value > best_score:
                    best_score = value
                    selected = [candidate]
                elif value == best_score:
                    selected.append(candidate)
            if len(selected) == 1:
                return selected[0]
            remaining = selected
        return remaining[self.rng.randrange(len(remaining))]


def aggregate_message(messages: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several (duplicates
    dropped) as ``[a, b]``."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class _DryRunError(Exception):
    """A PreFilter extension failed during a dry run."""


def earliest_start_of_top_victims(victims: Victims, now_nanos: int) -> int:
    """Upstream ``GetEarliestPodStartTime``: among the highest-priority victims."""
    pods = victims.pods
    if not pods:
        return INT64_MIN
    earliest = pod_start_nanos(pods[0].pod, now_nanos)
    top = pods[0].priority
    for info in pods:
        if info.priority == top:
            earliest = min(earliest, pod_start_nanos(info.pod, now_nanos))
        elif info.priority > top:
            top = info.priority
            earliest = pod_start_nanos(info.pod, now_nanos)
    return earliest


def fit_error_message(
    num_all_nodes: int,
    statuses: NodeToStatus,
    pre_filter_message: str = "",
    post_filter_message: str = "",
) -> str:
    """Upstream ``FitError.Error``: ``0/N nodes are available: <sorted histogram>.``"""
    counts: dict[str, int] = {}
    if not pre_filter_message:
        counts = reason_counts(statuses.statuses)
        absent = num_all_nodes - len(statuses.statuses)
        if absent > 0:
            for reason in statuses.absent.reasons:
                counts[reason] = counts.get(reason, 0) + absent
    return format_fit_error(num_all_nodes, counts, pre_filter_message, post_filter_message)


def format_fit_error(
    num_all_nodes: int,
    counts: dict[str, int],
    pre_filter_message: str = "",
    post_filter_message: str = "",
) -> str:
    """``fit_error_message`` from the reason histogram (how many nodes gave each reason)."""
    message = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_message:
        message += f" {pre_filter_message}."
    else:
        histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
        if histogram:
            message += f" {', '.join(histogram)}."
    if post_filter_message:
        message += f" {post_filter_message}"
    return message
