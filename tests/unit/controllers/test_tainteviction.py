"""The taint eviction controller (upstream ``pkg/controller/tainteviction/taint_eviction.go``
and ``taint_eviction_test.go``: ``TestCreatePod``, ``TestDeletePod``, ``TestUpdatePod``,
``TestCreateNode``, ``TestDeleteNode``, ``TestUpdateNode``,
``TestUpdateNodeWithMultipleTaints``, ``TestGetMinTolerationTime``)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeprio.api.core import Event, Node, Pod, Taint, Toleration
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import DeleteRequest
from kubeprio.controllers.tainteviction import (
    TaintEvictionController,
    matching_tolerations,
    min_toleration_seconds,
)
from tests.builders import node, pod
from tests.conftest import ManualClock
from tests.driving import Driver

NO_EXECUTE = "NoExecute"


def tol(key: str | None = "k", seconds: int | None = None, **extra: str) -> Toleration:
    return Toleration(
        key=key,
        operator=extra.get("operator", "Exists" if key is None else "Equal"),
        value=extra.get("value", "v" if key else None),
        effect=extra.get("effect", NO_EXECUTE),
        toleration_seconds=seconds,
    )


class Cluster:
    def __init__(self, api: ApiService, clock: ManualClock) -> None:
        self.api = api
        self.clock = clock
        self.pods = Informer(api, Pod)
        self.nodes = Informer(api, Node)
        self.events = Informer(api, Event)
        self.controller = TaintEvictionController(
            api, clock=clock, pods=self.pods, nodes=self.nodes
        )
        self.driver = Driver(clock, [self.nodes, self.pods, self.events], [self.controller])

    def node(self, name: str, *taints: tuple[str, str, str]) -> None:
        builder = node(name)
        for key, value, effect in taints:
            builder = builder.taint(key, value, effect)
        self.api.create(builder.build())

    def taint(self, name: str, *taints: tuple[str, str, str]) -> None:
        current = self.api.get(Node, name)
        spec = dataclasses.replace(
            current.spec,
            taints=tuple(Taint(key=k, value=v, effect=e) for k, v, e in taints) or None,
        )
        self.api.update(dataclasses.replace(current, spec=spec))

    def pod(self, name: str, on: str, *tolerations: Toleration) -> None:
        built = pod(name).on(on).build()
        spec = dataclasses.replace(built.spec, tolerations=tolerations or None)
        self.api.create(dataclasses.replace(built, spec=spec))

    def terminating(self) -> list[str]:
        return sorted(
            p.metadata.name or ""
            for p in self.api.list(Pod).items
            if p.metadata.deletion_timestamp is not None
        )

    def messages(self) -> list[str]:
        return [
            f"{e.reason}: {e.message}"
            for e in sorted(self.events.list(), key=lambda e: e.first_timestamp or "")
        ]


@pytest.fixture
def cluster(api: ApiService, clock: ManualClock) -> Cluster:
    return Cluster(api, clock)


@pytest.mark.parametrize(
    ("taints", "tolerations", "deleted_after"),
    [
        ((), (), None),
        ((("k", "v", NO_EXECUTE),), (), 0.0),
        ((("k", "v", "NoSchedule"),), (), None),
        ((("k", "v", NO_EXECUTE),), (tol(),), None),
        ((("k", "v", NO_EXECUTE),), (tol(seconds=30),), 30.0),
        ((("k", "v", NO_EXECUTE),), (tol(seconds=0),), 0.0),
        ((("k", "v", NO_EXECUTE),), (tol(seconds=-5),), 0.0),
        ((("k", "v", NO_EXECUTE),), (tol(value="other"),), 0.0),
        ((("k", "v", NO_EXECUTE), ("k2", "v", NO_EXECUTE)), (tol(seconds=30),), 0.0),
        (
            (("k", "v", NO_EXECUTE), ("k2", "v", NO_EXECUTE)),
            (tol(seconds=100), tol("k2", seconds=30)),
            30.0,
        ),
        (
            (("k", "v", NO_EXECUTE), ("k2", "v", NO_EXECUTE)),
            (tol(seconds=100), tol("k2")),
            100.0,
        ),
        ((("k", "v", NO_EXECUTE),), (tol(None, seconds=20),), 20.0),
    ],
    ids=[
        "untainted-node",
        "untolerated-now",
        "noschedule-ignored",
        "tolerated-forever",
        "tolerated-30s",
        "zero-seconds-now",
        "negative-seconds-now",
        "wrong-value-now",
        "second-taint-untolerated",
        "min-of-two-tolerations",
        "forever-and-finite-takes-finite",
        "exists-wildcard-toleration",
    ],
)
def test_pod_on_tainted_node_is_deleted_after_the_smallest_toleration(
    cluster: Cluster,
    taints: tuple[tuple[str, str, str], ...],
    tolerations: tuple[Toleration, ...],
    deleted_after: float | None,
) -> None:
    """``TestCreatePod``/``TestUpdateNodeWithMultipleTaints``: untolerated -> now; all
    tolerated -> after the smallest ``tolerationSeconds`` of the used tolerations."""
    cluster.node("n1", *taints)
    cluster.pod("p", "n1", *tolerations)
    cluster.driver.settle()
    if deleted_after is None:
        cluster.driver.advance(3600)
        assert cluster.terminating() == []
        return
    if deleted_after > 0:
        cluster.driver.advance(deleted_after - 0.5)
        assert cluster.terminating() == []
    cluster.driver.advance(0.5)
    assert cluster.terminating() == ["p"]
    deleted = cluster.api.get(Pod, "p", "default")
    target = next(c for c in deleted.status.conditions if c.type == "DisruptionTarget")
    assert (target.status, target.reason, target.message) == (
        "True",
        "DeletionByTaintManager",
        "Taint manager: deleting due to NoExecute taint",
    )
    assert deleted.metadata.deletion_grace_period_seconds == 30  # the pod's own grace period
    assert "TaintManagerEviction: Marking for deletion Pod default/p" in cluster.messages()


def test_taint_removed_cancels_the_scheduled_deletion(cluster: Cluster) -> None:
    """``TestUpdateNode`` "Removed taint": the deletion is cancelled, with an event."""
    cluster.node("n1", ("k", "v", NO_EXECUTE))
    cluster.pod("p", "n1", tol(seconds=60))
    cluster.driver.advance(30)
    cluster.taint("n1")
    cluster.driver.advance(600)
    assert cluster.terminating() == []
    assert cluster.messages() == ["TaintManagerEviction: Cancelling deletion of Pod default/p"]
    assert cluster.controller.next_wakeup() is None


def test_taint_added_later_counts_from_when_it_was_seen(cluster: Cluster) -> None:
    """``TestUpdateNode`` "Added taint": the toleration counts from the node update."""
    cluster.node("n1")
    cluster.pod("p", "n1", tol(seconds=10))
    cluster.driver.advance(100)
    cluster.taint("n1", ("k", "v", NO_EXECUTE))
    cluster.driver.advance(9)
    assert cluster.terminating() == []
    cluster.driver.advance(1)
    assert cluster.terminating() == ["p"]


def test_an_earlier_scheduled_eviction_stands(cluster: Cluster) -> None:
    """``processPodOnNode``: a deletion scheduled at an earlier instant is kept, even when
    a second taint with a longer toleration arrives."""
    cluster.node("n1", ("k", "v", NO_EXECUTE))
    cluster.pod("p", "n1", tol(seconds=20), tol("k2", seconds=100))
    cluster.driver.advance(5)
    cluster.taint("n1", ("k", "v", NO_EXECUTE), ("k2", "v", NO_EXECUTE))
    cluster.driver.advance(14.5)
    assert cluster.terminating() == []
    cluster.driver.advance(0.5)
    assert cluster.terminating() == ["p"]


def test_toleration_update_makes_the_pod_go(cluster: Cluster) -> None:
    """``TestUpdatePod``: a pod whose tolerations change is looked at again."""
    cluster.node("n1", ("k", "v", NO_EXECUTE))
    cluster.pod("p", "n1", tol())
    cluster.driver.advance(10)
    current = cluster.api.get(Pod, "p", "default")
    # An update may bound a forever-toleration (``ValidateTolerationsInPodUpdate``).
    spec = dataclasses.replace(current.spec, tolerations=(tol(seconds=5),))
    cluster.api.update(dataclasses.replace(current, spec=spec))
    cluster.driver.advance(4.5)
    assert cluster.terminating() == []
    cluster.driver.advance(5)
    assert cluster.terminating() == ["p"]


def test_deleted_pod_drops_its_work_silently(cluster: Cluster) -> None:
    """``TestDeletePod``: a pod removed from the API takes its scheduled deletion along."""
    cluster.node("n1", ("k", "v", NO_EXECUTE))
    cluster.pod("p", "n1", tol(seconds=60))
    cluster.driver.settle()
    cluster.api.delete(Pod, "p", "default", options=DeleteRequest(grace_period_seconds=0))
    cluster.driver.advance(120)
    assert cluster.controller.deleted == 0
    assert cluster.controller.next_wakeup() is None


def test_deleted_node_forgets_its_taints(cluster: Cluster) -> None:
    """``TestDeleteNode``: the node's taints are dropped."""
    cluster.node("n1", ("k", "v", NO_EXECUTE))
    cluster.driver.settle()
    assert "n1" in cluster.controller.tainted
    cluster.api.delete(Node, "n1")
    cluster.driver.settle()
    assert cluster.controller.tainted == {}


