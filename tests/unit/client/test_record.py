"""``EventRecorder``: client-go's naming and aggregation of repeated events."""

from __future__ import annotations

from kubeprio.api.core import Event
from kubeprio.apiserver.service import ApiService
from kubeprio.client.record import EventRecorder
from tests.builders import pod
from tests.conftest import ManualClock


def test_events_are_named_after_the_object_and_repeats_are_counted(
    api: ApiService, clock: ManualClock
) -> None:
    target = api.create(pod("web").build())
    recorder = EventRecorder(api, clock=clock, component="kubelet", host="n1")
    first = recorder.event(target, "Warning", "OutOfcpu", "Node didn't have enough resource")
    assert first is not None
    assert first.metadata.name == f"web.{int(clock.now() * 1e9):x}"
    assert first.metadata.namespace == "default"
    clock.advance(5)
    again = recorder.event(target, "Warning", "OutOfcpu", "Node didn't have enough resource")
    assert again is not None
    assert again.metadata.name == first.metadata.name
    assert again.count == 2
    assert again.last_timestamp == "2026-01-01T00:00:05Z"
    assert again.first_timestamp == "2026-01-01T00:00:00Z"
    (stored,) = api.list(Event).items
    assert (stored.involved_object.kind, stored.involved_object.uid) == ("Pod", target.metadata.uid)  # type: ignore[union-attr]
    assert (stored.source.component, stored.source.host) == ("kubelet", "n1")  # type: ignore[union-attr]


def test_two_events_in_the_same_instant_get_distinct_names(
    api: ApiService, clock: ManualClock
) -> None:
    target = api.create(pod("web").build())
    recorder = EventRecorder(api, clock=clock, component="kubelet")
    one = recorder.event(target, "Normal", "Pulled", "a")
    two = recorder.event(target, "Normal", "Created", "b")
    assert one is not None
    assert two is not None
    assert one.metadata.name != two.metadata.name


def test_a_deferred_recorder_writes_on_flush_with_the_times_the_events_happened(
    api: ApiService, clock: ManualClock
) -> None:
    """client-go's broadcaster writes events from its own goroutine: recording returns at
    once, and the stored event carries the time it happened, not the time it was written.
    Repeats queued together still fold into one event with a count."""
    target = api.create(pod("web").build())
    recorder = EventRecorder(api, clock=clock, component="default-scheduler", deferred=True)
    assert recorder.event(target, "Normal", "Scheduled", "assigned") is None
    clock.advance(3)
    recorder.event(target, "Warning", "FailedScheduling", "0/1 nodes are available")
    clock.advance(2)
    recorder.event(target, "Warning", "FailedScheduling", "0/1 nodes are available")
    assert recorder.queued == 3
    assert api.list(Event).items == []
    clock.advance(60)
    assert recorder.flush() == 3
    assert recorder.queued == 0
    stored = sorted(api.list(Event).items, key=lambda e: e.first_timestamp or "")
    assert [(e.reason, e.first_timestamp, e.last_timestamp, e.count) for e in stored] == [
        ("Scheduled", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", 1),
        ("FailedScheduling", "2026-01-01T00:00:03Z", "2026-01-01T00:00:05Z", 2),
    ]
    assert recorder.flush() == 0


def test_a_repeat_whose_event_was_deleted_is_created_again_as_it_was(
    api: ApiService, clock: ManualClock
) -> None:
    """client-go ``recordToSink``/``recordEvent`` with ``updateExistingEvent``: the PATCH
    of a repeat finds the event gone (NotFound) and the recorder creates the event it
    had, which ``eventObserve`` built from its log: the first write's name and
    ``firstTimestamp``, the count so far, ``lastTimestamp`` now."""
    target = api.create(pod("web").build())
    recorder = EventRecorder(api, clock=clock, component="kubelet", host="n1")
    first = recorder.event(target, "Warning", "OutOfcpu", "no cpu")
    assert first is not None
    clock.advance(5)
    assert recorder.event(target, "Warning", "OutOfcpu", "no cpu") is not None
    api.delete(Event, first.metadata.name or "", "default")
    clock.advance(5)
    again = recorder.event(target, "Warning", "OutOfcpu", "no cpu")
    assert again is not None
    assert again.metadata.name == first.metadata.name
    assert again.first_timestamp == "2026-01-01T00:00:00Z"
    assert again.last_timestamp == "2026-01-01T00:00:10Z"
    assert again.count == 3
    # The log follows the recreated event: the next repeat patches it.
    clock.advance(5)
    fourth = recorder.event(target, "Warning", "OutOfcpu", "no cpu")
    assert fourth is not None
    assert (fourth.metadata.name, fourth.count) == (first.metadata.name, 4)
    assert fourth.first_timestamp == "2026-01-01T00:00:00Z"
    (stored,) = api.list(Event).items
    assert stored == fourth
