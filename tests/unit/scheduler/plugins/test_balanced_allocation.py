"""NodeResourcesBalancedAllocation, ported from upstream
``noderesources/balanced_allocation_test.go`` (``TestNodeResourcesBalancedAllocation``).

Balanced allocation scores with the *requested* amounts (no 100m/200Mi defaults) and
skips best-effort pods in PreScore.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.validation import PluginArgsError
from kubeprio.scheduler.plugins.noderesources.args import (
    NodeResourcesBalancedAllocationArgs,
    ResourceSpec,
)
from kubeprio.scheduler.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubeprio.scheduler.plugins.noderesources.strategies import balanced_resource_scorer
from tests.builders import node, pod
from tests.unit.scheduler.plugins.harness import node_infos, run_scores

GPU = "nvidia.com/gpu"


def _spec_pod(name, node_name, *containers):
    builder = pod(name).no_containers().on(node_name)
    for requests in containers:
        builder = builder.container(requests)
    return builder.build()


def cpu_and_memory(name="cm", node_name="node2"):
    return _spec_pod(
        name, node_name, {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}
    )


def cpu_only(name="c", node_name="node1"):
    return _spec_pod(
        name, node_name, {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}
    )


def cpu_and_memory_and_gpu(name="cmg", node_name="node1"):
    return _spec_pod(
        name,
        node_name,
        {"cpu": "1000m", "memory": "2000"},
        {"cpu": "2000m", "memory": "3000", GPU: "3"},
    )


def make_node(name, milli_cpu, memory, extended=None):
    """Upstream ``makeNode(node, milliCPU, memory, extendedResource)``."""
    values = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    values.update({k: str(v) for k, v in (extended or {}).items()})
    return node(name).resources(values).build()


DEFAULT = NodeResourcesBalancedAllocationArgs()
WITH_GPU = NodeResourcesBalancedAllocationArgs(
    (ResourceSpec("cpu"), ResourceSpec("memory"), ResourceSpec(GPU))
)
SCALAR = {GPU: 8}

CASES = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        cpu_and_memory("p", ""),
        [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)],
        [],
        DEFAULT,
        {"node1": 87, "node2": 100},
    ),
    (
        "resources requested, pods scheduled with resources",
        cpu_and_memory("p", ""),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [cpu_only(), cpu_and_memory()],
        DEFAULT,
        {"node1": 82, "node2": 95},
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        cpu_and_memory("p", ""),
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
        [cpu_only(), cpu_and_memory()],
        DEFAULT,
        {"node1": 82, "node2": 80},
    ),
    (
        "requested resources at node capacity",
        cpu_only("p", ""),
        [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
        [cpu_only(), cpu_and_memory()],
        DEFAULT,
        {"node1": 50, "node2": 75},
    ),
    (
        "include scalar resource on a node for balanced resource allocation",
        pod("p").no_containers().container({"memory": "0", GPU: "1"}).build(),
        [make_node("node1", 3500, 40000, SCALAR), make_node("node2", 3500, 40000, SCALAR)],
        [cpu_and_memory(), cpu_and_memory_and_gpu()],
        WITH_GPU,
        {"node1": 70, "node2": 65},
    ),
    (
        "node without the scalar resource should skip the scalar resource",
        cpu_and_memory("p", ""),
        [make_node("node1", 3500, 40000, SCALAR), make_node("node2", 3500, 40000)],
        [],
        WITH_GPU,
        {"node1": 63, "node2": 63},
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "nodes", "existing", "args", "want"), CASES, ids=[c[0] for c in CASES]
)
def test_node_resources_balanced_allocation(name, the_pod, nodes, existing, args, want):
    assert run_scores(BalancedAllocation(args), the_pod, node_infos(nodes, existing)) == want


def test_best_effort_pods_skip_pre_score():
    """ "nothing scheduled, nothing requested, skip in PreScore" (kubernetes/kubernetes#129138)."""
    infos = node_infos([make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)])
    assert (
        run_scores(BalancedAllocation(), pod("p").no_containers().build(), infos) == framework.SKIP
    )


def test_score_without_pre_score_computes_the_requests():
    """ "resources requested, pods scheduled with resources if PreScore not called"."""
    infos = node_infos(
        [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
        [cpu_only(), cpu_and_memory()],
    )
    plugin = BalancedAllocation()
    pod_info = framework.PodInfo.of(cpu_and_memory("p", ""))
    scores = {info.name: plugin.score(framework.CycleState(), pod_info, info)[0] for info in infos}
    assert scores == {"node1": 82, "node2": 95}


def test_weights_other_than_one_are_rejected():
    """``ValidateNodeResourcesBalancedAllocationArgs``: every weight must be 1, names unique."""
    with pytest.raises(
        PluginArgsError, match=r"resources\[0\].weight: Invalid value: 2: must be 1"
    ):
        BalancedAllocation(NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 2),)))
    with pytest.raises(PluginArgsError, match=r'resources\[1\].name: Duplicate value: "cpu"'):
        BalancedAllocation(
            NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu"), ResourceSpec("cpu")))
        )


@given(st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 10**12)), min_size=0, max_size=5))
def test_balanced_score_is_between_0_and_100(pairs):
    """Fractions are capped at 1, so the standard deviation is at most 0.5: 50..100 (or 100)."""
    requested = [r for r, _ in pairs]
    allocatable = [a for _, a in pairs]
    score = balanced_resource_scorer(requested, allocatable)
    assert 50 <= score <= 100
