"""Preemption seen by the workload controllers: the cascade users fear.

A preempted replica (DisruptionTarget condition, graceful delete) stops counting as
healthy for its PodDisruptionBudget at once, its ReplicaSet creates a replacement at
once (a terminating pod is not active), and the victim holds its node resources until
the kubelet sees it exit after its grace period.
"""

from __future__ import annotations

import dataclasses

from kubeprio.api.apps import Deployment, DeploymentSpec
from kubeprio.api.core import Pod, PodCondition, PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec
from tests.builders import pod
from tests.unit.controllers.conftest import World, add_kubelet

LABELS = {"app": "web"}


def test_preempted_replica_is_replaced_and_its_budget_tightens(world: World) -> None:
    world.add(
        world.deployment_controller(),
        world.replicaset_controller(),
        world.disruption_controller(),
    )
    kubelet = add_kubelet(world)
    world.api.create(
        Deployment(
            metadata=ObjectMeta(name="web", namespace="default"),
            spec=DeploymentSpec(
                replicas=3,
                selector=LabelSelector(match_labels=LABELS),
                template=PodTemplateSpec(
                    metadata=ObjectMeta(labels=LABELS), spec=pod("t").requests(cpu="1").build().spec
                ),
            ),
        )
    )
    world.api.create(
        PodDisruptionBudget(
            metadata=ObjectMeta(name="web", namespace="default"),
            spec=PodDisruptionBudgetSpec(
                min_available=2, selector=LabelSelector(match_labels=LABELS)
            ),
        )
    )
    world.settle()
    budget = world.api.get(PodDisruptionBudget, "web", "default").status
    assert budget is not None
    assert (budget.current_healthy, budget.disruptions_allowed) == (3, 1)

    victim = sorted(world.pod_list(), key=lambda p: p.metadata.name or "")[0]
    status = victim.status
    assert status is not None
    world.api.update_status(
        dataclasses.replace(
            victim,
            status=dataclasses.replace(
                status,
                conditions=(
                    *(status.conditions or ()),
                    PodCondition(
                        type="DisruptionTarget", status="True", reason="PreemptionByScheduler"
                    ),
                ),
            ),
        )
    )
    world.api.delete(Pod, victim.metadata.name or "", "default")
    world.settle()

    budget = world.api.get(PodDisruptionBudget, "web", "default").status
    assert budget is not None
    assert budget.current_healthy == 3  # the replacement already runs (a big node)
    names = {p.metadata.name for p in world.pod_list()}
    assert len(names) == 4  # three replicas and the terminating victim
    assert kubelet.allocated()["cpu"] == 4000  # the victim holds its cpu until it exits
    world.advance(30)
    assert victim.metadata.name not in {p.metadata.name for p in world.pod_list()}
    assert kubelet.allocated()["cpu"] == 3000
