"""RuntimeClass, its admission plugin, and PodTemplate against a live ``kubeprio serve``,
with the real kubectl (v1.32) and the official Python client.

One server with a 1-CPU node (``node-1``, from ``--nodes``) and a 2-CPU node labelled
``sandbox=gvisor`` (created with kubectl), each test in its own namespace. Rules checked:
discovery (``runtimeclasses`` in ``node.k8s.io/v1``, cluster-scoped; ``podtemplates``
in core), ``printRuntimeClass``'s NAME HANDLER AGE and ``printPodTemplate``'s NAME
CONTAINERS IMAGES POD LABELS, ``ValidateRuntimeClass``'s handler text, and the plugin
(``plugin/pkg/admission/runtimeclass/admission.go``): ``spec.overhead`` set from the
class, the class's node selector merged (so the scheduler places the pod on the labelled
node), an unknown class and a conflicting selector refused with
``admission.NewForbidden``; a pod whose overhead does not fit stays Pending with
``schedule_one.go``'s FitError in its FailedScheduling event. Error lines are asserted
whole, as kubectl prints them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

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

SANDBOX_NODE = """\
apiVersion: v1
kind: Node
metadata: {name: sandbox-1, labels: {sandbox: gvisor}}
status:
  capacity: {cpu: "2", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "2", memory: 8Gi, pods: "110"}
"""

GVISOR = """\
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
overhead: {podFixed: {cpu: 500m, memory: 64Mi}}
scheduling:
  nodeSelector: {sandbox: gvisor}
  tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    args = ["--nodes", "1", "--node-cpu", "1"]
    with running(tmp_path_factory, "serve-runtimeclass", args) as server:
        assert server.ok("apply", "-f", "-", stdin=SANDBOX_NODE) == "node/sandbox-1 created\n"
        assert server.ok("apply", "-f", "-", stdin=GVISOR) == (
            "runtimeclass.node.k8s.io/gvisor created\n"
        )
        yield server


def _pod(name: str, ns: str, cpu: str, spec: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec:\n{spec}  containers:\n"
        f"  - {{name: app, image: nginx, resources: {{requests: {{cpu: {cpu}}}}}}}\n"
    )


def test_get_runtimeclass_prints_name_handler_age_and_discovery_lists_it(served):
    text = served.ok("get", "runtimeclass")
    [header, row] = table_rows(text)
    assert header == ["NAME", "HANDLER", "AGE"]
    assert row[:2] == ["gvisor", "runsc"]
    resources = served.ok("api-resources", "--api-group=node.k8s.io", "--no-headers")
    assert table_rows(resources) == [["runtimeclasses", "node.k8s.io/v1", "false", "RuntimeClass"]]
    stored = served.json("get", "runtimeclass", "gvisor")
    assert stored["overhead"] == {"podFixed": {"cpu": "500m", "memory": "64Mi"}}


def test_create_and_delete_a_class_and_an_invalid_handler_is_refused(served):
    made = served.ok("create", "-f", "-", stdin=GVISOR.replace("gvisor}", "kata}", 1))
    assert made == "runtimeclass.node.k8s.io/kata created\n"
    assert served.ok("delete", "runtimeclass", "kata") == (
        'runtimeclass.node.k8s.io "kata" deleted\n'
    )
    bad = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: bad}\nhandler: Run_SC\n"
    result = served.kubectl("create", "-f", "-", stdin=bad)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'The RuntimeClass "bad" is invalid: handler: Invalid value: "Run_SC": a lowercase RFC '
        "1123 label must consist of lower case alphanumeric characters or '-', and must start "
        "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    )


def test_a_pod_of_the_class_gets_its_overhead_and_lands_on_the_labelled_node(served):
    ns = new_namespace(served, "rc-steer")
    served.ok("apply", "-f", "-", stdin=_pod("web", ns, "100m", "  runtimeClassName: gvisor\n"))
    stored = served.json("get", "pod", "web", "-n", ns)
    assert stored["spec"]["overhead"] == {"cpu": "500m", "memory": "64Mi"}
    assert stored["spec"]["nodeSelector"] == {"sandbox": "gvisor"}
    assert {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"} in stored["spec"][
        "tolerations"
    ]

    def node() -> str | None:
        return served.json("get", "pod", "web", "-n", ns)["spec"].get("nodeName")

    assert eventually(node) == "sandbox-1"


