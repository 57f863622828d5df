"""Writes that wait on admission webhooks, for callers without a work queue to requeue on.

What it is: on a real cluster the scheduler's preemption, its status patches, the pod
garbage collector's and the taint eviction's deletes each run in a goroutine of their
own (or a worker) whose API call simply blocks until the webhook answers, while the
rest of the process goes on. kubeprio's components share ``kubeprio serve``'s event loop,
so such a write must not wait in place: run through ``retryable`` it raises
``WritePendingError`` (``client.writepending``) instead, and ``AnsweredRetry`` runs the
same write again once the answers are in. The retry is recognised by the API service as
the same *logical write* (``apiserver.controllerwebhooks``): each webhook is called once
per review, and the object is written once, as the blocked goroutine would have.

Outside ``kubeprio serve`` (the simulation, ``kubeprio check``, tests without webhooks) no
write is ever pending: ``run`` is one plain call.

Who drives it: the scheduler (``scheduler.executor``, ``scheduler.schedulingfailure``),
the pod GC, node lifecycle and taint eviction controllers, the kubelets
(``kubelet.kubelet``'s start, ``kubelet.statusmanager``, ``kubelet.nodelease``,
``kubelet.pressure``). The retry runs on the event
loop from the task that received the last answer (``ControllerWebhookWrites``), between
two rounds of the driver, never inside one.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Hashable
from typing import Final, TypeVar

from kubeprio.client.writepending import RETRYABLE_WRITES, WRITE_SCOPE, WritePendingError
from kubeprio.errors import KubeprioError

LOG: Final = logging.getLogger("kubeprio.client")

T = TypeVar("T")


def retryable(call: Callable[[], T]) -> T:
    """``call()`` with its writes opted in to ``WritePendingError`` (it handles them), as
    one unit of work (``WRITE_SCOPE``: a write repeated in a later call is its retry)."""
    token = RETRYABLE_WRITES.set(True)
    scope = WRITE_SCOPE.set(object())
    try:
        return call()
    finally:
        WRITE_SCOPE.reset(scope)
        RETRYABLE_WRITES.reset(token)


class AnsweredRetry:
    """Runs writes now, or again once the webhook answers they wait on are in."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        """Who writes (for the log of a retry that failed)."""
        self._waiting: set[Hashable] = set()
        self.parked = 0
        """Writes that waited on answers so far (tests check a retry posted none again)."""

    def run(
        self, key: Hashable, write: Callable[[], T], *, again: Callable[[], object] | None = None
    ) -> T | None:
        """Run ``write`` and return what it returns; ``None`` when it waits on webhook
        answers (``again``, by default ``write`` itself, runs once they are in; its result
        goes nowhere) or an earlier write of ``key`` still waits (the blocked call of
        upstream's goroutine, which nobody starts twice). ``write`` handles its own API
        errors; anything else it raises propagates."""
        if key in self._waiting:
            return None
        try:
            return retryable(write)
        except WritePendingError as pending:
            self._waiting.add(key)
            self.parked += 1
            pending.when_answered(functools.partial(self._again, key, again or write))
            return None

    def waiting(self, key: Hashable) -> bool:
        """Whether a write of ``key`` waits on its answers."""
        return key in self._waiting

    def __len__(self) -> int:
        return len(self._waiting)

    def _again(self, key: Hashable, write: Callable[[], object]) -> None:
        self._waiting.discard(key)
        try:
            self.run(key, write, again=write)
        except KubeprioError as exc:  # refused: logged, as upstream's goroutine logs it
            LOG.warning("%s: a write retried after its webhook answers failed: %s", self.owner, exc)
        except Exception:  # the answering task must go on with its other listeners
            LOG.exception("%s: a write retried after its webhook answers failed", self.owner)
