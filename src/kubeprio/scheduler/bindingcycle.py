"""``BindingCycle``: from the chosen node to the binding, after the scheduling cycle.

Mirrors upstream ``schedule_one.go``: the pod is assumed on its node in the cache, Reserve
and Permit run (a rejection there is a FitError over that one node), then the binding
cycle (``bindingCycle``) runs PreBind and Bind. Upstream runs the binding cycle in a
goroutine; here it runs inline after the scheduling cycle, which in a single-threaded
driver keeps the observable order (assume first, bind next). A PreBind plugin that
answers ``Code.WAIT`` (VolumeBinding waiting for its volumes) parks the assumed pod as a
``WaitingBind`` and is asked again every ``PRE_BIND_POLL_INTERVAL``, from that plugin on
(upstream's ``BindPodVolumes`` polls on that interval, not on events). A PreBind write
that waits on an admission webhook (``runtime.PreBindWritePendingError``) parks it too, and
it resumes from that plugin as soon as the answers are in (upstream's call returns).
A Bind whose ``pods/binding`` write waits on an admission webhook (``kubeprio serve``:
``WritePendingError``) parks the same way, after PreBind: the pod stays assumed, as
while upstream's binding goroutine waits on its call, and the bind is sent again once
the answer is in (the API service replays the same write: one webhook call per
review). A pending answer is not a failure, so nothing is unreserved or requeued; a
refusal on the retry is a bind failure as any other.
On success: ``Scheduled`` event and metrics; on failure: Unreserve, forget the assumed
pod, free its room for others (``handleBindingCycleError``) and hand the failure to
``scheduler.schedulingfailure``.

Who drives it: ``Scheduler.schedule_one`` (a placed pod) and ``Scheduler.run_once``
(due parked bindings).
"""

from __future__ import annotations

import dataclasses
from typing import Final

from kubeprio.api.model import evolve
from kubeprio.client.answeredretry import retryable
from kubeprio.client.record import EVENT_TYPE_NORMAL
from kubeprio.client.writepending import WritePendingError
from kubeprio.scheduler import events as cluster_events
from kubeprio.scheduler.framework import (
    Code,
    CycleState,
    NodeToStatus,
    PodInfo,
    QueuedPodInfo,
    Status,
)
from kubeprio.scheduler.preemption import fit_error_message
from kubeprio.scheduler.runtime import PreBindWritePendingError
from kubeprio.scheduler.schedulingfailure import FailureHandling, ScheduleFailure

PRE_BIND_POLL_INTERVAL: Final = 1.0
"""How often a waiting PreBind is asked again (upstream VolumeBinding's ``BindPodVolumes``
polls its bindings every second)."""


@dataclasses.dataclass(slots=True)
class WaitingBind:
    """A binding cycle parked in PreBind: the assumed pod and where to resume."""

    queued: QueuedPodInfo
    state: CycleState
    assumed: PodInfo
    node_name: str
    plugin: str
    """The PreBind plugin that asked to wait ("" before the first PreBind)."""
    due: float
    attempt_start: float
    bind_pending: bool = False
    """PreBind is done: the Bind call waits on admission webhook answers."""


class BindingCycle(FailureHandling):
    """Assume, Reserve, Permit, then PreBind and Bind (possibly parked in PreBind)."""

    _waiting_binds: dict[str, WaitingBind]
    """Binding cycles parked in PreBind, by pod uid."""

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
            WaitingBind(queued, state, assumed, node_name, "", 0.0, self._attempt_start)
        )

    def _binding_cycle(self, waiting: WaitingBind) -> None:
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
        status = None
        if not waiting.bind_pending:
            try:
                status = self.framework.run_pre_bind_plugins(
                    state, assumed, node_name, resume_from=waiting.plugin
                )
            except PreBindWritePendingError as pending:
                waiting.plugin = pending.plugin
                self._park_until_answered(waiting, pending.pending)
                return
        if status is not None and status.code is Code.WAIT:
            waiting.plugin = status.plugin
            waiting.due = self.clock.now() + PRE_BIND_POLL_INTERVAL
            self._waiting_binds[assumed.uid] = waiting
            return
        if status is None:
            try:
                status = retryable(
                    lambda: self.framework.run_bind_plugins(state, assumed, node_name)
                )
            except WritePendingError as pending:
                waiting.bind_pending = True
                self._park_until_answered(waiting, pending)
                return
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

    def _park_until_answered(self, waiting: WaitingBind, pending: WritePendingError) -> None:
        """Keep the pod assumed until the webhook answers its PreBind write or its Bind
        waits on are in, and resume it then: at once, as upstream's blocked call returns
        (their deadline is the safety net: the retry then finds the write refused or
        pending again)."""
        waiting.due = self.clock.now() + pending.retry_after
        uid = waiting.assumed.uid
        self._waiting_binds[uid] = waiting

        def answered() -> None:
            if self._waiting_binds.get(uid) is waiting:
                waiting.due = self.clock.now()

        pending.when_answered(answered)

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
        """Pods whose binding cycle waits in PreBind (VolumeBinding) or on its Bind's
        webhook answers."""
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
