"""SchedulingQueue: ordering, backoff, the 5-minute flush, pops, updates, deletes (semantics §3).

Upstream tests cited are in ``pkg/scheduler/backend/queue/scheduling_queue_test.go`` and
``backoff_queue_test.go`` unless stated otherwise.
"""

from __future__ import annotations

import math

import pytest

from kubeprio.scheduler import events as ev
from kubeprio.scheduler.backoff import BackoffPolicy
from kubeprio.scheduler.framework import PodInfo, QueuedPodInfo
from kubeprio.scheduler.heap import KeyedHeap
from kubeprio.scheduler.nominator import NominatingInfo
from kubeprio.scheduler.plugins import names
from kubeprio.scheduler.plugins.queuesort import PrioritySort
from kubeprio.scheduler.queue import SchedulingQueue
from tests.conftest import EPOCH, ManualClock
from tests.unit.scheduler.queue_helpers import (
    FAKE_PLUGIN,
    HIGH,
    LOW,
    MID,
    fail,
    make_node,
    make_pod,
    make_queue,
    pop_name,
    relabel,
    where,
)

# --- activeQ order --------------------------------------------------------------------------


def test_pop_returns_highest_priority_then_oldest(clock: ManualClock) -> None:
    # TestPriorityQueue_Pop / semantics §3.2: priority desc, then queue timestamp asc.
    queue = make_queue(clock)
    for name, priority in [
        ("low", LOW),
        ("high", HIGH),
        ("mid", MID),
        ("high2", HIGH),
        ("unset", None),
    ]:
        queue.add(make_pod(name, priority=priority))
        clock.advance(0.5)
    assert [pop_name(queue) for _ in range(6)] == ["high", "high2", "mid", "low", "unset", None]


def test_pop_bumps_attempts_and_cycle_and_clears_rejectors(clock: ManualClock) -> None:
    # Pop increments Attempts and the scheduling cycle and resets the rejector plugins.
    queue = make_queue(clock)
    queue.add(make_pod("a"))
    qpi = queue.pop()
    assert qpi is not None
    assert (qpi.attempts, queue.scheduling_cycle) == (1, 1)
    assert qpi.initial_attempt_timestamp == EPOCH
    fail(queue, qpi, names.NODE_RESOURCES_FIT)
    queue.move_all_to_active_or_backoff(ev.UNSCHEDULABLE_TIMEOUT)
    clock.advance(3)
    queue.flush_backoff_completed()
    again = queue.pop()
    assert again is qpi
    assert (again.attempts, again.unschedulable_plugins, queue.scheduling_cycle) == (2, set(), 2)
    assert again.initial_attempt_timestamp == EPOCH  # set once, at the first entry to activeQ


def test_failed_pod_does_not_block_newer_pod(clock: ManualClock) -> None:
    # TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod: the timestamp is refreshed on
    # every requeue, so a newer pod of the same priority overtakes a repeatedly failing one.
    queue = make_queue(clock)
    unschedulable = make_pod(
        "test-pod-unscheduled", namespace="ns1", priority=HIGH, nominated="node1"
    )
    queue.add(unschedulable)
    first = queue.pop()
    assert first is not None
    fail(queue, first, FAKE_PLUGIN)
    clock.advance(1 + 1)
    queue.move_all_to_active_or_backoff(ev.UNSCHEDULABLE_TIMEOUT)
    p1 = queue.pop()
    assert p1 is not None
    assert p1.pod.metadata.name == "test-pod-unscheduled"

    newer = make_pod("test-newer-pod", namespace="ns1", priority=HIGH, nominated="node1")
    queue.add(newer)
    fail(queue, p1, FAKE_PLUGIN)
    clock.advance(1 + 1)
    queue.move_all_to_active_or_backoff(ev.UNSCHEDULABLE_TIMEOUT)
    assert pop_name(queue) == "test-newer-pod"


