"""Pod garbage collection (upstream ``pkg/controller/podgc/gc_controller.go`` and its
``gc_controller_test.go``: ``TestGCTerminated``, ``TestGCOrphaned``,
``TestGCUnscheduledTerminating``, ``TestGCTerminating``)."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeprio.api.core import Node, NodeCondition, NodeStatus, Pod, PodStatus
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.podgc import GC_CHECK_PERIOD, PodGCController
from tests.builders import node, pod
from tests.conftest import ManualClock
from tests.driving import Driver


class Cluster:
    def __init__(self, api: ApiService, clock: ManualClock, **options: object) -> None:
        self.api = api
        self.clock = clock
        self.pods = Informer(api, Pod)
        self.nodes = Informer(api, Node)
        self.gc = PodGCController(api, clock=clock, pods=self.pods, nodes=self.nodes, **options)  # type: ignore[arg-type]
        self.driver = Driver(clock, [self.nodes, self.pods], [self.gc])

    def node(self, name: str, *, ready: bool = True, out_of_service: bool = False) -> None:
        builder = node(name)
        if out_of_service:
            builder = builder.taint(
                "node.kubernetes.io/out-of-service", "nodeshutdown", "NoExecute"
            )
        built = builder.build()
        condition = NodeCondition(type="Ready", status="True" if ready else "False")
        self.api.create(dataclasses.replace(built, status=NodeStatus(conditions=(condition,))))

    def pod(
        self, name: str, *, on: str | None = None, phase: str = "Running", **extra: str
    ) -> None:
        builder = pod(name)
        if on:
            builder = builder.on(on)
        created = self.api.create(builder.build())
        status = dataclasses.replace(created.status or PodStatus(), phase=phase, **extra)
        self.api.update_status(dataclasses.replace(created, status=status))
        self.clock.advance(1)  # distinct creation timestamps: the oldest goes first

    def names(self) -> list[str]:
        return sorted(p.metadata.name or "" for p in self.api.list(Pod).items)

    def phase(self, name: str) -> str | None:
        found = self.api.get(Pod, name, "default")
        return found.status.phase if found.status else None


@pytest.fixture
def cluster(api: ApiService, clock: ManualClock) -> Cluster:
    return Cluster(api, clock, terminated_pod_threshold=2)


def test_terminated_pods_beyond_the_threshold_go_evicted_first_then_oldest(cluster):
    """``gcTerminated``: delete ``count - threshold`` terminated pods (phase not Pending,
    Running or Unknown), sorted ``byEvictionAndCreationTimestamp``."""
    cluster.node("n1")
    cluster.pod("old-done", on="n1", phase="Succeeded")
    cluster.pod("failed", on="n1", phase="Failed")
    cluster.pod("running", on="n1")
    cluster.pod("evicted", on="n1", phase="Failed", reason="Evicted")
    cluster.pod("new-done", on="n1", phase="Succeeded")
    cluster.driver.settle()
    # Checks fall on the 20 s grid from the controller's start.
    assert cluster.gc.next_wakeup() == cluster.gc._origin + GC_CHECK_PERIOD
    cluster.driver.advance(GC_CHECK_PERIOD)
    assert cluster.names() == ["failed", "new-done", "running"]
    assert cluster.gc.deleted == 2
    assert cluster.gc.next_wakeup() is None  # back at the threshold: no timer


def test_a_zero_threshold_keeps_every_terminated_pod(api, clock):
    cluster = Cluster(api, clock, terminated_pod_threshold=0)
    cluster.node("n1")
    for i in range(3):
        cluster.pod(f"done-{i}", on="n1", phase="Succeeded")
    cluster.driver.advance(3 * GC_CHECK_PERIOD)
    assert len(cluster.names()) == 3
    assert cluster.gc.next_wakeup() is None


def test_pods_of_a_deleted_node_are_failed_and_deleted_after_the_quarantine(cluster):
    """``gcOrphaned``: a node missing at a check is quarantined for 40 s, confirmed gone
    with a GET, then its pods get phase Failed and DisruptionTarget (DeletionByPodGC)
    and are deleted at once."""
    cluster.node("n1")
    cluster.node("n2")
    cluster.pod("orphan", on="n1")
    cluster.pod("safe", on="n2")
    cluster.driver.settle()
    assert cluster.gc.next_wakeup() is None
    cluster.api.delete(Node, "n1")
    cluster.driver.settle()
    watch = cluster.api.watch(Pod, "default", resource_version=cluster.pods.resource_version)
    cluster.driver.advance(GC_CHECK_PERIOD)  # first seen missing: quarantined
    assert cluster.names() == ["orphan", "safe"]
    cluster.driver.advance(GC_CHECK_PERIOD)  # 20 s into the quarantine
    assert cluster.names() == ["orphan", "safe"]
    cluster.driver.advance(GC_CHECK_PERIOD)  # 40 s: gone
    assert cluster.names() == ["safe"]
    updates = [e.object for e in watch.poll() if e.object.metadata.name == "orphan"]
    marked = updates[0]
    assert marked.status.phase == "Failed"
    (condition,) = [c for c in marked.status.conditions or () if c.type == "DisruptionTarget"]
    assert (condition.status, condition.reason, condition.message) == (
        "True",
        "DeletionByPodGC",
        "PodGC: node no longer exists",
    )


def test_a_node_that_comes_back_ends_the_quarantine(cluster):
    cluster.node("n1")
    cluster.pod("p", on="n1")
    cluster.driver.settle()
    cluster.api.delete(Node, "n1")
    cluster.driver.advance(GC_CHECK_PERIOD)
    cluster.node("n1")
    cluster.driver.advance(3 * GC_CHECK_PERIOD)
    assert cluster.names() == ["p"]


def test_pods_of_never_seen_nodes_are_orphans_unless_told_otherwise(api, clock):
    """Upstream deletes pods bound to any node that does not exist; a simulation of a
    dump that left the node out keeps them (``orphans_of_unseen_nodes=False``)."""
    keeping = Cluster(api, clock, orphans_of_unseen_nodes=False)
    keeping.pod("from-a-dump", on="not-in-the-dump")
    keeping.driver.advance(5 * GC_CHECK_PERIOD)
    assert keeping.names() == ["from-a-dump"]
    assert keeping.gc.next_wakeup() is None


def test_pods_of_never_seen_nodes_are_collected_by_default(cluster):
    cluster.pod("stray", on="no-such-node")
    cluster.driver.advance(3 * GC_CHECK_PERIOD)
    assert cluster.names() == []


def test_an_unscheduled_terminating_pod_is_deleted(cluster):
    """``gcUnscheduledTerminating``: a pod with a deletionTimestamp and no node (held by a
    finalizer here) is marked Failed and force-deleted."""
    created = cluster.api.create(pod("held").finalizers("example.com/hold").build())
    cluster.api.delete(Pod, "held", "default")
    assert cluster.api.get(Pod, "held", "default").metadata.deletion_timestamp
    cluster.driver.advance(GC_CHECK_PERIOD)
    assert created.metadata.finalizers == ("example.com/hold",)
    # The finalizer still holds the object; it is Failed and has a zero grace period.
    held = cluster.api.get(Pod, "held", "default")
    assert held.status.phase == "Failed"
    assert held.metadata.deletion_grace_period_seconds == 0


def test_terminating_pods_on_an_out_of_service_node_are_deleted(cluster):
    """``gcTerminating``: only on a node that is NotReady *and* tainted out-of-service."""
    cluster.node("down", ready=False, out_of_service=True)
    cluster.node("slow", ready=False)
    cluster.pod("on-down", on="down")
    cluster.pod("on-slow", on="slow")
    cluster.api.delete(Pod, "on-down", "default")
    cluster.api.delete(Pod, "on-slow", "default")
    cluster.driver.advance(GC_CHECK_PERIOD)
    assert cluster.names() == ["on-slow"]
    assert cluster.phase("on-slow") == "Running"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pods=st.lists(
        st.tuples(
            st.sampled_from(["Succeeded", "Failed", "Evicted", "Running"]), st.integers(0, 3)
        ),
        min_size=1,
        max_size=8,
    ),
    threshold=st.integers(1, 4),
)
def test_the_collected_pods_are_upstreams_first_in_sorted_order(pods, threshold):
    """Whatever the mix, the pods deleted at a check are the first ``count - threshold``
    terminated pods in ``byEvictionAndCreationTimestamp`` order (names break ties)."""
    from kubeprio.admission.chain import AdmissionChain
    from kubeprio.store.memory import MemoryStore

    clock = ManualClock()
    api = ApiService(MemoryStore(), clock=clock, rng=random.Random(1), admission=AdmissionChain())
    cluster = Cluster(api, clock, terminated_pod_threshold=threshold)
    cluster.node("n1")
    expected = []
    for i, (phase, gap) in enumerate(pods):
        clock.advance(gap)
        name = f"p{(i * 7) % 10}{i}"
        extra = {"reason": "Evicted"} if phase == "Evicted" else {}
        cluster.pod(name, on="n1", phase="Failed" if phase == "Evicted" else phase, **extra)
        clock.time -= 1  # Cluster.pod moved the clock; keep ties of creation time possible
        if phase != "Running":
            created = api.get(Pod, name, "default").metadata.creation_timestamp
            expected.append((phase != "Evicted", created, name))
    cluster.driver.advance(GC_CHECK_PERIOD)
    doomed = {name for _, _, name in sorted(expected)[: max(len(expected) - threshold, 0)]}
    remaining = set(cluster.names())
    assert remaining == {f"p{(i * 7) % 10}{i}" for i in range(len(pods))} - doomed


def test_updates_to_an_orphan_do_not_restart_its_nodes_quarantine(cluster):
    """Upstream's delaying queue keeps the first deadline of a missing node
    (``AddAfter`` never postpones a waiting item): pod updates change nothing."""
    cluster.node("n1")
    cluster.pod("orphan", on="n1")
    cluster.driver.settle()
    cluster.api.delete(Node, "n1")
    for label in ("a", "b"):
        cluster.driver.advance(GC_CHECK_PERIOD)
        current = cluster.api.get(Pod, "orphan", "default")
        cluster.api.update(
            dataclasses.replace(
                current, metadata=dataclasses.replace(current.metadata, labels={"x": label})
            )
        )
    cluster.driver.advance(GC_CHECK_PERIOD)
    assert cluster.names() == []


def test_a_terminated_pod_held_by_a_finalizer_keeps_its_place(cluster):
    """``gcTerminated`` counts and re-deletes a terminated pod that a finalizer holds (to
    no effect) instead of deleting one more pod in its place."""
    cluster.node("n1")
    held = cluster.api.create(pod("held").on("n1").finalizers("example.com/keep").build())
    cluster.api.update_status(
        dataclasses.replace(held, status=dataclasses.replace(held.status, phase="Succeeded"))
    )
    clock = cluster.clock
    clock.advance(1)
    for name in ("second", "third", "fourth"):
        cluster.pod(name, on="n1", phase="Succeeded")
    cluster.driver.advance(GC_CHECK_PERIOD)  # 4 terminated, threshold 2: held and second
    assert cluster.names() == ["fourth", "held", "third"]
    cluster.driver.advance(3 * GC_CHECK_PERIOD)  # 3 terminated: held again, nothing else
    assert cluster.names() == ["fourth", "held", "third"]
