"""``apiserver_request_total`` labels and which requests count, as kube-apiserver's.

Upstream: ``staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go``
(``MonitorRequest``, ``CleanVerb``, ``CanonicalVerb``, ``cleanDryRun``), the installer's
``requestScope`` (``endpoints/installer.go``), ``healthz.InstallPathHandler`` and the
aggregated discovery handler, which are the instrumented non-resource paths. Requests
go through the real app (``TestClient``) with tokens and the tenant authorizer.
"""

from __future__ import annotations

import pytest

from kubeprio.apiserver.requestmetrics import (
    DURATION_BUCKETS,
    RequestLabels,
    RequestMetrics,
    dry_run_label,
)
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    AGGREGATED_ACCEPT,
    ALICE,
    pod_manifest,
    tenancy_client,
)


@pytest.fixture
def counted(api):
    metrics = RequestMetrics()
    client = tenancy_client(api, request_metrics=metrics)
    client.post("/api/v1/namespaces/team-a/pods", json=pod_manifest("web"), headers=ADMIN)
    metrics.totals.clear()
    metrics.durations.clear()
    return client, metrics


def _labels(verb, resource, scope, *, subresource="", group="", version="v1", dry_run=""):
    return RequestLabels(verb, dry_run, group, version, resource, subresource, scope, "apiserver")


PODS = "/api/v1/namespaces/team-a/pods"


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "labels", "code"),
    [
        ("GET", PODS, {}, _labels("LIST", "pods", "namespace"), 200),
        ("GET", "/api/v1/pods", {}, _labels("LIST", "pods", "cluster"), 200),
        ("GET", f"{PODS}/web", {}, _labels("GET", "pods", "resource"), 200),
        ("GET", f"{PODS}/nosuch", {}, _labels("GET", "pods", "resource"), 404),
        (
            "GET",
            f"{PODS}?watch=true&timeoutSeconds=1",
            {},
            _labels("WATCH", "pods", "namespace"),
            200,
        ),
        ("POST", PODS, {"json": pod_manifest("new")}, _labels("POST", "pods", "resource"), 201),
        (
            "POST",
            f"{PODS}?dryRun=All",
            {"json": pod_manifest("dry")},
            _labels("POST", "pods", "resource", dry_run="All"),
            201,
        ),
        (
            "PATCH",
            f"{PODS}/web",
            {
                "content": b'{"metadata":{"labels":{"a":"b"}}}',
                "headers": {"Content-Type": "application/merge-patch+json"},
            },
            _labels("PATCH", "pods", "resource"),
            200,
        ),
        (
            "PATCH",
            f"{PODS}/web?fieldManager=kubectl",
            {
                "content": b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"}}',
                "headers": {"Content-Type": "application/apply-patch+yaml"},
            },
            _labels("APPLY", "pods", "resource"),
            200,
        ),
        ("DELETE", f"{PODS}/web", {}, _labels("DELETE", "pods", "resource"), 200),
        ("DELETE", PODS, {}, _labels("DELETE", "pods", "namespace"), 200),
        (
            "GET",
            f"{PODS}/web/log",
            {},
            _labels("CONNECT", "pods", "resource", subresource="log"),
            200,
        ),
        (
            "GET",
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {},
            _labels("LIST", "priorityclasses", "cluster", group="scheduling.k8s.io"),
            200,
        ),
        (
            "GET",
            "/api/v1/namespaces/team-a",
            {},
            _labels("GET", "namespaces", "resource"),
            200,
        ),
    ],
    ids=[
        "list-in-namespace",
        "list-all-namespaces",
        "get",
        "get-missing-404",
        "watch",
        "create-is-POST",
        "dry-run",
        "patch",
        "server-side-apply",
        "delete",
        "delete-collection",
        "log-is-CONNECT",
        "cluster-scoped-list",
        "cluster-scoped-get",
    ],
)
def test_a_resource_request_is_counted_with_upstreams_labels(
    counted, method, path, kwargs, labels, code
):
    client, metrics = counted
    headers = {**ADMIN, **kwargs.pop("headers", {})}
    response = client.request(method, path, headers=headers, **kwargs)
    assert response.status_code == code
    assert metrics.totals == {(labels, code): 1}
    assert metrics.durations[labels].count == 1
    assert metrics.durations[labels].bounds == DURATION_BUCKETS


def test_an_admission_refusal_inside_the_handler_is_counted_with_its_code(counted):
    client, metrics = counted
    body = pod_manifest("sneaky", priorityClassName="system-node-critical")
    response = client.post(PODS, json=body, headers=ALICE)
    assert response.status_code == 403
    assert metrics.totals == {(_labels("POST", "pods", "resource"), 403): 1}


@pytest.mark.parametrize(
    ("path", "headers", "code"),
    [
        (PODS, {}, 401),
        ("/api/v1/namespaces/other/pods", ALICE, 403),
        ("/api/v1/foos", ADMIN, 404),
    ],
    ids=["unauthenticated", "unauthorized", "unserved-resource"],
)
def test_requests_refused_before_a_handler_are_not_counted(counted, path, headers, code):
    client, metrics = counted
    assert client.get(path, headers=headers).status_code == code
    assert metrics.totals == {}


@pytest.mark.parametrize("endpoint", ["/healthz", "/livez", "/readyz"])
def test_health_roots_are_counted_with_the_path_as_subresource(counted, endpoint):
    client, metrics = counted
    assert client.get(endpoint, headers=ADMIN).status_code == 200
    assert client.get(f"{endpoint}/ping", headers=ADMIN).status_code == 200  # not instrumented
    labels = RequestLabels("GET", "", "", "", "", endpoint, "", "")
    assert metrics.totals == {(labels, 200): 1}


@pytest.mark.parametrize("path", ["/api", "/apis"])
def test_aggregated_discovery_is_counted_but_legacy_discovery_is_not(counted, path):
    client, metrics = counted
    client.get(path, headers=ADMIN)
    assert metrics.totals == {}
    client.get(path, headers={**ADMIN, "Accept": AGGREGATED_ACCEPT})
    labels = RequestLabels("GET", "", "", "", "", path, "", "apiserver")
    assert metrics.totals == {(labels, 200): 1}


@pytest.mark.parametrize(
    ("values", "label"),
    [((), ""), (("All",), "All"), (("All", "All"), "All"), (("Some",), "invalid")],
    ids=["absent", "all", "deduplicated", "invalid"],
)
def test_dry_run_label(values, label):
    assert dry_run_label(values) == label
