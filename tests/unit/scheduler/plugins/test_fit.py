"""NodeResourcesFit, ported from upstream ``noderesources/fit_test.go`` (``TestEnoughRequests``,
``TestNotEnoughRequests``, ``TestStorageRequests``) and the scoring-strategy tests
(``least_allocated_test.go`` ``TestLeastAllocatedScoringStrategy``,
``most_allocated_test.go`` ``TestMostAllocatedScoringStrategy``,
``requested_to_capacity_ratio_test.go`` ``TestRequestedToCapacityRatioScoringStrategy``).

Current upstream marks a shortage unresolvable when the request exceeds the node's whole
allocatable (``InsufficientResource.Unresolvable``): the status is then
UnschedulableAndUnresolvable, so preemption skips the node.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.validation import PluginArgsError
from kubeprio.scheduler.plugins.noderesources.args import (
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    ScoringStrategyType,
    UtilizationShapePoint,
)
from kubeprio.scheduler.plugins.noderesources.fit import Fit
from tests.builders import node, pod
from tests.unit.scheduler.plugins.harness import node_infos, run_filter, run_scores

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGEPAGE_A = "hugepages-2Mi"

U = framework.Code.UNSCHEDULABLE
UU = framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _resource_pod(*containers: dict[str, str], name="p", node_name=None, init=()):
    """Upstream ``newResourcePod``/``newResourceInitPod``: one container per dict."""
    builder = pod(name).no_containers()
    for requests in containers:
        builder = builder.container(requests)
    for requests in init:
        builder = builder.init_container(requests)
    if node_name:
        builder = builder.on(node_name)
    return builder.build()


def _r(cpu: int = 0, memory: int = 0, **scalars: int) -> dict[str, str]:
    """``framework.Resource{MilliCPU, Memory, ScalarResources}`` as a request list."""
    requests = {"cpu": f"{cpu}m", "memory": str(memory)}
    names = {
        "ext_a": EXT_A,
        "ext_b": EXT_B,
        "k8s_a": K8S_IO_A,
        "k8s_b": K8S_IO_B,
        "hugepage_a": HUGEPAGE_A,
        "storage": "ephemeral-storage",
    }
    for key, value in scalars.items():
        requests[names[key]] = str(value)
    return requests


def _test_node(existing, pods: int = 32):
    """Upstream's test node: cpu 10m, memory 20, pods 32, aaa 5, storage 20, hugepages 5."""
    the_node = (
        node("n1")
        .resources(
            {
                "cpu": "10m",
                "memory": "20",
                "pods": str(pods),
                EXT_A: "5",
                "ephemeral-storage": "20",
                HUGEPAGE_A: "5",
            }
        )
        .build()
    )
    pods_on_node = [existing] if not isinstance(existing, list) else existing
    [info] = node_infos([the_node], pods_on_node)
    return info


def _on(containers, init=()):
    return _resource_pod(*containers, name="existing", node_name="n1", init=init)