def test_untainted_cluster_costs_nothing(cluster: Cluster) -> None:
    """No ``NoExecute`` taint anywhere: no timers, no pending work."""
    cluster.node("n1", ("k", "v", "NoSchedule"))
    for index in range(20):
        cluster.pod(f"p{index}", "n1")
    cluster.driver.settle()
    assert cluster.controller.next_wakeup() is None
    assert cluster.controller.tainted == {}


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        ((), 0.0),
        ((tol(),), None),
        ((tol(seconds=10),), 10.0),
        ((tol(seconds=10), tol(seconds=5)), 5.0),
        ((tol(seconds=10), tol()), 10.0),
        ((tol(seconds=10), tol(seconds=-1)), 0.0),
    ],
    ids=["none", "forever", "one", "smallest", "forever-ignored", "negative-wins"],
)
def test_min_toleration_time(tolerations: tuple[Toleration, ...], expected: float | None) -> None:
    """``TestGetMinTolerationTime``."""
    assert min_toleration_seconds(tolerations) == expected


def test_matching_tolerations_takes_the_first_per_taint() -> None:
    """``GetMatchingTolerations``: for each taint, the first toleration that matches."""
    taint = Taint(key="k", value="v", effect=NO_EXECUTE)
    first, second = tol(seconds=100), tol(seconds=1)
    assert matching_tolerations([taint], [first, second]) == (True, [first])
    assert matching_tolerations([taint], []) == (False, [])
    assert matching_tolerations([], []) == (True, [])


_TAINT_KEYS = st.sampled_from(["a", "b", "node.kubernetes.io/unreachable"])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keys=st.lists(_TAINT_KEYS, min_size=1, max_size=3, unique=True),
    extra=st.lists(st.tuples(_TAINT_KEYS, st.one_of(st.none(), st.integers(-5, 50))), max_size=3),
    wait=st.floats(0, 500),
)
def test_pod_tolerating_every_taint_forever_is_never_evicted(
    api: ApiService,
    clock: ManualClock,
    keys: list[str],
    extra: list[tuple[str, int | None]],
    wait: float,
) -> None:
    """Property: a pod whose first matching toleration of every ``NoExecute`` taint of its
    node has no ``tolerationSeconds`` is never deleted by the controller."""
    cluster = Cluster(api, clock)
    name = f"n{len(api.list(Node).items)}"
    cluster.node(name, *((k, "v", NO_EXECUTE) for k in keys))
    forever = tuple(tol(k) for k in keys)
    later = tuple(tol(k, seconds=s) for k, s in extra)
    cluster.pod(f"p-{name}", name, *forever, *later)
    cluster.driver.advance(wait)
    assert cluster.controller.deleted == 0
