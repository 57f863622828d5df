"""Turning manifest documents into timed submissions, and submitting them.

Every object goes through the full write path at t=0 in input order, or at its
``kubeprio.io/submit-at`` annotation (a duration such as ``90s``). A Pod that arrives
with ``spec.nodeName`` is already bound, as in a snapshot of a live cluster: it keeps a
terminal ``status.phase`` (Succeeded/Failed pods hold no resources) and is Running
otherwise; its ``status.startTime``, when given, is kept (it breaks preemption ties).
Snapshot objects keep their ``uid`` so owner references in the dump stay valid; a
CronJob keeps its snapshot ``status`` (last schedule time, active Jobs), so it goes on
from there rather than catching up since its creation; a StatefulSet keeps its status
(current and update revisions).
Objects that already exist (the system classes re-declared in a dump) are reported,
not fatal; admission rejections are reported in ``rejected``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from kubeprio.api import errors, kinds, manifest
from kubeprio.api.annotations import AnnotationError, parse_duration
from kubeprio.api.batch import CronJob
from kubeprio.api.core import PHASE_RUNNING, TERMINAL_PHASES, Pod, PodStatus
from kubeprio.api.model import evolve
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.statefulset import StatefulSet
from kubeprio.clock import rfc3339
from kubeprio.sim.cluster import SimCluster
from kubeprio.sim.report import Rejection

SUBMIT_AT = "kubeprio.io/submit-at"


@dataclasses.dataclass(frozen=True, slots=True)
class Submission:
    """An object to submit at a virtual time."""

    at: float
    order: int
    obj: Any
    source: str
    index: int


def submissions(documents: Sequence[manifest.Document]) -> list[Submission]:
    """Decode every document (raising ``ManifestError`` with file and document) and time it."""
    result: list[Submission] = []
    for order, document in enumerate(documents):
        obj = manifest.decode_document(document)
        at = 0.0
        annotation = obj.metadata.annotation(SUBMIT_AT)  # type: ignore[attr-defined]
        if annotation is not None:
            try:
                at = parse_duration(annotation)
            except AnnotationError as exc:
                raise manifest.ManifestError(
                    f"metadata.annotations[{SUBMIT_AT}]: {exc}",
                    source=document.source,
                    index=document.index,
                ) from exc
        result.append(Submission(at, order, obj, document.source, document.index))
    return result


class Submitter:
    """Applies submissions to a cluster and keeps what was refused or already there."""

    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster
        self.rejected: list[Rejection] = []
        self.existing: list[dict[str, Any]] = []

    def schedule(self, items: Sequence[Submission]) -> None:
        """Put every submission on the engine (ties keep input order)."""
        for item in items:
            self.cluster.engine.schedule_at(item.at, functools.partial(self.submit, item))

    def submit(self, item: Submission) -> None:
        """Create the object; restore a bound pod's (or a CronJob's or StatefulSet's) snapshot
        status."""
        obj = item.obj
        info = kinds.for_object(obj)
        try:
            stored = self._create(obj)
        except errors.AlreadyExistsError as exc:
            self.existing.append(
                {
                    "kind": info.kind,
                    "namespace": obj.metadata.namespace,
                    "name": obj.metadata.name,
                    "message": exc.message,
                }
            )
            return
        except errors.StatusError as exc:
            self.rejected.append(
                Rejection(
                    kind=info.kind,
                    namespace=obj.metadata.namespace,
                    name=obj.metadata.name,
                    code=exc.status.code or 0,
                    reason=exc.status.reason or "",
                    message=exc.message,
                    source=f"{item.source}#{item.index}",
                )
            )
            return
        if isinstance(stored, Pod) and stored.spec is not None and stored.spec.node_name:
            self._restore_bound_pod(stored, obj)
        elif isinstance(stored, ResourceQuota):
            self.cluster.observe_quota(stored)
        elif isinstance(stored, CronJob | StatefulSet) and obj.status is not None:
            # A snapshot's CronJob goes on from its last schedule time (and keeps its
            # active Jobs) instead of catching up on every run since its creation; a
            # StatefulSet keeps its current and update revisions, so pods at a revision
            # the dump also holds are not rolled.
            self.cluster.api.update_status(evolve(stored, status=obj.status))

    def _create(self, obj: Any) -> Any:
        """Create ``obj`` as a real cluster came to hold it. A dumped pod that was debugged
        carries ephemeral containers, which a create may not set (only the
        ``ephemeralcontainers`` subresource adds them, as ``kubectl debug`` did): the pod is
        created without them, then given them through that subresource."""
        api = self.cluster.api
        ephemeral = obj.spec.ephemeral_containers if isinstance(obj, Pod) and obj.spec else None
        if not ephemeral:
            return api.create_object(obj, restore=True).obj
        stored = api.create_object(
            evolve(obj, spec=evolve(obj.spec, ephemeral_containers=None)), restore=True
        ).obj
        debugged = evolve(stored, spec=evolve(stored.spec, ephemeral_containers=ephemeral))
        return api.update_object(debugged, subresource=kinds.EPHEMERAL_CONTAINERS).obj

    def _restore_bound_pod(self, stored: Pod, given: Pod) -> None:
        snapshot = given.status or PodStatus()
        phase = snapshot.phase if snapshot.phase in TERMINAL_PHASES else PHASE_RUNNING
        status = evolve(
            snapshot,
            phase=phase,
            qos_class=stored.status.qos_class if stored.status else None,
            start_time=snapshot.start_time or rfc3339(self.cluster.clock.now()),
        )
        self.cluster.api.update_status(evolve(stored, status=status))
