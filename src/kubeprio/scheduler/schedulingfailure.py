"""``FailureHandling``: what the scheduler does when an attempt places no pod.

Mirrors upstream ``handleSchedulingFailure`` and ``updatePod``
(``pkg/scheduler/schedule_one.go``): the attempt's duration is counted as
``unschedulable`` or ``error``, the nomination PostFilter chose is recorded (or cleared),
the pod is requeued with the plugins that rejected it (``scheduler.queue``), a
``FailedScheduling`` event is recorded and the pod gets ``PodScheduled=False`` with the
reason and message (the status write is skipped when nothing changed, and only logged
when it fails).

Who drives it: the scheduling cycle (``scheduler.schedulingcycle``) and the binding cycle
(``scheduler.bindingcycle``) hand it a ``ScheduleFailure``.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Pod, PodCondition, PodStatus
from kubeprio.api.model import evolve
from kubeprio.api.podconditions import update_pod_condition
from kubeprio.client.record import EVENT_TYPE_WARNING
from kubeprio.client.statuswrite import write_status
from kubeprio.clock import rfc3339
from kubeprio.scheduler.eventhandlers import EventHandlers
from kubeprio.scheduler.framework import NodeToStatus, QueuedPodInfo, Status
from kubeprio.scheduler.nominator import NominatingInfo
from kubeprio.scheduler.rowstatus import rejector_plugins

LOG: Final = logging.getLogger("kubeprio.scheduler")

POD_SCHEDULED: Final = "PodScheduled"
REASON_UNSCHEDULABLE: Final = "Unschedulable"
REASON_SCHEDULER_ERROR: Final = "SchedulerError"


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


class FailureHandling(EventHandlers):
    """Failed attempts: event, condition, nomination, requeue."""

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

        def write() -> None:
            try:
                write_status(self.client, pod, with_failure)
            except errors.StatusError as exc:
                # Upstream's handleSchedulingFailure only logs a failed status update: the
                # pod is requeued already, and the next attempt writes its condition again.
                LOG.debug(
                    "status of %s/%s not updated: %s",
                    pod.metadata.namespace,
                    pod.metadata.name,
                    exc,
                )

        # Upstream's patch blocks only the failing pod's cycle; one that waits on a
        # webhook is written once the answer is in, and the scheduler goes on meanwhile
        # (a later failure of the pod while it waits is written by the one after).
        self.api_writes.run((POD_SCHEDULED, pod.metadata.uid), write)

    def _record(self, pod: Pod, *, event_type: str, reason: str, action: str, message: str) -> None:
        self.recorder.event(pod, event_type, reason, message, action=action)
