"""``/api/v1/componentstatuses`` over HTTP, as v1.32's kube-apiserver answers it.

Upstream rules checked here:

* ``pkg/registry/core/componentstatus/rest.go``: ``List`` probes every server and keeps
  those ``componentStatusPredicate`` (``storage.DefaultPredicateFunc``: the object's
  labels and ``metadata.name``) selects; ``Get`` of an unknown name is the plain error
  ``Component not found: <name>`` (``ErrorToAPIStatus``: 500, no reason);
  ``getComponentStatus``: one ``Healthy`` condition from ``DoServerCheck``;
* ``pkg/registry/core/rest/storage_core.go``: ``etcd-<n>`` per storage backend;
* the handler's field label conversion (none registered: the default one) refuses any
  field but ``metadata.name``/``metadata.namespace``; no Watcher: ``watch`` is 405;
* the deprecation warning (``ComponentStatus.APILifecycleDeprecated`` is 1.19);
* ``printComponentStatus``: NAME STATUS MESSAGE ERROR, Healthy only for ``True``.
"""

from __future__ import annotations

import pytest

from kubeprio.apiserver import componentstatus
from kubeprio.apiserver.service import ApiService
from tests.unit.apiserver.http_helpers import TABLE_ACCEPT, make_client

CS = "/api/v1/componentstatuses"
WARNING = '299 - "v1 ComponentStatus is deprecated in v1.19+"'


@pytest.fixture
def http(api: ApiService):
    client = make_client(api)
    kube = client.app.state.kube  # type: ignore[attr-defined]
    kube.component_probes = {
        "controller-manager": componentstatus.healthy,
        "scheduler": lambda: componentstatus.unhealthy("last pass failed: boom"),
        **kube.component_probes,
    }
    return client


def test_list_probes_every_component_in_order(http):
    response = http.get(CS)
    assert response.status_code == 200
    assert response.headers["warning"] == WARNING
    body = response.json()
    assert body["kind"] == "ComponentStatusList"
    assert body["apiVersion"] == "v1"
    assert [item["metadata"]["name"] for item in body["items"]] == [
        "controller-manager",
        "scheduler",
        "etcd-0",
    ]
    assert body["items"][0] == {
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        # ObjectMeta.CreationTimestamp is a metav1.Time value: Go writes the zero one as null.
        "metadata": {"name": "controller-manager", "creationTimestamp": None},
        "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
    }
    assert body["items"][1]["conditions"] == [
        {"type": "Healthy", "status": "False", "message": "last pass failed: boom"}
    ]


def test_etcd_reports_a_failing_store_in_the_error_field(api: ApiService, monkeypatch):
    client = make_client(api)

    def broken(_key: object) -> None:
        raise RuntimeError("database is closed")

    monkeypatch.setattr(api.store, "get", broken)
    body = client.get(f"{CS}/etcd-0").json()
    # EtcdServer.DoServerCheck: probe.Failure, no message, the error.
    assert body["conditions"] == [
        {"type": "Healthy", "status": "False", "error": "database is closed"}
    ]


def test_get_one_component(http):
    response = http.get(f"{CS}/etcd-0")
    assert response.status_code == 200
    assert response.headers["warning"] == WARNING
    assert response.json()["conditions"] == [{"type": "Healthy", "status": "True", "message": "ok"}]


def test_get_of_an_unknown_component_is_upstreams_plain_error(http):
    response = http.get(f"{CS}/nope")
    assert response.status_code == 500
    body = response.json()
    assert body["message"] == "Component not found: nope"
    assert "reason" not in body or body["reason"] == ""


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("fieldSelector=metadata.name%3Dscheduler", ["scheduler"]),
        ("fieldSelector=metadata.name!%3Dscheduler", ["controller-manager", "etcd-0"]),
        ("fieldSelector=metadata.namespace%3D", ["controller-manager", "scheduler", "etcd-0"]),
        # Components carry no labels: any label requirement but a negative one drops all.
        ("labelSelector=app%3Dx", []),
        ("labelSelector=!app", ["controller-manager", "scheduler", "etcd-0"]),
    ],
)
def test_selectors_filter_with_the_default_predicate(http, query, expected):
    body = http.get(f"{CS}?{query}").json()
    assert [item["metadata"]["name"] for item in body["items"]] == expected


def test_other_field_selectors_are_unknown(http):
    response = http.get(f"{CS}?fieldSelector=status.phase%3Dok")
    assert response.status_code == 400
    assert response.json()["message"] == (
        '"status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )


def test_watch_and_writes_are_refused(http):
    watch = http.get(f"{CS}?watch=true")
    assert watch.status_code == 405
    assert (
        watch.json()["message"] == 'watch is not supported on resources of kind "componentstatuses"'
    )
    assert http.delete(f"{CS}/etcd-0").status_code == 405


def test_table_prints_name_status_message_error(http):
    body = http.get(CS, headers={"Accept": TABLE_ACCEPT}).json()
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Status", "Message", "Error"]
    assert [row["cells"] for row in body["rows"]] == [
        ["controller-manager", "Healthy", "ok", ""],
        ["scheduler", "Unhealthy", "last pass failed: boom", ""],
        ["etcd-0", "Healthy", "ok", ""],
    ]


def test_unknown_status_prints_unknown():
    item = componentstatus.ComponentStatus(conditions=())
    assert componentstatus.print_component_status(item) == ["", "Unknown", "", ""]


def test_discovery_lists_componentstatuses_with_short_name(http):
    resources = http.get("/api/v1").json()["resources"]
    (row,) = [r for r in resources if r["name"] == "componentstatuses"]
    assert row["verbs"] == ["get", "list"]
    assert row["shortNames"] == ["cs"]
    assert row["namespaced"] is False
