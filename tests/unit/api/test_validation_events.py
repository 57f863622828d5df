"""Events written through events.k8s.io/v1: upstream's strict rules (``validation.events``).

Upstream: ``pkg/apis/core/validation/events.go`` (v1.32): ``ValidateEventCreate`` and
``ValidateEventUpdate`` run ``legacyValidateEvent`` and then, for any request version but
core ``v1`` and ``events.k8s.io/v1beta1``, the strict rules; ``validateV1EventSeries``.
Each case sends one bad field through ``/apis/events.k8s.io/v1`` and expects upstream's
cause; the same object is accepted through ``/api/v1`` (legacy rules only).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeprio.api import eventsv1
from kubeprio.api.core import Event
from kubeprio.apiserver.service import ApiService
from tests.unit.apiserver.http_helpers import make_client

EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE_EVENTS = "/api/v1/namespaces/default/events"


def _event(**fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web.1"},
        "eventTime": "2024-05-01T10:00:00.000001Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-host",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u1"},
        "note": "Successfully assigned default/web to node-1",
        "type": "Normal",
    }
    for path, value in fields.items():
        doc[path] = value
    return {k: v for k, v in doc.items() if v is not None}


def _causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c.get("field", ""), c["message"]) for c in body["details"]["causes"]]


@pytest.fixture
def client(api: ApiService):
    return make_client(api)


STRICT_CREATE = [
    ("no-event-time", {"eventTime": None}, [("eventTime", "Required value")]),
    (
        "bad-type",
        {"type": "Odd"},
        [("type", 'Invalid value: "": has invalid value: Odd')],
    ),
    (
        "first-timestamp",
        {"deprecatedFirstTimestamp": "2024-05-01T10:00:00Z"},
        [("firstTimestamp", 'Invalid value: "": needs to be unset')],
    ),
    (
        "last-timestamp",
        {"deprecatedLastTimestamp": "2024-05-01T10:00:00Z"},
        [("lastTimestamp", 'Invalid value: "": needs to be unset')],
    ),
    ("count", {"deprecatedCount": 2}, [("count", 'Invalid value: "": needs to be unset')]),
    (
        "source",
        {"deprecatedSource": {"host": "node-1"}},
        [("source", 'Invalid value: "": needs to be unset')],
    ),
    (
        "series-too-short",
        {"series": {"count": 1, "lastObservedTime": "2024-05-01T10:00:00.000001Z"}},
        [("series.count", 'Invalid value: "": should be at least 2')],
    ),
    (
        "series-without-time",
        {"series": {"count": 2}},
        [("series.lastObservedTime", "Required value")],
    ),
    (
        "bad-name",
        {"metadata": {"name": "Web_1"}},
        [
            (
                "metadata.name",
                'Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of '
                "lower case alphanumeric characters, '-' or '.', and must start and end with "
                "an alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )
        ],
    ),
    # legacyValidateEvent, for an event with an eventTime: both APIs check these.
    ("no-action", {"action": None}, [("action", "Required value")]),
    ("no-instance", {"reportingInstance": None}, [("reportingInstance", "Required value")]),
    (
        "long-note",
        {"note": "x" * 1025},
        [("message", 'Invalid value: "": can have at most 1024 characters')],
    ),
]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [case[1:] for case in STRICT_CREATE],
    ids=[case[0] for case in STRICT_CREATE],
)
def test_create_through_events_k8s_io_gets_the_strict_rules(client, fields, expected):
    response = client.post(EVENTS, json=_event(**fields))
    assert response.status_code == 422, response.json()
    body = response.json()
    assert _causes(body) == expected
    assert body["message"].startswith('Event "')  # the internal kind: core's Event


@pytest.mark.parametrize(
    "fields",
    [case[1] for case in STRICT_CREATE[:8]],
    ids=[case[0] for case in STRICT_CREATE[:8]],
)
def test_core_v1_keeps_the_legacy_rules_for_the_same_object(api, client, fields):
    """``ValidateEventCreate``: requests at core v1 get no further validation."""
    doc = eventsv1.from_v1(_event(**fields))
    response = client.post(CORE_EVENTS, json=doc)
    assert response.status_code == 201, response.json()
    assert api.get(Event, "web.1", "default").metadata.name == "web.1"


def _stored(client) -> dict[str, Any]:
    created = client.post(EVENTS, json=_event())
    assert created.status_code == 201, created.json()
    return created.json()


IMMUTABLE = [
    ("reason", "Bound", [("reason", 'Invalid value: "Bound": field is immutable')] * 2),
    ("note", "other", [("message", 'Invalid value: "other": field is immutable')]),
    ("action", "Other", [("action", 'Invalid value: "Other": field is immutable')]),
    ("type", "Warning", [("type", 'Invalid value: "Warning": field is immutable')]),
    (
        "reportingController",
        "other",
        [("reportingController", 'Invalid value: "other": field is immutable')],
    ),
    (
        "eventTime",
        "2024-05-01T10:00:01.5Z",
        [("eventTime", "Invalid value: 2024-05-01 10:00:01.5 +0000 UTC: field is immutable")],
    ),
    (
        "regarding",
        {"kind": "Pod", "namespace": "default", "name": "db"},
        [
            (
                "involvedObject",
                'Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", '
                'Name:"db", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: '
                "field is immutable",
            )
        ],
    ),
    (
        "related",
        {"kind": "Pod", "name": "x"},
        [
            (
                "related",
                'Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"", Name:"x", '
                'UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
            )
        ],
    ),
]


@pytest.mark.parametrize(
    ("field", "value", "expected"), IMMUTABLE, ids=[case[0] for case in IMMUTABLE]
)
def test_update_through_events_k8s_io_keeps_the_event_as_it_was(client, field, value, expected):
    """``ValidateEventUpdate``: every descriptive field is immutable (the reason is checked
    twice upstream, so it is reported twice)."""
    stored = _stored(client)
    changed = copy.deepcopy(stored)
    changed[field] = value
    response = client.put(f"{EVENTS}/web.1", json=changed)
    assert response.status_code == 422, response.json()
    assert _causes(response.json()) == expected


def test_a_series_may_grow_through_events_k8s_io(client):
    stored = _stored(client)
    series = {"count": 2, "lastObservedTime": "2024-05-01T10:00:09.000001Z"}
    response = client.patch(
        f"{EVENTS}/web.1",
        json={"series": series},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.json()
    assert response.json()["series"] == series
    assert response.json()["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]
    bad = client.patch(
        f"{EVENTS}/web.1",
        json={"series": {"count": 1}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert _causes(bad.json()) == [("series.count", 'Invalid value: "": should be at least 2')]


def test_core_v1_may_change_what_events_k8s_io_may_not(client):
    """The immutability rules are events.k8s.io's: core/v1 updates get legacy rules only."""
    _stored(client)
    core = client.get(f"{CORE_EVENTS}/web.1").json()
    core["message"] = "rewritten"
    response = client.put(f"{CORE_EVENTS}/web.1", json=core)
    assert response.status_code == 200, response.json()
    assert client.get(f"{EVENTS}/web.1").json()["note"] == "rewritten"
