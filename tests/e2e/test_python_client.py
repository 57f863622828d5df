"""The official ``kubernetes`` Python client (pinned 37.0.2) against kubeprio's HTTP API.

kubectl-wire.md §8: no discovery, plain JSON, ``/version/`` with a trailing slash, DELETE
bodies without Content-Type, and ``pods/binding`` answering a Status (hence
``_preload_content=False``).
"""

from __future__ import annotations

import gc

import pytest
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch

from tests.e2e.serving import CLIENT_SOCKET_WARNINGS

pytestmark = [pytest.mark.e2e, *CLIENT_SOCKET_WARNINGS]


@pytest.fixture
def api_client(server):
    configuration = k8s.Configuration()
    configuration.host = server.url
    with k8s.ApiClient(configuration) as api_client:
        yield api_client


def _pod(name: str) -> k8s.V1Pod:
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name=name, labels={"app": "py"}),
        spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
    )


def test_version_with_trailing_slash(api_client):
    assert k8s.VersionApi(api_client).get_code().minor == "32"


def test_create_list_patch_bind_delete(api_client):
    core = k8s.CoreV1Api(api_client)
    created = core.create_namespaced_pod("default", _pod("py-1"))
    assert created.metadata.uid
    assert created.spec.priority == 0
    names = [
        p.metadata.name for p in core.list_namespaced_pod("default", label_selector="app=py").items
    ]
    assert names == ["py-1"]
    patched = core.patch_namespaced_pod("py-1", "default", {"metadata": {"labels": {"x": "y"}}})
    assert patched.metadata.labels == {"app": "py", "x": "y"}
    binding = k8s.V1Binding(
        metadata=k8s.V1ObjectMeta(name="py-1"),
        target=k8s.V1ObjectReference(api_version="v1", kind="Node", name="n1"),
    )
    response = core.create_namespaced_pod_binding(
        "py-1", "default", binding, _preload_content=False
    )
    assert response.status == 201
    assert core.read_namespaced_pod("py-1", "default").spec.node_name == "n1"
    core.delete_namespaced_pod("py-1", "default", body=k8s.V1DeleteOptions(grace_period_seconds=0))
    with pytest.raises(k8s.ApiException) as caught:
        core.read_namespaced_pod("py-1", "default")
    assert caught.value.status == 404


def test_watch_stream_starts_with_added_events(api_client):
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_pod("default", _pod("py-w"))
    events = list(k8s_watch.Watch().stream(core.list_namespaced_pod, "default", timeout_seconds=1))
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "py-w")]
    gc.collect()  # collect the leaked socket here, under this module's warning filters


def test_priority_class_and_forbidden_errors(api_client):
    scheduling = k8s.SchedulingV1Api(api_client)
    names = [pc.metadata.name for pc in scheduling.list_priority_class().items]
    assert names == ["system-cluster-critical", "system-node-critical"]
    core = k8s.CoreV1Api(api_client)
    pod = _pod("bad")
    pod.spec.priority_class_name = "nosuch"
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_pod("default", pod)
    assert caught.value.status == 403
    assert "no PriorityClass with name nosuch was found" in caught.value.body
