"""The scheduler: informers feed a cache and a priority queue; ``schedule_one`` runs a cycle.

Mirrors upstream ``pkg/scheduler/schedule_one.go`` and ``eventhandlers.go``. Driven, not
threaded: the driver (simulation engine or serve loop) calls ``pump()`` to deliver
informer events, ``run_once()`` to schedule at most one pod, and ``next_wakeup()`` to
learn when queue timers (backoff completion, the unschedulable flush) next matter.

A cycle::

    pop -> PreFilter -> [nominated node first] -> Filter (with nominated pods, from a
    rotating start, until enough feasible nodes) -> PreScore/Score -> select host
    (seeded tie-break) -> assume -> Reserve -> Permit -> PreBind -> Bind -> "Scheduled"
       \\-- no node fits --> PostFilter (DefaultPreemption) -> FailedScheduling event,
                            PodScheduled=False condition, nominatedNodeName, requeue

Binding runs inline after the scheduling cycle (upstream runs it in a goroutine; in a
single-threaded driver the observable order is the same: assume first, bind next).
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, overload

import numpy as np
import numpy.typing as npt

from kubeprio.api import errors
from kubeprio.api.core import TERMINAL_PHASES, Node, Pod, PodCondition, PodStatus
from kubeprio.api.model import evolve
from kubeprio.api.podconditions import update_pod_condition
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.client.record import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, EventRecorder
from kubeprio.client.statuswrite import write_status
from kubeprio.clock import Clock, rfc3339
from kubeprio.scheduler import events as cluster_events
from kubeprio.scheduler import queue as scheduling_queue
from kubeprio.scheduler.cache import Cache
from kubeprio.scheduler.fastpath import FastPath, is_plain_pod
from kubeprio.scheduler.framework import (
    Code,
    CycleState,
    NodeToStatus,
    PodInfo,
    PreFilterResult,
    QueuedPodInfo,
    Status,
    pod_priority,
    unresolvable,
)
from kubeprio.scheduler.metrics import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    SchedulerMetrics,
)
from kubeprio.scheduler.nominatedload import NominatedLoad
from kubeprio.scheduler.nominator import NominatingInfo
from kubeprio.scheduler.preemption import fit_error_message
from kubeprio.scheduler.rowstatus import RowStatuses, error_statuses, rejector_plugins
from kubeprio.scheduler.runtime import Framework
from kubeprio.scheduler.snapshot import NodeInfo

LOG: Final = logging.getLogger("kubeprio.scheduler")

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
NO_NODES_AVAILABLE: Final = "no nodes available to schedule pods"
POD_SCHEDULED: Final = "PodScheduled"
REASON_UNSCHEDULABLE: Final = "Unschedulable"
REASON_SCHEDULER_ERROR: Final = "SchedulerError"
NON_TERMINAL_SELECTOR: Final = "status.phase!=Succeeded,status.phase!=Failed"
PRE_BIND_POLL_INTERVAL: Final = 1.0
"""How often a waiting PreBind is asked again (upstream VolumeBinding's ``BindPodVolumes``
polls its bindings every second)."""


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind`` (adaptive percentage when unset or 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * pct // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@dataclasses.dataclass(slots=True)
class ScheduleFailure:
    """Why a cycle did not place the pod."""

    status: Status
    message: str
    nominated_node: str | None = ""
    """The nomination to record: a node name; ``""`` clears it, as upstream's
    ``clearNominatedNode`` does for every failure except a FitError that went through
    PostFilter; ``None`` leaves it alone (PostFilter returned no result)."""
    diagnosis: NodeToStatus | None = None


@dataclasses.dataclass(slots=True)
class _WaitingBind:
    """A binding cycle parked in PreBind: the assumed pod and where to resume."""

    queued: QueuedPodInfo
    state: CycleState
    assumed: PodInfo
    node_name: str
    plugin: str
    """The PreBind plugin that asked to wait ("" before the first PreBind)."""
    due: float
    attempt_start: float


class RowNodes(Sequence[NodeInfo]):
    """The fast path's feasible rows as NodeInfos, materialised only when indexed."""

    __slots__ = ("_nodes", "_rows")

    def __init__(self, rows: npt.NDArray[np.int64], nodes: Sequence[NodeInfo]) -> None:
        self._rows = rows
        self._nodes = nodes

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NodeInfo]: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | Sequence[NodeInfo]:
        if isinstance(index, slice):
            return [self._nodes[int(row)] for row in self._rows[index]]
        return self._nodes[int(self._rows[index])]


