"""Watch over HTTP: newline-delimited events, resume, Tables, bookmarks, 410 (kubectl-wire.md §5.2).

Upstream: ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go`` and the watch
cache's synthetic ADDED events for ``resourceVersion`` "" or "0".
"""

from __future__ import annotations

import pytest

from kubeprio.apiserver.http import create_app
from tests.unit.apiserver.http_helpers import TABLE_ACCEPT, pod_manifest, watch_lines

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def client(api):
    from starlette.testclient import TestClient

    return TestClient(create_app(api, watch_timeout=0.3, bookmark_interval=0.1))


def test_watch_without_resource_version_starts_with_added_events(client):
    client.post(PODS, json=pod_manifest("a"))
    events = watch_lines(client, f"{PODS}?watch=true")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a")]
    assert events[0]["object"]["kind"] == "Pod"


def test_watch_resumes_after_the_resource_version(client):
    rv = client.post(PODS, json=pod_manifest("a")).json()["metadata"]["resourceVersion"]
    client.post(PODS, json=pod_manifest("b"))
    client.delete(f"{PODS}/a")
    events = watch_lines(client, f"{PODS}?watch=1&resourceVersion={rv}")
    # A pod delete writes the deletion mark first, then removes the pod (upstream
    # Store.Delete), so a watcher sees MODIFIED then DELETED.
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"),
        ("MODIFIED", "a"),
        ("DELETED", "a"),
    ]


def test_watch_filters_by_field_selector(client):
    rv = client.get(PODS).json()["metadata"]["resourceVersion"]
    client.post(PODS, json=pod_manifest("a"))
    client.post(PODS, json=pod_manifest("b"))
    events = watch_lines(
        client, f"{PODS}?watch=true&resourceVersion={rv}&fieldSelector=metadata.name%3Db"
    )
    assert [e["object"]["metadata"]["name"] for e in events] == ["b"]


def test_table_watch_sends_column_definitions_in_the_first_event_only(client):
    rv = client.get(PODS).json()["metadata"]["resourceVersion"]
    client.post(PODS, json=pod_manifest("a"))
    client.post(PODS, json=pod_manifest("b"))
    events = watch_lines(
        client, f"{PODS}?watch=true&resourceVersion={rv}", headers={"Accept": TABLE_ACCEPT}
    )
    assert [e["object"]["kind"] for e in events] == ["Table", "Table"]
    assert events[0]["object"]["columnDefinitions"][0]["name"] == "Name"
    assert events[1]["object"]["columnDefinitions"] is None
    assert events[1]["object"]["rows"][0]["cells"][:3] == ["b", "0/1", "Pending"]
    assert events[1]["object"]["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_bookmarks_carry_the_current_resource_version(client, api):
    client.post(PODS, json=pod_manifest("a"))
    rv = str(api.store.current_revision())
    events = watch_lines(client, f"{PODS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true")
    assert events
    assert {e["type"] for e in events} == {"BOOKMARK"}
    assert events[0]["object"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": rv},
    }


def test_compacted_resource_version_answers_an_error_event_with_410_expired(client, api):
    client.post(PODS, json=pod_manifest("a"))
    client.post(PODS, json=pod_manifest("b"))
    api.store.compact(api.store.current_revision())
    events = watch_lines(client, f"{PODS}?watch=true&resourceVersion=1")
    assert len(events) == 1
    assert events[0]["type"] == "ERROR"
    assert events[0]["object"]["kind"] == "Status"
    assert events[0]["object"]["code"] == 410
    assert events[0]["object"]["reason"] == "Expired"


def test_timeout_seconds_ends_the_stream(client):
    events = watch_lines(client, f"{PODS}?watch=true&timeoutSeconds=1")
    assert events == []
