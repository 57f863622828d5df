"""Ending a run whose only remaining work is retrying pods against an unchanged cluster.

"The run ends when nothing more can happen" (``kubeprio simulate``). Upstream's scheduler
retries a pod that failed without a rejecting plugin — an error, or no nodes at all
(``ErrNoNodesAvailable``) — after a backoff, forever (``determineSchedulingHintForInFlightPod``
queues it after backoff). In a real cluster that is a retry every 10 s; in virtual time it
is an endless run. Such a retry against a cluster in which nothing changed fails again,
identically, so once every other component is idle, no submission is left, and no
object other than an Event changed for longer than the longest backoff (every pending
pod has been retried against the final state), nothing more can happen and the run ends.

``Stall`` is an ``EventHandler`` on the informers of the objects that matter (it only
counts their changes) and the engine's ``stop`` predicate. It never writes to the
cluster and never changes what happens before the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kubeprio.clock import Clock


class Timed(Protocol):
    """A component with timed work."""

    def next_wakeup(self) -> float | None:
        """When it next has work, if ever."""
        ...


class Periodic(Protocol):
    """A component that syncs on a timer forever (the HPA controller's 15 s resync)."""

    def idle_horizon(self) -> float:
        """How long nothing may change before its syncs can change nothing more."""
        ...


class Stall:
    """Tells the engine to stop when only identical scheduler retries are left."""

    def __init__(
        self,
        clock: Clock,
        *,
        horizon: float,
        others: Sequence[Timed],
        periodic: Sequence[Periodic] = (),
    ) -> None:
        """``horizon``: the longest pod backoff (a retry due within it may still
        change something); ``others``: every component but the scheduler and the
        ``periodic`` ones, which always have a next sync: they only stretch the calm
        needed to ``idle_horizon()``."""
        self._clock = clock
        self._horizon = horizon
        self._others = list(others)
        self._periodic = list(periodic)
        self.changes = 0
        self._seen = -1
        self._since = 0.0

    # --- EventHandler (on every informer but the Events one) ------------------------------

    def on_add(self, obj: Any) -> None:
        """An object appeared."""
        self.changes += 1

    def on_update(self, old: Any, new: Any) -> None:
        """An object changed."""
        self.changes += 1

    def on_delete(self, obj: Any) -> None:
        """An object went away."""
        self.changes += 1

    # --- the engine's stop predicate ------------------------------------------------------

    def __call__(self) -> bool:
        """Whether the run should end now (asked only when no submission is left)."""
        now = self._clock.now()
        if self.changes != self._seen or any(c.next_wakeup() is not None for c in self._others):
            self._seen = self.changes
            self._since = now
            return False
        calm = now - self._since
        # The periodic components' horizons (a walk over their objects) only once the
        # backoff horizon is past: this predicate is asked at every step of the run.
        return calm > self._horizon and all(calm > p.idle_horizon() for p in self._periodic)
