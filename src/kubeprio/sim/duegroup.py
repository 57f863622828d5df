"""Many timed components run as one: the simulation's controllers, asked only when due.

The engine settles a list of components in order, calling each one's ``run_once``
until it answers False, after every call pumping the informers; a controller is wrapped
in a ``sim.drive.Due``, which asks its ``next_wakeup`` and runs it when that has come.
With twenty controllers that is sixty-odd questions per settle (two or three rounds and
the engine's own ``next_wakeup``), nearly all answered "not now".

``DueGroup`` stands in that list for consecutive ``Due`` wrappers and behaves exactly
as they would: each ``run_once`` runs the first member, in order, from where the last
call left off, whose wakeup has come (the same member again while it stays due, as the
engine's loop over one ``Due``); a call finding none answers False and starts over at
the first member, as the engine's next round would. What it saves is the asking: a
member whose wakeup comes only from its ``controllers.base.WorkQueue`` (a
``Controller`` not overriding ``next_wakeup``) tells the group whenever a key is
scheduled (``WorkQueue.on_scheduled``), and the group keeps those times in a heap; such
a member is asked only once one of its times has come. The other members (own timers)
are asked at every call, as before. ``next_wakeup`` checks the heap's earliest entries
against their members, so it answers exactly what the wrappers' minimum would.

Built by ``sim.cluster.SimCluster`` for the engine; ``kubeprio serve`` keeps its
``Due`` wrappers (its driver runs on the real clock).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller
from kubeprio.sim.drive import Scheduled
from kubeprio.sim.engine import TimedOnly


def _notifies(component: Scheduled) -> bool:
    """Whether ``component``'s wakeup is its work queue's alone (so the queue can tell)."""
    return (
        isinstance(component, Controller) and type(component).next_wakeup is Controller.next_wakeup
    )


class DueGroup(TimedOnly):
    """Consecutive ``Due`` wrappers of ``members``, asking only members that may be due."""

    def __init__(self, members: Sequence[Scheduled], clock: Clock) -> None:
        self.members = list(members)
        self._now = clock.now
        self._wakeups: list[Callable[[], float | None]] = [m.next_wakeup for m in self.members]
        self._runs: list[Callable[[], object]] = [m.run_once for m in self.members]
        self._polled = [p for p, m in enumerate(self.members) if not _notifies(m)]
        """Positions of members with timers of their own, in order: asked at every call."""
        self._timers: list[tuple[float, int]] = []
        """(time, position): every due time a notifying member's queue has set and that
        has not come yet (some stale: the key was done early or forgotten)."""
        self._marked: set[int] = set(range(len(self.members)))
        """Positions of notifying members one of whose times has come, to be asked (at
        the first call every member, as its ``Due`` wrapper would be)."""
        self._cursor = 0
        for position, member in enumerate(self.members):
            if _notifies(member):
                assert isinstance(member, Controller)
                member.queue.on_scheduled = self._scheduler(position)
                # Keys queued before the group listened.
                for when in member.queue.due_times():
                    heapq.heappush(self._timers, (when, position))

    def _scheduler(self, position: int) -> Callable[[float], None]:
        timers = self._timers

        def scheduled(when: float) -> None:
            heapq.heappush(timers, (when, position))

        return scheduled

    def run_once(self) -> bool:
        """Run the first due member at or after the last one run; False (and back to the
        first member) when none is due."""
        now = self._now()
        timers, marked = self._timers, self._marked
        while timers and timers[0][0] <= now:
            marked.add(heapq.heappop(timers)[1])
        cursor = self._cursor
        if marked:
            candidates = sorted(p for p in marked.union(self._polled) if p >= cursor)
        else:  # the usual case: only the members with timers of their own to ask
            candidates = [p for p in self._polled if p >= cursor]
        for position in candidates:
            wakeup = self._wakeups[position]()
            if wakeup is not None and wakeup <= now:
                # Still marked (or polled): asked again at the next call, as ``Due``'s
                # loop would.
                self._cursor = position
                self._runs[position]()
                return True
            # Not due: any later time of its queue is in the heap already.
            marked.discard(position)
        self._cursor = 0
        return False

    def next_wakeup(self) -> float | None:
        """The earliest of the members' wakeups (exactly: stale heap entries are dropped)."""
        timers = self._timers
        # A stale entry goes: the member's actual time, when it has one, is in the heap
        # too, or (come already) its position is marked.
        while timers and self._wakeups[timers[0][1]]() != timers[0][0]:
            heapq.heappop(timers)
        asked = [self._wakeups[p]() for p in (*self._polled, *self._marked)]
        wakeups = [w for w in asked if w is not None]
        if timers:
            wakeups.append(timers[0][0])
        return min(wakeups) if wakeups else None
