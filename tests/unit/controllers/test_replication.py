"""The ReplicationController manager is the ReplicaSet controller for RCs
(``pkg/controller/replication``): owner references name ``v1/ReplicationController``,
events come from ``replication-controller``, the map selector claims pods, and the
disruption controller finds an RC's scale (``getPodReplicationController``).
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.core import Pod, PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec
from kubeprio.api.replicationcontroller import ReplicationController, ReplicationControllerSpec
from kubeprio.client.informer import Informer
from kubeprio.controllers.disruption import DisruptionController
from kubeprio.controllers.replication import ReplicationManager
from tests.builders import pod
from tests.unit.controllers.conftest import World

LABELS = {"app": "web"}


def rc_object(replicas: int = 3, name: str = "web") -> ReplicationController:
    return ReplicationController(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=ReplicationControllerSpec(
            replicas=replicas,
            selector=LABELS,
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels={**LABELS, "tier": "front"}),
                spec=pod("t").build().spec,
            ),
        ),
    )


@pytest.fixture
def rcs(world: World) -> Informer[ReplicationController]:
    informer: Informer[ReplicationController] = Informer(world.api, ReplicationController)
    world.driver.watch(informer)
    return informer


@pytest.fixture
def manager(world: World, rcs: Informer[ReplicationController]) -> ReplicationManager:
    rcm = ReplicationManager(
        world.api, clock=world.clock, rng=world.rng, pods=world.pods, controllers=rcs
    )
    world.add(rcm)
    return rcm


def status(world: World) -> tuple[int, int, int, int, int]:
    current = world.api.get(ReplicationController, "web", "default").status
    assert current is not None
    return (
        current.replicas or 0,
        current.fully_labeled_replicas or 0,
        current.ready_replicas or 0,
        current.available_replicas or 0,
        current.observed_generation or 0,
    )


def test_pods_are_created_owned_by_the_rc(world: World, manager: ReplicationManager) -> None:
    rc = world.api.create(rc_object(replicas=3))
    world.settle()
    pods = world.pod_list()
    assert len(pods) == 3
    for created in pods:
        assert (created.metadata.name or "").startswith("web-")
        (ref,) = created.metadata.owner_references or ()
        assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == (
            "v1",
            "ReplicationController",
            "web",
            rc.metadata.uid,
            True,
        )
    events = world.events("SuccessfulCreate")
    assert len(events) == 3
    assert {e.source.component for e in events if e.source} == {"replication-controller"}
    assert {e.involved_object.kind for e in events if e.involved_object} == {
        "ReplicationController"
    }
    world.run_all()
    assert status(world) == (3, 3, 3, 3, 1)


def test_a_deleted_pod_is_replaced_and_scale_down_deletes(
    world: World, manager: ReplicationManager
) -> None:
    world.api.create(rc_object(replicas=2))
    world.settle()
    world.run_all()
    victim = world.pod_list()[0]
    world.api.delete(Pod, victim.metadata.name or "", "default")
    world.settle()
    active = [p for p in world.pod_list() if not p.metadata.deletion_timestamp]
    assert len(active) == 2
    assert victim.metadata.name not in [p.metadata.name for p in active]
    current = world.api.get(ReplicationController, "web", "default")
    world.api.update(
        dataclasses.replace(current, spec=dataclasses.replace(current.spec, replicas=1))  # type: ignore[arg-type]
    )
    world.settle()
    assert len(world.events("SuccessfulDelete")) == 1
    assert len([p for p in world.pod_list() if not p.metadata.deletion_timestamp]) == 1
    assert status(world)[4] == 2


def test_orphans_matching_the_map_selector_are_adopted(
    world: World, manager: ReplicationManager
) -> None:
    world.api.create(pod("orphan").labels(**LABELS).build())
    world.api.create(pod("stranger").labels(app="db").build())
    rc = world.api.create(rc_object(replicas=1))
    world.settle()
    assert len(world.pod_list()) == 2  # the orphan counts; nothing new is created
    (ref,) = world.api.get(Pod, "orphan", "default").metadata.owner_references or ()
    assert (ref.kind, ref.uid) == ("ReplicationController", rc.metadata.uid)
    assert world.api.get(Pod, "stranger", "default").metadata.owner_references is None


@pytest.mark.parametrize("with_finder", [True, False], ids=["rc finder", "no rc informer"])
def test_a_budget_over_rc_pods_uses_the_rc_scale(
    world: World,
    manager: ReplicationManager,
    rcs: Informer[ReplicationController],
    with_finder: bool,
) -> None:
    """``getPodReplicationController``: with maxUnavailable the expected count is the RC's
    ``spec.replicas``; without the finder the sync fails safe ("found no controllers")."""
    disruption = DisruptionController(
        world.api,
        clock=world.clock,
        rng=world.rng,
        pods=world.pods,
        pdbs=world.pdbs,
        replicasets=world.replicasets,
        deployments=world.deployments,
        replication_controllers=rcs if with_finder else None,
    )
    world.add(disruption)
    world.api.create(rc_object(replicas=4))
    world.settle()
    world.run_all()
    world.api.create(
        PodDisruptionBudget(
            metadata=ObjectMeta(name="budget", namespace="default"),
            spec=PodDisruptionBudgetSpec(
                max_unavailable="50%", selector=LabelSelector(match_labels=LABELS)
            ),
        )
    )
    world.settle()
    budget = world.api.get(PodDisruptionBudget, "budget", "default").status
    assert budget is not None
    (condition,) = budget.conditions or ()
    if with_finder:
        assert (budget.expected_pods, budget.desired_healthy) == (4, 2)
        assert (budget.disruptions_allowed, condition.reason) == (2, "SufficientPods")
    else:
        assert (budget.disruptions_allowed, condition.reason) == (0, "SyncFailed")
        assert (condition.message or "").startswith("found no controllers for pod")
