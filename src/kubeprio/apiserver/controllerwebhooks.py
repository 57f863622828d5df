"""Controllers' writes that wait on admission webhooks, without holding ``kubeprio serve``.

What it is: the in-process counterpart of ``apiserver.webhookwaits``. A controller's
write (``client.writepending.RETRYABLE_WRITES``) that reaches a webhook whose answer it
does not have stops before it writes anything (``admission.webhookdeferral``); its
reviews are posted on the worker threads of ``WebhookWaits`` and the write raises
``WritePendingError``. The controller requeues the key, as it would after any failed
API call, and its retry, once the answers are in, replays the write with them: a
webhook is called once per review, as on a real cluster where the controller's call
simply blocks until the answer.

A retry is recognised as the same *logical write* by its ``identity``: a create's verb
and input (the pod a ReplicaSet creates from its template), an update's, patch's or
delete's verb and target object. Each logical write keeps, across its attempts, its
``AnswerBook``, its ``WritePins`` (the uid, ``generateName`` suffix and other draws, and
the frozen clock) and its first attempt, which every retry replays: the retry builds the
same reviews, names the object as the first attempt did, and writes it once. It is the
write the controller's blocked call would have completed upstream; a retry whose input
changed meanwhile (a status with a newer timestamp) thus completes the first write, and
the controller's next sync writes the rest, instead of asking the webhook about each
newer input and never catching up. Identical
writes can also be distinct logical writes (a ReplicaSet creates its pods from one
template, several in one sync): within one unit of work (``WRITE_SCOPE``: a controller's
sync of one key, one retried write; else one synchronous stretch of the event loop) the
n-th identical write takes the n-th logical write not yet taken, oldest first, and a
write beyond those starts a new one. A sync run again in the same stretch (its key
requeued by an informer event while its create waits) is a new unit: it retries. A logical write ends when an attempt returns or
fails with anything but pending answers; one whose retry never came is forgotten
``STALE_AFTER`` seconds after its answers arrived.

Who drives it: ``ApiService``'s ``Client`` write verbs (``apiserver.serviceclientwrites``) when
``serve.server`` has set ``ServiceCore.controller_writes``; ``wake`` is the real-time
driver's, so the requeued controller runs as soon as an answer is in.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

from kubeprio.admission.webhookdeferral import (
    ACTIVE_BOOK,
    AnswerBook,
    PendingCall,
    PendingCallsError,
)
from kubeprio.apiserver.servicecore import ServiceCore
from kubeprio.apiserver.webhookwaits import WebhookWaits, WritePins, attempt_with
from kubeprio.client.writepending import RETRYABLE_WRITES, WRITE_SCOPE, WritePendingError

R = TypeVar("R")

STALE_AFTER: Final = 300.0
"""Seconds an answered logical write waits for its retry before it is forgotten (a
controller that changed its mind: the ReplicaSet was scaled down meanwhile)."""
RETRY_MARGIN: Final = 1.0
"""Seconds past the longest webhook timeout after which a controller retries anyway."""


def _no_wake() -> None:
    return None


class LogicalWrite:
    """One controller write across its attempts: its answers, pins and waiting callers."""

    def __init__(self, attempt: Callable[[], Any], book: AnswerBook, pins: WritePins) -> None:
        self.attempt = attempt
        """The first attempt's call: every retry replays it (see the module docstring)."""
        self.book = book
        self.pins = pins
        self.in_flight: set[str] = set()
        self.listeners: list[Callable[[], None]] = []
        self.answered_at: float | None = None
        self.taken_in: object = None
        """The unit of work (``WRITE_SCOPE``, or the stretch of the event loop) that last
        claimed it."""


