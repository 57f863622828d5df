"""``kubectl top`` against a live ``kubeprio serve``, as against a cluster running metrics-server.

What a platform engineer sees on k3s or GKE, with kubeprio's simulated usage
(``kubeprio.io/usage``) as the numbers:

* kubectl v1.32 finds ``metrics.k8s.io/v1beta1`` in discovery and lists PodMetrics and
  NodeMetrics (``staging/src/k8s.io/kubectl/pkg/cmd/top``); the columns, sorting and the
  ``250m``/``900Mi`` formatting are kubectl's own (``metricsutil/metrics_printer.go``);
* ``top node`` divides by each Node's allocatable and prints ``<unknown>`` for a node
  without metrics (metrics-server cannot scrape a kubelet whose node is ``Unknown``);
* with no metrics, kubectl explains: ``No resources found in <ns> namespace.`` for a
  namespace without pods, ``metrics not available yet`` when its pods are young and have
  no metrics (a Pending pod has none), and a get of such a pod is the pod lister's 404;
* tenant users see pod metrics in their tenant's namespaces and nothing else, as
  upstream's ``system:aggregated-metrics-reader`` role grants through ``admin``;
* the official Python client reads them with ``CustomObjectsApi``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl, running

pytestmark = [pytest.mark.e2e, needs_kubectl]

MANIFESTS = """
apiVersion: v1
kind: Namespace
metadata: {name: top-demo}
---
apiVersion: v1
kind: Namespace
metadata: {name: top-other}
---
apiVersion: v1
kind: Namespace
metadata: {name: top-pending}
---
apiVersion: v1
kind: Namespace
metadata: {name: top-empty}
---
apiVersion: v1
kind: Pod
metadata:
  name: api
  namespace: top-demo
  labels: {app: api}
  annotations: {kubeprio.io/usage: "cpu=250m,memory=900Mi"}
