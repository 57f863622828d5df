"""Candidate discovery and the PostFilter outcome (semantics §4.1, §4.3, §4.4, §4.9).

Ported from upstream ``default_preemption_test.go`` ``TestPostFilter`` (statuses and
messages for every outcome; the extender and pod-group cases are out of scope) and
``calculateNumCandidates`` / ``GetOffsetAndNumCandidates``. Only nodes whose status in
this cycle is exactly Unschedulable are examined; UnschedulableAndUnresolvable and absent
nodes are not, and in the no-candidate message absent nodes read "Preemption is not
helpful for scheduling".
"""

from __future__ import annotations

import random

import pytest

from kubeprio.scheduler.framework import (
    Code,
    PostFilterResult,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from kubeprio.scheduler.preemption import PreemptionArgs, number_of_candidates
from tests.builders import pod
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LARGE,
    LOW,
    MID,
    VERY_HIGH,
    Harness,
    node_obj,
    preemption_config,
)

ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
VIOLATING = {"test.kubernetes.io/is-violating-pdb": "violating"}
NON_VIOLATING = {"test.kubernetes.io/is-violating-pdb": "non-violating"}
U = unschedulable()
UU = unresolvable()


def _node(name, capacity):
    """Upstream ``st.MakeNode().Capacity(res)``: 32 pods unless ``res`` says otherwise."""
    return node_obj(name, capacity)


def _pod(name, prio=None, res=None, on=None, labels=None):
    builder = pod(name).uid(name)
    if prio is not None:
        builder = builder.priority(prio)
    if res:
        builder = builder.requests(**res)
    if on:
        builder = builder.on(on)
    if labels:
        builder = builder.labels(**labels)
    return builder.build()


