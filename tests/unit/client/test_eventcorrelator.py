"""``EventCorrelator``: client-go's aggregator, event log and spam filter
(``k8s.io/client-go/tools/record/events_cache.go``, ``EventCorrelate``), and the core/v1
recorder writing what it decides (``event.go``, ``recordToSink``)."""

from __future__ import annotations

import pytest

from kubeprio.api.core import Event, ObjectReference
from kubeprio.apiserver.service import ApiService
from kubeprio.client.eventcorrelator import (
    COMBINED_PREFIX,
    SPAM_BURST,
    Correlated,
    EventCorrelator,
)
from kubeprio.client.eventsrecord import SeriesRecorder, occurrences
from kubeprio.client.record import EventRecorder
from kubeprio.client.tokenbucket import TokenBucket
from tests.builders import pod
from tests.conftest import EPOCH, ManualClock

RS = ObjectReference(
    kind="ReplicaSet", namespace="shop", name="web", uid="u1", api_version="apps/v1"
)
OTHER_RS = ObjectReference(
    kind="ReplicaSet", namespace="shop", name="api", uid="u2", api_version="apps/v1"
)


def _correlate(
    correlator: EventCorrelator,
    message: str,
    *,
    at: float = EPOCH,
    ref: ObjectReference = RS,
    reason: str = "SuccessfulCreate",
    component: str = "replicaset-controller",
) -> Correlated | None:
    return correlator.correlate(
        ref, "Normal", reason, message, component=component, host="", now=at
    )


def _written(correlator: EventCorrelator, decision: Correlated | None, name: str) -> None:
    """What the recorder does once the write came back (upstream ``UpdateState``)."""
    assert decision is not None
    correlator.written(decision, name, decision.count, "2026-01-01T00:00:00Z")


# --- EventAggregator ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("distinct", "combined", "count"),
    [
        (1, False, 1),
        (9, False, 1),  # below defaultAggregateMaxEvents: every message its own event
        (10, True, 1),  # the 10th distinct message starts the combined event
        (11, True, 2),  # ... and the next ones count on it
        (25, True, 16),
    ],
)
def test_the_tenth_distinct_message_starts_the_combined_event(
    distinct: int, combined: bool, count: int
) -> None:
    """EventAggregate: the group (source, object, type, reason) collects distinct messages;
    at ``localKeys.Len() >= maxEvents`` (10) the event becomes the aggregate one, keyed by
    the group, so eventObserve counts it up."""
    correlator = EventCorrelator()
    decision = None
    for i in range(distinct):
        decision = _correlate(correlator, f"Created pod: web-{i}")
        _written(correlator, decision, f"event-{i}")
    assert decision is not None
    assert decision.combined is combined
    assert decision.count == count
    last = f"Created pod: web-{distinct - 1}"
    assert decision.message == (COMBINED_PREFIX + last if combined else last)
    assert decision.is_patch is (count > 1)


def test_identical_repeats_are_counted_not_combined() -> None:
    """getEventKey includes the message: the same message again is one local key, so it
    never reaches the aggregation threshold; eventObserve counts it on its first event."""
    correlator = EventCorrelator()
    for i in range(1, 21):
        decision = _correlate(correlator, "Back-off restarting failed container")
        assert decision is not None
        assert (decision.combined, decision.count) == (False, i)
        _written(correlator, decision, "first")
        assert decision.name == (None if i == 1 else "first")


@pytest.mark.parametrize(("gap", "combined"), [(600.0, True), (600.5, False)])
def test_a_quiet_gap_over_600_seconds_starts_the_group_afresh(gap: float, combined: bool) -> None:
    """EventAggregate: ``interval > maxInterval`` (600 s since the group's last event)
    replaces the record; a gap of exactly 600 s keeps it."""
    correlator = EventCorrelator()
    for i in range(9):
        _correlate(correlator, f"Created pod: web-{i}")
    decision = _correlate(correlator, "Created pod: web-9", at=EPOCH + gap)
    assert decision is not None
    assert decision.combined is combined


def test_groups_are_per_object_and_reason() -> None:
    """EventAggregatorByReasonFunc keys on the object and the reason: another object's or
    another reason's messages do not fill this group."""
    correlator = EventCorrelator()
    for i in range(9):
        _correlate(correlator, f"Created pod: web-{i}")
    other_object = _correlate(correlator, "Created pod: api-0", ref=OTHER_RS)
    other_reason = _correlate(correlator, "Deleted pod: web-0", reason="SuccessfulDelete")
    assert other_object is not None
    assert not other_object.combined
    assert other_reason is not None
    assert not other_reason.combined


# --- EventSourceObjectSpamFilter ---------------------------------------------------------


