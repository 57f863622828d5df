"""``SchedulingCycle``: one scheduling cycle, from a popped pod to a chosen node.

Mirrors upstream ``schedulingCycle``/``schedulePod`` (``pkg/scheduler/schedule_one.go``)::

    pop -> PreFilter -> [nominated node first] -> Filter (with nominated pods, from a
    rotating start, until enough feasible nodes) -> PreScore/Score -> select host
    (seeded tie-break) -> binding cycle (``scheduler.bindingcycle``)
       \\-- no node fits --> PostFilter (DefaultPreemption) -> failure handling
                            (``scheduler.schedulingfailure``)

Plain pods take the vectorised fast path (``scheduler.fastpath``) when it is on: their
PreFilter is deferred until a general filter needs it, and feasible rows are scored
without materialising a ``NodeInfo`` each (``RowNodes``). The rotation of the start node
(``next_start_node_index``) and ``numFeasibleNodesToFind`` follow upstream.

Who drives it: ``Scheduler.run_once`` calls ``schedule_one`` with each popped pod. This is
the per-pod hot path: keep it free of O(pods) steps and extra indirection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, overload

import numpy as np
import numpy.typing as npt

from kubeprio.scheduler.bindingcycle import BindingCycle
from kubeprio.scheduler.eventhandlers import is_assigned
from kubeprio.scheduler.fastpath import is_plain_pod
from kubeprio.scheduler.framework import (
    Code,
    CycleState,
    NodeToStatus,
    PodInfo,
    PreFilterResult,
    QueuedPodInfo,
    Status,
    unresolvable,
)
from kubeprio.scheduler.preemption import fit_error_message
from kubeprio.scheduler.rowstatus import RowStatuses, error_statuses
from kubeprio.scheduler.schedulingfailure import ScheduleFailure
from kubeprio.scheduler.snapshot import NodeInfo

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
NO_NODES_AVAILABLE: Final = "no nodes available to schedule pods"


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind`` (adaptive percentage when unset or 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * pct // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


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


class SchedulingCycle(BindingCycle):
    """Filter, score and select a node for one pod; hand over to binding or failure."""

    next_start_node_index: int
    """Where the next Filter pass starts (upstream's rotation over the node list)."""
    _fast_rows: npt.NDArray[np.int64] | None
    """The fast path's feasible rows of the current cycle (None off the fast path)."""
    _pre_filter_result: tuple[PreFilterResult | None, Status | None, list[str]] | None
    """The current cycle's PreFilter outcome, once it ran (see ``_ensure_pre_filter``)."""
    selected_by_service: Callable[[str, Mapping[str, str]], bool] | None
    """Whether a Service selects a pod with these labels in this namespace."""

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
            and not self._spread_by_service(pod)
        )

    def _spread_by_service(self, pod: PodInfo) -> bool:
        """Whether a Service selects the pod, giving it default topology spreading (a
        score the fast path does not compute); O(pod labels) through the Service index."""
        selected = self.selected_by_service
        meta = pod.pod.metadata
        return selected is not None and selected(meta.namespace or "", meta.labels or {})

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
