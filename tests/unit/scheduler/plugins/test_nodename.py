"""NodeName, ported from upstream ``nodename/node_name_test.go`` (``TestNodeName``)."""

from __future__ import annotations

import pytest

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.nodename import NodeName
from kubeprio.scheduler.snapshot import NodeInfo
from tests.builders import node, pod

MISMATCH = framework.Status(
    framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",)
)

CASES = [
    ("no host specified", pod("p").build(), None),
    ("host matches", pod("p").on("foo").build(), None),
    ("host doesn't match", pod("p").on("bar").build(), MISMATCH),
]


@pytest.mark.parametrize(("name", "the_pod", "want"), CASES, ids=[c[0] for c in CASES])
def test_node_name(name, the_pod, want):
    info = NodeInfo(node("foo").build())
    assert NodeName().filter(framework.CycleState(), framework.PodInfo.of(the_pod), info) == want
