"""Running an HTTP write so that waiting on admission webhooks holds up nothing else.

What it is: ``WebhookWaits.run(attempt)`` runs one write of ``kubeprio serve`` (the
REST handler's synchronous call) as attempts with an ``AnswerBook`` active
(``admission.webhookdeferral``). An attempt that needs webhook answers stops with
``PendingCallsError`` before it has written anything; the calls are then posted on worker
threads (each within its webhook's ``timeoutSeconds``: the deadline is upstream's
``context deadline exceeded`` failure) while the event loop goes on serving other
requests, the scheduler and the controllers; then the write runs again from the start
with the answers. The store and ``ApiService`` are only ever touched by the attempts,
on the event loop, one at a time.

A replay must build the same reviews to find its answers, so every attempt of one
write sees the same values the server picks itself: the random generators that name
and identify objects (uids, ``generateName`` suffixes, cluster IPs and node ports, the
service account volume suffix) are switched to a stream of the write's own, restarted
at each attempt, and the service's clock is frozen at its first reading (an object's
``creationTimestamp`` is then taken before its validating webhooks are called, as
upstream's ``BeforeCreate`` does). Writes while no webhook configuration exists run as
one plain call, exactly as before. Writes by the in-process controllers wait the same
way, each attempt a retry of the controller's (``apiserver.controllerwebhooks``).

Who drives it: ``apiserver.http`` for POST, PUT, PATCH and DELETE; ``serve.server``
builds it with the generators and closes it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Final, TypeVar

from kubeprio.admission.webhookcall import CallingError
from kubeprio.admission.webhookdeferral import (
    ACTIVE_BOOK,
    AnswerBook,
    PendingCall,
    PendingCallsError,
)
from kubeprio.admission.webhookreview import ReviewResponse
from kubeprio.api.kinds import for_model
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver.servicecore import ServiceCore
from kubeprio.clock import Clock

R = TypeVar("R")

WEBHOOK_THREADS: Final = 64
"""Webhook calls in flight at once; more wait for a free thread (their deadline runs
from when they are posted)."""
CONFIGURATION_RESOURCES: Final[tuple[str, ...]] = (
    for_model(MutatingWebhookConfiguration).plural,
    for_model(ValidatingWebhookConfiguration).plural,
)


class FrozenClock:
    """A clock that answers its first reading forever (one write's attempts)."""

    def __init__(self, base: Clock) -> None:
        self._base = base
        self._value: float | None = None

    def now(self) -> float:
        """The first time read through this clock."""
        if self._value is None:
            self._value = self._base.now()
        return self._value


class WritePins:
    """What one write's attempts share: the generators' streams and the frozen clock."""

    def __init__(self, service: ServiceCore, generators: Sequence[random.Random]) -> None:
        self._service = service
        self._generators = generators
        # Seeds from the generators themselves: the main streams move on past them, so
        # the write's values never repeat another write's.
        self._states = [random.Random(g.getrandbits(64)).getstate() for g in generators]
        self._clock = FrozenClock(service.clock)

    def apply(self) -> tuple[list[tuple[object, ...]], Clock]:
        """Switch to the write's streams (from their start) and clock; return what to
        restore afterwards."""
        outer = ([g.getstate() for g in self._generators], self._service.clock)
        for generator, state in zip(self._generators, self._states, strict=True):
            generator.setstate(state)
        self._service.clock = self._clock
        return outer

    def restore(self, outer: tuple[list[tuple[object, ...]], Clock]) -> None:
        """Put back the streams and clock ``apply`` replaced."""
        states, clock = outer
        self._service.clock = clock
        for generator, state in zip(self._generators, states, strict=True):
            generator.setstate(state)


def attempt_with(book: AnswerBook, pins: WritePins, attempt: Callable[[], R]) -> R:
    """One attempt of a write with the answers in ``book`` and its pinned streams and
    clock. Raises ``PendingCallsError`` (a round counted) when it needs answers that are
    not in yet; the HTTP wait and the controllers' retries both run attempts this way."""
    token = ACTIVE_BOOK.set(book)
    outer = pins.apply()
    try:
        book.begin_attempt()
        return attempt()
    except PendingCallsError:
        book.rounds += 1
        raise
    finally:
        pins.restore(outer)
        ACTIVE_BOOK.reset(token)


class WebhookWaits:
    """Runs writes so that their webhook calls wait off the event loop."""

    def __init__(
        self,
        service: ServiceCore,
        *,
        generators: Sequence[random.Random] = (),
        threads: int = WEBHOOK_THREADS,
    ) -> None:
        self._service = service
        self._generators = tuple(generators)
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="webhook")
        # Whether any configuration exists, counted again only when the configurations'
        # generations moved (Store.generation): one comparison per write otherwise.
        self._seen_generations: tuple[int, ...] = ()
        self._any_configuration = False

    def configured(self) -> bool:
        """Whether any webhook configuration exists (else writes run as plain calls)."""
        store = self._service.store
        mutating, validating = CONFIGURATION_RESOURCES
        generations = (store.generation(mutating), store.generation(validating))
        if generations != self._seen_generations:
            self._any_configuration = any(
                store.count(resource) for resource in CONFIGURATION_RESOURCES
            )
            self._seen_generations = generations
        return self._any_configuration

    def pins(self) -> WritePins:
        """Fresh streams and a frozen clock for one write's attempts."""
        return WritePins(self._service, self._generators)

    async def run(self, attempt: Callable[[], R]) -> R:
        """Run ``attempt`` (a synchronous write) until it needs no more webhook answers."""
        if not self.configured():
            return attempt()
        book = AnswerBook(self._service.store.current_revision)
        pins = self.pins()
        while True:
            try:
                return attempt_with(book, pins, attempt)
            except PendingCallsError as deferred:
                calls = deferred.calls
            await asyncio.gather(*(self._settle(book, call) for call in calls))

    async def _settle(self, book: AnswerBook, call: PendingCall) -> None:
        """Post one review on a worker thread and record its answer or failure."""
        book.record(call.key, await self.answer_of(call))

    async def answer_of(self, call: PendingCall) -> ReviewResponse | CallingError:
        """Post one review on a worker thread: its answer, or the failure (the deadline's
        once ``timeoutSeconds`` passed)."""
        loop = asyncio.get_running_loop()
        try:
            return await asyncio.wait_for(
                loop.run_in_executor(self._executor, call.run), timeout=call.timeout
            )
        except CallingError as exc:
            return exc
        except TimeoutError:
            return call.deadline

    def close(self) -> None:
        """Stop taking calls; threads still posting end with their socket timeouts."""
        self._executor.shutdown(wait=False, cancel_futures=True)
