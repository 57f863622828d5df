"""``SeriesRecorder``: kube-scheduler's events.k8s.io/v1 recorder (client-go
``tools/events``: ``makeEvent``, ``recordToSink``, ``getKey``)."""

from __future__ import annotations

from kubeprio.api import eventsv1
from kubeprio.api.core import Event
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.service import ApiService
from kubeprio.client.eventsrecord import SeriesRecorder, occurrences
from tests.builders import pod
from tests.conftest import ManualClock


def test_an_event_has_event_time_and_reporter_and_no_legacy_fields(
    api: ApiService, clock: ManualClock
) -> None:
    target = api.create(pod("web").build())
    recorder = SeriesRecorder(api, clock=clock, controller="default-scheduler")
    stored = recorder.event(
        target, "Normal", "Scheduled", "Successfully assigned default/web to n1", action="Binding"
    )
    assert stored is not None
    assert stored.metadata.name == f"web.{int(clock.now() * 1e9):x}"
    assert stored.event_time == "2026-01-01T00:00:00.000000Z"
    assert (stored.reporting_component, stored.reporting_instance) == (
        "default-scheduler",
        "default-scheduler-kubeprio",
    )
    assert stored.action == "Binding"
    assert (stored.source, stored.first_timestamp, stored.last_timestamp, stored.count) == (
        None,
        None,
        None,
        None,
    )
    assert occurrences(stored) == 1
    # What events.k8s.io/v1 serves: nothing deprecated is set.
    view = eventsv1.to_v1(to_dict(stored))
    assert view["deprecatedSource"] == {}
    assert view["deprecatedFirstTimestamp"] is None
    assert "deprecatedCount" not in view


def test_repeats_become_a_series_whatever_their_note(api: ApiService, clock: ManualClock) -> None:
    """``getKey`` leaves the note out: a repeat with another message joins the series."""
    target = api.create(pod("web").build())
    recorder = SeriesRecorder(api, clock=clock, controller="default-scheduler")
    first = recorder.event(target, "Warning", "FailedScheduling", "0/1 nodes", action="Scheduling")
    clock.advance(5)
    second = recorder.event(target, "Warning", "FailedScheduling", "0/2 nodes", action="Scheduling")
    clock.advance(5)
    third = recorder.event(target, "Warning", "FailedScheduling", "0/3 nodes", action="Scheduling")
    assert first is not None
    assert second is not None
    assert third is not None
    assert second.metadata.name == third.metadata.name == first.metadata.name
    assert second.series is not None
    assert third.series is not None
    assert (second.series.count, second.series.last_observed_time) == (
        2,
        "2026-01-01T00:00:05.000000Z",
    )
    assert (third.series.count, third.series.last_observed_time) == (
        3,
        "2026-01-01T00:00:10.000000Z",
    )
    assert third.message == "0/1 nodes"  # the first note stays, as upstream's patch keeps it
    assert occurrences(third) == 3
    assert len(api.list(Event).items) == 1


def test_another_action_or_resource_version_is_another_event(
    api: ApiService, clock: ManualClock
) -> None:
    target = api.create(pod("web").build())
    recorder = SeriesRecorder(api, clock=clock, controller="default-scheduler")
    recorder.event(target, "Warning", "FailedScheduling", "m", action="Scheduling")
    recorder.event(target, "Warning", "FailedScheduling", "m", action="Other")
    relabelled = api.patch(
        type(target), "web", {"metadata": {"labels": {"a": "b"}}}, namespace="default"
    )
    assert relabelled.metadata.resource_version != target.metadata.resource_version
    recorder.event(relabelled, "Warning", "FailedScheduling", "m", action="Scheduling")
    assert len(api.list(Event).items) == 3
    assert all(e.series is None for e in api.list(Event).items)


def test_a_deferred_recorder_writes_the_series_on_flush(
    api: ApiService, clock: ManualClock
) -> None:
    target = api.create(pod("web").build())
    recorder = SeriesRecorder(api, clock=clock, controller="default-scheduler", deferred=True)
    recorder.event(target, "Warning", "FailedScheduling", "m", action="Scheduling")
    clock.advance(2)
    recorder.event(target, "Warning", "FailedScheduling", "m", action="Scheduling")
    assert api.list(Event).items == []
    clock.advance(60)
    assert recorder.flush() == 2
    (stored,) = api.list(Event).items
    assert stored.event_time == "2026-01-01T00:00:00.000000Z"
    assert stored.series is not None
    assert stored.series.last_observed_time == "2026-01-01T00:00:02.000000Z"