ENOUGH_CASES = [
    ("no resources requested always fits", _resource_pod(), _on([_r(10, 20)]), None),
    (
        "too many resources fails",
        _resource_pod(_r(1, 1)),
        _on([_r(10, 20)]),
        (U, "Insufficient cpu", "Insufficient memory"),
    ),
    (
        "too many resources fails due to init container cpu",
        _resource_pod(_r(1, 1), init=[_r(3, 1)]),
        _on([_r(8, 19)]),
        (U, "Insufficient cpu"),
    ),
    (
        "too many resources fails due to highest init container cpu",
        _resource_pod(_r(1, 1), init=[_r(3, 1), _r(2, 1)]),
        _on([_r(8, 19)]),
        (U, "Insufficient cpu"),
    ),
    (
        "too many resources fails due to init container memory",
        _resource_pod(_r(1, 1), init=[_r(1, 3)]),
        _on([_r(9, 19)]),
        (U, "Insufficient memory"),
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        _resource_pod(_r(1, 1), init=[_r(1, 1)]),
        _on([_r(9, 19)]),
        None,
    ),
    (
        "multiple init containers fit because it's the max, not sum, of containers and init containers",
        _resource_pod(_r(1, 1), init=[_r(1, 1), _r(1, 1)]),
        _on([_r(9, 19)]),
        None,
    ),
    ("both resources fit", _resource_pod(_r(1, 1)), _on([_r(5, 5)]), None),
    ("one resource memory fits", _resource_pod(_r(2, 1)), _on([_r(9, 5)]), (U, "Insufficient cpu")),
    (
        "one resource cpu fits",
        _resource_pod(_r(1, 2)),
        _on([_r(5, 19)]),
        (U, "Insufficient memory"),
    ),
    ("equal edge case", _resource_pod(_r(5, 1)), _on([_r(5, 19)]), None),
    (
        "equal edge case for init container",
        _resource_pod(_r(4, 1), init=[_r(5, 1)]),
        _on([_r(5, 19)]),
        None,
    ),
    ("extended resource fits", _resource_pod({EXT_A: "1"}), _on([{}]), None),
    (
        "extended resource fits for init container",
        _resource_pod({}, init=[{EXT_A: "1"}]),
        _on([{}]),
        None,
    ),
    (
        "extended resource capacity enforced",
        _resource_pod(_r(1, 1, ext_a=10)),
        _on([_r(0, 0, ext_a=0)]),
        (UU, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource capacity enforced for init container",
        _resource_pod({}, init=[_r(1, 1, ext_a=10)]),
        _on([_r(0, 0, ext_a=0)]),
        (UU, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable enforced",
        _resource_pod(_r(1, 1, ext_a=1)),
        _on([_r(0, 0, ext_a=5)]),
        (U, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        _resource_pod(_r(1, 1, ext_a=3), _r(1, 1, ext_a=3)),
        _on([_r(0, 0, ext_a=2)]),
        (UU, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable admits multiple init containers",
        _resource_pod({}, init=[_r(1, 1, ext_a=3), _r(1, 1, ext_a=3)]),
        _on([_r(0, 0, ext_a=2)]),
        None,
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        _resource_pod({}, init=[_r(1, 1, ext_a=6), _r(1, 1, ext_a=3)]),
        _on([_r(0, 0, ext_a=2)]),
        (UU, f"Insufficient {EXT_A}"),
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        _resource_pod(_r(1, 1, ext_b=1)),
        _on([_r(0, 0)]),
        (UU, f"Insufficient {EXT_B}"),
    ),
    (
        "kubernetes.io resource capacity enforced",
        _resource_pod(_r(1, 1, k8s_a=10)),
        _on([_r(0, 0)]),
        (UU, f"Insufficient {K8S_IO_A}"),
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        _resource_pod({}, init=[_r(1, 1, k8s_b=10)]),
        _on([_r(0, 0)]),
        (UU, f"Insufficient {K8S_IO_B}"),
    ),
    (
        "hugepages resource capacity enforced",
        _resource_pod(_r(1, 1, hugepage_a=10)),
        _on([_r(0, 0, hugepage_a=0)]),
        (UU, f"Insufficient {HUGEPAGE_A}"),
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        _resource_pod(_r(1, 1, hugepage_a=3), _r(1, 1, hugepage_a=3)),
        _on([_r(0, 0, hugepage_a=2)]),
        (UU, f"Insufficient {HUGEPAGE_A}"),
    ),
    (
        "resources + pod overhead fits",
        pod("p")
        .no_containers()
        .container(_r(1, 1))
        .overhead({"cpu": "3m", "memory": "13"})
        .build(),
        _on([_r(5, 5)]),
        None,
    ),
    (
        "requests + overhead does not fit for memory",
        pod("p")
        .no_containers()
        .container(_r(1, 1))
        .overhead({"cpu": "1m", "memory": "15"})
        .build(),
        _on([_r(5, 5)]),
        (U, "Insufficient memory"),
    ),
    (
        "skip checking resource request with quantity zero",
        _resource_pod(_r(1, 1, ext_a=0)),
        _on([_r(0, 0, ext_a=6)]),
        None,
    ),
    (
        "several shortages are all reported, extended resources by name",
        _resource_pod(_r(11, 21, ext_b=1, ext_a=6, storage=21)),
        _on([_r(0, 0)]),
        (
            UU,
            "Insufficient cpu",
            "Insufficient memory",
            "Insufficient ephemeral-storage",
            f"Insufficient {EXT_A}",
            f"Insufficient {EXT_B}",
        ),
    ),
    (
        "a resource requested as 0 fits even on an over-committed node",
        _resource_pod({"cpu": "0", "memory": "1"}),
        _on([_r(20, 5)]),
        None,
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "existing", "want"), ENOUGH_CASES, ids=[c[0] for c in ENOUGH_CASES]
)
def test_enough_requests(name, the_pod, existing, want):
    status = run_filter(Fit(), the_pod, _test_node(existing))
    if want is None:
        assert status is None
    else:
        assert status == framework.Status(want[0], want[1:])


IGNORED_CASES = [
    (
        "skip checking ignored extended resource",
        NodeResourcesFitArgs(ignored_resources=(EXT_B,)),
        _resource_pod(_r(1, 1, ext_b=1)),
    ),
    (
        "skip checking ignored extended resource via resource groups",
        NodeResourcesFitArgs(ignored_resource_groups=("example.com",)),
        _resource_pod(_r(1, 1, ext_b=1)),
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "the_pod"), IGNORED_CASES, ids=[c[0] for c in IGNORED_CASES]
)
def test_ignored_extended_resources(name, args, the_pod):
    assert run_filter(Fit(args), the_pod, _test_node(_on([_r(0, 0)]))) is None


def test_hugepages_cannot_be_ignored():
    """Only extended resources are ignorable (``IsExtendedResourceName`` gate)."""
    args = NodeResourcesFitArgs(ignored_resources=(HUGEPAGE_A,))
    status = run_filter(Fit(args), _resource_pod(_r(1, 1, hugepage_a=10)), _test_node(_on([{}])))
    assert status == framework.Status(UU, (f"Insufficient {HUGEPAGE_A}",))


NOT_ENOUGH_CASES = [
    (
        "even without specified resources, predicate fails when there's no space for additional pod",
        _resource_pod(),
        (U, "Too many pods"),
    ),
    (
        "even if both resources fit, predicate fails when there's no space for additional pod",
        _resource_pod(_r(1, 1)),
        (U, "Too many pods"),
    ),
    (
        "even for equal edge case, predicate fails when there's no space for additional pod",
        _resource_pod(_r(5, 1)),
        (U, "Too many pods"),
    ),
    (
        "every shortage is listed after Too many pods",
        _resource_pod(_r(6, 16)),
        (U, "Too many pods", "Insufficient cpu", "Insufficient memory"),
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "want"), NOT_ENOUGH_CASES, ids=[c[0] for c in NOT_ENOUGH_CASES]
)
def test_not_enough_requests(name, the_pod, want):
    """``TestNotEnoughRequests``: a node allowing 1 pod that already hosts one."""
    status = run_filter(Fit(), the_pod, _test_node(_on([_r(5, 5)]), pods=1))
    assert status == framework.Status(want[0], want[1:])


STORAGE_CASES = [
    (
        "due to container scratch disk",
        _resource_pod(_r(1, 1)),
        _on([_r(10, 10)]),
        (U, "Insufficient cpu"),
    ),
    ("pod fit", _resource_pod(_r(1, 1)), _on([_r(2, 10)]), None),
    (
        "storage ephemeral local storage request exceeds allocatable",
        _resource_pod(_r(0, 0, storage=25)),
        _on([_r(2, 2)]),
        (UU, "Insufficient ephemeral-storage"),
    ),
    (
        "ephemeral local storage is sufficient",
        _resource_pod(_r(0, 0, storage=10)),
        _on([_r(2, 2, storage=10)]),
        None,
    ),
    (
        "ephemeral local storage is insufficient",
        _resource_pod(_r(0, 0, storage=11)),
        _on([_r(2, 2, storage=10)]),
        (U, "Insufficient ephemeral-storage"),
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "existing", "want"), STORAGE_CASES, ids=[c[0] for c in STORAGE_CASES]
)
def test_storage_requests(name, the_pod, existing, want):
    status = run_filter(Fit(), the_pod, _test_node(existing))
    assert status == (None if want is None else framework.Status(want[0], want[1:]))


def test_sidecar_requests_accumulate_with_the_app_containers():
    """Restartable init containers run alongside: their requests add up (``PodRequests``)."""
    sidecar_pod = (
        pod("p").no_containers().container(_r(3, 1)).init_container(_r(3, 1), sidecar=True).build()
    )
    assert run_filter(Fit(), sidecar_pod, _test_node(_on([_r(5, 5)]))) == framework.Status(
        U, ("Insufficient cpu",)
    )


# --- scoring ---------------------------------------------------------------------------------


def _req_pod(*containers, name="p", node_name=None):
    """``st.MakePod().Req(...).Req(...)``: cpu in cores, memory in bytes."""
    builder = pod(name).no_containers()
    for requests in containers:
        builder = builder.container(requests)
    if node_name:
        builder = builder.on(node_name)
    return builder.build()


def _cap_node(name, cpu=None, memory=None):
    """``st.MakeNode().Capacity({"cpu": cpu, "memory": memory})`` (cpu in cores)."""
    values = {}
    if cpu is not None:
        values["cpu"] = cpu
    if memory is not None:
        values["memory"] = memory
    return node(name).resources(values).build()


EXTENDED = "abc.com/xyz"
DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
EXTENDED_SET = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(EXTENDED, 1))
REQUESTED = _req_pod({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})

LEAST_CASES = [
    (
        "nothing scheduled, nothing requested",
        _req_pod(),
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "4000", "10000")],
        [],
        DEFAULT_RESOURCES,
        {"node1": 100, "node2": 100},
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        REQUESTED,
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "6000", "10000")],
        [],
        DEFAULT_RESOURCES,
        {"node1": 37, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled",
        _req_pod(),
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "4000", "10000")],
        [
            _req_pod(name="a", node_name="node1"),
            _req_pod(name="b", node_name="node1"),
            _req_pod(name="c", node_name="node2"),
            _req_pod(name="d", node_name="node2"),
        ],
        DEFAULT_RESOURCES,
        {"node1": 100, "node2": 100},
    ),
    (
        "no resources requested, pods scheduled with resources",
        _req_pod(),
        [_cap_node("node1", "10000", "20000"), _cap_node("node2", "10000", "20000")],
        [
            _req_pod({"cpu": "3000", "memory": "0"}, name="a", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "0"}, name="b", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "0"}, name="c", node_name="node2"),
            _req_pod({"cpu": "3000", "memory": "5000"}, name="d", node_name="node2"),
        ],
        DEFAULT_RESOURCES,
        {"node1": 70, "node2": 57},
    ),
    (
        "resources requested, pods scheduled with resources",
        REQUESTED,
        [_cap_node("node1", "10000", "20000"), _cap_node("node2", "10000", "20000")],
        [
            _req_pod({"cpu": "3000", "memory": "0"}, name="a", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "5000"}, name="b", node_name="node2"),
        ],
        DEFAULT_RESOURCES,
        {"node1": 57, "node2": 45},
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        REQUESTED,
        [_cap_node("node1", "10000", "20000"), _cap_node("node2", "10000", "50000")],
        [
            _req_pod({"cpu": "3000", "memory": "0"}, name="a", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "5000"}, name="b", node_name="node2"),
        ],
        DEFAULT_RESOURCES,
        {"node1": 57, "node2": 60},
    ),
    (
        "requested resources exceed node capacity",
        _req_pod({"cpu": "3000", "memory": "0"}),
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "4000", "10000")],
        [
            _req_pod({"cpu": "3000", "memory": "0"}, name="a", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "5000"}, name="b", node_name="node2"),
        ],
        DEFAULT_RESOURCES,
        {"node1": 50, "node2": 25},
    ),
    (
        "zero node resources, pods scheduled with resources",
        _req_pod(),
        [_cap_node("node1"), _cap_node("node2")],
        [
            _req_pod({"cpu": "3000", "memory": "0"}, name="a", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "5000"}, name="b", node_name="node2"),
        ],
        DEFAULT_RESOURCES,
        {"node1": 0, "node2": 0},
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory",
        REQUESTED,
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "6000", "10000")],
        [],
        (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
        {"node1": 41, "node2": 50},
    ),
    (
        "bypass extended resource if the pod does not request",
        REQUESTED,
        [
            _cap_node("node1", "6000", "10000"),
            node("node2").resources({"cpu": "6000", "memory": "10000", EXTENDED: "4"}).build(),
        ],
        [],
        EXTENDED_SET,
        {"node1": 50, "node2": 50},
    ),
    (
        "honor extended resource if the pod requests",
        _req_pod({"cpu": "3000", "memory": "5000", EXTENDED: "2"}),
        [
            node("node1").resources({"cpu": "6000", "memory": "10000", EXTENDED: "4"}).build(),
            node("node2").resources({"cpu": "6000", "memory": "10000", EXTENDED: "10"}).build(),
        ],
        [],
        EXTENDED_SET,
        {"node1": 50, "node2": 60},
    ),
    (
        "if the node doesn't have a resource",
        _req_pod({"cpu": "3000", "memory": "4000"}),
        [
            _cap_node("node1", "6000", "10000"),
            node("node2").resources({"cpu": "6000", "memory": "10000", EXTENDED: "4"}).build(),
        ],
        [],
        (ResourceSpec(EXTENDED, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)),
        {"node1": 55, "node2": 55},
    ),
    (
        "pods without requests count with the non-zero defaults (100m, 200Mi) per container",
        _req_pod({}),
        [_cap_node("node1", "1", "2Gi")],
        [_req_pod({}, {}, name="a", node_name="node1")],
        DEFAULT_RESOURCES,
        # cpu: (1000 - 300) * 100 / 1000 = 70; memory: (2048 - 600)Mi * 100 / 2048Mi = 70
        {"node1": 70},
    ),
]


