"""events.k8s.io/v1 over HTTP: one storage, two APIs.

Upstream (v1.32): ``pkg/registry/core/event`` serves core ``v1`` and ``events.k8s.io/v1``
from one store, converting through the internal Event (``pkg/apis/events/v1/conversion.go``);
errors name the request's resource (``genericregistry.Store.qualifiedResourceFromContext``);
the printer is ``printEvent`` for both (``pkg/printers/internalversion``); discovery lists
``events`` in both groups with the short name ``ev``.
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from kubeprio.apiserver.http import create_app
from tests.unit.apiserver.http_helpers import (
    AGGREGATED_ACCEPT,
    TABLE_ACCEPT,
    make_client,
    watch_lines,
)

EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE_EVENTS = "/api/v1/namespaces/default/events"

NEW_EVENT = {
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


@pytest.fixture
def client(api):
    return make_client(api)


def test_a_create_through_one_api_is_the_same_object_through_the_other(client):
    created = client.post(EVENTS, json=NEW_EVENT)
    assert created.status_code == 201, created.json()
    view = created.json()
    core = client.get(f"{CORE_EVENTS}/web.1").json()
    assert core["metadata"] == view["metadata"]  # same name, uid, resourceVersion
    assert core["apiVersion"] == "v1"
    assert core["message"] == view["note"]
    assert core["involvedObject"] == view["regarding"]
    assert core["reportingComponent"] == view["reportingController"] == "default-scheduler"
    assert core["eventTime"] == view["eventTime"]
    assert "count" not in core
    # core/v1 Event.FirstTimestamp is a metav1.Time value (`json:"firstTimestamp,omitempty"`):
    # Go's encoder writes its zero value as null rather than dropping it.
    assert core["firstTimestamp"] is None
    assert client.get(f"{EVENTS}/web.1").json() == view
    listed = client.get(EVENTS).json()
    assert (listed["kind"], listed["apiVersion"]) == ("EventList", "events.k8s.io/v1")
    assert listed["items"] == [view]


def test_a_core_event_reads_as_events_k8s_io(client):
    core = {
        "metadata": {"name": "old.1"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web"},
        "reason": "Pulled",
        "message": "pulled",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2024-05-01T10:00:00Z",
        "lastTimestamp": "2024-05-01T10:00:09Z",
        "count": 4,
        "type": "Normal",
    }
    assert client.post(CORE_EVENTS, json=core).status_code == 201
    view = client.get(f"{EVENTS}/old.1").json()
    assert view["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert view["deprecatedCount"] == 4
    assert view["deprecatedFirstTimestamp"] == "2024-05-01T10:00:00Z"
    assert view["deprecatedLastTimestamp"] == "2024-05-01T10:00:09Z"
    assert view["eventTime"] is None  # Go writes a zero MicroTime as null


def test_a_patch_through_events_k8s_io_is_seen_through_core(client):
    client.post(EVENTS, json=NEW_EVENT)
    series = {"count": 2, "lastObservedTime": "2024-05-01T10:00:05.000001Z"}
    patched = client.patch(
        f"{EVENTS}/web.1",
        json={"series": series},
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert patched.status_code == 200, patched.json()
    core = client.get(f"{CORE_EVENTS}/web.1").json()
    assert core["series"] == series
    assert core["metadata"]["resourceVersion"] == patched.json()["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("verb", "expected"),
    [
        ("get", 'events.events.k8s.io "nope" not found'),
        ("delete", 'events.events.k8s.io "nope" not found'),
    ],
)
def test_errors_name_the_resource_of_the_request(client, verb, expected):
    response = getattr(client, verb)(f"{EVENTS}/nope")
    assert response.status_code == 404
    body = response.json()
    assert body["message"] == expected
    assert body["details"] == {"name": "nope", "group": "events.k8s.io", "kind": "events"}
    assert client.get(f"{CORE_EVENTS}/nope").json()["message"] == 'events "nope" not found'


def test_an_existing_name_is_already_exists_in_the_requests_group(client):
    client.post(EVENTS, json=NEW_EVENT)
    again = client.post(EVENTS, json=NEW_EVENT).json()
    assert again["message"] == 'events.events.k8s.io "web.1" already exists'


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        ("regarding.name=web", ["web.1"]),
        ("regarding.name=db", []),
        ("reportingController=default-scheduler", ["web.1"]),
        ("reason!=Scheduled", []),
    ],
)
def test_field_selectors_use_the_events_k8s_io_labels(client, selector, names):
    client.post(EVENTS, json=NEW_EVENT)
    listed = client.get(EVENTS, params={"fieldSelector": selector}).json()
    assert [item["metadata"]["name"] for item in listed["items"]] == names


def test_core_field_labels_are_refused_at_events_k8s_io(client):
    response = client.get(EVENTS, params={"fieldSelector": "involvedObject.name=web"})
    assert response.status_code == 400
    assert response.json()["message"] == "field label not supported: involvedObject.name"
    ok = client.get(CORE_EVENTS, params={"fieldSelector": "involvedObject.name=web"})
    assert ok.status_code == 200


def test_the_table_is_print_event_for_both_apis(client):
    client.post(EVENTS, json=NEW_EVENT)
    tables = [
        client.get(path, headers={"Accept": TABLE_ACCEPT}).json() for path in (EVENTS, CORE_EVENTS)
    ]
    assert tables[0]["columnDefinitions"] == tables[1]["columnDefinitions"]
    assert [c["name"] for c in tables[0]["columnDefinitions"]][:4] == [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
    ]
    cells = tables[0]["rows"][0]["cells"]
    assert cells == tables[1]["rows"][0]["cells"]
    # A singleton events.k8s.io event counts 1; its source is the reporter.
    assert cells[1:6] == [
        "Normal",
        "Scheduled",
        "pod/web",
        "",
        "default-scheduler, default-scheduler-host",
    ]
    assert cells[8] == 1


def test_watch_through_events_k8s_io_sends_converted_objects(api):
    client = TestClient(create_app(api, watch_timeout=0.3, bookmark_interval=0.1))
    rv = client.get(EVENTS).json()["metadata"]["resourceVersion"]
    core = {
        "metadata": {"name": "web.2"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web"},
        "reason": "Pulled",
        "message": "m",
    }
    assert client.post(CORE_EVENTS, json=core).status_code == 201
    lines = watch_lines(
        client, f"{EVENTS}?watch=true&resourceVersion={rv}&fieldSelector=regarding.name%3Dweb"
    )
    assert [(e["type"], e["object"]["apiVersion"], e["object"]["note"]) for e in lines] == [
        ("ADDED", "events.k8s.io/v1", "m")
    ]


def test_discovery_lists_events_in_both_groups(client):
    legacy = client.get("/apis/events.k8s.io/v1").json()
    assert legacy["groupVersion"] == "events.k8s.io/v1"
    [entry] = legacy["resources"]
    assert (entry["name"], entry["singularName"], entry["kind"], entry["namespaced"]) == (
        "events",
        "event",
        "Event",
        True,
    )
    assert entry["shortNames"] == ["ev"]
    assert entry["verbs"] == sorted(
        ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    )
    group = client.get("/apis/events.k8s.io").json()
    assert group["preferredVersion"] == {"groupVersion": "events.k8s.io/v1", "version": "v1"}
    aggregated = client.get("/apis", headers={"Accept": AGGREGATED_ACCEPT}).json()
    [events_group] = [g for g in aggregated["items"] if g["metadata"]["name"] == "events.k8s.io"]
    [resource] = events_group["versions"][0]["resources"]
    assert resource["responseKind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}


def test_openapi_describes_the_events_k8s_io_schema(client):
    document = client.get("/openapi/v3/apis/events.k8s.io/v1").json()
    schema = document["components"]["schemas"]["io.k8s.api.events.v1.Event"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "events.k8s.io", "kind": "Event", "version": "v1"}
    ]
    assert schema["required"] == ["eventTime"]
    assert {"note", "regarding", "reportingController", "series"} <= set(schema["properties"])
    assert "io.k8s.api.events.v1.EventSeries" in document["components"]["schemas"]
