"""``InformerGroup``: many informers pumped in a fixed order, skipping the quiet ones.

A driver (the simulation engine, the serve loop, the scheduler) pumps its informers after
every unit of work, and almost always none has anything new. Asking each informer costs
a call per informer per pump; the group instead keeps one flag per informer, raised by
the informer's wakeup (``Informer.add_wakeup``: a watch event arrived, or the watch
ended), and a group flag raised with any of them. A pump with no flag raised returns at
once; otherwise it pumps the flagged informers in the group's order, exactly those that
pumping every informer would have found work in, in the same order, so handlers run as
they would without the group.

Driven by whoever calls ``pump``; no clock, no threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubeprio.client.informer import Informer


class InformerGroup:
    """Informers pumped together, in order (handlers run in registration order)."""

    def __init__(self, informers: Sequence[Informer[Any]] = ()) -> None:
        self.informers: list[Informer[Any]] = []
        self._flagged: list[bool] = []
        self._any_flagged = False
        for informer in informers:
            self.add(informer)

    def add(self, informer: Informer[Any]) -> None:
        """Pump ``informer`` too, after the ones already in the group."""
        position = len(self.informers)
        self.informers.append(informer)
        # Flagged until its first pump: it may not be started, or may hold events.
        self._flagged.append(True)
        self._any_flagged = True
        informer.add_wakeup(self._waker(position))

    def _waker(self, position: int) -> Callable[[], None]:
        flagged = self._flagged

        def wake() -> None:
            flagged[position] = True
            self._any_flagged = True

        return wake

    def start(self) -> None:
        """List and watch, in order."""
        for informer in self.informers:
            informer.start()

    def pump(self) -> int:
        """Deliver pending events of every flagged informer, in order; return how many.

        An informer woken while an earlier one's handlers run is pumped in this pass when
        its turn comes, and one woken after its turn in the next pass: as a plain loop
        over every informer would. One that is not quiet after its pump (a watch that
        does not notify, or one that ended and must relist) stays flagged.
        """
        if not self._any_flagged:
            return 0
        self._any_flagged = False
        flagged = self._flagged
        handled = 0
        for position, informer in enumerate(self.informers):
            if flagged[position]:
                flagged[position] = False
                handled += informer.pump()
                if not informer.quiet:
                    flagged[position] = True
                    self._any_flagged = True
        return handled