def _fit(strategy_type, resources, shape=()):
    return Fit(
        NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(strategy_type, resources, shape))
    )


@pytest.mark.parametrize(
    ("name", "the_pod", "nodes", "existing", "resources", "want"),
    LEAST_CASES,
    ids=[c[0] for c in LEAST_CASES],
)
def test_least_allocated_scoring_strategy(name, the_pod, nodes, existing, resources, want):
    plugin = _fit(ScoringStrategyType.LEAST_ALLOCATED, resources)
    assert run_scores(plugin, the_pod, node_infos(nodes, existing)) == want


def test_scoring_without_resources_is_an_error():
    """``TestLeastAllocatedScoringStrategy`` "Resources not set, pods scheduled with error"."""
    plugin = _fit(ScoringStrategyType.LEAST_ALLOCATED, ())
    [info] = node_infos([_cap_node("node1", "4000", "10000")])
    state = framework.CycleState()
    pod_info = framework.PodInfo.of(REQUESTED)
    assert plugin.pre_score(state, pod_info, [info]) is None
    score, status = plugin.score(state, pod_info, info)
    assert (score, status) == (0, framework.error("resources not found"))


MOST_CASES = [
    (
        "nothing scheduled, nothing requested",
        _req_pod(),
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "4000", "10000")],
        [],
        {"node1": 0, "node2": 0},
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        REQUESTED,
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "6000", "10000")],
        [],
        {"node1": 62, "node2": 50},
    ),
    (
        "no resources requested, pods scheduled with resources",
        _req_pod(),
        [_cap_node("node1", "10000", "20000"), _cap_node("node2", "10000", "20000")],
        [
            _req_pod({"cpu": "3000", "memory": "0"}, name="a", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "0"}, name="b", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "0"}, name="c", node_name="node2"),
            _req_pod({"cpu": "3000", "memory": "5000"}, name="d", node_name="node2"),
        ],
        {"node1": 30, "node2": 42},
    ),
    (
        "resources requested, pods scheduled with resources",
        REQUESTED,
        [_cap_node("node1", "10000", "20000"), _cap_node("node2", "10000", "20000")],
        [
            _req_pod({"cpu": "3000", "memory": "0"}, name="a", node_name="node1"),
            _req_pod({"cpu": "3000", "memory": "5000"}, name="b", node_name="node2"),
        ],
        {"node1": 42, "node2": 55},
    ),
    (
        "requested more than the node: capped at full",
        _req_pod({"cpu": "5000", "memory": "10000"}),
        [_cap_node("node1", "4000", "10000")],
        [],
        {"node1": 100},
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "nodes", "existing", "want"), MOST_CASES, ids=[c[0] for c in MOST_CASES]
)
def test_most_allocated_scoring_strategy(name, the_pod, nodes, existing, want):
    plugin = _fit(ScoringStrategyType.MOST_ALLOCATED, DEFAULT_RESOURCES)
    assert run_scores(plugin, the_pod, node_infos(nodes, existing)) == want


