"""A ``PUT .../status`` body is defaulted like any other.

Upstream: the REST handler decodes every body with the scheme's defaulting funcs
(``endpoints/handlers/update.go`` through the codec: ``SetDefaults_NodeStatus``,
``SetDefaults_Container``, ``SetDefaults_Deployment``) before admission and the
strategy, whatever the subresource. So a status PUT whose body leaves out defaulted
fields stores the defaults (a Node's ``allocatable`` from its ``capacity``), raises no
validation error about them, and does not move a Deployment's generation.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubeprio.api.apps import Deployment
from kubeprio.api.batch import Job
from kubeprio.api.core import Node, Pod
from kubeprio.api.defaults import default_object, default_status_body
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver.service import ApiService
from tests.unit.apiserver.http_helpers import make_client, pod_manifest

PODS = "/api/v1/namespaces/default/pods"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
NODES = "/api/v1/nodes"


@pytest.fixture
def client(api: ApiService) -> TestClient:
    return make_client(api)


def _put_status(client: TestClient, url: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.put(f"{url}/status", json=body)
    assert response.status_code == 200, response.json()
    stored = client.get(url).json()
    assert isinstance(stored, dict)
    return stored


def test_node_status_put_gets_allocatable_from_capacity(client: TestClient) -> None:
    """``SetDefaults_NodeStatus``: allocatable defaults to capacity."""
    created = client.post(
        NODES, json={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    )
    body = created.json()
    body["status"] = {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    stored = _put_status(client, f"{NODES}/n1", body)
    assert stored["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}


def test_pod_status_put_without_container_defaults_is_accepted(client: TestClient) -> None:
    """``SetDefaults_Container``: the body's containers lack ``terminationMessagePath``,
    ``terminationMessagePolicy`` and ``imagePullPolicy``; nothing is invalid and the stored
    spec keeps them."""
    created = client.post(PODS, json=pod_manifest("p")).json()
    body = copy.deepcopy(created)
    container = body["spec"]["containers"][0]
    for field in ("terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy"):
        container.pop(field)
    body["status"]["message"] = "written by a status PUT"
    stored = _put_status(client, f"{PODS}/p", body)
    assert stored["status"]["message"] == "written by a status PUT"
    assert stored["spec"] == created["spec"]


_DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    },
}


def test_deployment_status_put_without_strategy_keeps_spec_and_generation(
    client: TestClient,
) -> None:
    """``SetDefaults_Deployment``: ``spec.strategy`` (RollingUpdate 25%/25%) is filled in."""
    manifest = copy.deepcopy(_DEPLOYMENT)
    created = client.post(DEPLOYS, json=manifest).json()
    body = copy.deepcopy(created)
    del body["spec"]["strategy"]
    body["status"] = {"observedGeneration": 1, "replicas": 0}
    stored = _put_status(client, f"{DEPLOYS}/web", body)
    assert stored["spec"] == created["spec"]
    assert stored["metadata"]["generation"] == created["metadata"]["generation"]
    assert stored["status"]["observedGeneration"] == 1


def test_a_pod_status_body_is_not_defaulted_since_nothing_defaulted_survives() -> None:
    """v1.32's core/v1 defaults set no PodStatus field, and ``podStatusStrategy``
    puts the stored spec back, so ``default_status_body`` leaves a pod body as sent
    (the pod test above shows the stored spec is still the defaulted one); other
    kinds' bodies are defaulted (``SetDefaults_NodeStatus``)."""
    pod = from_dict(Pod, pod_manifest("p"))
    assert default_status_body(pod) is pod
    assert default_object(pod) is not pod
    deployment = from_dict(Deployment, _DEPLOYMENT)
    assert default_status_body(deployment) is deployment
    # SetDefaults_Job copies the template's labels into a Job without labels: kept.
    job = from_dict(Job, {"metadata": {"name": "j"}, "spec": _DEPLOYMENT["spec"]})
    assert default_status_body(job).metadata.labels == {"app": "web"}
    node = from_dict(
        Node, {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4", "pods": "110"}}}
    )
    defaulted = default_status_body(node)
    assert isinstance(defaulted, Node)
    assert node.status is not None
    assert defaulted.status is not None
    assert defaulted.status.allocatable == node.status.capacity
