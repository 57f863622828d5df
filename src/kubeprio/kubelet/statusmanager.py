"""The kubelet's pod status writes: the latest status wanted for each pod, written so
that a write waiting on an admission webhook holds nothing up.

Mirrors upstream's status manager (``pkg/kubelet/status/status_manager.go``): the pod
workers hand it each new status (``SetPodStatus``) and carry on; its sync loop writes
the latest one (``syncPod``). On a real node the write is a call of its own goroutine;
in ``kubeprio serve`` every component shares one event loop, so a write that must wait
for a webhook's answer (``client.writepending.WritePendingError``) is parked and run
again once the answers are in (``client.answeredretry.AnsweredRetry``; the API service
replays the same logical write, so each webhook is called once per review).

Per pod, at most one write is on its way. A status set while one waits is queued behind
it; several set meanwhile are chained (each built on top of the one before, as
upstream's cached status keeps every change the kubelet made, written or not) into one
write sent once the waiting one is stored. So the statuses reach the API in the order
the kubelet decided them, never an older after a newer, and none the kubelet set is
lost. What the caller does with the stored pod (``then``) runs once it is stored, with
None when the pod is gone, was replaced, kept conflicting, or the write was refused (a
refusal is logged, as upstream's ``syncPod`` logs a failed update).

Outside ``kubeprio serve`` (the simulation, tests without webhooks) nothing waits:
``set_status`` writes at once and runs ``then`` before it returns.

Driven by ``kubelet.kubelet``.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Pod, PodStatus
from kubeprio.api.model import evolve
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.protocol import Client
from kubeprio.client.statuswrite import write_status

LOG: Final = logging.getLogger("kubeprio.kubelet")

StatusBuild = Callable[[Pod], PodStatus]
"""The new status, from the pod as the API server has it now."""
AfterWrite = Callable[[Pod | None], None]
"""What to do with the stored pod (None: nothing was stored)."""


@dataclasses.dataclass(slots=True)
class _Wanted:
    """A status to write: its pod, how to build it, and what follows the write."""

    pod: Pod
    build: StatusBuild
    then: list[AfterWrite]


def _chained(first: _Wanted, later: _Wanted) -> _Wanted:
    """One write doing ``first``'s change and then ``later``'s on top of it."""

    def build(current: Pod) -> PodStatus:
        return later.build(evolve(current, status=first.build(current)))

    return _Wanted(later.pod, build, first.then + later.then)


class PodStatusManager:
    """Writes each pod's latest wanted status, one write per pod at a time."""

    def __init__(self, client: Client, writes: AnsweredRetry) -> None:
        self._client = client
        self._writes = writes
        self._writing: dict[str, _Wanted] = {}
        """Pod UID -> the write on its way (run now, or waiting on webhook answers)."""
        self._queued: dict[str, _Wanted] = {}
        """Pod UID -> what was set while that write waits, sent once it is stored."""

    def set_status(self, pod: Pod, build: StatusBuild, then: AfterWrite | None = None) -> None:
        """Write ``build(latest pod)`` as ``pod``'s status, now or after the write of it
        that waits; ``then`` gets the stored pod."""
        uid = pod.metadata.uid or ""
        wanted = _Wanted(pod, build, [then] if then is not None else [])
        if uid in self._writing:
            queued = self._queued.get(uid)
            self._queued[uid] = wanted if queued is None else _chained(queued, wanted)
            return
        self._start(uid, wanted)

    def waiting(self, uid: str) -> bool:
        """Whether a status write of that pod waits on webhook answers."""
        return uid in self._writing

    def __len__(self) -> int:
        """Pods whose status writes wait."""
        return len(self._writing)

    def _start(self, uid: str, wanted: _Wanted) -> None:
        self._writing[uid] = wanted
        self._writes.run(("status", uid), functools.partial(self._write, uid))

    def _write(self, uid: str) -> None:
        """One attempt of the write on its way (a retry replays the first attempt's
        request, so it stores what the webhook reviewed); then the queued one."""
        wanted = self._writing[uid]
        try:
            stored = write_status(
                self._client,
                wanted.pod,
                lambda current: evolve(current, status=wanted.build(current)),
                read_first=True,
            )
        except errors.ConflictError:
            stored = None
        except errors.StatusError as exc:
            LOG.warning("failed to update the status of pod %s: %s", _name(wanted.pod), exc)
            stored = None
        del self._writing[uid]
        for then in wanted.then:
            then(stored)
        queued = self._queued.pop(uid, None)
        if queued is not None:
            self._start(uid, queued)


def _name(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"
