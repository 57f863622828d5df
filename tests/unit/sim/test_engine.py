"""The discrete-event engine: ordering, settling, wakeups and failure reporting."""

from __future__ import annotations

import pytest

from kubeprio.sim.engine import Engine, SimClock, SimulationError


class Counter:
    """A component with timed work: every ``period`` seconds it records the time."""

    def __init__(self, clock: SimClock, period: float, stop_after: int) -> None:
        self.clock = clock
        self.period = period
        self.left = stop_after
        self.due = clock.now() + period
        self.seen: list[float] = []

    def pump(self) -> int:
        return 0

    def run_once(self) -> bool:
        if self.left and self.clock.now() >= self.due:
            self.seen.append(self.clock.now() - self.clock.epoch)
            self.left -= 1
            self.due += self.period
            return True
        return False

    def next_wakeup(self) -> float | None:
        return self.due if self.left else None


def test_events_run_in_time_then_priority_then_insertion_order() -> None:
    clock = SimClock()
    engine = Engine(clock)
    trace: list[str] = []
    engine.schedule(2, lambda: trace.append("t2"))
    engine.schedule(1, lambda: trace.append("t1-late-priority"), priority=5)
    engine.schedule(1, lambda: trace.append("t1-a"))
    engine.schedule(1, lambda: trace.append("t1-b"))
    end = engine.run()
    assert trace == ["t1-a", "t1-b", "t1-late-priority", "t2"]
    assert end == 2


def test_component_wakeups_advance_virtual_time() -> None:
    clock = SimClock()
    counter = Counter(clock, 1.5, 3)
    engine = Engine(clock, [counter])
    assert engine.run() == pytest.approx(4.5)
    assert counter.seen == pytest.approx([1.5, 3.0, 4.5])


def test_until_stops_the_run() -> None:
    clock = SimClock()
    counter = Counter(clock, 1.0, 100)
    engine = Engine(clock, [counter])
    assert engine.run(until=3.5) == pytest.approx(3.5)
    assert counter.seen == pytest.approx([1.0, 2.0, 3.0])


def test_a_failing_action_aborts_with_time_and_seed() -> None:
    clock = SimClock()
    engine = Engine(clock, seed=42)

    def boom() -> None:
        raise RuntimeError("broken")

    engine.schedule(7, boom)
    with pytest.raises(SimulationError, match=r"t=7s .*seed 42.*broken"):
        engine.run()


def test_a_component_that_asks_to_run_but_never_works_is_reported() -> None:
    class Liar:
        def pump(self) -> int:
            return 0

        def run_once(self) -> bool:
            return False

        def next_wakeup(self) -> float | None:
            return clock.now()

    clock = SimClock()
    with pytest.raises(SimulationError, match="has no work"):
        Engine(clock, [Liar()]).run()
