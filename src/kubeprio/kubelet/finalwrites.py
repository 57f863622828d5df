"""A pod's last writes from its kubelet: the final status, then the final delete.

Mirrors the end of upstream's status manager (``pkg/kubelet/status/status_manager.go``
``syncPod``): once a pod's containers are gone, or it was rejected at admission, its
terminal status is written; a pod being deleted is then deleted with grace period 0 and
a UID precondition (``NotFound``: already gone; ``Conflict``: a new pod took the name),
which lets the API server forget it. Until the final status is stored, the pod's events
are ignored (it must not be admitted or adopted again); once it is stored, events older
than the stored revision are ignored too.

Driven by ``kubelet.kubelet``; the status goes through ``kubelet.statusmanager``, the
delete through ``client.answeredretry`` (in ``kubeprio serve`` a delete waiting on a
webhook is sent once answered, as upstream's goroutine would send it; a repeat
meanwhile is not started).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.api.meta import Preconditions
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.protocol import Client, DeleteRequest
from kubeprio.kubelet.statusmanager import AfterWrite, PodStatusManager, StatusBuild

ON_ITS_WAY: Final = float("inf")
"""A pod's entry while its final status waits on webhook answers: every event ignored."""


def revision(pod: Pod) -> int:
    """The pod's resourceVersion as a number (newer versions are larger)."""
    return int(pod.metadata.resource_version or 0)


class FinalWrites:
    """The final status and delete of the pods one kubelet is done with."""

    def __init__(self, client: Client, statuses: PodStatusManager, writes: AnsweredRetry) -> None:
        self._client = client
        self._statuses = statuses
        self._writes = writes
        self._finished: dict[str, float] = {}
        """Pod UID -> revision of its stored final status (``ON_ITS_WAY`` until stored)."""

    def ignores(self, pod: Pod, deleted: bool) -> bool:
        """Whether an event about ``pod`` concerns a pod the kubelet is done with (the
        entry is dropped at its deletion or at a version as new as the final status)."""
        uid = pod.metadata.uid or ""
        finished = self._finished.get(uid)
        if finished is None:
            return False
        if deleted or revision(pod) >= finished:
            del self._finished[uid]
        return True

    def write(
        self,
        pod: Pod,
        build: StatusBuild,
        *,
        delete_if_deleted: bool = False,
        delete_always: bool = False,
    ) -> None:
        """Write a status after which the kubelet is done with the pod, then
        (``delete_*``) the final delete: upstream deletes a pod being deleted once its
        terminal status is written."""
        uid = pod.metadata.uid or ""
        self._finished[uid] = ON_ITS_WAY
        after: AfterWrite = functools.partial(
            self._stored, uid, pod, delete_if_deleted, delete_always
        )
        self._statuses.set_status(pod, build, after)

    def _stored(
        self,
        uid: str,
        pod: Pod,
        delete_if_deleted: bool,
        delete_always: bool,
        stored: Pod | None,
    ) -> None:
        if stored is None:
            if self._finished.get(uid) == ON_ITS_WAY:
                del self._finished[uid]
        elif uid in self._finished:  # (a deletion event meanwhile cleared it)
            self._finished[uid] = revision(stored)
        latest = stored or pod
        if delete_always or (delete_if_deleted and latest.metadata.deletion_timestamp):
            self.delete(latest)

    def delete(self, pod: Pod) -> None:
        """The final delete: grace 0, preconditioned on the pod's UID."""
        uid = pod.metadata.uid or ""
        self._writes.run(("delete", uid), functools.partial(self._delete_now, pod))

    def _delete_now(self, pod: Pod) -> None:
        options = DeleteRequest(
            grace_period_seconds=0, preconditions=Preconditions(uid=pod.metadata.uid)
        )
        with contextlib.suppress(errors.NotFoundError, errors.ConflictError):
            self._client.delete(
                Pod, pod.metadata.name or "", pod.metadata.namespace, options=options
            )
