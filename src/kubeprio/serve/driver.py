"""The real-time driver: the control plane's components settled on the asyncio loop.

SimPy's ``RealtimeEnvironment`` to ``sim.engine``'s ``Environment``: the same ``Driven``
components (informers, scheduler, controllers, kubelets) and the same settle rule —
pump every informer, call ``run_once`` until nobody has work at this instant — but time
is the wall clock, and between settles the driver *sleeps* until the earliest
``next_wakeup()`` or until the store reports a write, whichever comes first. Writes wake
it through store watches (one per resource) whose listener sets an ``asyncio.Event``:
the listener runs inside the write, on the loop thread, so no locking is needed.

It shares the loop with uvicorn, because ``ApiService`` and the store are not
thread-safe: a settle yields to the loop (``await asyncio.sleep(0)``) after every
``budget`` seconds of work, so HTTP requests are served while thousands of pods are
scheduled. Each round between two yields writes as one batch (``Store.batch``: one
SQLite COMMIT for all its binds, events and status writes). A component that raises is
logged and the loop goes on after a short pause (a server must outlive one bad object;
the simulation, by contrast, aborts). Event handlers that raise inside an informer's pump
(``EventHandlerErrors``: the events were applied and delivered to the other handlers) are
logged with their tracebacks and the round goes on without a pause. The driver remembers which component failed on
its last pass (``failure``) and whether its loop runs (``running``): ``kubeprio serve``
reports both as the ``scheduler`` and ``controller-manager`` ComponentStatuses.

Who drives it: ``serve.server`` runs ``RealTimeDriver.run`` as a task and sets ``stop``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Final

from kubeprio.api import kinds
from kubeprio.client.informer import EventHandlerErrors
from kubeprio.clock import Clock
from kubeprio.sim.engine import Driven
from kubeprio.store.interface import KeyPrefix, Store, StoreWatch

LOG: Final = logging.getLogger("kubeprio.serve")
DEFAULT_BUDGET: Final = 0.02
"""Seconds of component work between two yields to the HTTP server."""
MIN_SLEEP: Final = 0.001
ERROR_PAUSE: Final = 0.1


class RealTimeDriver:
    """Settles ``components`` whenever the store changes or a component's timer is due."""

    def __init__(
        self,
        components: Sequence[Driven],
        *,
        clock: Clock,
        store: Store,
        budget: float = DEFAULT_BUDGET,
    ) -> None:
        self.components = list(components)
        self.clock = clock
        self.store = store
        self.budget = budget
        self.settles = 0
        self.errors = 0
        self._wake = asyncio.Event()
        self._watches: list[StoreWatch] = []
        self.running = False
        self._failures: dict[int, str] = {}
        """``id(component)`` -> why its last pump or run raised (cleared by a good run)."""

    def failure(self, component: Driven) -> str | None:
        """Why ``component`` failed on its last pass, or None if it did not."""
        return self._failures.get(id(component))

    def _on_write(self) -> None:
        self._wake.set()

    def wake(self) -> None:
        """Settle soon: a component got work from outside the watched writes (a custom
        object's deletion the quota controller recounts after; on the loop thread)."""
        self._wake.set()

    def _subscribe(self) -> None:
        revision = self.store.current_revision()
        for info in kinds.RESOURCES:
            watch = self.store.watch(KeyPrefix(info.plural), revision)
            watch.set_listener(self._on_write)
            self._watches.append(watch)

    def _drain(self) -> bool:
        """Forget the wake-up events; False once the store closed the watches (shutdown)."""
        for watch in self._watches:
            watch.poll()
        return not any(watch.closed for watch in self._watches)

    def _pump(self, component: Driven) -> int:
        try:
            return component.pump()
        except Exception as exc:
            self._failures[id(component)] = _describe(exc)
            self.errors += 1
            if isinstance(exc, EventHandlerErrors):
                # The events are in the caches and every other handler had them: log the
                # failed handlers (each with its traceback) and go on with this round.
                LOG.exception("event handlers failed in %s", type(component).__name__)
                return 1
            LOG.exception("pump failed in %s", type(component).__name__)
            raise

    def _run_once(self, component: Driven) -> bool:
        try:
            worked = component.run_once()
        except Exception as exc:
            self._failures[id(component)] = _describe(exc)
            self.errors += 1
            LOG.exception("run_once failed in %s", type(component).__name__)
            raise
        if self._failures:
            self._failures.pop(id(component), None)
        return worked

    async def settle(self, stop: asyncio.Event | None = None) -> None:
        """Pump and run every component until none has work now, yielding every ``budget``;
        return early once ``stop`` is set (a component that always has work must not keep
        a stopping server alive)."""
        while True:
            deadline = time.perf_counter() + self.budget
            progressed = False
            # One round is one group commit: nobody outside sees its writes before the
            # round ends (no HTTP request is served until the next await).
            with self.store.batch():
                for component in self.components:
                    if self._pump(component):
                        progressed = True
                for component in self.components:
                    # Unlike the simulation, informers are pumped once per round, not
                    # after every unit of work: components tolerate stale caches (the
                    # scheduler assumes its binds, controllers keep expectations), as
                    # upstream's do, and a pump of every informer per pod would cost
                    # more than the pod.
                    while self._run_once(component):
                        progressed = True
                        if time.perf_counter() > deadline:
                            break
            self.settles += 1
            if not progressed:
                return
            await asyncio.sleep(0)
            if stop is not None and stop.is_set():
                return

    def next_wakeup(self) -> float | None:
        """The earliest timer of any component (epoch seconds)."""
        wakeups = [w for c in self.components if (w := c.next_wakeup()) is not None]
        return min(wakeups) if wakeups else None

    async def run(self, stop: asyncio.Event) -> None:
        """Drive the components until ``stop`` is set (or the store closes)."""
        self._subscribe()
        stopper = asyncio.ensure_future(stop.wait())
        self.running = True
        try:
            while not stop.is_set():
                self._wake.clear()
                if not self._drain():
                    LOG.info("driver stopped: the store was closed")
                    return
                try:
                    await self.settle(stop)
                except Exception:
                    await asyncio.sleep(ERROR_PAUSE)
                    continue
                wakeup = self.next_wakeup()
                if self._wake.is_set():
                    continue
                timeout = None if wakeup is None else max(wakeup - self.clock.now(), MIN_SLEEP)
                waiter = asyncio.ensure_future(self._wake.wait())
                try:
                    await asyncio.wait(
                        {waiter, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    waiter.cancel()
        finally:
            self.running = False
            stopper.cancel()
            for watch in self._watches:
                with contextlib.suppress(Exception):
                    watch.close()


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
