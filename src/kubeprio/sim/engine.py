"""The discrete-event engine: virtual time, an event heap, and components run to quiescence.

SimPy's core idea, kept small: a heap of ``(time, priority, sequence, action)`` — ties
broken by priority, then by the order events were scheduled, never by hashes or ids.
All actions due at one instant run before the components settle.
The engine owns the ``SimClock``. Components (scheduler, kubelets, controllers) are not
threads: they expose non-blocking entry points, and at every instant the engine *settles*
them: it pumps their informers and calls ``run_once`` until nobody has work left, then
asks each for ``next_wakeup`` and advances virtual time to the earliest event or wakeup.

An exception raised by any action or component aborts the run with the virtual time,
the event sequence number and the seed (SimPy's rule: failures are never swallowed).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Final, Protocol

from kubeprio.errors import KubeprioError

DEFAULT_EPOCH: Final = 1_767_225_600.0
"""Virtual time zero: 2026-01-01T00:00:00Z (any fixed instant keeps runs reproducible)."""

MAX_SETTLE_ROUNDS: Final = 1_000_000


class SimClock:
    """A clock that only the engine moves.

    It keeps absolute epoch seconds, so a component woken at the exact time it asked
    for sees exactly that time (no rounding through an elapsed offset).
    """

    def __init__(self, epoch: float = DEFAULT_EPOCH) -> None:
        self.epoch = epoch
        self.time = epoch

    def now(self) -> float:
        """Epoch seconds (what components see)."""
        return self.time

    @property
    def elapsed(self) -> float:
        """Virtual seconds since the start of the run."""
        return self.time - self.epoch


class Driven(Protocol):
    """A component the engine can drive."""

    def pump(self) -> int:
        """Deliver pending watch events; return how many were handled."""
        ...

    def run_once(self) -> bool:
        """Do one unit of work that is due now; False if there was none."""
        ...

    def next_wakeup(self) -> float | None:
        """The epoch time at which the component next has timed work, if any."""
        ...


class TimedOnly:
    """Marks a ``Driven`` whose ``pump`` always returns 0 (it has no informers of its own).

    The engine pumps every component after each unit of work; it leaves these out of
    that loop (their ``pump`` would only return 0), which keeps a settle's cost in the
    components that can receive events.
    """

    def pump(self) -> int:
        """Nothing to pump."""
        return 0


class SimulationError(KubeprioError):
    """A component or action failed during the run."""


_Scheduled = tuple[float, int, int, Callable[[], None]]
"""(time, priority, sequence, action): a plain tuple, compared in C (the sequence is
unique, so the action is never compared); the heap holds every pending submission."""


class Engine:
    """Runs actions and components in virtual time."""

    def __init__(
        self, clock: SimClock, components: Sequence[Driven] = (), *, seed: int = 0
    ) -> None:
        self.clock = clock
        self.components: list[Driven] = list(components)
        self._pumping = self._receivers()
        self.seed = seed
        self._heap: list[_Scheduled] = []
        self._sequence = 0
        self.steps = 0

    def add_component(self, component: Driven) -> None:
        """Drive one more component (components settle in the order they were added)."""
        self.components.append(component)
        self._pumping = self._receivers()

    def _receivers(self) -> list[Driven]:
        """The components whose ``pump`` can deliver something, in order."""
        return [c for c in self.components if not isinstance(c, TimedOnly)]

    def schedule(self, delay: float, action: Callable[[], None], *, priority: int = 0) -> None:
        """Run ``action`` ``delay`` virtual seconds from now (ties: lower priority first)."""
        self._push(self.clock.time + max(delay, 0.0), action, priority)

    def schedule_at(self, elapsed: float, action: Callable[[], None], *, priority: int = 0) -> None:
        """Run ``action`` at ``elapsed`` virtual seconds after the start."""
        self._push(max(self.clock.epoch + elapsed, self.clock.time), action, priority)

    def _push(self, time: float, action: Callable[[], None], priority: int) -> None:
        self._sequence += 1
        heapq.heappush(self._heap, (time, priority, self._sequence, action))

    def settle(self) -> None:
        """Pump and run every component until none has work at the current instant."""
        pumping = self._pumping
        for _round in range(MAX_SETTLE_ROUNDS):
            progressed = False
            for component in pumping:
                if component.pump():
                    progressed = True
            for component in self.components:
                while component.run_once():
                    progressed = True
                    for other in pumping:
                        other.pump()
            if not progressed:
                return
        raise SimulationError(
            f"components did not settle at t={self.clock.elapsed:g}s (seed {self.seed})"
        )

    def _next_wakeup(self) -> float | None:
        wakeups = [w for c in self.components if (w := c.next_wakeup()) is not None]
        return max(min(wakeups), self.clock.time) if wakeups else None

    def run(
        self,
        until: float | None = None,
        *,
        on_step: Callable[[float], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> float:
        """Run until nothing can happen or until ``until`` virtual seconds; return the end (elapsed).

        ``stop``, asked between steps once no scheduled action is left, may end the run
        earlier: when the components' remaining wakeups can no longer change anything.
        """
        limit = None if until is None else self.clock.epoch + until
        try:
            self.settle()
            while True:
                wakeup = self._next_wakeup()
                event_time = self._heap[0][0] if self._heap else None
                candidates = [t for t in (wakeup, event_time) if t is not None]
                if not candidates or (event_time is None and stop is not None and stop()):
                    break
                next_time = min(candidates)
                if limit is not None and next_time > limit:
                    self.clock.time = limit
                    break
                if next_time <= self.clock.time and (
                    event_time is None or event_time > self.clock.time
                ):
                    raise SimulationError(
                        f"a component asks to run at t={self.clock.elapsed:g}s but has no work (seed {self.seed})"
                    )
                self.clock.time = max(next_time, self.clock.time)
                # Every action due at this instant runs before components react to any of
                # them (objects submitted together are seen together, as in a snapshot).
                while self._heap and self._heap[0][0] <= self.clock.time:
                    action = heapq.heappop(self._heap)[3]
                    self.steps += 1
                    action()
                self.settle()
                if on_step is not None:
                    on_step(self.clock.elapsed)
        except SimulationError:
            raise
        except Exception as exc:
            raise SimulationError(
                f"simulation failed at t={self.clock.elapsed:g}s (event {self.steps}, seed {self.seed}): {exc!r}"
            ) from exc
        return self.clock.elapsed