def test_recently_tried_pod_goes_back_behind_others(clock: ManualClock) -> None:
    # TestRecentlyTriedPodsGoBack: a tried pod re-enters activeQ with a fresh timestamp.
    queue = make_queue(clock)
    for i in range(1, 6):
        queue.add(make_pod(f"p{i}"))
        clock.advance(0.1)
    tried = queue.pop()
    assert tried is not None
    fail(queue, tried, FAKE_PLUGIN)
    clock.advance(2)
    queue.move_all_to_active_or_backoff(ev.UNSCHEDULABLE_TIMEOUT)
    assert [pop_name(queue) for _ in range(5)] == ["p2", "p3", "p4", "p5", "p1"]


def test_high_priority_pod_in_error_backoff_does_not_block_others(clock: ManualClock) -> None:
    # TestHighPriorityBackoff: the failed high-priority pod backs off; mid goes next. Error
    # backoff is never popped early (SchedulerPopFromBackoffQ pops only podBackoffQ).
    queue = make_queue(clock)
    queue.add(make_pod("test-midpod", priority=MID))
    queue.add(make_pod("test-highpod", priority=HIGH))
    high = queue.pop()
    assert high is not None
    assert high.pod.metadata.name == "test-highpod"
    fail(queue, high)  # no rejector: an error
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    assert pop_name(queue) == "test-midpod"
    assert pop_name(queue) is None
    clock.advance(2)
    queue.flush_backoff_completed()
    assert pop_name(queue) == "test-highpod"


def test_preemption_policy_never_pods_are_ordered_by_priority_and_back_off(
    clock: ManualClock,
) -> None:
    # Seed 002: a Never pod is ordered like everyone else and still subject to backoff.
    queue = make_queue(clock, pop_from_backoff_q=False)
    queue.add(make_pod("regular", priority=MID))
    queue.add(make_pod("never", priority=HIGH, policy="Never"))
    never = queue.pop()
    assert never is not None
    assert never.pod.metadata.name == "never"
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())  # seen in flight
    fail(queue, never, names.NODE_RESOURCES_FIT)
    assert where(queue, never.pod) == "Backoff"
    assert queue.is_backing_off(never)
    assert pop_name(queue) == "regular"
    assert pop_name(queue) is None
    clock.advance(2)
    queue.flush_backoff_completed()
    assert pop_name(queue) == "never"


# --- backoff durations and windows ---------------------------------------------------------


@pytest.mark.parametrize(
    ("initial", "maximum", "expected"),
    [
        (1.0, 10.0, [0, 1, 2, 4, 8, 10, 10, 10]),
        (2.0, 60.0, [0, 2, 4, 8, 16, 32, 60, 60]),
        (1.0, 1.0, [0, 1, 1, 1, 1, 1, 1, 1]),
        (0.5, 3.0, [0, 0.5, 1, 2, 3, 3, 3, 3]),
    ],
    ids=["defaults-1-2-4-8-10-10", "custom", "initial-equals-max", "cap-between-steps"],
)
def test_backoff_duration_doubles_up_to_the_maximum(
    initial: float, maximum: float, expected: list[float]
) -> None:
    # TestBackoffQueue_calculateBackoffDuration, semantics §3.3: initial * 2**(n-1), capped.
    policy = BackoffPolicy(
        ManualClock(), initial=initial, maximum=maximum, windowed=True, active_key=lambda q: ()
    )
    assert [policy.duration(n) for n in range(8)] == expected


@pytest.mark.parametrize("count", [64, 1000], ids=["overflow_64bit", "very-large-count"])
def test_backoff_duration_never_overflows(count: int) -> None:
    policy = BackoffPolicy(
        ManualClock(), initial=1e-9, maximum=2.0**63 * 1e-9, windowed=True, active_key=lambda q: ()
    )
    assert policy.duration(count) == 2.0**63 * 1e-9


def _qpi(
    name: str, timestamp: float, *, unschedulable: int = 1, errors: int = 0, priority: int = 0
) -> QueuedPodInfo:
    qpi = QueuedPodInfo(
        pod_info=PodInfo.of(make_pod(name, priority=priority)), timestamp=timestamp, attempts=1
    )
    qpi.unschedulable_count = unschedulable
    qpi.consecutive_errors_count = errors
    if unschedulable:
        qpi.unschedulable_plugins.add("plugin")
    return qpi


