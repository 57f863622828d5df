"""What the resource metrics report for a pod and a node (``apiserver.resourceusage``).

metrics-server (``pkg/storage/types.go`` ``resourceUsage``, ``pod.go``, ``node.go``): CPU is
a decimal quantity of nanocores (``NewScaledQuantity(n, -9)``), memory a binary quantity
of bytes; ``metadata`` carries the name, namespace and labels and ``creationTimestamp``
is the time of the request; a node's usage (kubeprio: its running pods' sum) is one
figure. Which pods and nodes have metrics: a running pod, a node whose kubelet answers.
"""

from __future__ import annotations

import pytest

from kubeprio.api import annotations, podusage
from kubeprio.api.core import PHASE_FAILED, PHASE_PENDING, PHASE_RUNNING, PHASE_SUCCEEDED
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver import resourceusage
from kubeprio.clock import parse_rfc3339
from tests.builders import node, pod

NOW_TEXT = "2026-01-01T00:10:00Z"
NOW = parse_rfc3339(NOW_TEXT)

QUANTITIES = [
    # (annotation, cpu, memory) as metrics-server prints them
    ("cpu=250m,memory=900Mi", "250m", "900Mi"),
    ("cpu=1.5,memory=1Gi", "1500m", "1Gi"),
    ("cpu=2,memory=1G", "2", "1000000000"),
    ("cpu=1234567n,memory=1000", "1234567n", "1k"),
    ("memory=1536Mi", "0", "1536Mi"),
    ("cpu=100m", "100m", "0"),
]


@pytest.mark.parametrize(("usage", "cpu", "memory"), QUANTITIES, ids=[q[0] for q in QUANTITIES])
def test_container_usage_prints_as_metrics_server_formats_it(usage, cpu, memory):
    running = pod("p").annotate(annotations.USAGE, usage).phase(PHASE_RUNNING).build()
    (container,) = to_dict(resourceusage.pod_metrics(running, now=NOW))["containers"]
    assert container == {"name": "c", "usage": {"cpu": cpu, "memory": memory}}


def test_pod_metrics_carry_name_namespace_labels_and_the_request_time():
    running = (
        pod("web", "shop")
        .labels(app="web")
        .created("2026-01-01T00:00:00Z")
        .started("2026-01-01T00:00:01Z")
        .container()
        .annotate(annotations.USAGE, "cpu=10m,memory=64Mi,c1:memory=1Mi")
        .phase(PHASE_RUNNING)
        .build()
    )
    assert to_dict(resourceusage.pod_metrics(running, now=NOW)) == {
        "apiVersion": "metrics.k8s.io/v1beta1",
        "kind": "PodMetrics",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "creationTimestamp": NOW_TEXT,
            "labels": {"app": "web"},
        },
        "timestamp": NOW_TEXT,
        "window": "15s",
        "containers": [
            {"name": "c", "usage": {"cpu": "10m", "memory": "64Mi"}},
            {"name": "c1", "usage": {"cpu": "0", "memory": "1Mi"}},
        ],
    }


def test_a_pod_without_usage_or_with_a_bad_one_uses_nothing():
    for builder in (pod("p"), pod("p").annotate(annotations.USAGE, "ghost:memory=1Mi")):
        (container,) = to_dict(resourceusage.pod_metrics(builder.build(), now=NOW))["containers"]
        assert container["usage"] == {"cpu": "0", "memory": "0"}


WINDOWS = [
    # The scrape window, never reaching back before the pod started.
    ("2026-01-01T00:00:00Z", "15s"),
    ("2026-01-01T00:09:45Z", "15s"),
    ("2026-01-01T00:09:52Z", "8s"),
    ("2026-01-01T00:10:00Z", "0s"),
]


@pytest.mark.parametrize(("started", "window"), WINDOWS, ids=[w for _, w in WINDOWS])
def test_the_window_is_the_scrape_period_or_the_time_since_start(started, window):
    running = pod("p").started(started).phase(PHASE_RUNNING).build()
    assert resourceusage.pod_metrics(running, now=NOW).window == window


@pytest.mark.parametrize(
    ("phase", "has_metrics"),
    [(PHASE_RUNNING, True), (PHASE_PENDING, False), (PHASE_SUCCEEDED, False), (PHASE_FAILED, False), (None, False)],
)  # fmt: skip
def test_only_running_pods_have_metrics(phase, has_metrics):
    builder = pod("p").on("n1")
    if phase is not None:
        builder = builder.phase(phase)
    assert podusage.is_running(builder.build()) is has_metrics


def test_a_terminating_pod_still_running_has_metrics():
    assert podusage.is_running(pod("p").on("n1").terminating().phase(PHASE_RUNNING).build())


@pytest.mark.parametrize(
    ("ready", "answers"), [("True", True), ("False", True), ("Unknown", False), (None, False)]
)
def test_a_node_answers_once_its_kubelet_posted_ready_and_until_it_is_unknown(ready, answers):
    builder = node("n1")
    if ready is not None:
        builder = builder.condition("Ready", ready)
    assert podusage.node_answers(builder.build()) is answers


def test_node_usage_is_the_sum_of_its_running_pods():
    n1 = node("n1").labels(zone="a").condition("Ready", "True").build()
    pods = [
        pod("a").annotate(annotations.USAGE, "cpu=250m,memory=900Mi").build(),
        pod("b").container().annotate(annotations.USAGE, "cpu=1,c1:cpu=5m,c1:memory=20Mi").build(),
        pod("idle").build(),
    ]
    assert to_dict(resourceusage.node_metrics(n1, pods, now=NOW)) == {
        "apiVersion": "metrics.k8s.io/v1beta1",
        "kind": "NodeMetrics",
        "metadata": {"name": "n1", "creationTimestamp": NOW_TEXT, "labels": {"zone": "a"}},
        "timestamp": NOW_TEXT,
        "window": "15s",
        "usage": {"cpu": "1255m", "memory": "920Mi"},
    }


def test_an_empty_node_uses_nothing():
    empty = resourceusage.node_metrics(node("n1").build(), [], now=NOW)
    assert to_dict(empty)["usage"] == {"cpu": "0", "memory": "0"}
