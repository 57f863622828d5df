"""Victim selection and the dry run (semantics §4.4-§4.6).

Ported from upstream ``plugins/defaultpreemption/default_preemption_test.go``
``TestDryRunPreemption`` (formerly ``TestSelectNodesForPreemption``): the same nodes,
pods, PDBs, offsets and expected candidates, run against the real default plugins and
the in-process API. Upstream draws the offset from ``rand.NewSource(4)`` (4, then 1,
then 3); here the offset is passed explicitly with the same values. Upstream's
``epochTimeN`` are N nanoseconds; here they are N seconds (only their order matters).
"""

from __future__ import annotations

import pytest

from kubeprio.scheduler.framework import Code
from kubeprio.scheduler.preemption import PreemptionArgs, number_of_candidates
from tests.builders import label_selector, pod
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    Harness,
    node_obj,
    preemption_config,
    victims_by_node,
)


def _pod(name, prio, res=None, *, on=None, start=None, labels=None, ns="default"):
    builder = pod(name, ns).uid(name).priority(prio)
    if res:
        builder = builder.requests(**res)
    if on:
        builder = builder.on(on)
    if labels:
        builder = builder.labels(**labels)
    return builder.build(), start


def _nodes(*names):
    """``node-a/zone1`` -> node ``node-a`` labelled hostname=node-a, zone=zone1."""
    nodes = []
    for spec in names:
        parts = spec.split("/")
        labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
        nodes.append(node_obj(parts[0], VERY_LARGE, **labels))
    return nodes


def _harness(nodes, pods, pdbs=(), args=None):
    config = preemption_config(*args) if args is not None else None
    h = Harness(config=config)
    h.add_nodes(*_nodes(*nodes))
    h.start()
    for obj, start in pods:
        h.add_pod(obj, start=start)
    for name, labels, allowed, disrupted in pdbs:
        h.add_pdb(name, labels, allowed=allowed, disrupted=disrupted)
    return h


FOO = {"app": "foo"}
TWO_NODES = ("node1", "node2")
FIVE_NODES = ("node1", "node2", "node3", "node4", "node5")