@pytest.mark.parametrize(
    ("unschedulable", "errors", "maximum", "expected"),
    [
        (1, 0, 10.0, 1.0),
        (3, 0, 10.0, 4.0),
        (3, 1, 10.0, 1.0),
        (0, 2, 10.0, 2.0),
        (0, 0, 10.0, None),
        (5, 0, 0.0, None),
    ],
    ids=[
        "first-rejection-1s",
        "third-rejection-4s",
        "last-attempt-error-uses-error-count",
        "errors-only",
        "never-failed-no-backoff",
        "max-zero-disables-backoff",
    ],
)
def test_backoff_counts_rejections_or_consecutive_errors(
    unschedulable: int, errors: int, maximum: float, expected: float | None
) -> None:
    # getBackoffTime (kubernetes#128748): ConsecutiveErrorsCount if > 0, else UnschedulableCount.
    policy = BackoffPolicy(
        ManualClock(), initial=1.0, maximum=maximum, windowed=False, active_key=lambda q: ()
    )
    expiry = policy.expiry(_qpi("a", EPOCH, unschedulable=unschedulable, errors=errors))
    assert (None if expiry is None else expiry - EPOCH) == expected


@pytest.mark.parametrize(
    ("windowed", "timestamp_offset", "now_offset", "backing_off"),
    [
        (True, 0.0, 0.5, True),
        (True, 0.0, 1.0, True),
        (True, 0.0, 1.999, True),
        (True, 0.0, 2.0, False),
        (True, 0.7, 1.5, True),
        (True, 0.7, 2.0, False),
        (False, 0.0, 1.0, True),
        (False, 0.0, 1.001, False),
        (False, 0.7, 1.6, True),
        (False, 0.7, 1.8, False),
    ],
    ids=[
        "windowed-before-expiry",
        "windowed-expiry-window-is-current",
        "windowed-end-of-expiry-window",
        "windowed-next-window",
        "windowed-expiry-1.7-truncated-to-1",
        "windowed-expiry-1.7-done-at-2",
        "exact-at-expiry-still-backing-off",
        "exact-after-expiry",
        "exact-before-1.7",
        "exact-after-1.7",
    ],
)
def test_is_backing_off_uses_whole_second_windows(
    windowed: bool, timestamp_offset: float, now_offset: float, backing_off: bool
) -> None:
    # isPodBackingoff: "!boTime.Before(alignToWindow(now))" -- with SchedulerPopFromBackoffQ the
    # expiry and now are truncated to whole seconds (KEP-5142); otherwise exact.
    clock = ManualClock()
    policy = BackoffPolicy(
        clock, initial=1.0, maximum=10.0, windowed=windowed, active_key=lambda q: ()
    )
    qpi = _qpi("a", EPOCH + timestamp_offset)
    clock.advance(now_offset)
    assert policy.is_backing_off(qpi) is backing_off


def _ordering_pods(now: float) -> list[QueuedPodInfo]:
    # The six pods of TestBackoffQueueOrdering (one-second backoff each).
    return [
        _qpi("pod0", now, priority=1),
        _qpi("pod1", now - 1, priority=1),
        _qpi("pod2", now - 2 + 0.001, priority=2),
        _qpi("pod3", now - 2, priority=1),
        _qpi("pod4", now - 2, priority=2),
        _qpi("pod5", now - 3, priority=1),
    ]


@pytest.mark.parametrize(
    ("windowed", "expected"),
    [
        (True, ["pod5", "pod4", "pod2", "pod3"]),
        # Upstream lists pod4 before pod3 here: equal expiries tie-break by its heap layout;
        # kubeprio breaks ties by insertion order.
        (False, ["pod5", "pod3", "pod4", "pod2"]),
    ],
    ids=["same-window-ordered-by-priority", "priority-ignored-without-windows"],
)
def test_backoff_queue_ordering(windowed: bool, expected: list[str]) -> None:
    # TestBackoffQueueOrdering: completed pods leave podBackoffQ window by window, and
    # within a window as activeQ orders them.
    clock = ManualClock()
    sort = PrioritySort()
    policy = BackoffPolicy(
        clock, initial=1.0, maximum=10.0, windowed=windowed, active_key=sort.sort_key
    )
    heap: KeyedHeap[QueuedPodInfo] = KeyedHeap(policy.sort_key)
    for qpi in _ordering_pods(clock.now()):
        heap.add_or_update(qpi.pod_info.key, qpi)
    popped = []
    while (head := heap.peek()) is not None and not policy.is_backing_off(head):
        heap.pop()
        popped.append(head.pod.metadata.name)
    assert popped == expected


