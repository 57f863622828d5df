"""Events through both APIs against a live ``kubeprio serve``, with the real kubectl (v1.32)
and the official Python client.

A v1.32 API server serves one Event storage as core ``v1`` and ``events.k8s.io/v1``
(``pkg/registry/core/event``, ``pkg/apis/events/v1/conversion.go``), and kube-scheduler
records through the new API (client-go ``tools/events``): ``eventTime``, the scheduler's
name as ``reportingController``, ``action``, no ``source``/``count``. kubectl then shows
``default-scheduler`` in ``describe``'s From column (``DescribeEvents``: the source, else
the reporting controller) and the event's age from its ``eventTime``.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: web
    image: nginx
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-events", ["--nodes", "1"]) as server:
        yield server


def _scheduled_event(served: ServeProcess, ns: str) -> dict[str, object]:
    def found() -> dict[str, object] | None:
        items = served.json("get", "events", "-n", ns)["items"]
        return next((e for e in items if e.get("reason") == "Scheduled"), None)

    return eventually(found, timeout=30)


def test_the_scheduler_records_through_the_new_api(served: ServeProcess) -> None:
    ns = new_namespace(served, "ev")
    served.ok("apply", "-n", ns, "-f", "-", stdin=POD)
    core = _scheduled_event(served, ns)
    assert core["reportingComponent"] == "default-scheduler"
    assert core["reportingInstance"] == "default-scheduler-kubeprio"
    assert core["action"] == "Binding"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", str(core["eventTime"]))
    for legacy in ("source", "count", "firstTimestamp", "lastTimestamp"):
        assert not core.get(legacy), legacy
    name = core["metadata"]["name"]  # type: ignore[index]
    view = served.json("get", "events.events.k8s.io", name, "-n", ns)
    assert view["apiVersion"] == "events.k8s.io/v1"
    assert view["reportingController"] == "default-scheduler"
    assert view["note"] == core["message"]
    assert view["regarding"]["name"] == "web"
    assert view["metadata"]["resourceVersion"] == core["metadata"]["resourceVersion"]  # type: ignore[index]


def test_kubectl_describe_shows_the_reporting_controller_as_from(served: ServeProcess) -> None:
    ns = new_namespace(served, "ev")
    served.ok("apply", "-n", ns, "-f", "-", stdin=POD)
    _scheduled_event(served, ns)
    describe = served.ok("describe", "pod", "web", "-n", ns)
    # Type, Reason, Age (from eventTime, never <unknown>), From, Message.
    assert re.search(
        rf"Normal\s+Scheduled\s+\d+m?s\s+default-scheduler\s+"
        rf"Successfully assigned {ns}/web to node-1",
        describe,
    ), describe


def test_kubectl_get_events_through_either_group(served: ServeProcess) -> None:
    ns = new_namespace(served, "ev")
    served.ok("apply", "-n", ns, "-f", "-", stdin=POD)
    _scheduled_event(served, ns)
    for resource in ("events", "events.events.k8s.io", "events.v1.events.k8s.io"):
        rows = table_rows(served.ok("get", resource, "-n", ns))
        assert rows[0] == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"], resource
        scheduled = next(row for row in rows[1:] if "Scheduled" in row)
        assert scheduled[1:4] == ["Normal", "Scheduled", "pod/web"], resource
        assert scheduled[0] != "<unknown>"
    selected = served.ok(
        "get", "events.events.k8s.io", "-n", ns, "--field-selector", "regarding.name=web"
    )
    assert "pod/web" in selected
    refused = served.kubectl(
        "get", "events.events.k8s.io", "-n", ns, "--field-selector", "involvedObject.name=web"
    )
    assert refused.returncode != 0
    assert "field label not supported: involvedObject.name" in refused.stderr


def test_kubectl_events(served: ServeProcess) -> None:
    ns = new_namespace(served, "ev")
    served.ok("apply", "-n", ns, "-f", "-", stdin=POD)
    _scheduled_event(served, ns)
    rows = table_rows(served.ok("events", "-n", ns, "--for", "pod/web"))
    assert rows[0] == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    scheduled = next(row for row in rows[1:] if "Scheduled" in row)
    assert scheduled[1:4] == ["Normal", "Scheduled", "Pod/web"]
    assert scheduled[0] != "<unknown>"


def test_python_client_events_v1_and_core_v1_see_one_object(served: ServeProcess) -> None:
    ns = new_namespace(served, "ev")
    now = datetime.datetime.now(datetime.UTC)
    with served.client() as api_client:
        events = k8s.EventsV1Api(api_client)
        core = k8s.CoreV1Api(api_client)
        created = events.create_namespaced_event(
            ns,
            k8s.EventsV1Event(
                metadata=k8s.V1ObjectMeta(name="hello.1"),
                event_time=now,
                reporting_controller="example.com/tester",
                reporting_instance="tester-1",
                action="Testing",
                reason="Tested",
                regarding=k8s.V1ObjectReference(kind="Pod", namespace=ns, name="web"),
                note="it works",
                type="Normal",
            ),
        )
        assert created.note == "it works"
        stored = core.read_namespaced_event("hello.1", ns)
        assert stored.message == "it works"
        assert stored.reporting_component == "example.com/tester"
        assert stored.involved_object.name == "web"
        assert stored.metadata.resource_version == created.metadata.resource_version
        listed = events.list_namespaced_event(
            ns, field_selector="reportingController=example.com/tester"
        )
        assert [e.metadata.name for e in listed.items] == ["hello.1"]
        patched = events.patch_namespaced_event(
            "hello.1",
            ns,
            {"series": {"count": 2, "lastObservedTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}},
        )
        assert patched.series.count == 2
        assert core.read_namespaced_event("hello.1", ns).series.count == 2
        with pytest.raises(k8s.ApiException) as refused:
            events.patch_namespaced_event("hello.1", ns, {"note": "rewritten"})
        assert refused.value.status == 422
        assert json.loads(refused.value.body)["message"] == (
            'Event "hello.1" is invalid: message: Invalid value: "rewritten": field is immutable'
        )
        with pytest.raises(k8s.ApiException) as missing:
            events.read_namespaced_event("nope", ns)
        assert missing.value.status == 404
        assert json.loads(missing.value.body)["message"] == 'events.events.k8s.io "nope" not found'
