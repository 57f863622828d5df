"""Carrying out a preemption through the API (upstream ``preemption/executor.go``).

For each victim not already being deleted: patch its status with the
``DisruptionTarget`` condition (reason ``PreemptionByScheduler``), delete it with
default options — a graceful delete with the pod's own grace period — and record a
``Preempted`` event on it. Then clear ``status.nominatedNodeName`` of pods nominated
to the same node with a strictly lower priority than the preemptor, so they look
elsewhere. API errors (other than NotFound) fail the preemption for this cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.client.protocol import Client, PatchType
from kubeprio.client.record import EVENT_TYPE_NORMAL, EventRecorder
from kubeprio.clock import Clock, rfc3339
from kubeprio.scheduler.framework import PodInfo, Status, error
from kubeprio.scheduler.preemption import DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER, Candidate

NominatedLookup = Callable[[str], Sequence[PodInfo]]


class ClientExecutor:
    """Evicts victims through a ``Client``."""

    def __init__(
        self, client: Client, clock: Clock, nominated: NominatedLookup, recorder: EventRecorder
    ) -> None:
        self._client = client
        self._clock = clock
        self._nominated = nominated
        self._recorder = recorder

    def prepare_candidate(self, candidate: Candidate, preemptor: PodInfo) -> Status | None:
        """Upstream ``prepareCandidate`` (synchronous mode)."""
        for victim in candidate.victims.pods:
            if victim.pod.metadata.deletion_timestamp:
                continue
            try:
                self._preempt_pod(candidate.node_name, preemptor.pod, victim.pod)
            except errors.StatusError as exc:
                return error(exc.message)
        for other in self._nominated(candidate.node_name):
            if other.priority < preemptor.priority:
                self._clear_nomination(other.pod)
        return None

    def _preempt_pod(self, node_name: str, preemptor: Pod, victim: Pod) -> None:
        scheduler_name = (preemptor.spec.scheduler_name if preemptor.spec else None) or ""
        message = f"{scheduler_name}: preempting to accommodate a higher priority pod"
        namespace = victim.metadata.namespace or ""
        name = victim.metadata.name or ""
        existing = [
            c
            for c in (victim.status.conditions if victim.status else None) or ()
            if c.type == DISRUPTION_TARGET
        ]
        same = (
            existing
            and existing[0].status == "True"
            and existing[0].reason == PREEMPTION_BY_SCHEDULER
            and existing[0].message == message
        )
        try:
            if not same:
                condition = {
                    "type": DISRUPTION_TARGET,
                    "status": "True",
                    "reason": PREEMPTION_BY_SCHEDULER,
                    "message": message,
                    "lastTransitionTime": rfc3339(self._clock.now()),
                }
                self._client.patch(
                    Pod,
                    name,
                    {"status": {"conditions": [condition]}},
                    namespace=namespace,
                    patch_type=PatchType.STRATEGIC_MERGE_PATCH,
                    subresource="status",
                )
            self._client.delete(Pod, name, namespace)
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
        if not (pod.status and pod.status.nominated_node_name):
            return
        try:
            self._client.patch(
                Pod,
                pod.metadata.name or "",
                {"status": {"nominatedNodeName": None}},
                namespace=pod.metadata.namespace,
                patch_type=PatchType.MERGE_PATCH,
                subresource="status",
            )
        except errors.StatusError:
            # Upstream only logs this: the nomination is cleared again later if needed.
            return