def test_flush_moves_completed_pods_from_both_backoff_heaps(clock: ManualClock) -> None:
    # TestBackoffQueue_popEachBackoffCompleted: podBackoffQ and podErrorBackoffQ both flush.
    queue = make_queue(clock, pop_from_backoff_q=False)
    pods = [
        make_pod(name) for name in ("rejected-early", "error-early", "rejected-late", "error-late")
    ]
    for p in pods:
        queue.add(p)
    popped = {qpi.pod.metadata.name: qpi for qpi in iter(queue.pop, None)}
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())  # replayed: -> backoff
    fail(queue, popped["rejected-early"], FAKE_PLUGIN)
    fail(queue, popped["error-early"])
    clock.advance(0.5)
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    fail(queue, popped["rejected-late"], FAKE_PLUGIN)
    fail(queue, popped["error-late"])
    assert queue.pods_in_active_q() == []
    assert len(queue.pods_in_backoff_q()) == 4
    clock.advance(0.6)  # early: expiry 1.0 passed; late: expiry 1.5 not yet
    queue.flush_backoff_completed()
    assert sorted(p.metadata.name or "" for p in queue.pods_in_active_q()) == [
        "error-early",
        "rejected-early",
    ]
    clock.advance(0.5)
    queue.flush_backoff_completed()
    assert len(queue.pods_in_active_q()) == 4


def test_error_then_rejection_resets_error_count(clock: ManualClock) -> None:
    # AddUnschedulableIfNotPresent: errors bump ConsecutiveErrorsCount; a rejection bumps
    # UnschedulableCount and resets the error count.
    queue = make_queue(clock)
    queue.add(make_pod("a"))
    qpi = queue.pop()
    assert qpi is not None
    fail(queue, qpi)
    assert (qpi.consecutive_errors_count, qpi.unschedulable_count) == (1, 0)
    assert where(queue, qpi.pod) == "Backoff"
    clock.advance(2)
    queue.flush_backoff_completed()
    assert queue.pop() is qpi
    fail(queue, qpi, names.NODE_RESOURCES_FIT)
    assert (qpi.consecutive_errors_count, qpi.unschedulable_count) == (0, 1)
    assert where(queue, qpi.pod) == "Unschedulable"


def test_backoff_sequence_over_repeated_failures(clock: ManualClock) -> None:
    # Semantics §3.3: 1, 2, 4, 8, 10, 10 s after the 1st..6th rejection; with ordering
    # windows the pod leaves backoffQ at the first whole second after its expiry.
    queue = make_queue(clock)
    queue.add(make_pod("a"))
    waits = []
    for _ in range(6):
        qpi = queue.pop()
        assert qpi is not None
        queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
        fail(queue, qpi, names.NODE_RESOURCES_FIT)
        assert where(queue, qpi.pod) == "Backoff"
        wake = queue.next_wakeup()
        assert wake is not None
        waits.append(wake - clock.now())
        assert (
            queue.backoff.duration(qpi.unschedulable_count) == [1, 2, 4, 8, 10, 10][len(waits) - 1]
        )
        clock.advance(wake - clock.now() - 0.5)
        queue.flush_backoff_completed()
        assert where(queue, qpi.pod) == "Backoff"
        clock.advance(0.5)
        queue.flush_backoff_completed()
        assert where(queue, qpi.pod) == "Active"
    assert waits == [2, 3, 5, 9, 11, 11]  # EPOCH is a whole second: expiry window + 1 s


# --- the unschedulable pool's 5-minute flush ------------------------------------------------


