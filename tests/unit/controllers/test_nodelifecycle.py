"""The node lifecycle controller with real kubelets, leases and the taint eviction
controller (upstream ``pkg/controller/nodelifecycle/node_lifecycle_controller.go`` and
``node_lifecycle_controller_test.go``: ``TestMonitorNodeHealthUpdateStatus``,
``TestApplyNoExecuteTaints``, ``TestSwapUnreachableNotReadyTaints``,
``TestMonitorNodeHealthMarkPodsNotReady``, ``TestComputeZoneState``,
``TestMonitorNodeHealthEvictPodsWithDisruption``; ``scheduler/rate_limited_queue_test.go``)."""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.core import Event, Node, Pod
from kubeprio.clock import parse_rfc3339
from kubeprio.controllers.nodelifecycle import (
    FULL,
    NORMAL,
    PARTIAL,
    NodeLifecycleConfig,
    ready_condition,
)
from kubeprio.controllers.ratelimitedqueue import RateLimitedTimedQueue
from kubeprio.kubelet.registration import register_node
from kubeprio.sim.controlplane import ControlPlane
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import ManualClock
from tests.driving import Driver

CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
UNREACHABLE = "node.kubernetes.io/unreachable"


class World:
    def __init__(self, clock: ManualClock, *, serve: bool = False) -> None:
        self.clock = clock
        self.plane = ControlPlane(MemoryStore(), clock=clock, seed=1, node_leases=serve)
        self.plane.attach_fleet()
        self.driver = Driver(clock, [self.plane.informers], self.plane.components)
        self.plane.start()
        self.api = self.plane.api

    def node(self, name: str, *, fail_at: str | None = None, zone: str | None = None) -> None:
        node = register_node(self.api, name, clock=self.clock, capacity=CAPACITY)
        annotations = {"kubeprio.io/fail-at": fail_at} if fail_at else None
        labels = dict(node.metadata.labels or {})
        if zone:
            labels["topology.kubernetes.io/zone"] = zone
        meta = dataclasses.replace(node.metadata, annotations=annotations, labels=labels)
        self.api.update(dataclasses.replace(node, metadata=meta))

    def annotate(self, name: str, fail_at: str | None) -> None:
        node = self.api.get(Node, name)
        annotations = {"kubeprio.io/fail-at": fail_at} if fail_at else None
        self.api.update(
            dataclasses.replace(
                node, metadata=dataclasses.replace(node.metadata, annotations=annotations)
            )
        )

    def pod(self, name: str, on: str) -> None:
        self.api.create(pod(name).on(on).build())

    def ready(self, name: str) -> str | None:
        condition = ready_condition(self.api.get(Node, name))
        return condition.status if condition else None

    def taints(self, name: str) -> list[tuple[str, str]]:
        node = self.api.get(Node, name)
        return sorted((t.key or "", t.effect or "") for t in (node.spec.taints or ()))

    def taint_time(self, name: str, key: str = UNREACHABLE) -> str | None:
        node = self.api.get(Node, name)
        return next(
            (
                t.time_added
                for t in node.spec.taints or ()
                if t.key == key and t.effect == "NoExecute"
            ),
            None,
        )

    @staticmethod
    def clock_seconds(text: str | None) -> float:
        assert text is not None
        return parse_rfc3339(text)

    def events(self, reason: str) -> list[str]:
        return sorted(e.message or "" for e in self.api.list(Event).items if e.reason == reason)

    def terminating(self) -> list[str]:
        return sorted(
            p.metadata.name or ""
            for p in self.api.list(Pod).items
            if p.metadata.deletion_timestamp is not None
        )


@pytest.fixture
def world(clock: ManualClock) -> World:
    return World(clock)


def test_a_lost_node_goes_unknown_is_tainted_and_its_pods_go_after_300s(
    world: World, clock: ManualClock
) -> None:
    """``TestMonitorNodeHealthUpdateStatus`` and ``TestApplyNoExecuteTaints``: past the
    50 s grace period Ready is Unknown ("Kubelet stopped posting node status."), the pods
    are marked not ready, the node gets ``unreachable`` (NoSchedule at once, NoExecute
    from the tainting queue); the taint eviction controller deletes the pods 300 s later
    (the DefaultTolerationSeconds toleration)."""
    start = clock.now()
    world.node("n1", fail_at="60s")
    world.node("n2")
    world.pod("p", "n1")
    world.driver.advance(100)
    assert world.ready("n1") == "True"
    world.driver.advance(40)  # last renewal <= 60 s; grace 50 s; the 5 s grid
    assert world.ready("n1") == "Unknown"
    assert world.ready("n2") == "True"
    condition = ready_condition(world.api.get(Node, "n1"))
    assert (condition.reason, condition.message) == (
        "NodeStatusUnknown",
        "Kubelet stopped posting node status.",
    )
    assert world.events("NodeNotReady") == [
        "Node is not ready",
        "Node n1 status is now: NodeNotReady",
    ]
    ready = next(
        c for c in world.api.get(Pod, "p", "default").status.conditions if c.type == "Ready"
    )
    assert ready.status == "False"
    assert world.taints("n1") == [(UNREACHABLE, "NoExecute"), (UNREACHABLE, "NoSchedule")]
    assert world.taint_time("n1") is not None
    tainted = parse_rfc3339(world.taint_time("n1") or "")
    assert 60 + 50 < tainted - start < 60 + 50 + 20
    world.driver.advance(tainted + 299 - clock.now())
    assert world.terminating() == []
    world.driver.advance(2)
    assert world.terminating() == ["p"]
    assert world.events("TaintManagerEviction") == ["Marking for deletion Pod default/p"]


