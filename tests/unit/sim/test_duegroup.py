"""``sim.duegroup.DueGroup`` runs controllers exactly as consecutive ``Due`` wrappers do.

A differential property test: the same random controllers (work queues whose reconciles
queue keys in each other, now or later, and members with timers of their own) run under
the engine once as ``Due`` wrappers and once as one ``DueGroup``; the runs must log the
same reconciles, at the same times, in the same order, and end at the same time.
"""

from __future__ import annotations

import heapq
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio.controllers.base import Controller
from kubeprio.sim.drive import Due
from kubeprio.sim.duegroup import DueGroup
from kubeprio.sim.engine import Driven, Engine, SimClock

Log = list[tuple[float, str, str]]


class _World:
    """What the members share: the log, the members to queue keys in, the seed."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.log: Log = []
        self.members: list[Any] = []

    def react(self, clock: SimClock, name: str, key: str, count: int) -> None:
        """Log a reconcile; maybe queue keys in members (the same choices in every run
        that reaches the same reconcile)."""
        self.log.append((clock.elapsed, name, key))
        rng = random.Random(f"{self.seed}:{name}:{key}:{count}")
        for _ in range(rng.choice((0, 0, 1, 2))):
            if len(self.log) > 300:
                return
            target = rng.choice(self.members)
            later = rng.choice((0.0, 0.0, 1.0, 2.5))
            target.queue_key(f"{name}.{count}", later)


class _QueueMember(Controller):
    """A controller whose wakeups are its work queue's (the group is told of them)."""

    def __init__(self, name: str, clock: SimClock, world: _World) -> None:
        super().__init__(object(), clock=clock, rng=random.Random(0))  # type: ignore[arg-type]
        self.name = name
        self._world = world
        self._count = 0

    def queue_key(self, key: str, later: float) -> None:
        self.queue.add_after(key, later)

    def reconcile(self, key: str) -> None:
        self._count += 1
        self._world.react(self.clock, self.name, key, self._count)  # type: ignore[arg-type]


class _TimerMember:
    """A member with timers of its own (asked at every call)."""

    def __init__(self, name: str, clock: SimClock, world: _World) -> None:
        self.name = name
        self._clock = clock
        self._world = world
        self._timers: list[tuple[float, int, str]] = []
        self._count = 0

    def queue_key(self, key: str, later: float) -> None:
        self._count += 1
        heapq.heappush(self._timers, (self._clock.time + later, self._count, key))

    def next_wakeup(self) -> float | None:
        return self._timers[0][0] if self._timers else None

    def run_once(self) -> None:
        now = self._clock.time
        while self._timers and self._timers[0][0] <= now:
            _, count, key = heapq.heappop(self._timers)
            self._world.react(self._clock, self.name, key, count)


def _run(kinds: list[bool], starts: list[tuple[float, int]], seed: int, grouped: bool) -> Any:
    clock = SimClock()
    world = _World(seed)
    world.members = [
        (_QueueMember if queued else _TimerMember)(f"m{i}", clock, world)
        for i, queued in enumerate(kinds)
    ]
    components: list[Driven] = (
        [DueGroup(world.members, clock)]
        if grouped
        else [Due(member, clock) for member in world.members]
    )
    engine = Engine(clock, components)
    for at, target in starts:
        member = world.members[target % len(world.members)]
        engine.schedule_at(at, lambda m=member, a=at: m.queue_key(f"start@{a}", 0.0))
    end = engine.run()
    return world.log, end


@settings(max_examples=150, deadline=None)
@given(
    kinds=st.lists(st.booleans(), min_size=1, max_size=7),
    starts=st.lists(
        st.tuples(st.sampled_from((0.0, 0.5, 1.0, 3.0)), st.integers(0, 6)), max_size=6
    ),
    seed=st.integers(0, 10_000),
)
def test_group_runs_members_as_due_wrappers_do(
    kinds: list[bool], starts: list[tuple[float, int]], seed: int
) -> None:
    assert _run(kinds, starts, seed, grouped=True) == _run(kinds, starts, seed, grouped=False)


def test_a_quiet_queue_member_is_asked_only_when_its_time_comes() -> None:
    """The saving itself: a controller's work queue tells the group when it has a key,
    and the group asks the controller only once that time has come."""
    clock = SimClock()
    world = _World(0)
    member = _QueueMember("m", clock, world)
    world.members = [member]
    asked: list[float] = []

    def counted_wakeup() -> float | None:
        asked.append(clock.elapsed)
        return Controller.next_wakeup(member)

    member.next_wakeup = counted_wakeup  # type: ignore[method-assign]
    group = DueGroup([member], clock)
    assert group.run_once() is False
    assert asked == [0.0]  # every member is asked once at first
    for _ in range(5):
        assert group.run_once() is False
    assert group.next_wakeup() is None
    assert asked == [0.0]
    member.queue_key("k", 2.0)
    assert group.run_once() is False
    assert asked == [0.0]
    assert group.next_wakeup() == clock.time + 2.0  # checked against the member: asked
    clock.time += 2.0
    assert group.run_once() is True
    assert world.log == [(2.0, "m", "k")]


def test_keys_queued_before_the_group_listened_run_at_their_times() -> None:
    """A queue that held keys before the group was built (no ``on_scheduled`` for them)
    still has each one run when it is due, not only the earliest."""
    clock = SimClock()
    world = _World(0)
    member = _QueueMember("m", clock, world)
    world.members = [member]
    member.queue_key("early", 1.0)
    member.queue_key("late", 3.0)
    group = DueGroup([member], clock)
    engine = Engine(clock, [group])
    engine.run()
    # (The world reacts to each run by queueing more keys; only these two are checked.)
    ran = [(at, key) for at, _name, key in world.log if key in ("early", "late")]
    assert ran == [(1.0, "early"), (3.0, "late")]
