"""TaintToleration, ported from upstream ``tainttoleration/taint_toleration_test.go``
(``TestTaintTolerationFilter``, ``TestTaintTolerationScore``).

The Filter reason is the generic ``node(s) had untolerated taint(s)`` since
kubernetes/kubernetes#134740 (v1.35, backported to v1.34): pod statuses no longer name
taint keys or values.
"""

from __future__ import annotations

import pytest

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.tainttoleration import TaintToleration
from tests.builders import node, pod
from tests.unit.scheduler.plugins.harness import node_infos, run_scores

UNTOLERATED = framework.Status(
    framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",)
)


def _node(name, *taints):
    builder = node(name)
    for key, value, effect in taints:
        builder = builder.taint(key, value, effect)
    return builder.build()


FILTER_CASES = [
    (
        "A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        pod("p").build(),
        [("dedicated", "user1", "NoSchedule")],
        UNTOLERATED,
    ),
    (
        "A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        pod("p").toleration("dedicated", "Equal", "user1", "NoSchedule").build(),
        [("dedicated", "user1", "NoSchedule")],
        None,
    ),
    (
        "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        pod("p").toleration("dedicated", "Equal", "user2", "NoSchedule").build(),
        [("dedicated", "user1", "NoSchedule")],
        UNTOLERATED,
    ),
    (
        "A pod can be scheduled onto the node, with a toleration uses operator Exists",
        pod("p").toleration("foo", "Exists", effect="NoSchedule").build(),
        [("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
        pod("p")
        .toleration("dedicated", "Equal", "user2", "NoSchedule")
        .toleration("foo", "Exists", effect="NoSchedule")
        .build(),
        [("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "key and value match but the (non-empty) effect does not: can't be scheduled",
        pod("p").toleration("foo", "Equal", "bar", "PreferNoSchedule").build(),
        [("foo", "bar", "NoSchedule")],
        UNTOLERATED,
    ),
    (
        "an empty toleration effect matches the NoSchedule taint",
        pod("p").toleration("foo", "Equal", "bar").build(),
        [("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "a PreferNoSchedule taint never blocks, even untolerated",
        pod("p").toleration("dedicated", "Equal", "user2", "NoSchedule").build(),
        [("dedicated", "user1", "PreferNoSchedule")],
        None,
    ),
    (
        "The pod has no toleration, but the effect of taint on node is PreferNoSchedule",
        pod("p").build(),
        [("dedicated", "user1", "PreferNoSchedule")],
        None,
    ),
    (
        "NoExecute taints block like NoSchedule ones",
        pod("p").build(),
        [("node.kubernetes.io/not-ready", "", "NoExecute")],
        UNTOLERATED,
    ),
    (
        "an empty key with operator Exists tolerates every taint",
        pod("p").toleration(operator="Exists").build(),
        [("a", "1", "NoSchedule"), ("b", "2", "NoExecute")],
        None,
    ),
    (
        "the comparison operators (alpha gate, off) tolerate nothing",
        pod("p").toleration("level", "Gt", "1", "NoSchedule").build(),
        [("level", "5", "NoSchedule")],
        UNTOLERATED,
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "taints", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES]
)
def test_taint_toleration_filter(name, the_pod, taints, want):
    [info] = node_infos([_node("n1", *taints)])
    status = TaintToleration().filter(framework.CycleState(), framework.PodInfo.of(the_pod), info)
    assert status == want


SCORE_CASES = [
    (
        "node with taints tolerated by the pod scores higher than one with intolerable taints",
        pod("p").toleration("foo", "Equal", "bar", "PreferNoSchedule").build(),
        [
            _node("nodeA", ("foo", "bar", "PreferNoSchedule")),
            _node("nodeB", ("foo", "blah", "PreferNoSchedule")),
        ],
        {"nodeA": 100, "nodeB": 0},
    ),
    (
        "nodes whose taints are all tolerated score the same, however many taints they have",
        pod("p")
        .toleration("cpu-type", "Equal", "arm64", "PreferNoSchedule")
        .toleration("disk-type", "Equal", "ssd", "PreferNoSchedule")
        .build(),
        [
            _node("nodeA"),
            _node("nodeB", ("cpu-type", "arm64", "PreferNoSchedule")),
            _node(
                "nodeC",
                ("cpu-type", "arm64", "PreferNoSchedule"),
                ("disk-type", "ssd", "PreferNoSchedule"),
            ),
        ],
        {"nodeA": 100, "nodeB": 100, "nodeC": 100},
    ),
    (
        "the more intolerable taints a node has, the lower score it gets",
        pod("p").toleration("foo", "Equal", "bar", "PreferNoSchedule").build(),
        [
            _node("nodeA"),
            _node("nodeB", ("cpu-type", "arm64", "PreferNoSchedule")),
            _node(
                "nodeC",
                ("cpu-type", "arm64", "PreferNoSchedule"),
                ("disk-type", "ssd", "PreferNoSchedule"),
            ),
        ],
        {"nodeA": 100, "nodeB": 50, "nodeC": 0},
    ),
    (
        "only taints and tolerations with effect PreferNoSchedule are scored",
        pod("p")
        .toleration("cpu-type", "Equal", "arm64", "NoSchedule")
        .toleration("disk-type", "Equal", "ssd", "NoSchedule")
        .build(),
        [
            _node("nodeA"),
            _node("nodeB", ("cpu-type", "arm64", "NoSchedule")),
            _node(
                "nodeC",
                ("cpu-type", "arm64", "PreferNoSchedule"),
                ("disk-type", "ssd", "PreferNoSchedule"),
            ),
        ],
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
    ),
    (
        "Default behaviour: no taints and tolerations, lands on node with no taints",
        pod("p").build(),
        [_node("nodeA"), _node("nodeB", ("cpu-type", "arm64", "PreferNoSchedule"))],
        {"nodeA": 100, "nodeB": 0},
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "nodes", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES]
)
def test_taint_toleration_score(name, the_pod, nodes, want):
    assert run_scores(TaintToleration(), the_pod, node_infos(nodes)) == want