# (id, nodes, preemptor, existing pods, pdbs, args, offsets, expected per offset)
CASES = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        TWO_NODES,
        _pod("p", HIGH, LARGE),
        [_pod("p1", MID, LARGE, on="node1"), _pod("p2", MID, LARGE, on="node2")],
        [],
        None,
        [0],
        [{"node1": (["p1"], 0), "node2": (["p2"], 0)}],
    ),
    (
        "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
        TWO_NODES,
        _pod("p", LOW, LARGE),
        [_pod("p1", MID, LARGE, on="node1"), _pod("p2", MID, LARGE, on="node2")],
        [],
        None,
        [0],
        [{}],
    ),
    (
        "medium priority pod is preempted, but lower priority one stays as it is small",
        TWO_NODES,
        _pod("p", HIGH, LARGE),
        [
            _pod("p1.1", LOW, SMALL, on="node1"),
            _pod("p1.2", MID, LARGE, on="node1"),
            _pod("p2", MID, LARGE, on="node2"),
        ],
        [],
        None,
        [0],
        [{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}],
    ),
    (
        "mixed priority pods are preempted",
        TWO_NODES,
        _pod("p", HIGH, LARGE),
        [
            _pod("p1.1", MID, SMALL, on="node1"),
            _pod("p1.2", LOW, SMALL, on="node1"),
            _pod("p1.3", MID, MEDIUM, on="node1"),
            _pod("p1.4", HIGH, SMALL, on="node1"),
            _pod("p2", HIGH, LARGE, on="node2"),
        ],
        [],
        None,
        [0],
        [{"node1": (["p1.2", "p1.3"], 0)}],
    ),
    (
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        TWO_NODES,
        _pod("p", HIGH, LARGE),
        [
            _pod("p1.1", LOW, SMALL, on="node1", start=5),
            _pod("p1.2", LOW, SMALL, on="node1", start=4),
            _pod("p1.3", MID, MEDIUM, on="node1", start=3),
            _pod("p1.4", HIGH, SMALL, on="node1", start=2),
            _pod("p2", HIGH, LARGE, on="node2", start=1),
        ],
        [],
        None,
        [0],
        [{"node1": (["p1.1", "p1.3"], 0)}],
    ),
    (
        "preemption with violation of same pdb",
        ("node1",),
        _pod("p", HIGH, VERY_LARGE),
        [
            _pod("p1.1", MID, MEDIUM, on="node1", labels=FOO),
            _pod("p1.2", MID, MEDIUM, on="node1", labels=FOO),
        ],
        [("pdb", FOO, 1, ())],
        None,
        [0],
        [{"node1": (["p1.1", "p1.2"], 1)}],
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to DisruptedPods",
        ("node1",),
        _pod("p", HIGH, VERY_LARGE),
        [
            _pod("p1.1", MID, MEDIUM, on="node1", labels=FOO),
            _pod("p1.2", MID, MEDIUM, on="node1", labels=FOO),
        ],
        [("pdb", FOO, 1, ("p2",))],
        None,
        [0],
        [{"node1": (["p1.1", "p1.2"], 1)}],
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to DisruptedPods",
        ("node1",),
        _pod("p", HIGH, VERY_LARGE),
        [
            _pod("p1.1", MID, MEDIUM, on="node1", labels=FOO),
            _pod("p1.2", MID, MEDIUM, on="node1", labels=FOO),
        ],
        [("pdb", FOO, 1, ("p1.2",))],
        None,
        [0],
        [{"node1": (["p1.1", "p1.2"], 0)}],
    ),
    (
        "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to DisruptedPods is treated as 'nonViolating'",
        ("node1",),
        _pod("p", HIGH, VERY_LARGE),
        [
            _pod("p1.1", MID, MEDIUM, on="node1", labels=FOO),
            _pod("p1.2", MID, MEDIUM, on="node1", labels=FOO),
            _pod("p1.3", MID, MEDIUM, on="node1", labels=FOO),
        ],
        [("pdb", FOO, 1, ("p1.3",))],
        None,
        [0],
        [{"node1": (["p1.1", "p1.2", "p1.3"], 1)}],
    ),
    (
        "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        FIVE_NODES,
        _pod("p", HIGH, LARGE),
        [_pod(f"p{i}", MID, LARGE, on=f"node{i}") for i in range(1, 6)],
        [],
        (40, 1),
        [4],  # cycle=0 => offset=4 => node5 (yes), node1 (yes)
        [{"node1": (["p1"], 0), "node5": (["p5"], 0)}],
    ),
    (
        "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        FIVE_NODES,
        _pod("p", HIGH, LARGE),
        [
            _pod("p1", MID, LARGE, on="node1"),
            _pod("p2", VERY_HIGH, LARGE, on="node2"),
            _pod("p3", MID, LARGE, on="node3"),
            _pod("p4", MID, LARGE, on="node4"),
            _pod("p5", VERY_HIGH, LARGE, on="node5"),
        ],
        [],
        (40, 1),
        [4],  # offset=4 => node5 (no), node1 (yes), node2 (no), node3 (yes)
        [{"node1": (["p1"], 0), "node3": (["p3"], 0)}],
    ),
    (
        "preemption offset across multiple scheduling cycles and wrap around",
        FIVE_NODES,
        _pod("p", HIGH, LARGE),
        [_pod(f"p{i}", MID, LARGE, on=f"node{i}") for i in range(1, 6)],
        [],
        (40, 1),
        [4, 1, 3],
        [
            {"node1": (["p1"], 0), "node5": (["p5"], 0)},
            {"node2": (["p2"], 0), "node3": (["p3"], 0)},
            {"node4": (["p4"], 0), "node5": (["p5"], 0)},
        ],
    ),
    (
        "preemption looks past numCandidates until a non-PDB violating node is found",
        FIVE_NODES,
        _pod("p", HIGH, LARGE),
        [
            _pod("p1", MID, LARGE, on="node1", labels=FOO),
            _pod("p2", MID, LARGE, on="node2", labels=FOO),
            _pod("p3", MID, LARGE, on="node3"),
            _pod("p4", MID, LARGE, on="node4"),
            _pod("p5", MID, LARGE, on="node5", labels=FOO),
        ],
        [("pdb", FOO, 0, ())],
        (40, 2),
        # offset=4 => node5 (yes, pdb), node1 (yes, pdb), node2 (dropped: the violating
        # list is full), node3 (yes: first non-violating, stop)
        [4],
        [{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}],
    ),
]