def test_leftover_flush_moves_pods_after_five_minutes_in_priority_order(clock: ManualClock) -> None:
    # TestHighPriorityFlushUnschedulablePodsLeftover.
    queue = make_queue(clock)
    high = make_pod("test-highpod", namespace="ns1", priority=HIGH, nominated="node1")
    mid = make_pod("test-midpod", namespace="ns1", priority=MID, nominated="node1")
    for p in (high, mid):
        queue.add(p)
        qpi = queue.pop()
        assert qpi is not None
        fail(queue, qpi, FAKE_PLUGIN)
    assert queue.pods_in_active_q() == []
    clock.advance(300 + 1)
    queue.flush_unschedulable_leftover()
    assert [pop_name(queue), pop_name(queue)] == ["test-highpod", "test-midpod"]


@pytest.mark.parametrize(
    ("max_duration", "waited", "moved"),
    [
        (300.0, 299.0, False),
        (300.0, 300.0, False),
        (300.0, 300.5, True),
        (30.0, 30.5, True),
        (30.0, 29.0, False),
    ],
    ids=[
        "before-5min",
        "exactly-5min-not-more",
        "after-5min",
        "custom-30s-after",
        "custom-30s-before",
    ],
)
def test_leftover_flush_needs_strictly_more_than_the_maximum(
    clock: ManualClock, max_duration: float, waited: float, moved: bool
) -> None:
    # flushUnschedulablePodsLeftover: "currentTime.Sub(lastScheduleTime) > max" and
    # TestPriorityQueue_initPodMaxInUnschedulablePodsDuration (custom value).
    queue = make_queue(clock, pod_max_in_unschedulable_pods_duration=max_duration)
    queue.add(make_pod("a"))
    qpi = queue.pop()
    assert qpi is not None
    fail(queue, qpi, FAKE_PLUGIN)
    clock.advance(waited)
    queue.flush_unschedulable_leftover()
    assert where(queue, qpi.pod) == ("Active" if moved else "Unschedulable")


def test_next_wakeup(clock: ManualClock) -> None:
    queue = make_queue(clock)
    assert queue.next_wakeup() is None
    queue.add(make_pod("a"))
    queue.add(make_pod("b"))
    a, b = queue.pop(), queue.pop()
    assert a is not None
    assert b is not None
    fail(queue, a, FAKE_PLUGIN)  # pool since EPOCH: due after EPOCH + 300, next 30 s tick
    assert queue.next_wakeup() == EPOCH + 330
    clock.advance(0.5)
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    assert where(queue, a.pod) == "Backoff"  # expiry 1.0 -> window 1 -> done at 2
    assert queue.next_wakeup() == EPOCH + 2
    fail(queue, b)  # error at 0.5: expiry 1.5 -> window 1 -> done at 2
    assert queue.next_wakeup() == EPOCH + 2
    clock.advance(1.5)
    queue.flush_backoff_completed()
    assert queue.next_wakeup() is None
    assert math.isclose(clock.now(), EPOCH + 2)


# --- pop from backoffQ (SchedulerPopFromBackoffQ) -------------------------------------------


@pytest.mark.parametrize(
    ("enabled", "expected"), [(True, "a"), (False, None)], ids=["gate-on", "gate-off"]
)
def test_pop_takes_backoff_head_when_active_q_is_empty(
    clock: ManualClock, enabled: bool, expected: str | None
) -> None:
    # KEP-5142: when activeQ is empty the scheduler pops podBackoffQ's head, backing off or not.
    queue = make_queue(clock, pop_from_backoff_q=enabled)
    queue.add(make_pod("a"))
    qpi = queue.pop()
    assert qpi is not None
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    fail(queue, qpi, names.NODE_RESOURCES_FIT)
    assert queue.is_backing_off(qpi)
    assert pop_name(queue) == expected


def test_pop_prefers_active_q_over_backoff(clock: ManualClock) -> None:
    queue = make_queue(clock)
    queue.add(make_pod("backing-off", priority=HIGH))
    qpi = queue.pop()
    assert qpi is not None
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    fail(queue, qpi, names.NODE_RESOURCES_FIT)
    queue.add(make_pod("low", priority=LOW))
    assert [pop_name(queue), pop_name(queue), pop_name(queue)] == ["low", "backing-off", None]


# --- add / update / delete -------------------------------------------------------------------


