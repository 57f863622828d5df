"""A tiny driver for tests: pump informers, run due components, move the ManualClock.

The simulator's engine and the serve loop are the real drivers; this one does just
enough for unit tests: ``settle()`` runs everything due now until nothing changes,
``advance(seconds)`` walks the clock from wakeup to wakeup, settling at each.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol


class Component(Protocol):
    def run_once(self) -> Any: ...

    def next_wakeup(self) -> float | None: ...


class Pumpable(Protocol):
    def pump(self) -> int: ...


class Driver:
    def __init__(
        self, clock: Any, informers: Iterable[Pumpable] = (), components: Iterable[Component] = ()
    ) -> None:
        self.clock = clock
        self.informers = list(informers)
        self.components = list(components)

    def add(self, *components: Component) -> None:
        self.components.extend(components)

    def watch(self, *informers: Pumpable) -> None:
        self.informers.extend(informers)

    def settle(self, max_rounds: int = 1000) -> None:
        """Pump and run everything due now until quiet."""
        for _ in range(max_rounds):
            pumped = sum(informer.pump() for informer in self.informers)
            now = self.clock.now()
            due = [c for c in self.components if (w := c.next_wakeup()) is not None and w <= now]
            for component in due:
                component.run_once()
            if not pumped and not due:
                return
        raise AssertionError("did not settle")

    def next_wakeup(self) -> float | None:
        wakeups = [w for c in self.components if (w := c.next_wakeup()) is not None]
        return min(wakeups) if wakeups else None

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, stopping at every wakeup on the way."""
        target = self.clock.now() + seconds
        self.settle()
        while True:
            wakeup = self.next_wakeup()
            if wakeup is None or wakeup > target:
                break
            self.clock.time = max(wakeup, self.clock.now())
            self.settle()
        self.clock.time = target
        self.settle()
