"""DefaultPreemption: the PostFilter plugin that preempts lower-priority pods.

Mirrors ``plugins/defaultpreemption/default_preemption.go``: it hands the pod to the
``preemption.Evaluator`` and prefixes any message with ``preemption: `` (so the
FailedScheduling event reads ``... preemption: 0/3 nodes are available: ...``). Every
call counts as a preemption attempt (``scheduler_preemption_attempts_total``), whatever
its outcome, as upstream's deferred ``PreemptionAttempts.Inc()`` does.
"""

from __future__ import annotations

from typing import Final

from kubeprio.scheduler.framework import (
    Code,
    CycleState,
    NodeToStatus,
    PodInfo,
    PostFilterResult,
    Status,
)
from kubeprio.scheduler.metrics import SchedulerMetrics
from kubeprio.scheduler.preemption import Evaluator

NAME: Final = "DefaultPreemption"


class DefaultPreemption:
    """PostFilter: preempt so the pod fits in a later cycle."""

    name = NAME

    def __init__(self, evaluator: Evaluator, metrics: SchedulerMetrics | None = None) -> None:
        self.evaluator = evaluator
        self.metrics = metrics

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Run the evaluator; prefix its message as upstream does."""
        if self.metrics is not None:
            self.metrics.preemption_attempts += 1
        result, status = self.evaluator.preempt(state, pod, filtered)
        if status.code is Code.SUCCESS:
            return result, None
        if status.message:
            status = Status(status.code, (f"preemption: {status.message}",), NAME)
        return result, status