# (id, preemptor, pods, nodes, pdbs, statuses, want result, want code, want message)
POST_FILTER_CASES = [
    (
        "pod with higher priority can be made schedulable",
        _pod("p", HIGH),
        [_pod("p1", on="node1")],
        [_node("node1", ONE_POD)],
        [],
        {"node1": U},
        PostFilterResult("node1"),
        Code.SUCCESS,
        None,
    ),
    (
        "pod with tied priority is still unschedulable",
        _pod("p"),
        [_pod("p1", on="node1")],
        [_node("node1", ONE_POD)],
        [],
        {"node1": U},
        PostFilterResult(""),
        Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    (
        "preemption should respect filteredNodesStatuses",
        _pod("p", HIGH),
        [_pod("p1", on="node1")],
        [_node("node1", ONE_POD)],
        [],
        {"node1": UU},
        PostFilterResult(""),
        Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    (
        "preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        _pod("p", HIGH),
        [_pod("p1", on="node1")],
        [_node("node1", ONE_POD)],
        [],
        {},
        PostFilterResult(""),
        Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    (
        "pod can be made schedulable on one node",
        _pod("p", MID),
        [_pod("p1", HIGH, on="node1"), _pod("p2", LOW, on="node2")],
        [_node("node1", ONE_POD), _node("node2", ONE_POD)],
        [],
        {"node1": U, "node2": U},
        PostFilterResult("node2"),
        Code.SUCCESS,
        None,
    ),
    (
        "pod can be made schedulable on minHighestPriority node",
        _pod("p", VERY_HIGH),
        [
            _pod("p1", HIGH, on="node1", labels=NON_VIOLATING),
            _pod("p2", LOW, on="node1", labels=VIOLATING),
            _pod("p3", MID, on="node2", labels=VIOLATING),
        ],
        [_node("node1", ONE_POD), _node("node2", ONE_POD)],
        [("violating-pdb", VIOLATING, 0), ("non-violating-pdb", NON_VIOLATING, 2**31 - 1)],
        {"node1": U, "node2": U},
        PostFilterResult("node2"),
        Code.SUCCESS,
        None,
    ),
    (
        "no candidate nodes found, no enough resource after removing low priority pods",
        _pod("p", HIGH, LARGE),
        [_pod("p1", on="node1"), _pod("p2", on="node2")],
        [_node("node1", NODE_RES), _node("node2", NODE_RES)],
        [],
        {"node1": U, "node2": U},
        PostFilterResult(""),
        Code.UNSCHEDULABLE,
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    (
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        _pod("p", HIGH, LARGE),
        [_pod("p1", HIGH, on="node1"), _pod("p2", on="node2"), _pod("p3", HIGH, on="node3")],
        [_node("node1", ONE_POD), _node("node2", NODE_RES), _node("node3", ONE_POD)],
        [],
        {"node1": U, "node2": U, "node3": U},
        PostFilterResult(""),
        Code.UNSCHEDULABLE,
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
        "2 No preemption victims found for incoming pod.",
    ),
    (
        "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource",
        _pod("p", HIGH, LARGE),
        [_pod("p1", on="node1"), _pod("p2", on="node2")],
        [_node(f"node{i}", NODE_RES) for i in range(1, 5)],
        [],
        {"node1": U, "node2": U, "node4": UU},
        PostFilterResult(""),
        Code.UNSCHEDULABLE,
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
        "2 Preemption is not helpful for scheduling.",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "pods", "nodes", "pdbs", "statuses", "result", "code", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in POST_FILTER_CASES],
)
def test_post_filter(preemptor, pods, nodes, pdbs, statuses, result, code, message):
    """Upstream ``TestPostFilter``: the PostFilter result and status for each outcome."""
    h = Harness()
    h.add_nodes(*nodes)
    h.start()
    h.add_pods(*pods)
    for name, labels, allowed in pdbs:
        h.add_pdb(name, labels, allowed=allowed)
    got_result, got_status = h.preempt(preemptor, statuses)
    assert got_result == result
    if code is Code.SUCCESS:
        assert got_status is None
    else:
        assert got_status == Status(code, (message,), "DefaultPreemption")


def test_fitting_node_reported_unschedulable_is_an_error():
    """``DryRunPreemption``: success with no victim is the error
    ``expected at least one victim pod on node "<node>"``; with no candidate at all the
    PostFilter status is that Error (upstream ``Preempt`` returns the aggregated error)
    and the result is nil, so the nomination is left alone."""
    h = Harness()
    h.add_nodes(node_obj("node1"))
    h.start()
    h.add_pod(_pod("p1", LOW, {"cpu": "100m"}, on="node1"))
    result, status = h.preempt(_pod("p", HIGH, {"cpu": "100m"}), {"node1": U})
    assert result is None
    assert status is not None
    assert status.code is Code.ERROR
    assert status.message == 'preemption: expected at least one victim pod on node "node1"'


# --- how many candidates (calculateNumCandidates) --------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "percentage", "absolute", "want"),
    [
        pytest.param(1, 10, 100, 1, id="defaults, 1 node: all"),
        pytest.param(100, 10, 100, 100, id="defaults, 100 nodes: all"),
        pytest.param(101, 10, 100, 100, id="defaults, 101 nodes: the absolute minimum"),
        pytest.param(1000, 10, 100, 100, id="defaults, 1000 nodes: 10% = 100"),
        pytest.param(1009, 10, 100, 100, id="defaults, 1009 nodes: 10% floors to 100"),
        pytest.param(5000, 10, 100, 500, id="defaults, 5000 nodes: 10%"),
        pytest.param(5, 40, 1, 2, id="40%/1 of 5 nodes: 2"),
        pytest.param(5, 40, 2, 2, id="40%/2 of 5 nodes: 2"),
        pytest.param(5, 0, 3, 3, id="0%/3 of 5 nodes: the absolute"),
        pytest.param(5, 100, 0, 5, id="100%/0: every node"),
        pytest.param(2, 50, 10, 2, id="capped at the number of nodes"),
        pytest.param(0, 10, 100, 0, id="no nodes"),
    ],
)
def test_number_of_candidates(nodes, percentage, absolute, want):
    """Upstream ``calculateNumCandidates``: max(floor(N*pct/100), abs), capped at N."""
    assert number_of_candidates(nodes, PreemptionArgs(percentage, absolute)) == want


@pytest.mark.parametrize("seed", range(6))
def test_search_starts_at_a_seeded_random_offset(seed):
    """``GetOffsetAndNumCandidates``: offset = uniform in [0, N) from the injected rng;
    with room for one candidate, the candidate is the node at that offset."""
    names = [f"node{i}" for i in range(1, 6)]
    h = Harness(config=preemption_config(1, 1))
    h.add_nodes(*(node_obj(n) for n in names))
    h.start()
    for i, name in enumerate(names, start=1):
        h.add_pod(_pod(f"p{i}", MID, LARGE, on=name))
    h.evaluator.rng = random.Random(seed)
    offset = random.Random(seed).randrange(len(names))
    state, info = h.pre_filter(_pod("p", HIGH, LARGE))
    statuses = {name: U for name in names}
    from kubeprio.scheduler.framework import NodeToStatus

    candidates, _ = h.evaluator.find_candidates(
        state, h.sorted_nodes(), info, NodeToStatus(statuses)
    )
    assert [c.node_name for c in candidates] == [names[offset]]


def test_only_unschedulable_nodes_are_examined():
    """§4.3: nodes marked UnschedulableAndUnresolvable, or absent from the map, are never
    dry-run even if preemption would help there; the offset ranges over the rest."""
    names = ["node1", "node2", "node3", "node4"]
    h = Harness()
    h.add_nodes(*(node_obj(n) for n in names))
    h.start()
    for i, name in enumerate(names, start=1):
        h.add_pod(_pod(f"p{i}", MID, LARGE, on=name))
    state, info = h.pre_filter(_pod("p", HIGH, LARGE))
    from kubeprio.scheduler.framework import NodeToStatus

    statuses = NodeToStatus({"node1": UU, "node2": U, "node4": U})
    candidates, dry_run_statuses = h.evaluator.find_candidates(
        state, h.sorted_nodes(), info, statuses
    )
    assert sorted(c.node_name for c in candidates) == ["node2", "node4"]
    assert dry_run_statuses.statuses == {}


def test_no_potential_node_consumes_no_randomness():
    """With no Unschedulable node upstream returns before drawing an offset."""
    h = Harness()
    h.add_nodes(node_obj("node1"))
    h.start()
    h.add_pod(_pod("p1", LOW, LARGE, on="node1"))
    state, info = h.pre_filter(_pod("p", HIGH, LARGE))
    from kubeprio.scheduler.framework import NodeToStatus

    before = h.evaluator.rng.getstate()
    candidates, _ = h.evaluator.find_candidates(
        state, h.sorted_nodes(), info, NodeToStatus({"node1": UU})
    )
    assert candidates == []
    assert h.evaluator.rng.getstate() == before


# --- PreFilter extension errors during the dry run (TestPostFilter's "test-plugin") ---------


class ErroringExtensions:
    """Upstream's ``TestPlugin``: AddPod/RemovePod fail on nodes labelled ``error=true``."""

    name = "test-plugin"

    def pre_filter(self, state, pod, nodes):
        return None, None

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod, pod_to_add, node):
        if (node.node.metadata.labels or {}).get("error") == "true":
            return error(f"failed to add pod: {pod.pod.metadata.name}")
        return None

    def remove_pod(self, state, pod, pod_to_remove, node):
        if (node.node.metadata.labels or {}).get("error") == "true":
            return error(f"failed to remove pod: {pod.pod.metadata.name}")
        return None


def _with_test_plugin(h):
    """The harness's profile plus ``test-plugin`` at PreFilter (as upstream registers it)."""
    from kubeprio.scheduler.runtime import Framework

    old = h.scheduler.framework
    new = Framework(
        profile_name=old.profile_name,
        queue_sort=old.queue_sort,
        pre_filter=[*old.pre_filter_plugins, ErroringExtensions()],
        filter=old.filter_plugins,
        post_filter=old.post_filter_plugins,
        bind=old.bind_plugins,
    )
    new.nominated_pods = old.nominated_pods
    h.scheduler.framework = new


@pytest.mark.parametrize(
    ("nodes", "result", "code", "message"),
    [
        pytest.param(
            [("node1", True)],
            None,
            Code.ERROR,
            'preemption: running RemovePod on PreFilter plugin "test-plugin": '
            "failed to remove pod: p",
            id="only one node but failed with TestPlugin",
        ),
        pytest.param(
            [("node1", True), ("node2", False)],
            PostFilterResult("node2"),
            Code.SUCCESS,
            None,
            id="one failed with TestPlugin and the other pass",
        ),
    ],
)
def test_post_filter_with_failing_extensions(nodes, result, code, message):
    """``TestPostFilter``: an extension error is wrapped as upstream's runtime does
    (``running RemovePod on PreFilter plugin %q: %w``); other nodes still count."""
    h = Harness()
    for name, failing in nodes:
        labels = {"error": "true"} if failing else {}
        h.add_nodes(node_obj(name, LARGE, **labels))
    h.start()
    _with_test_plugin(h)
    h.add_pod(_pod("p1", on="node1"))
    if len(nodes) > 1:
        h.add_pod(_pod("p2", on="node2", res={"cpu": "200m", "memory": "200"}))
    got_result, got_status = h.preempt(_pod("p", HIGH, LARGE), {name: U for name, _ in nodes})
    assert got_result == result
    if code is Code.SUCCESS:
        assert got_status is None
    else:
        assert got_status.code is code
        assert got_status.message == message


def test_dry_run_errors_are_aggregated():
    """``DryRunPreemption`` collects every node's error; with no candidate ``Preempt``
    returns them as one aggregate (``[a, b]``; upstream's order is that of its workers)."""
    h = Harness()
    h.add_nodes(node_obj("node1"), node_obj("node2"))
    h.start()
    h.add_pod(_pod("p1", LOW, {"cpu": "100m"}, on="node1"))
    h.add_pod(_pod("p2", LOW, {"cpu": "100m"}, on="node2"))
    result, status = h.preempt(_pod("p", HIGH, {"cpu": "100m"}), {"node1": U, "node2": U})
    assert result is None
    assert status.code is Code.ERROR
    one = 'expected at least one victim pod on node "node1"'
    two = 'expected at least one victim pod on node "node2"'
    assert status.message in (f"preemption: [{one}, {two}]", f"preemption: [{two}, {one}]")


def test_preemptor_gone_from_the_informer():
    """``Preempt`` reads the preemptor from the pod lister first; a missing pod is the
    lister's NotFound (``pod "<name>" not found``, singular resource) as an Error."""
    from kubeprio.scheduler.framework import CycleState, NodeToStatus, PodInfo

    h = Harness()
    h.add_nodes(node_obj("node1"))
    h.start()
    ghost = PodInfo.of(_pod("ghost", HIGH, LARGE))
    result, status = h.evaluator.preempt(CycleState(), ghost, NodeToStatus({"node1": U}))
    assert result is None
    assert (status.code, status.message) == (Code.ERROR, 'pod "ghost" not found')
