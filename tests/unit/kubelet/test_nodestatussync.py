"""A running kubelet posts Ready again after the node lifecycle controller marked its node
Unknown (``kubelet.nodestatussync``).

Upstream ``pkg/kubelet/kubelet_node_status.go``: ``syncNodeStatus`` runs every
``--node-status-update-frequency`` (10 s) and ``tryUpdateNodeStatus`` writes when
``nodeStatusHasChanged``; the controller's ``Unknown`` is such a change, so a kubelet that
kept running (its lease renewals were only seen late: a stalled control plane) is Ready
again at its next tick. Before this, kubeprio's kubelet never posted again, so a stall of
the ``kubeprio serve`` loop longer than the grace period's slack over the 10 s renewals
left nodes NotReady for good (reproduced by stopping a live server for 8 s); with every
other node of the zone so, a node that really failed found its zone fully disrupted and
never got its ``NoExecute`` taint.
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.core import Node, NodeCondition, NodeStatus
from kubeprio.api.model import evolve
from kubeprio.clock import parse_rfc3339
from kubeprio.kubelet.nodestatussync import (
    NODE_STATUS_UPDATE_FREQUENCY,
    NodeStatusSync,
    tick_phase,
)
from tests.conftest import ManualClock
from tests.unit.controllers.test_nodelifecycle import UNREACHABLE, World, ready_condition


def _node(ready: str | None) -> Node:
    conditions = () if ready is None else (NodeCondition(type="Ready", status=ready),)
    node = Node()
    return evolve(
        node,
        metadata=dataclasses.replace(node.metadata, name="n1"),
        status=NodeStatus(conditions=conditions),
    )


@pytest.mark.parametrize(
    ("old", "new", "planned"),
    [
        ("True", "Unknown", True),  # the node lifecycle controller's write
        ("True", "False", True),  # anyone's: upstream's sync posts what it sees
        ("Unknown", "Unknown", False),  # not a change the kubelet saw happen
        (None, "False", False),  # declared not Ready from the start (a manifest)
        ("False", "False", False),
        ("True", "True", False),
    ],
)
def test_a_sync_is_planned_only_when_ready_is_taken_away(
    old: str | None, new: str, planned: bool
) -> None:
    sync = NodeStatusSync("n1", origin=0.0)
    assert sync.observe(_node(old), _node(new), now=3.0) is planned
    assert (sync.due is not None) is planned


def test_the_sync_falls_on_the_next_tick_and_is_cancelled_by_ready_coming_back() -> None:
    sync = NodeStatusSync("n1", origin=100.0)
    phase = tick_phase("n1")
    assert 0 <= phase < NODE_STATUS_UPDATE_FREQUENCY
    now = 100.0 + phase + 25.0  # 2.5 periods into the grid
    assert sync.observe(_node("True"), _node("Unknown"), now)
    assert sync.due == pytest.approx(100.0 + phase + 30.0)
    assert not sync.take_due(now + 4.9)
    sync.observe(_node("Unknown"), _node("True"), now + 1)
    assert sync.due is None
    assert not sync.take_due(now + 10)


def test_kubelets_alive_through_a_stalled_control_plane_report_ready_again(
    clock: ManualClock,
) -> None:
    """The serve loop stalls past the grace period: the controller finds every lease
    stale and marks the nodes Unknown; each kubelet posts Ready at its next status tick
    (within 10 s), with the ``NodeReady`` event, and the controller's taints come off."""
    world = World(clock, serve=True)
    world.node("n1")
    world.node("n2")
    world.driver.advance(30)
    clock.advance(60)  # nothing runs: the loop is stalled (50 s grace, 10 s renewals)
    world.driver.settle()
    world.driver.advance(1)
    assert [world.ready(n) for n in ("n1", "n2")] == ["Unknown", "Unknown"]
    stalled_at = clock.now()
    world.driver.advance(NODE_STATUS_UPDATE_FREQUENCY + 1)
    assert [world.ready(n) for n in ("n1", "n2")] == ["True", "True"]
    for name in ("n1", "n2"):
        condition = ready_condition(world.api.get(Node, name))
        assert condition is not None
        back = parse_rfc3339(condition.last_transition_time or "")
        assert stalled_at - 1 <= back <= stalled_at + NODE_STATUS_UPDATE_FREQUENCY
    assert world.events("NodeReady") == [
        "Node n1 status is now: NodeReady",
        "Node n2 status is now: NodeReady",
    ]
    world.driver.advance(5)
    assert [world.taints(n) for n in ("n1", "n2")] == [[], []]


def test_a_failed_kubelet_does_not_report_ready(clock: ManualClock) -> None:
    """``kubeprio.io/fail-at``: the kubelet is down, so its node stays Unknown and
    tainted (only a live kubelet's status loop runs)."""
    world = World(clock, serve=True)
    world.node("n1", fail_at="0s")
    world.node("n2")
    world.driver.advance(120)
    assert (world.ready("n1"), world.ready("n2")) == ("Unknown", "True")
    assert (UNREACHABLE, "NoExecute") in world.taints("n1")
    assert world.events("NodeReady") == []


def test_a_failed_node_is_still_tainted_after_a_stall_disrupted_its_whole_zone(
    clock: ManualClock,
) -> None:
    """The e2e failure's sequence: a stall marks every node of the zone Unknown
    (``handleDisruption``: fully disrupted, taints off, tainting stopped). The live
    kubelets report Ready again, the zone leaves full disruption (every probe timestamp
    restarts), and the node whose kubelet really failed is Unknown again after the grace
    period and gets its ``NoExecute`` taint."""
    world = World(clock, serve=True)
    for name in ("n1", "n2", "n3"):
        world.node(name, fail_at="40s" if name == "n2" else None)
    world.driver.advance(30)
    clock.advance(60)
    world.driver.settle()
    world.driver.advance(1)
    assert [world.ready(n) for n in ("n1", "n2", "n3")] == ["Unknown"] * 3
    assert world.taint_time("n2") is None  # fully disrupted: no NoExecute taints
    world.driver.advance(NODE_STATUS_UPDATE_FREQUENCY + 1)
    assert [world.ready(n) for n in ("n1", "n2", "n3")] == ["True", "Unknown", "True"]
    world.driver.advance(50 + 10)  # the restarted grace period, then the tainting queue
    assert world.taint_time("n2") is not None
