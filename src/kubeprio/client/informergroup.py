"""``InformerGroup``: many informers pumped in a fixed order, skipping the quiet ones.

A driver (the simulation engine, the serve loop, the scheduler) pumps its informers after
every unit of work, and almost always none has anything new. Asking each informer costs
a call per informer per pump; the group instead keeps one flag per informer, raised by
the informer's wakeup (``Informer.add_wakeup``: a watch event arrived, or the watch
ended), and a heap of the flagged positions. A pump with no flag raised returns at
once; otherwise it pumps the flagged informers in the group's order, exactly those that
pumping every informer would have found work in, in the same order, so handlers run as
they would without the group. A pump costs the informers it pumps, not the group's
size (a simulation's group holds some thirty informers; a pod write wakes one or two).

An informer whose handlers raised (``EventHandlerErrors``, raised after its batch was
applied) does not stop the pass: the informers after it are pumped too, and the failures
come out of the group's pump at the end, so one bad handler keeps no event from the
handlers of other informers either.

Driven by whoever calls ``pump``; no clock, no threads.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

from kubeprio.client.informer import EventHandlerErrors, Informer


class InformerGroup:
    """Informers pumped together, in order (handlers run in registration order)."""

    def __init__(self, informers: Sequence[Informer[Any]] = ()) -> None:
        self.informers: list[Informer[Any]] = []
        self._flagged: list[bool] = []
        self._pending: list[int] = []
        """A heap of the flagged positions (each once): the informers the next pump visits."""
        for informer in informers:
            self.add(informer)

    def add(self, informer: Informer[Any]) -> None:
        """Pump ``informer`` too, after the ones already in the group."""
        position = len(self.informers)
        self.informers.append(informer)
        # Flagged until its first pump: it may not be started, or may hold events.
        self._flagged.append(True)
        heapq.heappush(self._pending, position)
        informer.add_wakeup(self._waker(position))

    def _waker(self, position: int) -> Callable[[], None]:
        flagged = self._flagged
        pending = self._pending

        def wake() -> None:
            if not flagged[position]:
                flagged[position] = True
                heapq.heappush(pending, position)

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
        pending = self._pending
        if not pending:
            return 0
        flagged = self._flagged
        informers = self.informers
        handled = 0
        next_pass: list[int] = []
        turn = -1
        failed: list[EventHandlerErrors] = []
        try:
            while pending:
                position = heapq.heappop(pending)
                if position <= turn:
                    # Woken after its turn in this pass: the next pass pumps it.
                    next_pass.append(position)
                    continue
                turn = position
                flagged[position] = False
                informer = informers[position]
                try:
                    handled += informer.pump()
                except EventHandlerErrors as errors:
                    # Its batch is applied; the informers after it still get theirs.
                    failed.append(errors)
                if not informer.quiet and not flagged[position]:
                    flagged[position] = True
                    next_pass.append(position)
        finally:
            # Also when an informer's own work raised (a relist's list call): the flagged
            # informers not reached, those kept for the next pass, and the one that
            # raised if it still has work, stay pending.
            if turn >= 0 and not informers[turn].quiet and not flagged[turn]:
                flagged[turn] = True
                next_pass.append(turn)
            for position in next_pass:
                heapq.heappush(pending, position)
        if failed:
            raise (
                failed[0]
                if len(failed) == 1
                else EventHandlerErrors(f"event handlers failed in {len(failed)} informers", failed)
            )
        return handled