LEAST_SHAPE = (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))
MOST_SHAPE = (UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10))

RTCR_CASES = [
    (
        "nothing scheduled, nothing requested",
        LEAST_SHAPE,
        _req_pod(),
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "4000", "10000")],
        [],
        {"node1": 100, "node2": 100},
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        LEAST_SHAPE,
        _req_pod({"cpu": "3000", "memory": "5000"}),
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "6000", "10000")],
        [],
        # cpu 75% -> 25, memory 50% -> 50: round(37.5) = 38 (half away from zero)
        {"node1": 38, "node2": 50},
    ),
    (
        "bin packing: more utilization, higher score",
        MOST_SHAPE,
        _req_pod({"cpu": "1000", "memory": "2000"}),
        [_cap_node("node1", "4000", "10000"), _cap_node("node2", "4000", "10000")],
        [_req_pod({"cpu": "2000", "memory": "4000"}, name="a", node_name="node2")],
        # node1: cpu 25, memory 20 -> 22.5 -> 23; node2: cpu 75, memory 60 -> 67.5 -> 68
        {"node1": 23, "node2": 68},
    ),
    (
        "requests above capacity score as full utilization",
        MOST_SHAPE,
        _req_pod({"cpu": "5000", "memory": "2000"}),
        [_cap_node("node1", "4000", "10000")],
        [],
        # cpu over capacity -> shape(100) = 100; memory 20% -> 20: 60
        {"node1": 60},
    ),
]


