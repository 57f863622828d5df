"""``pods/ephemeralcontainers`` over HTTP: discovery, the three verbs, authorization, and
the container lookups of ``pods/log`` and ``pods/attach``.

Upstream: the subresource is ``EphemeralContainersREST`` (``pkg/registry/core/pod/storage/
storage.go``): kind Pod, verbs get, patch, update (its discovery entry); GET answers the
Pod, PUT and PATCH go through ``podEphemeralContainersStrategy``. The authorizer sees the
resource ``pods`` and the subresource ``ephemeralcontainers``; kubeprio lets a tenant user
patch and update it in the tenant's namespaces, as upstream's ``edit`` role (aggregated into
``admin``) does. ``validateContainer`` (``pkg/registry/core/pod/strategy.go``) and the
kubelet's ``validateContainerLogStatus`` know ephemeral containers
(``podutil.VisitContainers``: init, regular, ephemeral).
"""

from __future__ import annotations

import json

import pytest

from kubeprio.api import errors
from kubeprio.api.core import (
    Container,
    ContainerStatus,
    EphemeralContainer,
    Pod,
    PodSpec,
    PodStatus,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver import podlogs, podstreams
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    ALICE,
    make_client,
    pod_manifest,
    tenancy_client,
)

PODS = "/api/v1/namespaces/default/pods"
SUB = f"{PODS}/p/ephemeralcontainers"
DEBUGGER = {"name": "debugger", "image": "busybox", "terminationMessagePolicy": "File"}


@pytest.fixture
def client(api):
    http = make_client(api)
    assert http.post(PODS, json=pod_manifest("p")).status_code == 201
    return http


def test_discovery_lists_the_subresource_as_upstream(client):
    entries = {r["name"]: r for r in client.get("/api/v1").json()["resources"]}
    entry = entries["pods/ephemeralcontainers"]
    assert (entry["kind"], entry["verbs"], entry["namespaced"]) == (
        "Pod",
        ["get", "patch", "update"],
        True,
    )
    assert entry["singularName"] == ""


def test_get_answers_the_pod(client):
    response = client.get(SUB)
    assert response.status_code == 200
    assert response.json() == client.get(f"{PODS}/p").json()


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        (
            "application/strategic-merge-patch+json",
            {
                "spec": {
                    "$setElementOrder/ephemeralContainers": [{"name": "debugger"}],
                    "ephemeralContainers": [DEBUGGER],
                }
            },
        ),
        ("application/merge-patch+json", {"spec": {"ephemeralContainers": [DEBUGGER]}}),
        (
            "application/json-patch+json",
            [{"op": "add", "path": "/spec/ephemeralContainers", "value": [DEBUGGER]}],
        ),
    ],
    ids=["strategic", "merge", "json-patch"],
)
def test_patch_adds_an_ephemeral_container(client, content_type, body):
    response = client.patch(
        SUB, content=json.dumps(body).encode(), headers={"Content-Type": content_type}
    )
    assert response.status_code == 200, response.text
    [added] = response.json()["spec"]["ephemeralContainers"]
    assert added["name"] == "debugger"
    assert added["imagePullPolicy"] == "Always"


def test_put_adds_one_and_keeps_everything_else(client):
    pod = client.get(SUB).json()
    pod["spec"]["ephemeralContainers"] = [DEBUGGER]
    pod["metadata"]["labels"] = {"ignored": "yes"}
    response = client.put(SUB, json=pod)
    assert response.status_code == 200, response.text
    stored = response.json()
    assert [c["name"] for c in stored["spec"]["ephemeralContainers"]] == ["debugger"]
    assert "labels" not in stored["metadata"]