def is_assigned(pod: Pod) -> bool:
    """Whether the pod is bound to a node."""
    return bool(pod.spec and pod.spec.node_name)


EVENT_FLUSH_BATCH: Final = 64
"""Deferred events written per ``run_once`` when no pod is ready (about 4 ms of writes)."""


def nominated_node(pod: Pod) -> str:
    """The pod's ``status.nominatedNodeName`` ("" when unset)."""
    return (pod.status.nominated_node_name if pod.status else None) or ""


def lower_or_equal(pod: Pod) -> Callable[[Pod], bool]:
    """Upstream ``getLEPriorityPreCheck``: only pods of priority <= ``pod``'s."""
    priority = pod_priority(pod)
    return lambda other: pod_priority(other) <= priority


def is_terminal(pod: Pod) -> bool:
    """Succeeded or Failed."""
    return bool(pod.status and pod.status.phase in TERMINAL_PHASES)


class Scheduler:
    """One scheduler (one profile) against one cluster, through a ``Client``."""

    def __init__(
        self,
        client: Client,
        framework: Framework,
        *,
        clock: Clock,
        rng: random.Random,
        queue: scheduling_queue.SchedulingQueue | None,
        cache: Cache | None = None,
        extra_informers: Sequence[Informer[Any]] = (),
        scheduler_name: str = "default-scheduler",
        fast_path: bool = False,
        retry_unschedulable_on_timer: bool = True,
        stopwatch: Callable[[], float] | None = None,
    ) -> None:
        self.client = client
        self.framework = framework
        self.clock = clock
        self.rng = rng
        # The queue may be attached after construction (``setup`` builds it from the
        # scheduler's pod informer); a scheduler is not usable until it is.
        self.queue: scheduling_queue.SchedulingQueue = queue  # type: ignore[assignment]
        self.scheduler_name = scheduler_name
        self.retry_unschedulable_on_timer = retry_unschedulable_on_timer
        self.cache = cache if cache is not None else Cache()
        # Events wait until nothing is left to schedule, as upstream's scheduler hands
        # them to its broadcaster's goroutine: recording never delays a binding.
        self.recorder = EventRecorder(client, clock=clock, component=scheduler_name, deferred=True)
        self.fast = FastPath(self.cache.table) if fast_path else None
        self.nominated_load = NominatedLoad(self.cache.table) if fast_path else None
        """Nominated pods' requests per row; ``setup`` makes it the nominator's observer."""
        self.next_start_node_index = 0
        self._fast_rows: npt.NDArray[np.int64] | None = None
        self._pre_filter_result: tuple[PreFilterResult | None, Status | None, list[str]] | None = (
            None
        )
        self.nodes: Informer[Node] = Informer(client, Node)
        self.pods: Informer[Pod] = Informer(client, Pod, field_selector=NON_TERMINAL_SELECTOR)
        self.pdbs: Informer[PodDisruptionBudget] = Informer(client, PodDisruptionBudget)
        self.extra_informers = list(extra_informers)
        self.nodes.add_handler(
            FuncHandler(self._on_node_add, self._on_node_update, self._on_node_delete)
        )
        self.pods.add_handler(
            FuncHandler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        )
        framework.nominated_pods = self.nominated_pods_for_node
        self.preemptions = 0
        self.metrics = SchedulerMetrics(scheduler_name)
        # Attempt durations are measured, never acted on: serve and bench hand in a
        # monotonic wall clock; by default (simulations) the injected clock keeps runs pure.
        self.stopwatch: Callable[[], float] = stopwatch or clock.now
        self._attempt_start = 0.0
        self._waiting_binds: dict[str, _WaitingBind] = {}

    @property
    def scheduled(self) -> int:
        """Pods bound so far: the count of ``scheduled`` attempts in the metrics."""
        return self.metrics.attempt_duration[RESULT_SCHEDULED].count

    @property
    def failed_attempts(self) -> int:
        """Attempts that ended without a binding (``unschedulable`` and ``error``)."""
        durations = self.metrics.attempt_duration
        return durations[RESULT_UNSCHEDULABLE].count + durations[RESULT_ERROR].count

    # --- driving ------------------------------------------------------------------------------

    def start(self) -> None:
        """List the cluster and start watching."""
        for informer in self.extra_informers:
            informer.start()
        self.nodes.start()
        self.pdbs.start()
        self.pods.start()

    def pump(self) -> int:
        """Deliver pending informer events; returns how many were handled."""
        handled = sum(informer.pump() for informer in self.extra_informers)
        return handled + self.nodes.pump() + self.pdbs.pump() + self.pods.pump()

    def run_once(self) -> bool:
        """Flush due queue timers, then schedule at most one pod; with no pod ready, write
        the queued events. False if there was nothing to do."""
        self.queue.flush_backoff_completed()
        self.queue.flush_unschedulable_leftover()
        resumed = self._resume_waiting_binds() if self._waiting_binds else 0
        queued = self.queue.pop()
        if queued is None:
            if resumed:
                return True
            # In batches: a driver sharing its loop (serve) gets control back in between.
            return self.recorder.flush(EVENT_FLUSH_BATCH) > 0
        self.schedule_one(queued)
        return True

    def next_wakeup(self) -> float | None:
        """When the queue next has timed work (backoff expiry, and the leftover flush
        unless ``retry_unschedulable_on_timer`` is off, as in simulation); now while
        events wait to be written."""
        if self.recorder.queued:
            return self.clock.now()
        wakeup = self.queue.next_wakeup(include_leftover_flush=self.retry_unschedulable_on_timer)
        if self._waiting_binds:
            polls = min(waiting.due for waiting in self._waiting_binds.values())
            wakeup = polls if wakeup is None else min(wakeup, polls)
        return wakeup

    # --- Handle -----------------------------------------------------------------------------------

    def node_infos(self) -> Sequence[NodeInfo]:
        """The snapshot's nodes in order."""
        return self.cache.node_infos()

    def node_info(self, name: str) -> NodeInfo | None:
        """One node of the snapshot."""
        info = self.cache.node_info(name)
        return info if info is not None and info.node is not None else None

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """Pods nominated to ``node_name``."""
        return self.queue.nominator.nominated_pods_for_node(node_name)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status | None:
        """The profile's filters with nominated pods."""
        return self.framework.run_filter_plugins_with_nominated_pods(state, pod, node)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        """PreFilter extensions: add."""
        return self.framework.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        """PreFilter extensions: remove."""
        return self.framework.run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node)

    def pdb_list(self) -> list[PodDisruptionBudget]:
        """All PodDisruptionBudgets (listed once per preemption)."""
        return self.pdbs.list()

    def current_pod(self, pod: Pod) -> Pod | None:
        """The informer's latest version of ``pod``."""
        return self.pods.get(pod.metadata.name or "", pod.metadata.namespace)

    # --- event handlers (upstream eventhandlers.go) ----------------------------------------------

    def _responsible(self, pod: Pod) -> bool:
        spec = pod.spec
        return (spec.scheduler_name if spec else None) in (None, self.scheduler_name)

    def _on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(cluster_events.NODE_ADD, None, node)

    def _on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(new)
        for event in cluster_events.node_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def _on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(node.metadata.name or "")

    def _on_pod_add(self, pod: Pod) -> None:
        if is_assigned(pod):
            self.cache.add_pod(pod)
            self.queue.assigned_pod_added(pod)
        elif self._responsible(pod) and not pod.metadata.deletion_timestamp:
            self.queue.add(pod)

    def _on_pod_update(self, old: Pod, new: Pod) -> None:
        if is_assigned(new):
            if not is_assigned(old):
                # The binding arrived: the pod leaves the queue and is confirmed in the cache.
                self.queue.delete(old)
                self.cache.add_pod(new)
                self.queue.assigned_pod_added(new)
                return
            self.cache.update_pod(new)
            for event in cluster_events.pod_scheduling_properties_change(new, old):
                self.queue.move_all_to_active_or_backoff(event, old, new)
            return
        if not self._responsible(new):
            return
        if new.metadata.deletion_timestamp:
            self._unscheduled_pod_gone(new)
            return
        self.queue.update(old, new)
        old_nominated = nominated_node(old)
        if old_nominated and old_nominated != nominated_node(new):
            # Room reserved by the old nomination is free again for pods of <= priority.
            self.queue.move_all_to_active_or_backoff(
                cluster_events.ASSIGNED_POD_DELETE, old, None, pre_check=lower_or_equal(old)
            )

    def _on_pod_delete(self, pod: Pod) -> None:
        if is_assigned(pod):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(cluster_events.ASSIGNED_POD_DELETE, pod, None)
        else:
            self._unscheduled_pod_gone(pod)

    def _unscheduled_pod_gone(self, pod: Pod) -> None:
        self.queue.delete(pod)
        if nominated_node(pod):
            self.queue.move_all_to_active_or_backoff(
                cluster_events.ASSIGNED_POD_DELETE, pod, None, pre_check=lower_or_equal(pod)
            )

    # --- the cycle -------------------------------------------------------------------------------

    def schedule_one(self, queued: QueuedPodInfo) -> None:
        """Upstream ``ScheduleOne``: one scheduling cycle and, on success, the binding."""
        pod_info = queued.pod_info
        pod = pod_info.pod
        latest = self.current_pod(pod)
        if latest is None or latest.metadata.deletion_timestamp or is_assigned(latest):
            # skipPodSchedule: deleted meanwhile, or already assumed/bound.
            self.queue.done(pod_info.uid)
            return
        # Upstream starts the attempt's clock here, after skipPodSchedule.
        self._attempt_start = self.stopwatch()
        state = CycleState()
        node_name, failure = self._schedule_pod(state, pod_info)
        if failure is not None:
            self._handle_failure(queued, failure)
            return
        assert node_name is not None
        self._assume_and_bind(queued, state, node_name)

    def _schedule_pod(
        self, state: CycleState, pod: PodInfo
    ) -> tuple[str | None, ScheduleFailure | None]:
        self._fast_rows = None
        self._pre_filter_result = None
        nodes = self.cache.node_infos()
        if not nodes:
            return None, ScheduleFailure(
                Status(Code.UNSCHEDULABLE, (NO_NODES_AVAILABLE,)), NO_NODES_AVAILABLE
            )
        feasible, diagnosis, pre_filter_message = self._find_nodes_that_fit(state, pod, nodes)
        if not feasible:
            return None, self._fit_failure(state, pod, len(nodes), diagnosis, pre_filter_message)
        if len(feasible) == 1:
            return feasible[0].name, None
        if self._fast_rows is not None:
            assert self.fast is not None
            totals = self.fast.score(pod, self._fast_rows)
            return self._select_best_row(totals), None
        status = self.framework.run_pre_score_plugins(state, pod, feasible)
        if status is not None:
            return None, ScheduleFailure(status, status.message)
        totals, status = self.framework.run_score_plugins(state, pod, feasible)
        if status is not None:
            return None, ScheduleFailure(status, status.message)
        return self._select_host(feasible, totals), None

    def _find_nodes_that_fit(
        self, state: CycleState, pod: PodInfo, all_nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[NodeInfo], NodeToStatus, str]:
        """Upstream ``findNodesThatFitPod``.

        For plain pods on the fast path PreFilter is deferred: none of the default
        plugins can reject a plain pod at PreFilter, and its cycle state is only read by
        the general filters (nominated nodes, preemption), which call
        ``_ensure_pre_filter`` first.
        """
        fast = self._use_fast_path(pod)
        nominated = (pod.pod.status.nominated_node_name if pod.pod.status else None) or ""
        result: PreFilterResult | None = None
        narrowing: list[str] = []
        if not fast or nominated:
            result, status, narrowing = self._ensure_pre_filter(state, pod)
            if status is not None:
                return [], NodeToStatus({}, status), status.message
        diagnosis: dict[str, Status] = {}
        if nominated:
            node = self.node_info(nominated)
            if node is not None:
                node_status = self.framework.run_filter_plugins_with_nominated_pods(
                    state, pod, node
                )
                if node_status is None:
                    return [node], NodeToStatus({}), ""
        nodes: Sequence[NodeInfo] = all_nodes
        absent = unresolvable()
        if result is not None and result.node_names is not None:
            nodes = [n for n in all_nodes if n.name in result.node_names]
            absent = unresolvable(
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]"
            )
        feasible: Sequence[NodeInfo]
        statuses: Mapping[str, Status] = diagnosis
        if nodes is all_nodes and fast:
            feasible, processed, rejected = self._find_nodes_fast(state, pod, all_nodes)
            if rejected is not None:
                statuses = rejected
        else:
            feasible, processed = self._find_nodes_that_pass_filters(state, pod, nodes, diagnosis)
        if all_nodes:
            self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible, NodeToStatus(statuses, absent), ""

    def _ensure_pre_filter(
        self, state: CycleState, pod: PodInfo
    ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Run PreFilter once per cycle (a deferred fast-path cycle may need it later)."""
        if self._pre_filter_result is None:
            self._pre_filter_result = self.framework.run_pre_filter_plugins(
                state, pod, self.cache.node_infos()
            )
        return self._pre_filter_result

    def _find_nodes_that_pass_filters(
        self,
        state: CycleState,
        pod: PodInfo,
        nodes: Sequence[NodeInfo],
        diagnosis: dict[str, Status],
    ) -> tuple[list[NodeInfo], int]:
        """Upstream ``findNodesThatPassFilters``, sequentially from ``next_start_node_index``.

        Returns the feasible nodes and how many nodes were processed (the rotation step).
        """
        count = len(nodes)
        if count == 0:
            return [], 0
        wanted = num_feasible_nodes_to_find(self.framework.percentage_of_nodes_to_score, count)
        start = self.next_start_node_index
        feasible: list[NodeInfo] = []
        run_filters = self.framework.run_filter_plugins_with_nominated_pods
        for i in range(count):
            node = nodes[(start + i) % count]
            status = run_filters(state, pod, node)
            if status is None:
                feasible.append(node)
                if len(feasible) >= wanted:
                    break
            else:
                diagnosis[node.name] = status
        return feasible, len(feasible) + len(diagnosis)

    def _use_fast_path(self, pod: PodInfo) -> bool:
        return (
            self.fast is not None
            and self.cache.pods_with_affinity == 0
            and is_plain_pod(pod, lost_node_taints=self.cache.table.any_lost_node_taint)
        )

    def _find_nodes_fast(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[Sequence[NodeInfo], int, RowStatuses | None]:
        """``_find_nodes_that_pass_filters`` for plain pods, vectorised (``fastpath``).

        Rejected nodes are diagnosed only when none is feasible (only then are they read),
        as ``RowStatuses``. Nominated pods count through their requests
        (``nominatedload``), which is exact for a plain pod.
        """
        assert self.fast is not None
        table = self.cache.table
        load = None
        nominated_rows: list[int] = []
        if self.nominated_load is not None and len(self.nominated_load) == len(
            self.queue.nominator
        ):
            load = self.nominated_load.load(pod.priority, pod.uid)
        else:
            nominated_rows = [
                table.index[name] for name in self.queue.nominator.nodes() if name in table.index
            ]
        wanted = num_feasible_nodes_to_find(self.framework.percentage_of_nodes_to_score, len(nodes))
        result = self.fast.find(
            pod,
            start=self.next_start_node_index,
            wanted=wanted,
            nominated_rows=nominated_rows,
            filter_node=lambda row: self._filter_one(state, pod, nodes[row]),
            load=load,
        )
        self._fast_rows = result.feasible
        return RowNodes(result.feasible, nodes), result.processed, result.rejected

    def _filter_one(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        self._ensure_pre_filter(state, pod)
        return self.framework.run_filter_plugins_with_nominated_pods(state, pod, node)

    def _select_best_row(self, totals: npt.NDArray[np.int64]) -> str:
        """``_select_host`` over the fast path's rows (evaluation order kept)."""
        assert self._fast_rows is not None
        tied = np.flatnonzero(totals == totals.max())
        pick = int(tied[0]) if len(tied) == 1 else int(tied[self.rng.randrange(len(tied))])
        return self.cache.table.names[int(self._fast_rows[pick])]

    def _select_host(self, nodes: Sequence[NodeInfo], totals: Sequence[int]) -> str:
        """Upstream ``selectHost``: the highest total; a seeded uniform choice among ties.

        Upstream samples the tied nodes with a reservoir, which picks each of them with
        the same probability; one draw does the same with less randomness consumed.
        """
        best = max(totals)
        tied = [node for node, total in zip(nodes, totals, strict=True) if total == best]
        return tied[0].name if len(tied) == 1 else tied[self.rng.randrange(len(tied))].name

    def _fit_failure(
        self,
        state: CycleState,
        pod: PodInfo,
        num_nodes: int,
        diagnosis: NodeToStatus,
        pre_filter_message: str,
    ) -> ScheduleFailure:
        """Build the FitError, then run PostFilter (preemption) as upstream's schedulingCycle does."""
        failed = error_statuses(diagnosis.statuses)
        if failed:
            first = failed[0]
            return ScheduleFailure(first, first.message)
        if pre_filter_message and not diagnosis.absent.is_rejected():
            return ScheduleFailure(diagnosis.absent, pre_filter_message)
        # Without PostFilter plugins upstream returns clearNominatedNode; with them, the
        # PostFilter result's nomination (none at all: leave the nomination as it is).
        nominated: str | None = ""
        post_message = ""
        if self.framework.post_filter_plugins:
            self._ensure_pre_filter(state, pod)
            result, status = self.framework.run_post_filter_plugins(state, pod, diagnosis)
            if status is not None:
                post_message = status.message
            nominated = result.nominated_node_name if result is not None else None
            if nominated:
                self.preemptions += 1
        message = fit_error_message(num_nodes, diagnosis, pre_filter_message, post_message)
        return ScheduleFailure(
            Status(Code.UNSCHEDULABLE, (message,)), message, nominated, diagnosis
        )

    def _assume_and_bind(self, queued: QueuedPodInfo, state: CycleState, node_name: str) -> None:
        pod_info = queued.pod_info
        pod = pod_info.pod
        spec = evolve(pod.spec, node_name=node_name) if pod.spec else None
        assumed = evolve(pod_info, pod=evolve(pod, spec=spec))
        self.cache.assume_pod(assumed, node_name)
        status = self.framework.run_reserve_plugins_reserve(state, assumed, node_name)
        if status is None:
            status = self.framework.run_permit_plugins(state, assumed, node_name)
        if status is not None:
            self._binding_failed(
                queued, state, assumed, node_name, status, in_scheduling_cycle=True
            )
            return
        self._binding_cycle(
            _WaitingBind(queued, state, assumed, node_name, "", 0.0, self._attempt_start)
        )

    def _binding_cycle(self, waiting: _WaitingBind) -> None:
        """Upstream ``bindingCycle``: PreBind, then Bind.

        A PreBind plugin answering ``Code.WAIT`` parks the assumed pod (it keeps its room
        in the cache) and is asked again after ``PRE_BIND_POLL_INTERVAL``, from that
        plugin on: the non-blocking form of upstream's binding goroutine waiting.
        """
        queued, state, assumed, node_name = (
            waiting.queued,
            waiting.state,
            waiting.assumed,
            waiting.node_name,
        )
        status = self.framework.run_pre_bind_plugins(
            state, assumed, node_name, resume_from=waiting.plugin
        )
        if status is not None and status.code is Code.WAIT:
            waiting.plugin = status.plugin
            waiting.due = self.clock.now() + PRE_BIND_POLL_INTERVAL
            self._waiting_binds[assumed.uid] = waiting
            return
        if status is None:
            status = self.framework.run_bind_plugins(state, assumed, node_name)
        if status is not None:
            self._binding_failed(
                queued, state, assumed, node_name, status, in_scheduling_cycle=False
            )
            return
        pod = queued.pod_info.pod
        self.queue.done(assumed.uid)
        self.queue.delete_nominated_pod_if_exists(pod)
        first_queued = queued.initial_attempt_timestamp
        self.metrics.pod_scheduled(
            self.stopwatch() - self._attempt_start,
            attempts=queued.attempts,
            since_first_queued=None if first_queued is None else self.clock.now() - first_queued,
        )
        self._record(
            pod,
            event_type=EVENT_TYPE_NORMAL,
            reason="Scheduled",
            action="Binding",
            message=f"Successfully assigned {pod.metadata.namespace}/{pod.metadata.name} to {node_name}",
        )

    def _resume_waiting_binds(self) -> int:
        """Poll the parked binding cycles that are due; returns how many were polled."""
        now = self.clock.now()
        due = [w for w in self._waiting_binds.values() if w.due <= now]
        for waiting in due:
            del self._waiting_binds[waiting.assumed.uid]
            self._attempt_start = waiting.attempt_start
            if self.current_pod(waiting.assumed.pod) is None:
                # Deleted while waiting: drop the assumption, nothing to requeue.
                self.framework.run_reserve_plugins_unreserve(
                    waiting.state, waiting.assumed, waiting.node_name
                )
                self.cache.forget_pod(waiting.assumed)
                self.queue.done(waiting.assumed.uid)
                continue
            self._binding_cycle(waiting)
        return len(due)

    @property
    def waiting_binds(self) -> int:
        """Pods whose binding cycle waits in PreBind (VolumeBinding)."""
        return len(self._waiting_binds)

    def _binding_failed(
        self,
        queued: QueuedPodInfo,
        state: CycleState,
        assumed: PodInfo,
        node_name: str,
        status: Status,
        *,
        in_scheduling_cycle: bool,
    ) -> None:
        pod_info = queued.pod_info
        self.framework.run_reserve_plugins_unreserve(state, assumed, node_name)
        self.cache.forget_pod(assumed)
        message = status.message
        diagnosis = None
        if in_scheduling_cycle and status.is_rejected():
            # Upstream wraps a Reserve/Permit rejection in a FitError over one node.
            diagnosis = NodeToStatus({node_name: status})
            message = fit_error_message(1, diagnosis)
        # handleBindingCycleError: forgetting the assumed pod frees its room as an
        # assigned-pod deletion would; after a rejection the move comes last and skips
        # the pod itself (else its in-flight replay would requeue it at once).
        freed = not in_scheduling_cycle
        if freed and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff(
                cluster_events.ASSIGNED_POD_DELETE, assumed.pod, None
            )
        self._handle_failure(queued, ScheduleFailure(status, message, "", diagnosis))
        if freed and status.is_rejected():
            self.queue.move_all_to_active_or_backoff(
                cluster_events.ASSIGNED_POD_DELETE,
                assumed.pod,
                None,
                pre_check=lambda other: other.metadata.uid != pod_info.uid,
            )

    # --- failures -------------------------------------------------------------------------------

    def _handle_failure(self, queued: QueuedPodInfo, failure: ScheduleFailure) -> None:
        """Upstream ``handleSchedulingFailure``: event, condition, nomination, requeue."""
        pod = queued.pod
        status = failure.status
        self.metrics.attempt_failed(
            self.stopwatch() - self._attempt_start, rejected=status.is_rejected()
        )
        reason = REASON_UNSCHEDULABLE if status.is_rejected() else REASON_SCHEDULER_ERROR
        rejectors = set()
        if failure.diagnosis is not None:
            rejectors = rejector_plugins(failure.diagnosis.statuses)
            if failure.diagnosis.absent.plugin:
                rejectors.add(failure.diagnosis.absent.plugin)
        latest = self.current_pod(pod) or pod
        if failure.nominated_node is not None:
            self.queue.add_nominated_pod(
                queued.pod_info.updated(latest), NominatingInfo(failure.nominated_node)
            )
        self.queue.requeue_failed(
            queued,
            status.code,
            unschedulable_plugins=sorted(p for p in rejectors if p),
            pod=latest,
        )
        self._record(
            latest,
            event_type=EVENT_TYPE_WARNING,
            reason="FailedScheduling",
            action="Scheduling",
            message=failure.message,
        )
        self._update_pod_status(latest, reason, failure.message, failure.nominated_node)

    def _update_pod_status(
        self, pod: Pod, reason: str, message: str, nominated: str | None
    ) -> None:
        """Upstream ``updatePod``: PodScheduled=False and the nomination, skipped if unchanged."""
        condition = PodCondition(type=POD_SCHEDULED, status="False", reason=reason, message=message)
        now = rfc3339(self.clock.now())

        def with_failure(latest: Pod) -> Pod | None:
            status = update_pod_condition(latest.status, condition, now=now)
            current_nominated = (latest.status.nominated_node_name if latest.status else None) or ""
            renominate = nominated is not None and nominated != current_nominated
            if status is None and not renominate:
                return None
            status = status or latest.status or PodStatus()
            if renominate:
                status = evolve(status, nominated_node_name=nominated or None)
            return evolve(latest, status=status)

        try:
            write_status(self.client, pod, with_failure)
        except errors.StatusError as exc:
            # Upstream's handleSchedulingFailure only logs a failed status update: the pod
            # is requeued already, and the next attempt writes its condition again.
            LOG.debug(
                "status of %s/%s not updated: %s", pod.metadata.namespace, pod.metadata.name, exc
            )

    def _record(self, pod: Pod, *, event_type: str, reason: str, action: str, message: str) -> None:
        self.recorder.event(pod, event_type, reason, message, action=action)