class ControllerWebhookWrites:
    """Runs the in-process controllers' writes so that webhook calls wait off the loop."""

    def __init__(
        self,
        service: ServiceCore,
        waits: WebhookWaits,
        *,
        wake: Callable[[], None] = _no_wake,
    ) -> None:
        self._service = service
        self._waits = waits
        self.wake = wake
        self._writes: dict[str, list[LogicalWrite]] = {}
        self._stretch = 0
        self._stretch_open = False
        self._tasks: set[asyncio.Task[None]] = set()
        self.posted = 0
        """Reviews posted so far (tests check that a retry posts none again)."""

    def applies(self) -> bool:
        """Whether the running write should defer: a controller's (not inside an HTTP
        write's attempt, which has its own book) while webhooks are configured."""
        return RETRYABLE_WRITES.get() and ACTIVE_BOOK.get() is None and self._waits.configured()

    def run(self, identity: str, attempt: Callable[[], R]) -> R:
        """Run one attempt of the write ``identity`` names; raise ``WritePendingError``
        when it needs webhook answers that are not in yet."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop to wait on (a synchronous caller): call in place
            return attempt()
        self._open_stretch(loop)
        write = self._claim(identity, attempt)
        try:
            result = cast(R, attempt_with(write.book, write.pins, write.attempt))
        except PendingCallsError as deferred:
            calls = deferred.calls
        except BaseException:
            self._finish(identity, write)
            raise
        else:
            self._finish(identity, write)
            return result
        write.answered_at = None
        for call in calls:
            if call.key not in write.in_flight:
                write.in_flight.add(call.key)
                self._post(loop, write, call)
        raise WritePendingError(
            f"{len(calls)} admission webhook call(s) pending",
            retry_after=max(call.timeout for call in calls) + RETRY_MARGIN,
            when_answered=write.listeners.append,
        )

    # --- logical writes ----------------------------------------------------------------------

    def _open_stretch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Number the synchronous stretch running now; it ends when the loop runs its
        callbacks again (``call_soon``), which no code of this stretch can interleave."""
        if self._stretch_open:
            return
        self._stretch += 1
        self._stretch_open = True
        loop.call_soon(self._close_stretch)
        self._forget_stale()

    def _close_stretch(self) -> None:
        self._stretch_open = False

    def _claim(self, identity: str, attempt: Callable[[], Any]) -> LogicalWrite:
        """The oldest logical write of ``identity`` not yet taken in this stretch, or a new
        one of ``attempt``."""
        writes = self._writes.setdefault(identity, [])
        scope = WRITE_SCOPE.get()
        unit = scope if scope is not None else self._stretch
        for write in writes:
            if write.taken_in != unit:
                write.taken_in = unit
                return write
        write = LogicalWrite(
            attempt, AnswerBook(self._service.store.current_revision), self._waits.pins()
        )
        write.taken_in = unit
        writes.append(write)
        return write

    def _finish(self, identity: str, write: LogicalWrite) -> None:
        writes = self._writes.get(identity)
        if writes is not None and write in writes:
            writes.remove(write)
            if not writes:
                del self._writes[identity]

    def _forget_stale(self) -> None:
        if not self._writes:
            return
        cutoff = time.monotonic() - STALE_AFTER
        for identity in list(self._writes):
            kept = [
                w for w in self._writes[identity] if w.answered_at is None or w.answered_at > cutoff
            ]
            if kept:
                self._writes[identity] = kept
            else:
                del self._writes[identity]

    # --- posting -------------------------------------------------------------------------------

    def _post(
        self, loop: asyncio.AbstractEventLoop, write: LogicalWrite, call: PendingCall
    ) -> None:
        self.posted += 1
        task = loop.create_task(self._settle(write, call))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _settle(self, write: LogicalWrite, call: PendingCall) -> None:
        """Record one answer; once the write has all it asked for, bring its callers back."""
        write.book.record(call.key, await self._waits.answer_of(call))
        write.in_flight.discard(call.key)
        if write.in_flight:
            return
        write.answered_at = time.monotonic()
        listeners, write.listeners = write.listeners, []
        for listener in listeners:
            listener()
        self.wake()

    def close(self) -> None:
        """Cancel the answers still awaited (the server stops)."""
        for task in list(self._tasks):
            task.cancel()
