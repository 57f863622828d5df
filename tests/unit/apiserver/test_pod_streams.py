"""``pods/exec``, ``pods/attach`` and ``pods/portforward``: upstream's checks first.

Upstream rules checked (``ExecLocation``/``AttachLocation``/``PortForwardLocation`` and
``streamLocation`` in ``pkg/registry/core/pod/strategy.go``): a missing pod is a 404; the
container must be valid or the only one (``validateContainer``: the same 400s as
``pods/log``; port forwarding names none); a pod without a node is a 400 "pod x does not
have a host assigned". Discovery lists the three with verbs create and get, kinds
PodExecOptions, PodAttachOptions and PodPortForwardOptions. Past those checks upstream
proxies to the kubelet; kubeprio's simulated containers run no processes, so the answer is
the 500 a runtime failure gives, saying why.
"""

from __future__ import annotations

import pytest

from kubeprio.api.kinds import RESOURCES
from tests.unit.apiserver.http_helpers import make_client, pod_manifest

PODS = "/api/v1/namespaces/default/pods"
NO_PROCESS = "kubeprio's simulated containers run no processes"


@pytest.fixture
def client(api):
    http = make_client(api)
    http.post(PODS, json=pod_manifest("web", nodeName="n1"))
    two = pod_manifest("two", nodeName="n1")
    two["spec"]["containers"].append({"name": "side", "image": "busybox"})
    http.post(PODS, json=two)
    http.post(PODS, json=pod_manifest("pending"))
    return http


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    ("path", "query", "code", "message"),
    [
        ("web/exec", {"command": "ls", "stdout": "1"}, 500,
         f"Internal error occurred: error executing command in container: {NO_PROCESS}"),
        ("web/attach", {"stdout": "1"}, 500,
         f"Internal error occurred: error attaching to container: {NO_PROCESS}"),
        ("two/portforward", {"ports": "80"}, 500,
         f"Internal error occurred: error forwarding port: {NO_PROCESS}"),
        ("two/exec", {"command": "ls", "container": "side"}, 500,
         f"Internal error occurred: error executing command in container: {NO_PROCESS}"),
        ("nosuch/exec", {"command": "ls"}, 404, 'pods "nosuch" not found'),
        ("web/exec", {"command": "ls", "container": "nope"}, 400,
         "container nope is not valid for pod web"),
        ("two/attach", {}, 400,
         "a container name must be specified for pod two, choose one of: [c side]"),
        ("pending/exec", {"command": "ls"}, 400, "pod pending does not have a host assigned"),
        ("pending/portforward", {"ports": "80"}, 400,
         "pod pending does not have a host assigned"),
    ],
    ids=["exec", "attach", "portforward", "named-container", "missing-pod", "bad-container",
         "which-container", "no-node", "portforward-no-node"],
)  # fmt: skip
def test_streams_answer_upstreams_checks_then_no_process(
    client, method, path, query, code, message
):
    response = client.request(method, f"{PODS}/{path}", params=query)
    assert response.status_code == code
    assert response.json()["message"] == message


def test_discovery_lists_the_stream_subresources():
    pods = next(info for info in RESOURCES if info.plural == "pods")
    streams = {sub.name: (sub.kind, sub.verbs) for sub in pods.subresources}
    assert streams["exec"] == ("PodExecOptions", ("create", "get"))
    assert streams["attach"] == ("PodAttachOptions", ("create", "get"))
    assert streams["portforward"] == ("PodPortForwardOptions", ("create", "get"))
