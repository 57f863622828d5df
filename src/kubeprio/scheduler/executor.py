"""Carrying out a preemption through the API (upstream ``preemption/executor.go``).

For each victim not already being deleted: set the ``DisruptionTarget`` condition
(reason ``PreemptionByScheduler``) in its status, delete it with
default options — a graceful delete with the pod's own grace period — and record a
``Preempted`` event on it. Then clear ``status.nominatedNodeName`` of pods nominated
to the same node with a strictly lower priority than the preemptor, so they look
elsewhere. API errors (other than NotFound) fail the preemption for this cycle.

Status writes go through ``client.statuswrite``: upstream sends each as a two-way
strategic merge patch of the status; kubeprio writes the status with the condition
set on the latest copy (retrying conflicts), which stores the same result, a new
condition after the existing ones, without a JSON merge. One difference, on purpose: a
victim replaced meanwhile by another pod of the same name (another uid) is left alone,
where upstream's patch and delete by name would hit the newcomer.

In ``kubeprio serve`` a victim's writes (its condition, its delete, then its event) or a
nomination's clearing that waits on an admission webhook does not hold the scheduler:
it is written once the answer is in (``client.answeredretry``), as upstream's
``prepareCandidate`` issues them from goroutines (``preemptPod``; and with
``SchedulerAsyncPreemption``, beta from v1.33, the whole of it). Meanwhile the preemptor
is nominated to the node and waits for the victims' deletion as after any preemption;
v1.32's default, a scheduling cycle that waits for every victim's call, is the one
difference (the loop is shared with the API server). A victim whose retry is refused is
only logged, as upstream's asynchronous calls are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from kubeprio.api import errors
from kubeprio.api.core import Pod, PodCondition
from kubeprio.api.model import evolve
from kubeprio.api.podconditions import update_pod_condition
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.protocol import Client
from kubeprio.client.record import EVENT_TYPE_NORMAL, EventRecorder
from kubeprio.client.statuswrite import write_status
from kubeprio.clock import Clock, rfc3339
from kubeprio.scheduler.framework import PodInfo, Status, error
from kubeprio.scheduler.preemption import DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER, Candidate

NominatedLookup = Callable[[str], Sequence[PodInfo]]


class ClientExecutor:
    """Evicts victims through a ``Client``."""

    def __init__(
        self,
        client: Client,
        clock: Clock,
        nominated: NominatedLookup,
        recorder: EventRecorder,
        *,
        writes: AnsweredRetry | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        self._nominated = nominated
        self._recorder = recorder
        self._writes = writes if writes is not None else AnsweredRetry("preemption")

    def prepare_candidate(self, candidate: Candidate, preemptor: PodInfo) -> Status | None:
        """Upstream ``prepareCandidate`` (synchronous mode)."""
        for victim in candidate.victims.pods:
            if victim.pod.metadata.deletion_timestamp:
                continue
            preempt = functools.partial(
                self._preempt_pod, candidate.node_name, preemptor.pod, victim.pod
            )
            try:
                self._writes.run(("preempt", victim.uid), preempt)
            except errors.StatusError as exc:
                return error(exc.message)
        for other in self._nominated(candidate.node_name):
            if other.priority < preemptor.priority:
                clear = functools.partial(self._clear_nomination, other.pod)
                self._writes.run(("nomination", other.uid), clear)
        return None

    def _preempt_pod(self, node_name: str, preemptor: Pod, victim: Pod) -> None:
        scheduler_name = (preemptor.spec.scheduler_name if preemptor.spec else None) or ""
        condition = PodCondition(
            type=DISRUPTION_TARGET,
            status="True",
            reason=PREEMPTION_BY_SCHEDULER,
            message=f"{scheduler_name}: preempting to accommodate a higher priority pod",
        )
        now = rfc3339(self._clock.now())

        def with_condition(latest: Pod) -> Pod | None:
            status = update_pod_condition(latest.status, condition, now=now)
            return None if status is None else evolve(latest, status=status)

        try:
            if write_status(self._client, victim, with_condition) is None:
                return
            self._client.delete(Pod, victim.metadata.name or "", victim.metadata.namespace)
        except errors.NotFoundError:
            return
        self._recorder.event(
            victim,
            EVENT_TYPE_NORMAL,
            "Preempted",
            f"Preempted by pod {preemptor.metadata.uid} on node {node_name}",
            action="Preempting",
            related=preemptor,
        )

    def _clear_nomination(self, pod: Pod) -> None:
        """Upstream ``ClearNominatedNodeName``: a status write of an empty nomination."""

        def without_nomination(latest: Pod) -> Pod | None:
            if not (latest.status and latest.status.nominated_node_name):
                return None
            return evolve(latest, status=evolve(latest.status, nominated_node_name=None))

        if not (pod.status and pod.status.nominated_node_name):
            return
        try:
            write_status(self._client, pod, without_nomination)
        except errors.StatusError:
            # Upstream only logs this: the nomination is cleared again later if needed.
            return
