"""Discovery, version and OpenAPI over HTTP (shared/reference/kubectl-wire.md §1, §2, §4).

Upstream: ``staging/src/k8s.io/apiserver/pkg/endpoints/discovery`` (legacy and
``aggregated``), ``pkg/controlplane`` version handler, ``kube-openapi`` v3 handler.
"""

from __future__ import annotations

import pytest

from kubeprio.apiserver.discovery import AGGREGATED_CONTENT_TYPE
from tests.unit.apiserver.http_helpers import AGGREGATED_ACCEPT, make_client


@pytest.fixture
def client(api):
    return make_client(api)


@pytest.mark.parametrize("path", ["/version", "/version/"], ids=["kubectl", "python-client"])
def test_version_reports_minor_32_for_the_kubectl_dispatcher(client, path):
    response = client.get(path)
    assert response.status_code == 200
    assert response.json()["major"] == "1"
    assert response.json()["minor"] == "32"
    # v1.32's version.Info (apimachinery pkg/version/types.go at v0.32): emulationMajor,
    # minCompatibilityMajor and the like came with v1.33.
    assert list(response.json()) == [
        "major",
        "minor",
        "gitVersion",
        "gitCommit",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    ]


@pytest.mark.parametrize("path", ["/api", "/apis"])
def test_aggregated_discovery_has_the_exact_content_type_when_v2_is_asked(client, path):
    response = client.get(path, headers={"Accept": AGGREGATED_ACCEPT})
    assert response.headers["content-type"] == AGGREGATED_CONTENT_TYPE
    assert response.json()["kind"] == "APIGroupDiscoveryList"


@pytest.mark.parametrize(
    "accept",
    [
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
        "application/json, */*",
        "",
    ],
    ids=["kubectl-1.27-v2beta1-only", "plain", "none"],
)
def test_legacy_discovery_unless_v2_is_listed(client, accept):
    response = client.get("/api", headers={"Accept": accept})
    assert response.headers["content-type"] == "application/json"
    assert response.json()["versions"] == ["v1"]
    groups = client.get("/apis", headers={"Accept": accept}).json()
    assert groups["kind"] == "APIGroupList"
    assert "scheduling.k8s.io" in {g["name"] for g in groups["groups"]}


def _aggregated_resources(client):
    out = {}
    for path in ("/api", "/apis"):
        body = client.get(path, headers={"Accept": AGGREGATED_ACCEPT}).json()
        for group in body["items"]:
            for version in group["versions"]:
                for resource in version["resources"]:
                    # The first of a name: core pods and nodes, not metrics.k8s.io's.
                    out.setdefault(resource["resource"], resource)
    return out


@pytest.mark.parametrize(
    ("resource", "short", "scope"),
    [
        ("priorityclasses", "pc", "Cluster"),
        ("pods", "po", "Namespaced"),
        ("nodes", "no", "Cluster"),
        ("namespaces", "ns", "Cluster"),
        ("events", "ev", "Namespaced"),
        ("poddisruptionbudgets", "pdb", "Namespaced"),
        ("deployments", "deploy", "Namespaced"),
        ("replicasets", "rs", "Namespaced"),
    ],
)
def test_aggregated_entries_carry_short_names_scope_verbs_and_response_kind(
    client, resource, short, scope
):
    entry = _aggregated_resources(client)[resource]
    assert short in entry["shortNames"]
    assert entry["scope"] == scope
    assert "list" in entry["verbs"]
    assert entry["responseKind"]["kind"]


def test_pods_and_workloads_are_in_category_all(client):
    resources = _aggregated_resources(client)
    for name in ("pods", "deployments", "replicasets"):
        assert "all" in resources[name]["categories"]


def test_deployment_scale_subresource_answers_an_autoscaling_v1_scale(client):
    subs = {
        s["subresource"]: s for s in _aggregated_resources(client)["deployments"]["subresources"]
    }
    assert subs["scale"]["responseKind"] == {
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
    }


def test_legacy_core_list_has_pods_eviction_for_kubectl_drain(client):
    body = client.get("/api/v1").json()
    entries = {r["name"]: r for r in body["resources"]}
    assert entries["pods/eviction"]["group"] == "policy"
    assert entries["pods/eviction"]["version"] == "v1"
    assert entries["pods/eviction"]["verbs"] == ["create"]
    assert entries["pods"]["shortNames"] == ["po"]


def test_legacy_group_version_lists(client):
    body = client.get("/apis/scheduling.k8s.io/v1").json()
    assert body["groupVersion"] == "scheduling.k8s.io/v1"
    assert body["resources"][0]["name"] == "priorityclasses"
    assert client.get("/apis/apps").json()["preferredVersion"]["groupVersion"] == "apps/v1"


def test_openapi_v3_patch_operations_advertise_field_validation_without_request_bodies(client):
    index = client.get("/openapi/v3").json()
    url = index["paths"]["apis/scheduling.k8s.io/v1"]["serverRelativeURL"]
    doc = client.get(url).json()
    patch = doc["paths"]["/apis/scheduling.k8s.io/v1/priorityclasses/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == "PriorityClass"
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert "requestBody" not in patch


@pytest.mark.parametrize(
    "path", ["/nope", "/api/v1/nosuch", "/apis/nogroup/v1/things", "/openapi/v3/apis/x/v1"]
)
def test_unknown_paths_answer_upstream_not_found_status(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.json()["message"] == "the server could not find the requested resource"
    assert response.json()["reason"] == "NotFound"
