"""The disruption controller computes PDB status as ``pkg/controller/disruption`` does.

Cases follow ``disruption_test.go`` (``TestNoSelector``, ``TestUnavailable``,
``TestIntegerMaxUnavailable``, ``TestReplicaSet``, ``TestBasicFinderFunctions``,
``TestUpdateDisruptedPods``) and the percentage rounding of
``intstr.GetScaledValueFromIntOrPercent(..., roundUp=true)``.
"""

from __future__ import annotations

import pytest

from kubeprio.api.apps import ReplicaSet, ReplicaSetSpec
from kubeprio.api.batch import Job, JobSpec
from kubeprio.api.core import Pod, PodCondition
from kubeprio.api.meta import DeleteOptions, LabelSelector, ObjectMeta, OwnerReference
from kubeprio.api.policy import (
    Eviction,
    IntOrString,
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
)
from kubeprio.controllers.disruption import DisruptionController, go_label_selector, scaled_value
from tests.builders import pod, pod_template
from tests.unit.controllers.conftest import World

LABELS = {"app": "web"}


def pdb(
    *, min_available: IntOrString | None = None, max_unavailable: IntOrString | None = None
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name="budget", namespace="default"),
        spec=PodDisruptionBudgetSpec(
            min_available=min_available,
            max_unavailable=max_unavailable,
            selector=LabelSelector(match_labels=LABELS),
        ),
    )


def controller(world: World) -> DisruptionController:
    dc = world.disruption_controller()
    world.add(dc)
    return dc


def replicaset(world: World, replicas: int) -> ReplicaSet:
    return world.api.create(
        ReplicaSet(
            metadata=ObjectMeta(name="web-rs", namespace="default"),
            spec=ReplicaSetSpec(
                replicas=replicas,
                selector=LabelSelector(match_labels=LABELS),
                template=pod_template(LABELS),
            ),
        )
    )


def owned_pod(world: World, name: str, owner: object | None, *, ready: bool = True) -> Pod:
    builder = pod(name).labels(**LABELS)
    created = world.api.create(builder.build())
    if owner is not None:
        meta = owner.metadata  # type: ignore[attr-defined]
        ref = OwnerReference(
            api_version=owner.api_version,  # type: ignore[attr-defined]
            kind=owner.kind,  # type: ignore[attr-defined]
            name=meta.name,
            uid=meta.uid,
            controller=True,
        )
        import dataclasses

        created = world.api.update(
            dataclasses.replace(
                created, metadata=dataclasses.replace(created.metadata, owner_references=(ref,))
            )
        )
    world.bind(created)
    return world.set_phase(name, "Running", ready=ready)


def status_of(world: World) -> tuple[int, int, int, int]:
    current = world.api.get(PodDisruptionBudget, "budget", "default")
    status = current.status
    assert status is not None
    return (
        status.expected_pods or 0,
        status.desired_healthy or 0,
        status.current_healthy or 0,
        status.disruptions_allowed or 0,
    )


MATH = [
    # (budget, replicas of the owning ReplicaSet (None: bare pods), pods ready, (expected, desired, healthy, allowed))
    (pdb(min_available=3), None, 4, (4, 3, 4, 1)),
    (pdb(min_available=3), 4, 4, (4, 3, 4, 1)),
    (pdb(min_available=5), 4, 4, (4, 5, 4, 0)),
    (pdb(max_unavailable="50%"), 2, 2, (2, 1, 2, 1)),
    (pdb(max_unavailable=1), 4, 4, (4, 3, 4, 1)),
    (pdb(min_available="50%"), 3, 3, (3, 2, 3, 1)),
    (pdb(max_unavailable="34%"), 3, 3, (3, 1, 3, 2)),
    (pdb(min_available="28%"), 4, 4, (4, 2, 4, 2)),
    (pdb(max_unavailable="50%"), 4, 2, (4, 2, 2, 0)),
    (pdb(min_available=1), 2, 0, (2, 1, 0, 0)),
]


@pytest.mark.parametrize(
    ("budget", "replicas", "ready", "expected"),
    MATH,
    ids=[
        "minAvailable-3-of-4-bare-pods",
        "minAvailable-3-of-4",
        "minAvailable-above-pods",
        "maxUnavailable-50pct-of-2",
        "maxUnavailable-1-of-4",
        "minAvailable-50pct-of-3-rounds-up",
        "maxUnavailable-34pct-of-3-rounds-up",
        "minAvailable-28pct-of-4-rounds-up",
        "half-unready",
        "none-ready",
    ],
)
def test_budget_status_math(
    world: World,
    budget: PodDisruptionBudget,
    replicas: int | None,
    ready: int,
    expected: tuple[int, int, int, int],
) -> None:
    controller(world)
    owner = replicaset(world, replicas) if replicas is not None else None
    count = replicas if replicas is not None else 4
    for i in range(count):
        owned_pod(world, f"web-{i}", owner, ready=i < ready)
    world.api.create(budget)
    world.settle()
    assert status_of(world) == expected


def test_conditions_and_observed_generation(world: World) -> None:
    controller(world)
    owner = replicaset(world, 2)
    for i in range(2):
        owned_pod(world, f"web-{i}", owner)
    world.api.create(pdb(min_available=1))
    world.settle()
    status = world.api.get(PodDisruptionBudget, "budget", "default").status
    assert status is not None
    assert status.observed_generation == 1
    (condition,) = status.conditions or ()
    assert (condition.type, condition.status, condition.reason) == (
        "DisruptionAllowed",
        "True",
        "SufficientPods",
    )
    world.set_phase("web-0", "Running", ready=False)
    world.settle()
    status = world.api.get(PodDisruptionBudget, "budget", "default").status
    assert status is not None
    (condition,) = status.conditions or ()
    assert (condition.status, condition.reason) == ("False", "InsufficientPods")
    assert status.disruptions_allowed == 0


