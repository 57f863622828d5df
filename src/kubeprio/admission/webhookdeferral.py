"""Waiting on admission webhooks outside the write: deferred calls and their answers.

What it is: the part of the webhook plugins that lets ``kubeprio serve`` answer other
requests while one write waits on a webhook. The API service and its store are not
thread-safe and run on one event loop, so a write runs as a synchronous *attempt* that
no one else interleaves with; a webhook call cannot wait inside it without stopping
everything. Instead, inside an attempt that has an ``AnswerBook`` (set in
``ACTIVE_BOOK`` by ``apiserver.webhookwaits`` around an HTTP write):

* a webhook whose review the book has an answer for gets that answer (or that failure);
* a webhook it has none for stops the attempt with ``PendingCallsError``: nothing has been
  written (admission runs before the store write and plugins never write), so the
  attempt is simply abandoned. The caller posts the reviews (on worker threads, within
  each webhook's ``timeoutSeconds``), records the answers and runs the write again from
  the start, which is upstream's optimistic concurrency: the replay reads the store as
  it is then, re-checks the resourceVersion, re-runs defaulting and every plugin, and a
  webhook whose review changed meanwhile (another old object, other labels) is called
  again, as upstream's ``GuaranteedUpdate`` re-runs admission on a retry.

Answers are keyed by the webhook (name, URL, resolved address, mutating or not) and the
review with its ``uid`` left out, so a replay that builds the same review finds the
answer. The validating plugin gathers every missing answer of its round before it stops
the attempt, so those webhooks are called in parallel, as upstream's dispatcher does.

Two guards keep a replay safe. An attempt that already wrote to the store (a request
that writes twice, such as an eviction or a ``deletecollection``) calls any further
webhook in place instead of deferring, so nothing is written twice; and after
``MAX_DEFERRALS`` rounds (a review that keeps changing) the attempt calls in place too. Without a book (in-process callers:
controllers, the scheduler, ``kubeprio simulate``, which calls no webhooks at all) every
call is made in place, as before.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import json
from collections.abc import Callable
from typing import Any, Final

from kubeprio.admission.chain import AdmissionRequest
from kubeprio.admission.webhookcall import CallingError, PreparedCall, WebhookClient
from kubeprio.admission.webhookmatching import Invocation
from kubeprio.admission.webhookreview import ReviewResponse

MAX_DEFERRALS: Final = 32
"""Rounds of calls one write may wait on before it calls in place (a write that hits
more webhooks than this, or whose reviews keep changing, blocks for the rest)."""


@dataclasses.dataclass(frozen=True, slots=True)
class PendingCall:
    """A webhook call an attempt needs: ``run`` posts and reads the answer (blocking,
    network only); ``deadline`` is the failure when ``timeout`` seconds pass first."""

    key: str
    run: Callable[[], ReviewResponse]
    timeout: float
    deadline: CallingError


class PendingCallsError(Exception):
    """An attempt stopped because it needs these webhook answers first."""

    def __init__(self, calls: tuple[PendingCall, ...]) -> None:
        super().__init__(f"{len(calls)} admission webhook call(s) pending")
        self.calls = calls


def call_key(prepared: PreparedCall) -> str:
    """What identifies a call across attempts: the webhook and its review without uid."""
    request = {**prepared.review.get("request", {}), "uid": ""}
    review = {**prepared.review, "request": request}
    target = prepared.target
    return "\n".join(
        (
            prepared.webhook_name,
            "mutating" if prepared.mutating else "validating",
            target.url,
            f"{target.host}:{target.port}",
            json.dumps(review, sort_keys=True, separators=(",", ":")),
        )
    )


class AnswerBook:
    """The answers one write has got so far, kept across its attempts."""

    def __init__(self, revision: Callable[[], int]) -> None:
        self._revision = revision
        self._answers: dict[str, ReviewResponse | CallingError] = {}
        self._attempt_revision = 0
        self.rounds = 0

    def begin_attempt(self) -> None:
        """An attempt starts: remember the store's revision to notice its own writes."""
        self._attempt_revision = self._revision()

    def record(self, key: str, answer: ReviewResponse | CallingError) -> None:
        """Keep the answer (or the failure) of a call for the next attempts."""
        self._answers[key] = answer

    def _may_defer(self) -> bool:
        return self.rounds < MAX_DEFERRALS and self._revision() == self._attempt_revision

    def answer(
        self, prepared: PreparedCall, perform: Callable[[PreparedCall], ReviewResponse]
    ) -> ReviewResponse:
        """The recorded answer to this review; raise its recorded failure, or
        ``PendingCallsError`` when there is none yet (or call in place, see the guards)."""
        key = call_key(prepared)
        found = self._answers.get(key)
        if isinstance(found, CallingError):
            raise CallingError(found.webhook_name, found.reason)
        if found is not None:
            return found
        if not self._may_defer():
            return perform(prepared)
        pending = PendingCall(
            key=key,
            run=functools.partial(perform, prepared),
            timeout=prepared.timeout,
            deadline=prepared.deadline_error(),
        )
        raise PendingCallsError((pending,))


ACTIVE_BOOK: Final[contextvars.ContextVar[AnswerBook | None]] = contextvars.ContextVar(
    "kubeprio_admission_answer_book", default=None
)
"""The book of the write running now (``None``: call webhooks in place)."""


def answered_call(
    client: WebhookClient,
    invocation: Invocation,
    request: AdmissionRequest,
    encode: Callable[[object, Invocation], dict[str, Any] | None],
    *,
    mutating: bool,
) -> ReviewResponse:
    """One webhook's answer: from the active book (or ``PendingCallsError``), or, without a
    book, by calling it now. ``CallingError`` when the call failed."""
    book = ACTIVE_BOOK.get()
    if book is None:
        return client.call(invocation, request, encode, mutating=mutating)
    prepared = client.prepare(invocation, request, encode, mutating=mutating)
    return book.answer(prepared, client.perform)
