"""The resource metrics API over HTTP: ``metrics.k8s.io/v1beta1`` as metrics-server serves it.

Upstream rules checked here (kubernetes-sigs/metrics-server ``pkg/api/pod.go``, ``node.go``,
``filter.go``, ``table.go``; the generic API server's ``handlers/get.go``):

* only running pods have metrics (its pod informer lists ``status.phase=Running``; a
  terminating pod still runs) and only on nodes whose kubelet answers a scrape;
* lists are sorted by namespace and name, with ``metadata: {}``;
* a get of a pod the lister lacks is the lister's ``pods "x" not found``; of a pod it has
  but without metrics ``podmetrics.metrics.k8s.io "ns/x" not found``; nodes likewise
  (``node "x" not found``, ``nodemetrics.metrics.k8s.io "x" not found``);
* label selectors select by the pod's or node's labels; field selectors may name only
  ``metadata.name`` and ``metadata.namespace`` (``DefaultMetaV1FieldSelectorConversion``);
* the storage is read-only: ``watch`` is ``NewMethodNotSupported``, other methods the
  router's 405;
* its Table: ``Name``, one column per resource, ``Window``.
"""

from __future__ import annotations

import pytest

from kubeprio.api import annotations
from kubeprio.api.core import PHASE_FAILED, PHASE_PENDING, PHASE_RUNNING, PHASE_SUCCEEDED, Pod
from kubeprio.api.meta import ApiObject
from kubeprio.apiserver.service import ApiService
from kubeprio.store.interface import ObjectKey
from tests.builders import PodBuilder, node, pod
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    AGGREGATED_ACCEPT,
    ALICE,
    TABLE_ACCEPT,
    make_client,
    tenancy_client,
)

GV = "/apis/metrics.k8s.io/v1beta1"
NOW = "2026-01-01T00:00:00Z"  # the ManualClock's start


def store(api: ApiService, obj: ApiObject) -> None:
    """Put an object in the store as the kubelet and scheduler left it (no write path)."""
    meta = obj.metadata
    resource = "pods" if isinstance(obj, Pod) else "nodes"
    api.store.create(ObjectKey(resource, meta.namespace or "", meta.name or ""), obj)


def running(name: str, namespace: str, on: str, usage: str | None = None) -> PodBuilder:
    builder = pod(name, namespace).on(on).phase(PHASE_RUNNING)
    return builder.annotate(annotations.USAGE, usage) if usage else builder


@pytest.fixture
def cluster(api: ApiService) -> ApiService:
    """Nodes n1, n2 (answering), n3 (kubelet stopped: Ready Unknown), n4 (kubelet never
    posted); pods of every phase in ``shop`` and one in ``other``."""
    store(api, node("n1").labels(zone="a").condition("Ready", "True").build())
    store(api, node("n2").labels(zone="b").condition("Ready", "False").build())
    store(api, node("n3").condition("Ready", "Unknown").build())
    store(api, node("n4").build())
    for builder in (
        running("web-1", "shop", "n1", "cpu=250m,memory=900Mi").labels(app="web"),
        running("web-2", "shop", "n2", "cpu=100m,memory=100Mi").labels(app="web"),
        running("worker", "shop", "n1", "cpu=1,c1:cpu=5m,c1:memory=20Mi").container(),
        running("leaving", "shop", "n2", "memory=1Gi").terminating(),
        running("stuck", "shop", "n3", "memory=1Gi"),
        pod("pending", "shop").phase(PHASE_PENDING),
        pod("done", "shop").on("n1").phase(PHASE_SUCCEEDED),
        pod("failed", "shop").on("n2").phase(PHASE_FAILED),
        running("api", "other", "n2", "cpu=2,memory=2Gi").labels(app="web"),
    ):
        store(api, builder.build())
    return api


@pytest.fixture
def http(cluster):
    return make_client(cluster)


def names(body):
    return [(item["metadata"].get("namespace"), item["metadata"]["name"]) for item in body["items"]]


