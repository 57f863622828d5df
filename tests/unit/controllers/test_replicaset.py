"""The ReplicaSet controller keeps ``replicas`` active pods, as ``pkg/controller/replicaset``.

Ranking cases mirror ``controller_utils_test.go`` ``TestSortingActivePodsWithRanks``.
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.apps import ReplicaSet, ReplicaSetSpec
from kubeprio.api.core import ContainerStatus, Pod, PodCondition, PodStatus, PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.controllers.activepods import pods_to_delete
from kubeprio.controllers.replicaset import ReplicaSetController
from tests.builders import pod
from tests.unit.controllers.conftest import World

LABELS = {"app": "web"}
NOW = 1_767_225_600.0 + 3600


def rs_object(name: str = "web", replicas: int = 3, **spec: object) -> ReplicaSet:
    return ReplicaSet(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=ReplicaSetSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=LABELS),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels={**LABELS, "tier": "front"}, annotations={"a": "b"}),
                spec=pod("t").build().spec,
            ),
            **spec,  # type: ignore[arg-type]
        ),
    )


def controller(world: World) -> ReplicaSetController:
    rsc = world.replicaset_controller()
    world.add(rsc)
    return rsc


def active(world: World) -> list[Pod]:
    return [p for p in world.pod_list() if p.metadata.deletion_timestamp is None]


def rs_status(world: World, name: str = "web") -> tuple[int, int, int, int, int]:
    status = world.api.get(ReplicaSet, name, "default").status
    assert status is not None
    return (
        status.replicas or 0,
        status.fully_labeled_replicas or 0,
        status.ready_replicas or 0,
        status.available_replicas or 0,
        status.observed_generation or 0,
    )


def test_creates_pods_from_the_template_with_owner_references(world: World) -> None:
    controller(world)
    rs = world.api.create(rs_object(replicas=3))
    world.settle()
    pods = world.pod_list()
    assert len(pods) == 3
    for created in pods:
        assert created.metadata.name.startswith("web-")  # type: ignore[union-attr]
        assert created.metadata.labels == {"app": "web", "tier": "front"}
        assert created.metadata.annotations == {"a": "b"}
        (ref,) = created.metadata.owner_references or ()
        assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
            "ReplicaSet",
            "web",
            rs.metadata.uid,
            True,
            True,
        )
    created_events = sorted(e.message or "" for e in world.events("SuccessfulCreate"))
    assert created_events == sorted(f"Created pod: {p.metadata.name}" for p in pods)
    assert rs_status(world) == (3, 3, 0, 0, 1)


def test_status_counts_ready_and_available_pods(world: World) -> None:
    controller(world)
    world.api.create(rs_object(replicas=2))
    world.settle()
    world.run_all()
    assert rs_status(world) == (2, 2, 2, 2, 1)


def test_min_ready_seconds_delays_availability(world: World) -> None:
    controller(world)
    world.api.create(rs_object(replicas=1, min_ready_seconds=10))
    world.settle()
    world.run_all()
    assert rs_status(world)[2:4] == (1, 0)
    world.advance(11)
    assert rs_status(world)[2:4] == (1, 1)


def test_a_deleted_pod_is_replaced(world: World) -> None:
    controller(world)
    world.api.create(rs_object(replicas=2))
    world.settle()
    world.run_all()
    victim = world.pod_list()[0]
    world.api.delete(Pod, victim.metadata.name or "", "default")  # graceful: it terminates
    world.settle()
    assert world.api.get(Pod, victim.metadata.name or "", "default").metadata.deletion_timestamp
    names = [p.metadata.name for p in active(world)]
    assert len(names) == 2
    assert victim.metadata.name not in names


def test_a_failed_pod_is_replaced(world: World) -> None:
    controller(world)
    world.api.create(rs_object(replicas=1))
    world.settle()
    world.run_all()
    (first,) = world.pod_list()
    world.set_phase(first.metadata.name or "", "Failed")
    world.settle()
    assert len([p for p in world.pod_list() if p.status and p.status.phase == "Pending"]) == 1


def test_expectations_prevent_double_creation_while_the_cache_lags(world: World) -> None:
    rsc = controller(world)
    world.api.create(rs_object(replicas=3))
    world.settle()
    assert len(world.pod_list()) == 3
    # Reconcile again before the pod informer has seen anything new: nothing happens.
    rsc.reconcile("default/web")
    rsc.reconcile("default/web")
    assert len(world.pod_list()) == 3


def test_scale_down_deletes_pending_before_running(world: World) -> None:
    controller(world)
    world.api.create(rs_object(replicas=3))
    world.settle()
    pods = world.pod_list()
    for running in pods[:2]:
        world.bind(running)
        world.set_phase(running.metadata.name or "", "Running")
    world.settle()
    current = world.api.get(ReplicaSet, "web", "default")
    world.api.update(
        dataclasses.replace(current, spec=dataclasses.replace(current.spec, replicas=2))  # type: ignore[arg-type]
    )
    world.settle()
    (deleted,) = [e.message for e in world.events("SuccessfulDelete")]
    assert deleted == f"Deleted pod: {pods[2].metadata.name}"
    assert rs_status(world)[4] == 2


def test_orphans_matching_the_selector_are_adopted(world: World) -> None:
    controller(world)
    orphan = world.api.create(pod("orphan").labels(**LABELS).build())
    rs = world.api.create(rs_object(replicas=1))
    world.settle()
    assert len(world.pod_list()) == 1
    adopted = world.api.get(Pod, "orphan", "default")
    (ref,) = adopted.metadata.owner_references or ()
    assert ref.uid == rs.metadata.uid
    assert orphan.metadata.uid == adopted.metadata.uid


def test_a_pod_that_stops_matching_is_released_and_replaced(world: World) -> None:
    controller(world)
    world.api.create(rs_object(replicas=1))
    world.settle()
    (first,) = world.pod_list()
    world.api.update(
        dataclasses.replace(
            first, metadata=dataclasses.replace(first.metadata, labels={"app": "other"})
        )
    )
    world.settle()
    released = world.api.get(Pod, first.metadata.name or "", "default")
    assert not released.metadata.owner_references
    assert len(world.pod_list()) == 2


# --- ranking (ActivePodsWithRanks) ---------------------------------------------------------


def ranked_pod(
    name: str,
    *,
    node: str = "n1",
    phase: str = "Running",
    ready_since: str | None = "2026-01-01T00:30:00Z",
    created: str = "2026-01-01T00:00:00Z",
    restarts: int = 0,
    cost: int | None = None,
) -> Pod:
    builder = pod(name)
    if node:
        builder = builder.on(node)
    if cost is not None:
        builder = builder.annotate("controller.kubernetes.io/pod-deletion-cost", str(cost))
    base = builder.build()
    conditions = ()
    if ready_since is not None:
        conditions = (PodCondition(type="Ready", status="True", last_transition_time=ready_since),)
    return dataclasses.replace(
        base,
        metadata=dataclasses.replace(base.metadata, creation_timestamp=created, uid=f"uid-{name}"),
        status=PodStatus(
            phase=phase,
            conditions=conditions,
            container_statuses=(ContainerStatus(name="c", restart_count=restarts),),
        ),
    )


RANKING = [
    ("unassigned-first", [ranked_pod("b"), ranked_pod("a", node="")], "a"),
    ("pending-before-running", [ranked_pod("b"), ranked_pod("a", phase="Pending")], "a"),
    ("unknown-before-running", [ranked_pod("b"), ranked_pod("a", phase="Unknown")], "a"),
    ("not-ready-first", [ranked_pod("b"), ranked_pod("a", ready_since=None)], "a"),
    ("lower-deletion-cost-first", [ranked_pod("b", cost=10), ranked_pod("a", cost=-5)], "a"),
    (
        "doubled-up-first",
        [ranked_pod("b", node="n1"), ranked_pod("a", node="n2"), ranked_pod("z", node="n2")],
        "a",
    ),
    (
        "ready-for-less-time-first",
        [
            ranked_pod("b", ready_since="2026-01-01T00:00:10Z"),
            ranked_pod("a", ready_since="2026-01-01T00:59:59Z"),
        ],
        "a",
    ),
    ("more-restarts-first", [ranked_pod("b", restarts=1), ranked_pod("a", restarts=3)], "a"),
    (
        "newer-first",
        [
            ranked_pod("b", created="2026-01-01T00:00:00Z"),
            ranked_pod("a", created="2026-01-01T00:59:00Z"),
        ],
        "a",
    ),
]


@pytest.mark.parametrize(
    ("pods", "first"), [(p, f) for _, p, f in RANKING], ids=[n for n, _, _ in RANKING]
)
def test_scale_down_ranking_TestSortingActivePodsWithRanks(pods: list[Pod], first: str) -> None:
    (chosen,) = pods_to_delete(pods, pods, 1, NOW)
    assert chosen.metadata.name == first


def test_log_scale_ties_break_by_uid() -> None:
    """With ``LogarithmicScaleDown``, times within one power of two tie; the UID decides."""
    pods = [
        ranked_pod("b", created="2026-01-01T00:00:00Z"),
        ranked_pod("a", created="2026-01-01T00:00:01Z"),
    ]
    (chosen,) = pods_to_delete(pods, pods, 1, NOW)
    assert chosen.metadata.uid == "uid-a"