@pytest.mark.parametrize(
    ("name", "shape", "the_pod", "nodes", "existing", "want"),
    RTCR_CASES,
    ids=[c[0] for c in RTCR_CASES],
)
def test_requested_to_capacity_ratio_scoring_strategy(name, shape, the_pod, nodes, existing, want):
    plugin = _fit(ScoringStrategyType.REQUESTED_TO_CAPACITY_RATIO, DEFAULT_RESOURCES, shape)
    assert run_scores(plugin, the_pod, node_infos(nodes, existing)) == want


def test_requested_to_capacity_ratio_with_extended_resource():
    """``TestResourceBinPackingSingleExtended``-like: weights per resource, only requested scalars."""
    gpu = "intel.com/foo"
    resources = (ResourceSpec(gpu, 1),)
    plugin = _fit(ScoringStrategyType.REQUESTED_TO_CAPACITY_RATIO, resources, MOST_SHAPE)
    nodes = [
        node("node1").resources({"cpu": "4", "memory": "4Gi", gpu: "4"}).build(),
        node("node2").resources({"cpu": "4", "memory": "4Gi", gpu: "8"}).build(),
    ]
    existing = [_req_pod({gpu: "2"}, name="a", node_name="node1")]
    the_pod = _req_pod({gpu: "1"})
    # node1: 3/4 -> 75; node2: 1/8 -> 12 (integer utilization) -> 12
    assert run_scores(plugin, the_pod, node_infos(nodes, existing)) == {"node1": 75, "node2": 12}
    # A pod not requesting the resource scores 0 everywhere (nothing is scored).
    assert run_scores(plugin, _req_pod({"cpu": "1"}), node_infos(nodes, existing)) == {
        "node1": 0,
        "node2": 0,
    }