def test_a_namespace_lists_its_running_pods_on_answering_nodes(http):
    response = http.get(f"{GV}/namespaces/shop/pods")
    assert response.status_code == 200
    body = response.json()
    assert (body["kind"], body["apiVersion"], body["metadata"]) == (
        "PodMetricsList",
        "metrics.k8s.io/v1beta1",
        {},
    )
    # Not: pending (not running), done and failed (terminal), stuck (its node is silent).
    assert names(body) == [("shop", n) for n in ("leaving", "web-1", "web-2", "worker")]
    worker = body["items"][-1]
    assert worker == {
        "apiVersion": "metrics.k8s.io/v1beta1",
        "kind": "PodMetrics",
        "metadata": {"name": "worker", "namespace": "shop", "creationTimestamp": NOW},
        "timestamp": NOW,
        "window": "15s",
        "containers": [
            {"name": "c", "usage": {"cpu": "1", "memory": "0"}},
            {"name": "c1", "usage": {"cpu": "5m", "memory": "20Mi"}},
        ],
    }


def test_all_namespaces_are_listed_by_namespace_then_name(http):
    assert names(http.get(f"{GV}/pods").json()) == [
        ("other", "api"),
        *(("shop", n) for n in ("leaving", "web-1", "web-2", "worker")),
    ]


def test_a_namespace_without_pods_is_an_empty_list(http):
    assert http.get(f"{GV}/namespaces/nosuch/pods").json()["items"] == []


SELECTIONS = [
    ("labelSelector=app%3Dweb", [("other", "api"), ("shop", "web-1"), ("shop", "web-2")]),
    ("labelSelector=app+in+(web),app!%3Dweb", []),
    ("labelSelector=!app", [("shop", "leaving"), ("shop", "worker")]),
    ("fieldSelector=metadata.name%3Dweb-1", [("shop", "web-1")]),
    ("fieldSelector=metadata.namespace%3Dother", [("other", "api")]),
    ("fieldSelector=metadata.namespace!%3Dshop,metadata.name!%3Dx", [("other", "api")]),
    ("labelSelector=app%3Dweb&fieldSelector=metadata.name%3Dweb-2", [("shop", "web-2")]),
]


@pytest.mark.parametrize(("query", "expected"), SELECTIONS, ids=[q for q, _ in SELECTIONS])
def test_label_and_field_selectors_select_pods(http, query, expected):
    assert names(http.get(f"{GV}/pods?{query}").json()) == expected


@pytest.mark.parametrize("field", ["spec.nodeName", "status.phase"])
def test_other_field_selectors_are_unknown(http, field):
    response = http.get(f"{GV}/namespaces/shop/pods", params={"fieldSelector": f"{field}=x"})
    assert response.status_code == 400
    assert response.json()["message"] == (
        f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )


def test_a_label_selector_that_does_not_parse_is_a_bad_request(http):
    response = http.get(f"{GV}/pods", params={"labelSelector": "app in web"})
    assert response.status_code == 400
    assert response.json()["reason"] == "BadRequest"


def test_a_running_pod_is_got_by_name(http):
    body = http.get(f"{GV}/namespaces/shop/pods/web-1").json()
    assert body["kind"] == "PodMetrics"
    assert body["metadata"]["labels"] == {"app": "web"}
    assert body["containers"] == [{"name": "c", "usage": {"cpu": "250m", "memory": "900Mi"}}]


@pytest.mark.parametrize("name", ["pending", "done", "failed", "nosuch"])
def test_a_pod_that_does_not_run_is_the_pod_listers_not_found(http, name):
    response = http.get(f"{GV}/namespaces/shop/pods/{name}")
    assert response.status_code == 404
    body = response.json()
    assert body["message"] == f'pods "{name}" not found'
    assert body["details"] == {"name": name, "kind": "pods"}


def test_a_running_pod_without_metrics_is_metrics_servers_not_found(http):
    response = http.get(f"{GV}/namespaces/shop/pods/stuck")
    assert response.status_code == 404
    body = response.json()
    assert body["message"] == 'podmetrics.metrics.k8s.io "shop/stuck" not found'
    assert body["details"] == {
        "name": "shop/stuck",
        "group": "metrics.k8s.io",
        "kind": "podmetrics",
    }


def test_nodes_whose_kubelet_answers_sum_their_running_pods(http):
    body = http.get(f"{GV}/nodes").json()
    assert (body["kind"], body["metadata"]) == ("NodeMetricsList", {})
    usage = {item["metadata"]["name"]: item["usage"] for item in body["items"]}
    # n1: web-1 + worker (not done); n2: web-2 + leaving + other/api (not failed); n2 is
    # NotReady but its kubelet answers; n3 and n4 have none.
    assert usage == {
        "n1": {"cpu": "1255m", "memory": "920Mi"},
        "n2": {"cpu": "2100m", "memory": "3172Mi"},
    }
    assert body["items"][0]["metadata"] == {
        "name": "n1",
        "creationTimestamp": NOW,
        "labels": {"zone": "a"},
    }