def test_a_kubelet_that_comes_back_clears_the_taints_and_cancels_the_eviction(world: World) -> None:
    """Recovery: the kubelet posts Ready again, ``markNodeAsReachable`` removes the
    taints, and the taint eviction controller cancels the pending deletion."""
    world.node("n1", fail_at="0s")
    world.node("n2")
    world.pod("p", "n1")
    world.driver.advance(120)
    assert (UNREACHABLE, "NoExecute") in world.taints("n1")
    world.annotate("n1", None)
    world.driver.advance(20)
    assert world.ready("n1") == "True"
    assert world.taints("n1") == []
    assert world.events("NodeReady") == ["Node n1 status is now: NodeReady"]
    assert world.events("TaintManagerEviction") == ["Cancelling deletion of Pod default/p"]
    world.driver.advance(600)
    assert world.terminating() == []


def test_tainting_is_rate_limited_per_zone(world: World) -> None:
    """``--node-eviction-rate`` 0.1: in a normal zone, one node is tainted every 10 s."""
    for index in range(8):
        world.node(f"n{index}", fail_at="0s" if index < 2 else None)
    world.driver.advance(200)
    times = sorted(world.clock_seconds(world.taint_time(f"n{i}")) for i in range(2))
    assert times[1] - times[0] == pytest.approx(10, abs=1)


def test_a_fully_disrupted_cluster_taints_nothing(world: World) -> None:
    """``handleDisruption``: every zone without a Ready node -> no ``NoExecute`` taints."""
    world.node("n1", fail_at="0s")
    world.pod("p", "n1")
    world.driver.advance(600)
    assert world.ready("n1") == "Unknown"
    assert (UNREACHABLE, "NoExecute") not in world.taints("n1")
    assert world.terminating() == []


def test_a_healthy_simulation_has_no_timer(world: World) -> None:
    """Without ``kubeprio.io/fail-at`` nothing is watched: the controllers never wake."""
    for index in range(5):
        world.node(f"n{index}")
    world.driver.settle()
    assert world.plane.node_lifecycle.next_wakeup() is None
    assert world.plane.taint_eviction.next_wakeup() is None


@pytest.mark.parametrize(
    ("ready", "not_ready", "state"),
    [(3, 0, NORMAL), (0, 1, FULL), (0, 5, FULL), (1, 2, NORMAL), (2, 3, PARTIAL), (5, 3, NORMAL)],
    ids=["healthy", "one-down", "all-down", "two-not-enough", "over-55pct", "under-55pct"],
)
def test_compute_zone_state(world: World, ready: int, not_ready: int, state: str) -> None:
    """``TestComputeZoneState``: no Ready node -> full; more than two and >= 55 % not
    Ready -> partial; else normal."""
    assert world.plane.node_lifecycle.compute_zone_state(ready, not_ready) == state


def test_rate_limited_queue_adds_once_until_removed() -> None:
    """``TestAddNode``/``TestTryRemovingWhileTry``: a processed value stays in the set."""
    queue = RateLimitedTimedQueue(0.1, 0.0)
    done: list[tuple[float, str]] = []
    assert queue.add("a", 0.0)
    assert queue.add("b", 0.0)
    assert not queue.add("a", 0.0)
    queue.try_(lambda v: (done.append((0.0, v)) or True, 0.0), 0.0)
    assert done == [(0.0, "a")]
    assert queue.next_wakeup(0.0) == pytest.approx(10.0)
    queue.try_(lambda v: (done.append((10.0, v)) or True, 0.0), 10.0)
    assert done[-1] == (10.0, "b")
    assert not queue.add("a", 11.0)
    assert queue.remove("a")
    assert queue.add("a", 11.0)


def test_rate_limited_queue_with_rate_zero_never_processes() -> None:
    """``SwapLimiter(0)``: ``NewFakeNeverRateLimiter``."""
    queue = RateLimitedTimedQueue(0.1, 0.0)
    queue.swap_limiter(0.0, 0.0)
    queue.add("a", 0.0)
    assert queue.next_wakeup(0.0) is None
    assert queue.try_(lambda v: (True, 0.0), 5.0) == 0


def test_default_config_is_v1_32() -> None:
    """v1.32 raised ``--node-monitor-grace-period`` to 50 s (kubernetes PR 126287)."""
    config = NodeLifecycleConfig()
    assert (config.node_monitor_period, config.node_monitor_grace_period) == (5.0, 50.0)
    assert (config.node_eviction_rate, config.secondary_node_eviction_rate) == (0.1, 0.01)
    assert (config.large_cluster_size_threshold, config.unhealthy_zone_threshold) == (50, 0.55)