def test_a_pod_whose_overhead_does_not_fit_stays_pending(served):
    """1800m fits the 2-CPU sandbox node; with 500m overhead it does not, and the class's
    selector rules node-1 out: FitError's text in the FailedScheduling event."""
    ns = new_namespace(served, "rc-fit")
    served.ok("apply", "-f", "-", stdin=_pod("big", ns, "1800m", "  runtimeClassName: gvisor\n"))

    def event_message() -> str | None:
        events = served.json(
            "get", "events", "-n", ns, "--field-selector", "reason=FailedScheduling"
        )
        return events["items"][0]["message"] if events["items"] else None

    assert eventually(event_message) == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful "
        "for scheduling."
    )
    assert served.json("get", "pod", "big", "-n", ns)["status"]["phase"] == "Pending"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("  runtimeClassName: kata\n", 'pod rejected: RuntimeClass "kata" not found'),
        (
            "  runtimeClassName: gvisor\n  nodeSelector: {sandbox: kata}\n",
            "conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; "
            "pod.spec.nodeSelector[sandbox] = kata",
        ),
        (
            "  runtimeClassName: gvisor\n  overhead: {cpu: 1}\n",
            "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
        ),
    ],
    ids=["unknown-class", "selector-conflict", "overhead-differs"],
)
def test_the_plugin_refuses_with_upstreams_text(served, spec, message):
    ns = new_namespace(served, "rc-refuse")
    result = served.kubectl("create", "-f", "-", stdin=_pod("web", ns, "100m", spec))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f'Error from server (Forbidden): error when creating "STDIN": pods "web" is forbidden: '
        f"{message}"
    )
    assert served.ok("get", "pods", "-n", ns, "-o", "name") == ""


def test_the_python_client_reads_classes_and_creates_pods_and_templates(served):
    ns = new_namespace(served, "rc-py")
    with served.client() as api:
        node_api = k8s.NodeV1Api(api)
        made = node_api.create_runtime_class(
            k8s.V1RuntimeClass(
                metadata=k8s.V1ObjectMeta(name="py"),
                handler="kata",
                overhead=k8s.V1Overhead(pod_fixed={"memory": "32Mi"}),
            )
        )
        assert (made.handler, made.overhead.pod_fixed) == ("kata", {"memory": "32Mi"})
        names = [rc.metadata.name for rc in node_api.list_runtime_class().items]
        assert {"gvisor", "py"} <= set(names)
        core = k8s.CoreV1Api(api)
        container = k8s.V1Container(name="app", image="nginx")
        pod = core.create_namespaced_pod(
            ns,
            k8s.V1Pod(
                metadata=k8s.V1ObjectMeta(name="p"),
                spec=k8s.V1PodSpec(containers=[container], runtime_class_name="py"),
            ),
        )
        assert pod.spec.overhead == {"memory": "32Mi"}
        template = core.create_namespaced_pod_template(
            ns,
            k8s.V1PodTemplate(
                metadata=k8s.V1ObjectMeta(name="tmpl"),
                template=k8s.V1PodTemplateSpec(
                    metadata=k8s.V1ObjectMeta(labels={"app": "web"}),
                    spec=k8s.V1PodSpec(containers=[container]),
                ),
            ),
        )
        assert template.metadata.generation == 1
        with pytest.raises(k8s.ApiException) as caught:
            core.create_namespaced_pod(
                ns,
                k8s.V1Pod(
                    metadata=k8s.V1ObjectMeta(name="q"),
                    spec=k8s.V1PodSpec(containers=[container], overhead={"cpu": "1"}),
                ),
            )
        node_api.delete_runtime_class("py")
    assert (caught.value.status, caught.value.reason) == (403, "Forbidden")
    body: dict[str, Any] = json.loads(caught.value.body or "{}")
    assert body["message"] == (
        'pods "q" is forbidden: pod rejected: Pod Overhead set without corresponding '
        "RuntimeClass defined Overhead"
    )
    [header, row] = table_rows(served.ok("get", "podtemplates", "-n", ns))
    assert header == ["NAME", "CONTAINERS", "IMAGES", "POD", "LABELS"]
    assert row == ["tmpl", "app", "nginx", "app=web"]
    resources = served.ok("api-resources", "--api-group=", "--no-headers")
    assert ["podtemplates", "v1", "true", "PodTemplate"] in table_rows(resources)


def test_disabling_the_plugin_leaves_pods_as_sent(tmp_path_factory):
    args = ["--nodes", "1", "--disable-admission-plugins=RuntimeClass"]
    with running(tmp_path_factory, "serve-runtimeclass-off", args) as server:
        server.ok("apply", "-f", "-", stdin=GVISOR)
        server.ok(
            "apply", "-f", "-", stdin=_pod("web", "default", "100m", "  runtimeClassName: gvisor\n")
        )
        spec = server.json("get", "pod", "web")["spec"]
        assert "overhead" not in spec
        assert "nodeSelector" not in spec
