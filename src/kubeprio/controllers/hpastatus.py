"""An HPA's status as one reconcile rebuilds it: conditions, replica counts, the write.

Mirrors the status bookkeeping of ``pkg/controller/podautoscaler/horizontal.go`` (v1.32):
``reconcileAutoscaler`` works on ``hpa.DeepCopy()`` and sets conditions on it as it goes
(``setCondition``: a new condition is appended, the transition time moves only when the
status changes), ``setStatus`` fills in the replica counts, current metrics and
``lastScaleTime``, ``updateStatusIfNeeded`` writes once, and only when the status differs
semantically from the stored one (``FailedUpdateStatus`` on an error).
``getUnableComputeReplicaCountCondition`` records its Warning event at once and hands
back the condition to set later.

Driven by ``controllers.horizontal`` (and ``controllers.hpametrics``, which sets the
metric conditions); one ``Working`` lives for one reconcile. Time comes from the injected
clock; the only write is ``Working.write``. Must not import ``apiserver``, ``store`` or
``admission``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api import errors
from kubeprio.api.autoscaling import (
    SCALING_ACTIVE,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerStatus,
    MetricStatus,
)
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, rfc3339
from kubeprio.controllers.base import object_key

TRUE: Final = "True"
FALSE: Final = "False"


@dataclass(slots=True)
class Working:
    """The HPA being reconciled: its status as it is rebuilt (``hpa.DeepCopy()``), with the
    clock that stamps its conditions and the recorder of its events."""

    hpa: HorizontalPodAutoscaler
    conditions: list[HorizontalPodAutoscalerCondition]
    status: HorizontalPodAutoscalerStatus
    clock: Clock
    recorder: record.EventRecorder

    @property
    def key(self) -> str:
        """The HPA's work-queue key."""
        return object_key(self.hpa)

    def event(self, event_type: str, reason: str, message: str) -> None:
        """Record an event on the HPA."""
        self.recorder.event(self.hpa, event_type, reason, message)

    def set_condition(self, kind: str, status: str, reason: str, message: str) -> None:
        """``setCondition``: a new condition is appended; the transition time moves only
        when the status changes."""
        for i, condition in enumerate(self.conditions):
            if condition.type == kind:
                moved = condition.status != status
                self.conditions[i] = evolve(
                    condition,
                    status=status,
                    reason=reason,
                    message=message,
                    last_transition_time=rfc3339(self.clock.now())
                    if moved
                    else condition.last_transition_time,
                )
                return
        self.conditions.append(
            HorizontalPodAutoscalerCondition(
                type=kind,
                status=status,
                last_transition_time=rfc3339(self.clock.now()),
                reason=reason,
                message=message,
            )
        )

    def unable_condition(self, reason: str, message: str) -> HorizontalPodAutoscalerCondition:
        """``getUnableComputeReplicaCountCondition``: a Warning event now, the condition later."""
        self.event(record.EVENT_TYPE_WARNING, reason, message)
        return HorizontalPodAutoscalerCondition(
            type=SCALING_ACTIVE,
            status=FALSE,
            reason=reason,
            message=f"the HPA was unable to compute the replica count: {message}",
        )

    def set_status(
        self, current: int, desired: int, metrics: list[MetricStatus] | None, rescale: bool
    ) -> None:
        """``setStatus``."""
        self.status = HorizontalPodAutoscalerStatus(
            current_replicas=current,
            desired_replicas=desired,
            last_scale_time=rfc3339(self.clock.now()) if rescale else self.status.last_scale_time,
            current_metrics=tuple(metrics) if metrics else None,
        )

    def write(self, client: Client) -> None:
        """``updateStatusIfNeeded``: one write when the status changed."""
        status = evolve(self.status, conditions=tuple(self.conditions) or None)
        old = self.hpa.status or HorizontalPodAutoscalerStatus()
        if same_status(old, status):
            return
        try:
            client.update_status(evolve(self.hpa, status=status))
        except errors.StatusError as exc:
            self.event(record.EVENT_TYPE_WARNING, "FailedUpdateStatus", exc.message)


def same_status(old: HorizontalPodAutoscalerStatus, new: HorizontalPodAutoscalerStatus) -> bool:
    """``apiequality.Semantic.DeepEqual`` of the two statuses (zero values equal absent)."""
    return (
        (old.current_replicas or 0) == (new.current_replicas or 0)
        and (old.desired_replicas or 0) == (new.desired_replicas or 0)
        and old.last_scale_time == new.last_scale_time
        and (old.current_metrics or ()) == (new.current_metrics or ())
        and (old.conditions or ()) == (new.conditions or ())
        and old.observed_generation == new.observed_generation
    )
