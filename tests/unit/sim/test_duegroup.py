"""``sim.drive.DueGroup``: controllers settled as one component run exactly as they did
as separate ``Due`` components (same runs, same pumps between them, same wakeups)."""

from __future__ import annotations

import pytest

from kubeprio.sim.drive import Due, DueGroup, grouping_due, ungrouped
from kubeprio.sim.engine import Engine, SimClock


class Trace:
    """What happened, in order: runs of the jobs and pumps that delivered something."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.undelivered: list[Job] = []


class Job:
    """A controller-like component: work at given virtual times, and some runs hand work
    to another job (as a controller's write reaches another's handler through a pump)."""

    def __init__(
        self,
        name: str,
        clock: SimClock,
        trace: Trace,
        at: list[float],
        *,
        hands_to: Job | None = None,
        repeats: int = 1,
        hands_once_at: float | None = None,
    ) -> None:
        self.name = name
        self.clock = clock
        self.trace = trace
        self.pending = sorted(clock.epoch + t for t in at)
        self.hands_to = hands_to
        self.repeats = repeats
        self.hands_once_at = None if hands_once_at is None else clock.epoch + hands_once_at
        self._left = 0

    def next_wakeup(self) -> float | None:
        if self._left:
            return self.clock.now()
        return self.pending[0] if self.pending else None

    def run_once(self) -> None:
        now = self.clock.now()
        if not self._left and self.pending and self.pending[0] <= now:
            self.pending.pop(0)
            self._left = self.repeats
        self._left -= 1
        self.trace.lines.append(f"{self.clock.elapsed:g} {self.name}")
        if self.hands_to is None:
            return
        if self.hands_once_at is None:
            self.trace.undelivered.append(self.hands_to)
        elif now >= self.hands_once_at:
            self.trace.undelivered.append(self.hands_to)
            self.hands_to = None


class Pump:
    """The informers: a pump hands queued work to the jobs it was meant for."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def pump(self) -> int:
        delivered, self.trace.undelivered = self.trace.undelivered, []
        for target in delivered:
            target.pending.insert(0, target.clock.now())
            self.trace.lines.append(f"{target.clock.elapsed:g} pump {target.name}")
        return len(delivered)

    def run_once(self) -> bool:
        return False

    def next_wakeup(self) -> float | None:
        return None


class Late(Pump):
    """A component settled after the controllers (the kubelets): runs once at ``at``."""

    def __init__(self, trace: Trace, clock: SimClock, at: float) -> None:
        super().__init__(trace)
        self.clock = clock
        self.at: float | None = clock.epoch + at

    def run_once(self) -> bool:
        if self.at is None or self.at > self.clock.now():
            return False
        self.at = None
        self.trace.lines.append(f"{self.clock.elapsed:g} late")
        return True

    def next_wakeup(self) -> float | None:
        return self.at


def _run(grouped: bool) -> list[str]:
    clock = SimClock()
    trace = Trace()
    first = Job("a", clock, trace, [1.0, 2.0], repeats=2)
    last = Job("c", clock, trace, [3.0], hands_to=first, hands_once_at=3.0)
    first.hands_to = last
    jobs = [first, Job("b", clock, trace, [1.0, 2.5]), last]
    components = [Pump(trace), *(Due(job, clock) for job in jobs), Late(trace, clock, 3.0)]
    engine = Engine(clock, grouping_due(components, clock) if grouped else components)
    engine.run()
    return trace.lines


def test_a_group_runs_and_pumps_as_the_separate_components_did() -> None:
    separate = _run(grouped=False)
    assert separate == _run(grouped=True)
    # The case is not empty: a job ran twice in a row with a pump between; a later job
    # ran at the instant an earlier one handed it work; and an earlier job handed work
    # by a later one waits for the next round, after the components that follow.
    assert separate[:5] == ["1 a", "1 pump c", "1 a", "1 pump c", "1 b"]
    assert "1 c" in separate
    at_three = separate[separate.index("3 c") :]
    assert at_three[:4] == ["3 c", "3 pump a", "3 late", "3 a"]


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (["x", "d", "d", "y", "d"], ["x", "group(2)", "y", "due"]),
        (["d", "d", "d"], ["group(3)"]),
        (["x", "d"], ["x", "due"]),
        ([], []),
    ],
)
def test_grouping_collapses_runs_of_two_or_more(kinds: list[str], expected: list[str]) -> None:
    clock = SimClock()
    trace = Trace()
    components = [
        Due(Job("j", clock, trace, []), clock) if k == "d" else Pump(trace) for k in kinds
    ]
    grouped = grouping_due(components, clock)
    shapes = [
        f"group({len(c.members)})"
        if isinstance(c, DueGroup)
        else ("due" if isinstance(c, Due) else "x" if kinds[components.index(c)] == "x" else "y")
        for c in grouped
    ]
    assert shapes == expected
    assert ungrouped(grouped) == components