@pytest.mark.parametrize(
    ("nodes", "preemptor", "existing", "pdbs", "args", "offsets", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_dry_run_preemption(nodes, preemptor, existing, pdbs, args, offsets, expected):
    """Upstream ``TestDryRunPreemption``: candidates and their victims per cycle."""
    h = _harness(nodes, existing, pdbs, args)
    preemption_args = PreemptionArgs(*args) if args else PreemptionArgs()
    wanted = number_of_candidates(len(nodes), preemption_args)
    assert h.evaluator.args == preemption_args
    for offset, want in zip(offsets, expected, strict=True):
        candidates, _statuses = h.dry_run(preemptor[0], offset=offset, wanted=wanted)
        assert victims_by_node(candidates) == want


def test_dry_run_with_affinity_plugins():
    """``TestDryRunPreemption`` "pod with anti-affinity is preempted": the low-priority pod
    whose anti-affinity rejects the preemptor is the only victim; equal/higher stay."""
    from tests.builders import affinity_term

    anti = affinity_term("hostname", label_selector(None, ("foo", "Exists", ())))
    h = _harness(TWO_NODES, [])
    h.add_pod(
        pod("p1.1")
        .uid("p1.1")
        .label("foo", "")
        .priority(LOW)
        .requests(**SMALL)
        .on("node1")
        # st.PodAntiAffinityExists("foo", "hostname", required)
        .pod_anti_affinity(anti)
        .build()
    )
    h.add_pod(pod("p1.2").uid("p1.2").priority(MID).requests(**SMALL).on("node1").build())
    h.add_pod(pod("p1.3").uid("p1.3").priority(HIGH).requests(**SMALL).on("node1").build())
    h.add_pod(pod("p2").uid("p2").priority(HIGH).requests(**SMALL).on("node2").build())
    preemptor = pod("p").uid("p").label("foo", "").priority(HIGH).requests(**SMALL).build()
    candidates, statuses = h.dry_run(preemptor)
    assert victims_by_node(candidates) == {"node1": (["p1.1"], 0)}
    # node2 has no lower-priority pod: nothing to preempt there.
    assert statuses.get("node2").code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_dry_run_resolves_topology_spread():
    """``TestDryRunPreemption`` "preemption to resolve pod topology spread filter failure"."""
    exists_foo = label_selector(None, ("foo", "Exists", ()))
    h = _harness(("node-a/zone1", "node-b/zone1", "node-x/zone2"), [])
    for name, node_name, prio in [
        ("pod-a1", "node-a", MID),
        ("pod-a2", "node-a", LOW),
        ("pod-b1", "node-b", LOW),
        ("pod-x1", "node-x", HIGH),
        ("pod-x2", "node-x", HIGH),
    ]:
        h.add_pod(pod(name).uid(name).label("foo", "").priority(prio).on(node_name).build())
    preemptor = (
        pod("p")
        .uid("p")
        .label("foo", "")
        .priority(HIGH)
        .spread_constraint(1, "zone", "DoNotSchedule", exists_foo)
        .spread_constraint(1, "hostname", "DoNotSchedule", exists_foo)
        .build()
    )
    candidates, _ = h.dry_run(preemptor)
    assert victims_by_node(candidates) == {
        "node-a": (["pod-a2"], 0),
        "node-b": (["pod-b1"], 0),
    }