def test_no_matching_pods_allows_nothing(world: World) -> None:
    controller(world)
    world.api.create(pdb(max_unavailable=1))
    world.settle()
    assert status_of(world) == (0, 0, 0, 0)
    assert [(e.type, e.message) for e in world.events("NoPods")] == [
        ("Normal", "No matching pods found")
    ]


def test_pods_being_deleted_are_not_healthy(world: World) -> None:
    controller(world)
    owner = replicaset(world, 3)
    for i in range(3):
        owned_pod(world, f"web-{i}", owner)
    world.api.create(pdb(min_available=2))
    world.settle()
    assert status_of(world) == (3, 2, 3, 1)
    world.api.delete(Pod, "web-0", "default")  # bound and running: graceful
    world.settle()
    assert status_of(world) == (3, 2, 2, 0)


def test_job_pods_with_a_percentage_fail_safe(world: World) -> None:
    """A Job has no scale subresource: ``getScaleController`` errors, ``failSafe`` runs."""
    controller(world)
    job = world.api.create(
        Job(
            metadata=ObjectMeta(name="batch", namespace="default"),
            spec=JobSpec(template=pod_template(LABELS, restart_policy="Never")),
        )
    )
    owned_pod(world, "batch-a", job)
    world.api.create(pdb(max_unavailable="10%"))
    world.settle()
    status = world.api.get(PodDisruptionBudget, "budget", "default").status
    assert status is not None
    assert status.disruptions_allowed == 0
    (condition,) = status.conditions or ()
    assert (condition.status, condition.reason, condition.message) == (
        "False",
        "SyncFailed",
        "jobs.batch does not implement the scale subresource",
    )
    (event,) = world.events("CalculateExpectedPodCountFailed")
    assert event.message == (
        "Failed to calculate the number of expected pods: jobs.batch does not implement the scale subresource"
    )


def test_unmanaged_pods_with_max_unavailable_count_as_no_expected_pods(world: World) -> None:
    controller(world)
    for i in range(2):
        owned_pod(world, f"web-{i}", None)
    world.api.create(pdb(max_unavailable=1))
    world.settle()
    assert status_of(world) == (0, 0, 2, 0)
    (event,) = world.events("UnmanagedPods")
    assert event.message is not None
    assert event.message.startswith(
        "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:"
        "map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}) "
        "were found to be unmanaged."
    )


def test_disrupted_pods_are_dropped_once_deleted_or_after_two_minutes(world: World) -> None:
    controller(world)
    owner = replicaset(world, 3)
    for i in range(3):
        owned_pod(world, f"web-{i}", owner)
    world.api.create(pdb(min_available=1))
    world.settle()
    # The eviction API records the pod in disruptedPods and deletes it.
    world.api.evict(
        Eviction(
            metadata=ObjectMeta(name="web-0", namespace="default"),
            delete_options=DeleteOptions(grace_period_seconds=30),
        )
    )
    world.settle()
    status = world.api.get(PodDisruptionBudget, "budget", "default").status
    assert status is not None
    assert status.disrupted_pods is None  # the pod is being deleted: upstream drops it
    # An eviction whose delete never happened: the entry stays for 2 minutes.
    current = world.api.get(PodDisruptionBudget, "budget", "default")
    import dataclasses

    world.api.update_status(
        dataclasses.replace(
            current,
            status=dataclasses.replace(
                current.status, disrupted_pods={"web-1": "2026-01-01T00:00:00Z"}
            ),
        )
    )
    world.settle()
    assert status_of(world) == (3, 1, 1, 0)
    world.advance(121)
    assert status_of(world) == (3, 1, 2, 1)
    (event,) = world.events("NotDeleted")
    assert event.message == "Pod was expected by PDB default/default to be deleted but it wasn't"


def test_stale_disruption_target_condition_is_reset(world: World) -> None:
    controller(world)
    owned_pod(world, "web-0", None)
    world.set_phase(
        "web-0",
        "Running",
        conditions=(
            PodCondition(
                type="DisruptionTarget",
                status="True",
                reason="PreemptionByScheduler",
                last_transition_time="2026-01-01T00:00:00Z",
            ),
        ),
    )
    world.settle()
    world.advance(119)
    conditions = world.api.get(Pod, "web-0", "default").status.conditions  # type: ignore[union-attr]
    assert [c.status for c in conditions or () if c.type == "DisruptionTarget"] == ["True"]
    world.advance(1)
    conditions = world.api.get(Pod, "web-0", "default").status.conditions  # type: ignore[union-attr]
    assert [c.status for c in conditions or () if c.type == "DisruptionTarget"] == ["False"]


ROUNDING = [
    (50, 3, True, 2),
    (50, 3, False, 1),
    (10, 4, True, 1),
    (0, 4, True, 0),
    (100, 7, True, 7),
]


@pytest.mark.parametrize(
    ("percent", "total", "up", "value"), ROUNDING, ids=[str(r) for r in ROUNDING]
)
def test_scaled_value_rounding(percent: int, total: int, up: bool, value: int) -> None:
    assert scaled_value(f"{percent}%", total, round_up=up) == value


def test_go_label_selector_string() -> None:
    from kubeprio.api.meta import LabelSelectorRequirement

    selector = LabelSelector(
        match_labels={"b": "2", "a": "1"},
        match_expressions=(LabelSelectorRequirement(key="k", operator="In", values=("x", "y")),),
    )
    assert go_label_selector(selector) == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},"
        "MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}"
    )
