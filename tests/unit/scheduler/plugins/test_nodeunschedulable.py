"""NodeUnschedulable, ported from upstream ``nodeunschedulable/node_unschedulable_test.go``
(``TestNodeUnschedulable``)."""

from __future__ import annotations

import pytest

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from kubeprio.scheduler.snapshot import NodeInfo
from tests.builders import node, pod

UNSCHEDULABLE = framework.Status(
    framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",)
)

CASES = [
    ("schedule pod on a node without unschedulable", pod("p").build(), False, None),
    ("cannot schedule pod on an unschedulable node", pod("p").build(), True, UNSCHEDULABLE),
    (
        "schedule pod on an unschedulable node that the pod tolerates",
        pod("p")
        .toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")
        .build(),
        True,
        None,
    ),
    (
        "a toleration of every taint (empty key, Exists) tolerates cordoned nodes",
        pod("p").toleration(operator="Exists").build(),
        True,
        None,
    ),
    (
        "a NoExecute toleration does not tolerate the NoSchedule unschedulable taint",
        pod("p")
        .toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoExecute")
        .build(),
        True,
        UNSCHEDULABLE,
    ),
]


@pytest.mark.parametrize(("name", "the_pod", "cordoned", "want"), CASES, ids=[c[0] for c in CASES])
def test_node_unschedulable(name, the_pod, cordoned, want):
    builder = node("n1")
    if cordoned:
        builder = builder.unschedulable()
    info = NodeInfo(builder.build())
    status = NodeUnschedulable().filter(framework.CycleState(), framework.PodInfo.of(the_pod), info)
    assert status == want