def test_node_label_and_name_selectors(http):
    assert names(http.get(f"{GV}/nodes?labelSelector=zone%3Db").json()) == [(None, "n2")]
    assert names(http.get(f"{GV}/nodes?fieldSelector=metadata.name%3Dn1").json()) == [(None, "n1")]


def test_a_node_is_got_by_name(http):
    body = http.get(f"{GV}/nodes/n2").json()
    assert (body["kind"], body["usage"]) == ("NodeMetrics", {"cpu": "2100m", "memory": "3172Mi"})


@pytest.mark.parametrize(
    ("name", "message", "details"),
    [
        ("nosuch", 'node "nosuch" not found', {"name": "nosuch", "kind": "node"}),
        (
            "n3",
            'nodemetrics.metrics.k8s.io "n3" not found',
            {"name": "n3", "group": "metrics.k8s.io", "kind": "nodemetrics"},
        ),
    ],
)
def test_node_not_found_texts(http, name, message, details):
    response = http.get(f"{GV}/nodes/{name}")
    assert response.status_code == 404
    assert (response.json()["message"], response.json()["details"]) == (message, details)


def test_an_index_of_pods_by_node_is_used_when_given(cluster):
    asked: list[str] = []

    def pods_on_node(name: str) -> list[Pod]:
        asked.append(name)
        return [running("indexed", "x", name, "cpu=7m").build()]

    http = make_client(cluster, pods_on_node=pods_on_node)
    body = http.get(f"{GV}/nodes").json()
    assert [item["usage"]["cpu"] for item in body["items"]] == ["7m", "7m"]
    assert asked == ["n1", "n2"]


@pytest.mark.parametrize(
    "path",
    [f"{GV}/pods", f"{GV}/namespaces/shop/pods", f"{GV}/nodes"],
    ids=["pods-all", "pods", "nodes"],
)
def test_watch_is_not_supported(http, path):
    response = http.get(path, params={"watch": "true"})
    assert response.status_code == 405
    resource = path.rsplit("/", 1)[1]
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'watch is not supported on resources of kind "{resource}.metrics.k8s.io"',
        "reason": "MethodNotAllowed",
        "details": {"group": "metrics.k8s.io", "kind": resource},
        "code": 405,
    }


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", f"{GV}/namespaces/shop/pods"),
        ("DELETE", f"{GV}/namespaces/shop/pods"),
        ("PUT", f"{GV}/namespaces/shop/pods/web-1"),
        ("PATCH", f"{GV}/namespaces/shop/pods/web-1"),
        ("DELETE", f"{GV}/namespaces/shop/pods/web-1"),
        ("POST", f"{GV}/nodes"),
        ("DELETE", f"{GV}/nodes/n1"),
    ],
)
def test_the_metrics_are_read_only(http, method, path):
    response = http.request(method, path, json={})
    assert response.status_code == 405
    body = response.json()
    assert (body["reason"], body["details"]) == ("MethodNotAllowed", {})
    assert body["message"] == "the server does not allow this method on the requested resource"


def test_the_pod_table_has_metrics_servers_columns(http):
    table = http.get(f"{GV}/namespaces/shop/pods", headers={"Accept": TABLE_ACCEPT}).json()
    assert [(c["name"], c["format"], c["description"]) for c in table["columnDefinitions"]] == [
        ("Name", "name", "Name of the resource"),
        ("cpu", "quantity", ""),
        ("memory", "quantity", ""),
        ("Window", "duration", ""),
    ]
    # A pod's row holds its containers' sum.
    assert [row["cells"] for row in table["rows"]] == [
        ["leaving", "0", "1Gi", "15s"],
        ["web-1", "250m", "900Mi", "15s"],
        ["web-2", "100m", "100Mi", "15s"],
        ["worker", "1005m", "20Mi", "15s"],
    ]
    assert table["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"name": "leaving", "namespace": "shop", "creationTimestamp": NOW},
    }