def test_a_refusal_is_upstreams_422(client):
    body = {"spec": {"ephemeralContainers": [{**DEBUGGER, "ports": [{"containerPort": 80}]}]}}
    response = client.patch(
        SUB,
        content=json.dumps(body).encode(),
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert response.status_code == 422
    assert response.json()["message"] == (
        'Pod "p" is invalid: spec.ephemeralContainers[0].ports: Forbidden: cannot be set for '
        "an Ephemeral Container"
    )


def test_the_subresource_of_a_missing_pod_is_404(client):
    response = client.get(f"{PODS}/nosuch/ephemeralcontainers")
    assert response.status_code == 404
    assert response.json()["message"] == 'pods "nosuch" not found'


def test_post_and_delete_are_not_served(client):
    assert client.post(SUB, json={}).status_code == 405
    assert client.delete(SUB).status_code == 405


@pytest.fixture
def tenancy(api):
    return tenancy_client(api)


@pytest.mark.parametrize(
    ("namespace", "code"), [("team-a", 200), ("other", 403)], ids=["own", "other"]
)
def test_a_tenant_user_may_debug_pods_of_its_namespaces(api, tenancy, namespace, code):
    """Upstream's ``edit`` role grants ``patch``/``update`` on ``pods/ephemeralcontainers``."""
    created = tenancy.post(
        f"/api/v1/namespaces/{namespace}/pods", json=pod_manifest("p"), headers=ADMIN
    )
    assert created.status_code == 201
    body = {"spec": {"ephemeralContainers": [DEBUGGER]}}
    response = tenancy.patch(
        f"/api/v1/namespaces/{namespace}/pods/p/ephemeralcontainers",
        content=json.dumps(body).encode(),
        headers={**ALICE, "Content-Type": "application/strategic-merge-patch+json"},
    )
    assert response.status_code == code
    if code == 403:
        assert response.json()["message"] == (
            'pods "p" is forbidden: User "alice" cannot patch resource "pods/ephemeralcontainers" '
            'in API group "" in the namespace "other"'
        )


def _debugged(status: dict[str, object] | None) -> Pod:
    statuses = None
    if status is not None:
        statuses = (ContainerStatus(name="debugger", ready=False, restart_count=0, extra=status),)
    return Pod(
        metadata=ObjectMeta(name="web", namespace="default"),
        spec=PodSpec(
            node_name="n1",
            init_containers=(Container(name="setup", image="busybox"),),
            containers=(Container(name="app", image="nginx"),),
            ephemeral_containers=(EphemeralContainer(name="debugger", image="busybox"),),
        ),
        status=PodStatus(ephemeral_container_statuses=statuses),
    )


def test_logs_and_streams_know_ephemeral_containers():
    running = {"containerID": "containerd://1", "state": {"running": {"startedAt": "t"}}}
    pod = _debugged(running)
    assert podlogs.container_for(pod, "debugger") == "debugger"
    podlogs.check_kubelet_answer(pod, "debugger", previous=False)
    assert podlogs.is_running(pod, "debugger")
    # The only regular container is still the default one.
    assert podlogs.container_for(pod, "") == "app"
    refusal = podstreams.refuse(pod, podstreams.ATTACH, "debugger")
    assert refusal.code == 500


def test_an_unstarted_ephemeral_container_waits_for_its_kubelet():
    with pytest.raises(errors.StatusError) as caught:
        podlogs.check_kubelet_answer(_debugged(None), "debugger", previous=False)
    assert caught.value.message == 'container "debugger" in pod "web" is not available'


def test_the_container_choice_lists_ephemeral_containers_last():
    pod = _debugged(None)
    spec = pod.spec
    assert spec is not None
    two = Pod(
        metadata=pod.metadata,
        spec=PodSpec(
            node_name="n1",
            init_containers=spec.init_containers,
            containers=(*(spec.containers or ()), Container(name="side", image="x")),
            ephemeral_containers=spec.ephemeral_containers,
        ),
    )
    with pytest.raises(errors.StatusError) as caught:
        podlogs.container_for(two, "")
    assert caught.value.message == (
        "a container name must be specified for pod web, choose one of: [setup app side debugger]"
    )