ARGS_ERRORS = [
    (
        "resource with negative weight",
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy(
                resources=(ResourceSpec("memory", -1), ResourceSpec("cpu", 1))
            )
        ),
        "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]",
    ),
    (
        "resource with zero weight",
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy(
                resources=(ResourceSpec("memory", 1), ResourceSpec("cpu", 0))
            )
        ),
        "scoringStrategy.resources[1].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]",
    ),
    (
        "resource weight larger than MaxNodeScore",
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy(
                resources=(ResourceSpec("memory", 1), ResourceSpec("cpu", 101))
            )
        ),
        "scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
    ),
    (
        "shape utilization not increasing",
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy(
                ScoringStrategyType.REQUESTED_TO_CAPACITY_RATIO,
                DEFAULT_RESOURCES,
                (UtilizationShapePoint(50, 1), UtilizationShapePoint(10, 2)),
            )
        ),
        "scoringStrategy.shape[1].utilization: Invalid value: 10: Utilization values must be sorted in increasing order",
    ),
    (
        "shape required for RequestedToCapacityRatio",
        NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy(ScoringStrategyType.REQUESTED_TO_CAPACITY_RATIO)
        ),
        "scoringStrategy.shape: Required value: at least one point must be specified",
    ),
]


@pytest.mark.parametrize(("name", "args", "message"), ARGS_ERRORS, ids=[c[0] for c in ARGS_ERRORS])
def test_invalid_args_are_rejected(name, args, message):
    with pytest.raises(PluginArgsError) as info:
        Fit(args)
    assert str(info.value) == message


@given(
    cpu=st.integers(0, 5000),
    memory=st.integers(0, 5000),
    used_cpu=st.integers(0, 5000),
    used_memory=st.integers(0, 5000),
    pods=st.integers(0, 3),
)
def test_filter_fits_exactly_when_every_request_fits(cpu, memory, used_cpu, used_memory, pods):
    """Invariant (``fitsRequest``): no status iff pod count and every non-zero request fit."""
    existing = [
        _req_pod({"cpu": f"{used_cpu}m", "memory": str(used_memory)}, name="a", node_name="n1")
    ]
    [info] = node_infos(
        [node("n1").resources({"cpu": "4", "memory": "4000", "pods": str(pods)}).build()], existing
    )
    status = run_filter(Fit(), _req_pod({"cpu": f"{cpu}m", "memory": str(memory)}), info)
    fits = (
        pods >= 2
        and (cpu == 0 or cpu <= 4000 - used_cpu)
        and (memory == 0 or memory <= 4000 - used_memory)
    )
    assert (status is None) == fits
    if status is not None:
        unresolvable = cpu > 4000 or memory > 4000
        assert status.code is (UU if unresolvable else U)