def test_the_node_table_and_a_one_row_table(http):
    table = http.get(f"{GV}/nodes/n1", headers={"Accept": TABLE_ACCEPT}).json()
    assert [row["cells"] for row in table["rows"]] == [["n1", "1255m", "920Mi", "15s"]]


def test_an_empty_table_has_no_columns(http):
    table = http.get(f"{GV}/namespaces/nosuch/pods", headers={"Accept": TABLE_ACCEPT}).json()
    assert (table["columnDefinitions"], table["rows"]) == (None, None)


def test_discovery_lists_the_group_as_metrics_server_registers_it(http):
    body = http.get("/apis", headers={"Accept": AGGREGATED_ACCEPT}).json()
    (group,) = [g for g in body["items"] if g["metadata"]["name"] == "metrics.k8s.io"]
    (version,) = group["versions"]
    assert version["version"] == "v1beta1"
    assert version["resources"] == [
        {
            "resource": "nodes",
            "responseKind": {
                "group": "metrics.k8s.io",
                "version": "v1beta1",
                "kind": "NodeMetrics",
            },
            "scope": "Cluster",
            "singularResource": "",
            "verbs": ["get", "list"],
        },
        {
            "resource": "pods",
            "responseKind": {"group": "metrics.k8s.io", "version": "v1beta1", "kind": "PodMetrics"},
            "scope": "Namespaced",
            "singularResource": "",
            "verbs": ["get", "list"],
        },
    ]
    # Legacy discovery, which kubectl top's ServerGroups falls back to.
    (legacy,) = [g for g in http.get("/apis").json()["groups"] if g["name"] == "metrics.k8s.io"]
    assert legacy["preferredVersion"] == {
        "groupVersion": "metrics.k8s.io/v1beta1",
        "version": "v1beta1",
    }
    assert http.get(GV).json()["resources"] == [
        {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics",
         "verbs": ["get", "list"]},
        {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics",
         "verbs": ["get", "list"]},
    ]  # fmt: skip


def test_no_openapi_document_for_the_read_only_group(http):
    assert "apis/metrics.k8s.io/v1beta1" not in http.get("/openapi/v3").json()["paths"]


# --- authorization -------------------------------------------------------------------------


@pytest.fixture
def tenancy(cluster):
    client = tenancy_client(cluster)
    store(cluster, running("mine", "team-a", "n1", "cpu=1m").build())
    return client


def test_a_tenant_user_reads_pod_metrics_in_the_tenants_namespaces(tenancy):
    # Upstream's system:aggregated-metrics-reader is aggregated into admin, edit and view.
    response = tenancy.get(f"{GV}/namespaces/team-a/pods", headers=ALICE)
    assert response.status_code == 200
    assert names(response.json()) == [("team-a", "mine")]
    assert tenancy.get(f"{GV}/namespaces/team-a/pods/mine", headers=ALICE).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "message"),
    [
        ("GET", f"{GV}/namespaces/shop/pods",
         'pods.metrics.k8s.io is forbidden: User "alice" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "shop"'),
        ("GET", f"{GV}/pods",
         'pods.metrics.k8s.io is forbidden: User "alice" cannot list resource "pods" in API group "metrics.k8s.io" at the cluster scope'),
        ("GET", f"{GV}/nodes",
         'nodes.metrics.k8s.io is forbidden: User "alice" cannot list resource "nodes" in API group "metrics.k8s.io" at the cluster scope'),
        ("GET", f"{GV}/nodes/n1",
         'nodes.metrics.k8s.io "n1" is forbidden: User "alice" cannot get resource "nodes" in API group "metrics.k8s.io" at the cluster scope'),
        ("POST", f"{GV}/namespaces/team-a/pods",
         'pods.metrics.k8s.io is forbidden: User "alice" cannot create resource "pods" in API group "metrics.k8s.io" in the namespace "team-a"'),
    ],
)  # fmt: skip
def test_a_tenant_user_is_refused_elsewhere_and_cannot_write(tenancy, method, path, message):
    response = tenancy.request(method, path, headers=ALICE, json={})
    assert response.status_code == 403
    assert response.json()["message"] == message


def test_an_admin_reads_everything_and_writes_nothing(tenancy):
    assert tenancy.get(f"{GV}/nodes", headers=ADMIN).status_code == 200
    assert tenancy.post(f"{GV}/namespaces/team-a/pods", headers=ADMIN, json={}).status_code == 405