def test_a_burst_of_25_then_one_event_per_300_seconds() -> None:
    """defaultSpamBurst 25, defaultSpamQPS 1/300 (a float32): the bucket starts full, the
    26th event at the same instant is dropped, and the next token is whole at +300 s."""
    correlator = EventCorrelator()
    written = [_correlate(correlator, f"m{i}") is not None for i in range(SPAM_BURST + 1)]
    assert written == [True] * SPAM_BURST + [False]
    steps = [(299.0, False), (300.0, True), (301.0, False), (599.0, False), (600.0, True)]
    for offset, allowed in steps:
        assert (_correlate(correlator, "later", at=EPOCH + offset) is not None) is allowed
    assert correlator.dropped == 4


@pytest.mark.parametrize(
    ("kwargs", "throttled"),
    [
        ({}, True),
        ({"reason": "FailedCreate"}, True),  # v1.32's getSpamKey has no reason
        ({"ref": OTHER_RS}, False),
        ({"component": "deployment-controller"}, False),
    ],
)
def test_the_spam_key_is_the_source_and_the_object(
    kwargs: dict[str, object], throttled: bool
) -> None:
    """getSpamKey (v1.32): component, host, kind, namespace, name, UID, API version."""
    correlator = EventCorrelator()
    for i in range(SPAM_BURST):
        assert _correlate(correlator, f"Created pod: web-{i}") is not None
    decision = _correlate(correlator, "next", **kwargs)  # type: ignore[arg-type]
    assert (decision is None) is throttled


def test_dropped_repeats_still_count() -> None:
    """EventCorrelate observes before it filters: the log counts the dropped repeats, so
    the next one let through patches the total."""
    correlator = EventCorrelator()
    for i in range(30):
        decision = _correlate(correlator, "same")
        if decision is not None:
            _written(correlator, decision, "first")
        assert (decision is not None) is (i < SPAM_BURST)
    decision = _correlate(correlator, "same", at=EPOCH + 300)
    assert decision is not None
    assert (decision.count, decision.name, decision.is_patch) == (31, "first", True)


def test_the_token_bucket_never_holds_more_than_its_burst() -> None:
    bucket = TokenBucket(rate=1.0, burst=2, now=0.0)
    assert [bucket.try_accept(100.0) for _ in range(3)] == [True, True, False]
    assert bucket.try_accept(100.5) is False
    assert bucket.try_accept(101.0) is True


# --- the recorder writes what it decides -------------------------------------------------


def test_a_replicaset_burst_shows_nine_events_and_one_combined(
    api: ApiService, clock: ManualClock
) -> None:
    """What ``kubectl describe rs`` shows on a real cluster after 30 creates at once: nine
    ``Created pod`` events, then the combined one counted up to the spam filter's burst
    (16: the 10th to the 25th); the last five are dropped."""
    rs = api.create(pod("web").build())
    recorder = EventRecorder(api, clock=clock, component="replicaset-controller")
    for i in range(30):
        recorder.event(rs, "Normal", "SuccessfulCreate", f"Created pod: web-{i}")
    stored = sorted(api.list(Event).items, key=lambda e: e.metadata.name or "")
    assert [(e.message, e.count) for e in stored] == [
        *((f"Created pod: web-{i}", 1) for i in range(9)),
        (COMBINED_PREFIX + "Created pod: web-24", 16),
    ]
    combined = stored[-1]
    assert (combined.reporting_component, combined.reporting_instance) == (None, None)
    assert combined.source is not None
    assert combined.source.component == "replicaset-controller"
    assert len({e.metadata.name for e in stored}) == 10


def test_events_past_eight_at_one_instant_are_all_named(
    api: ApiService, clock: ManualClock
) -> None:
    """Virtual time puts a controller's burst at one nanosecond; names go on past the
    eight retries (a ReplicaSet's burst once stopped at eight events)."""
    target = api.create(pod("web").build())
    recorder = EventRecorder(api, clock=clock, component="kubelet")
    reasons = [f"Reason{i}" for i in range(12)]
    for reason in reasons:
        assert recorder.event(target, "Normal", reason, "m") is not None
    assert sorted(e.reason or "" for e in api.list(Event).items) == sorted(reasons)


def test_the_events_api_recorder_has_no_spam_filter(api: ApiService, clock: ManualClock) -> None:
    """``tools/events`` (the scheduler's recorder) has only its series: no aggregation, no
    spam filter."""
    target = api.create(pod("web").build())
    recorder = SeriesRecorder(api, clock=clock, controller="default-scheduler")
    for i in range(40):
        recorder.event(target, "Warning", "FailedScheduling", f"0/{i} nodes", action="Scheduling")
    (event,) = api.list(Event).items
    assert occurrences(event) == 40