spec:
  nodeName: node-1
  containers: [{name: api, image: nginx, resources: {requests: {cpu: 100m, memory: 512Mi}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: batch
  namespace: top-demo
  labels: {app: batch}
  annotations: {kubeprio.io/usage: "cpu=1500m,memory=2Gi,sidecar:cpu=5m,sidecar:memory=20Mi"}
spec:
  nodeName: node-2
  containers: [{name: main, image: busybox}, {name: sidecar, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: idle, namespace: top-demo, labels: {app: api}}
spec:
  nodeName: node-1
  containers: [{name: idle, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata:
  name: api
  namespace: top-other
  labels: {app: api}
  annotations: {kubeprio.io/usage: "cpu=50m,memory=1Gi"}
spec:
  nodeName: node-2
  containers: [{name: api, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata:
  name: probe
  namespace: kestrel-web
  annotations: {kubeprio.io/usage: "cpu=10m,memory=64Mi"}
spec:
  nodeName: node-3
  containers: [{name: probe, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: top-pending}
spec:
  containers: [{name: big, image: nginx, resources: {requests: {cpu: "100"}}}]
"""
RUNNING = {("top-demo", "api"), ("top-demo", "batch"), ("top-demo", "idle"), ("top-other", "api"),
           ("kestrel-web", "probe")}  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """Three 4-CPU, 16Gi nodes, Kestrel's tenant, and the pods of ``MANIFESTS`` running."""
    with running(tmp_path_factory, "serve-top", ["--preset", "kestrel"]) as server:
        server.ok("apply", "-f", "-", stdin=MANIFESTS)

        def all_running() -> bool:
            pods = server.json("get", "pods", "-A")["items"]
            started = {
                (p["metadata"]["namespace"], p["metadata"]["name"])
                for p in pods
                if p["status"].get("phase") == "Running"
            }
            return started >= RUNNING

        eventually(all_running)
        yield server


def test_top_pod_prints_each_running_pods_usage(served):
    assert served.ok("top", "pod", "-n", "top-demo") == (
        "NAME    CPU(cores)   MEMORY(bytes)   \n"
        "api     250m         900Mi           \n"
        "batch   1505m        2068Mi          \n"
        "idle    0m           0Mi             \n"
    )


def test_top_pod_containers_shows_each_container(served):
    assert served.ok("top", "pod", "-n", "top-demo", "--containers") == (
        "POD     NAME      CPU(cores)   MEMORY(bytes)   \n"
        "api     api       250m         900Mi           \n"
        "batch   main      1500m        2048Mi          \n"
        "batch   sidecar   5m           20Mi            \n"
        "idle    idle      0m           0Mi             \n"
    )


def test_top_pod_across_namespaces_by_label_sorted_by_memory(served):
    # The heaviest first; kubectl sorts, the server lists by namespace and name.
    assert served.ok("top", "pod", "-A", "-l", "app=api", "--sort-by=memory") == (
        "NAMESPACE   NAME   CPU(cores)   MEMORY(bytes)   \n"
        "top-other   api    50m          1024Mi          \n"
        "top-demo    api    250m         900Mi           \n"
        "top-demo    idle   0m           0Mi             \n"
    )


def test_top_node_shows_the_sum_of_its_pods_and_the_share_of_allocatable(served):
    # node-1: api + idle; node-2: batch + top-other/api; node-3: probe. 4 CPUs, 16Gi each.
    assert served.ok("top", "node") == (
        "NAME     CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)   \n"
        "node-1   250m         6%       900Mi           5%          \n"
        "node-2   1555m        38%      3092Mi          18%         \n"
        "node-3   10m          0%       64Mi            0%          \n"
    )


def test_a_node_whose_kubelet_stopped_has_no_metrics(served):
    # What the node lifecycle controller writes when a kubelet stops posting its status.
    unknown = {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
               "message": "Kubelet stopped posting node status."}  # fmt: skip
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "message": "kubelet is posting ready status"}  # fmt: skip
    status_patch = "--subresource=status", "-p"
    served.ok(
        "patch", "node", "node-3", *status_patch, json.dumps({"status": {"conditions": [unknown]}})
    )
    try:
        assert served.ok("top", "node") == (
            "NAME     CPU(cores)   CPU(%)      MEMORY(bytes)   MEMORY(%)   \n"
            "node-1   250m         6%          900Mi           5%          \n"
            "node-2   1555m        38%         3092Mi          18%         \n"
            "node-3   <unknown>    <unknown>   <unknown>       <unknown>   \n"
        )
        result = served.kubectl("top", "node", "node-3")
        assert (result.returncode, result.stderr) == (
            1,
            'Error from server (NotFound): nodemetrics.metrics.k8s.io "node-3" not found\n',
        )
        # Its pods are not scraped either.
        result = served.kubectl("top", "pod", "probe", "-n", "kestrel-web")
        assert result.stderr == (
            'Error from server (NotFound): podmetrics.metrics.k8s.io "kestrel-web/probe" not found\n'
        )
    finally:
        served.ok("patch", "node", "node-3", *status_patch, json.dumps({"status": {"conditions": [ready]}}))  # fmt: skip


def test_a_namespace_without_pods_has_no_resources(served):
    result = served.kubectl("top", "pod", "-n", "top-empty")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "",
        "No resources found in top-empty namespace.\n",
    )


def test_pending_pods_have_no_metrics_yet(served):
    # kubectl lists the pods to explain the empty answer; they are younger than 2 minutes.
    result = served.kubectl("top", "pod", "-n", "top-pending")
    assert (result.returncode, result.stderr) == (1, "error: metrics not available yet\n")
    # metrics-server lists only running pods: a pending one is its lister's 404.
    result = served.kubectl("top", "pod", "waiting", "-n", "top-pending")
    assert result.stderr == 'Error from server (NotFound): pods "waiting" not found\n'


def test_only_name_and_namespace_field_selectors(served):
    assert served.ok("top", "pod", "-n", "top-demo", "--field-selector=metadata.name=batch") == (
        "NAME    CPU(cores)   MEMORY(bytes)   \nbatch   1505m        2068Mi          \n"
    )
    result = served.kubectl("top", "pod", "-n", "top-demo", "--field-selector=spec.nodeName=node-1")
    assert result.stderr == (
        'Error from server (BadRequest): "spec.nodeName" is not a known field selector: '
        'only "metadata.name", "metadata.namespace"\n'
    )


def test_a_tenant_user_sees_pod_metrics_of_its_namespaces_only(served):
    alice = "kubeprio-alice"
    assert served.ok("top", "pod", "-n", "kestrel-web", context=alice) == (
        "NAME    CPU(cores)   MEMORY(bytes)   \nprobe   10m          64Mi            \n"
    )
    refusals = {
        ("top", "pod", "-n", "top-demo"): 'pods.metrics.k8s.io is forbidden: User "alice" cannot '
        'list resource "pods" in API group "metrics.k8s.io" in the namespace "top-demo"',
        ("top", "pod", "-A"): 'pods.metrics.k8s.io is forbidden: User "alice" cannot list '
        'resource "pods" in API group "metrics.k8s.io" at the cluster scope',
        ("top", "node"): 'nodes.metrics.k8s.io is forbidden: User "alice" cannot list resource '
        '"nodes" in API group "metrics.k8s.io" at the cluster scope',
    }
    for args, message in refusals.items():
        result = served.kubectl(*args, context=alice)
        assert (result.returncode, result.stderr) == (
            1,
            f"Error from server (Forbidden): {message}\n",
        )


def test_get_raw_pod_metrics(served):
    body = json.loads(
        served.ok("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/top-demo/pods")
    )
    assert (body["kind"], body["apiVersion"], body["metadata"]) == (
        "PodMetricsList",
        "metrics.k8s.io/v1beta1",
        {},
    )
    batch = body["items"][1]
    assert batch["metadata"]["name"] == "batch"
    assert batch["metadata"]["labels"] == {"app": "batch"}
    assert batch["containers"] == [
        {"name": "main", "usage": {"cpu": "1500m", "memory": "2Gi"}},
        {"name": "sidecar", "usage": {"cpu": "5m", "memory": "20Mi"}},
    ]
    # The request's time, and at most metrics-server's 15 s scrape period.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", batch["timestamp"])
    assert re.fullmatch(r"(1[0-5]|\d)s", batch["window"])


def test_kubectl_get_podmetrics_prints_metrics_servers_table(served):
    lines = served.ok("get", "podmetrics", "-n", "top-demo").splitlines()
    assert lines[0].split() == ["NAME", "CPU", "MEMORY", "WINDOW"]
    assert [line.split()[:3] for line in lines[1:]] == [
        ["api", "250m", "900Mi"],
        ["batch", "1505m", "2068Mi"],
        ["idle", "0", "0"],
    ]


def test_the_python_client_lists_pod_metrics(served):
    with served.client() as api:
        metrics = k8s.CustomObjectsApi(api).list_namespaced_custom_object(
            "metrics.k8s.io", "v1beta1", "top-demo", "pods"
        )
        usage = {
            item["metadata"]["name"]: [c["usage"] for c in item["containers"]]
            for item in metrics["items"]
        }
        assert usage == {
            "api": [{"cpu": "250m", "memory": "900Mi"}],
            "batch": [{"cpu": "1500m", "memory": "2Gi"}, {"cpu": "5m", "memory": "20Mi"}],
            "idle": [{"cpu": "0", "memory": "0"}],
        }
        node = k8s.CustomObjectsApi(api).get_cluster_custom_object(
            "metrics.k8s.io", "v1beta1", "nodes", "node-2"
        )
        assert node["usage"] == {"cpu": "1555m", "memory": "3092Mi"}