def _to(queue: SchedulingQueue, clock: ManualClock, name: str, place: str) -> QueuedPodInfo:
    """Put a fresh pod ``name`` rejected by NodeResourcesFit into ``place``."""
    queue.add(make_pod(name, cpu="1"))
    if place == "Active":
        qpi = queue.get(name, "default")
        assert qpi is not None
        return qpi
    qpi = queue.pop()
    assert qpi is not None
    if place == "InFlight":
        return qpi
    if place == "Backoff":
        queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    fail(queue, qpi, names.NODE_RESOURCES_FIT)
    assert where(queue, qpi.pod) == place
    return qpi


@pytest.mark.parametrize("place", ["Active", "Backoff", "Unschedulable"])
def test_delete_removes_pod_and_its_nomination(clock: ManualClock, place: str) -> None:
    # TestPriorityQueue_Delete.
    queue = make_queue(clock)
    qpi = _to(queue, clock, "a", place)
    queue.add_nominated_pod(qpi.pod_info, NominatingInfo("node1"))
    queue.delete(qpi.pod)
    assert where(queue, qpi.pod) is None
    assert queue.nominated_pods_for_node("node1") == []
    assert len(queue) == 0


def test_delete_of_in_flight_pod_waits_for_done(clock: ManualClock) -> None:
    queue = make_queue(clock)
    qpi = _to(queue, clock, "a", "InFlight")
    queue.delete(qpi.pod)
    assert where(queue, qpi.pod) == "InFlight"
    queue.done(qpi.pod_info.uid)
    assert where(queue, qpi.pod) is None


@pytest.mark.parametrize(
    ("place", "after"),
    [("Active", "Active"), ("Backoff", "Backoff"), ("Unschedulable", "Unschedulable")],
)
def test_update_replaces_the_pod_object_in_place(
    clock: ManualClock, place: str, after: str
) -> None:
    # TestPriorityQueue_Update: a pod in activeQ/backoffQ is updated there; in the pool a
    # label change is not an event NodeResourcesFit registered, so it stays.
    queue = make_queue(clock)
    qpi = _to(queue, clock, "a", place)
    newer = relabel(qpi.pod, version="2")
    queue.update(qpi.pod, newer)
    assert where(queue, newer) == after
    found = queue.get("a", "default")
    assert found is qpi
    assert found.pod.metadata.labels == {"version": "2"}


def test_update_of_unknown_pod_adds_it(clock: ManualClock) -> None:
    # Update: "If pod is not present in any of the queues, it is added to the active queue."
    queue = make_queue(clock)
    p = make_pod("a", nominated="node1")
    queue.update(p, relabel(p, x="y"))
    assert where(queue, p) == "Active"
    assert [i.pod.metadata.labels for i in queue.nominated_pods_for_node("node1")] == [{"x": "y"}]


def test_update_of_in_flight_pod_is_recorded_not_queued(clock: ManualClock) -> None:
    queue = make_queue(clock)
    qpi = _to(queue, clock, "a", "InFlight")
    queue.update(qpi.pod, relabel(qpi.pod, x="y"))
    assert where(queue, qpi.pod) == "InFlight"
    assert len(queue) == 0


def test_add_unschedulable_if_not_present_refuses_queued_pods(clock: ManualClock) -> None:
    # AddUnschedulableIfNotPresent returns an error for a pod already queued; it still ends
    # the pod's flight.
    queue = make_queue(clock)
    queue.add(make_pod("a"))
    qpi = queue.get("a", "default")
    assert qpi is not None
    assert queue.add_unschedulable_if_not_present(qpi) is False
    assert where(queue, qpi.pod) == "Active"


def test_pending_pods_summary(clock: ManualClock) -> None:
    # PendingPods: the debugging summary line.
    queue = make_queue(clock)
    _to(queue, clock, "b", "Backoff")
    _to(queue, clock, "u", "Unschedulable")
    _to(queue, clock, "a", "Active")
    pods, summary = queue.pending_pods()
    assert [p.metadata.name for p in pods] == ["a", "b", "u"]
    assert summary == "activeQ:1; backoffQ:1; unschedulablePods:1"
