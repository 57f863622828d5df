"""The Deployment controller rolls ReplicaSets out as ``pkg/controller/deployment`` does.

Checks the new ReplicaSet's name, labels and annotations (``getNewReplicaSet``), the
``ScalingReplicaSet`` events, rolling-update bounds (``NewRSNewReplicas``,
``reconcileOldReplicaSets``), Recreate ordering, proportional scaling
(``deployment_util_test.go`` ``TestGetReplicaSetFraction``) and the status fields
``kubectl rollout status`` reads.
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.apps import Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec
from kubeprio.api.core import Container, PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.serialization import to_dict
from kubeprio.client.protocol import DeleteRequest
from kubeprio.controllers import deploymentutil as du
from tests.builders import pod
from tests.unit.controllers.conftest import World

LABELS = {"app": "web"}


def deployment(
    replicas: int = 3, image: str = "nginx:1", strategy: dict | None = None
) -> Deployment:
    spec = pod("t").build().spec
    assert spec is not None
    spec = dataclasses.replace(spec, containers=(Container(name="c", image=image),))
    return Deployment(
        metadata=ObjectMeta(name="web", namespace="default"),
        spec=DeploymentSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=LABELS),
            template=PodTemplateSpec(metadata=ObjectMeta(labels=LABELS), spec=spec),
            extra={"strategy": strategy} if strategy else {},
        ),
    )


def controllers(world: World) -> None:
    world.add(
        world.deployment_controller(),
        world.replicaset_controller(),
    )


def sets(world: World) -> dict[str, int]:
    return {
        rs.metadata.name or "": rs.spec.replicas or 0  # type: ignore[union-attr]
        for rs in world.api.list(ReplicaSet, "default").items
    }


def settle_running(world: World, rounds: int = 20) -> None:
    """Let the kubelet stand-in start every pod until nothing changes."""
    for _ in range(rounds):
        world.settle()
        before = [(p.metadata.name, p.status.phase if p.status else None) for p in world.pod_list()]
        world.run_all()
        after = [(p.metadata.name, p.status.phase if p.status else None) for p in world.pod_list()]
        if before == after:
            return


def test_new_replica_set_and_status(world: World) -> None:
    controllers(world)
    created = world.api.create(deployment(3))
    settle_running(world)
    (rs,) = world.api.list(ReplicaSet, "default").items
    template_hash = (rs.metadata.labels or {})[du.POD_TEMPLATE_HASH_LABEL]
    assert rs.metadata.name == f"web-{template_hash}"
    assert set(template_hash) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": template_hash}  # type: ignore[union-attr]
    assert rs.metadata.annotations == {
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4",
    }
    (ref,) = rs.metadata.owner_references or ()
    assert (ref.kind, ref.uid, ref.controller) == ("Deployment", created.metadata.uid, True)
    current = world.api.get(Deployment, "web", "default")
    assert current.metadata.annotation("deployment.kubernetes.io/revision") == "1"
    status = current.status
    assert status is not None
    assert (
        status.observed_generation,
        status.replicas,
        status.updated_replicas,
        status.ready_replicas,
        status.available_replicas,
        status.unavailable_replicas,
    ) == (1, 3, 3, 3, 3, 0)
    conditions = {c.type: (c.status, c.reason, c.message) for c in status.conditions or ()}
    assert conditions == {
        "Available": ("True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
        "Progressing": (
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{rs.metadata.name}" has successfully progressed.',
        ),
    }
    (event,) = world.events("ScalingReplicaSet")
    assert event.message == f"Scaled up replica set {rs.metadata.name} to 3"


def test_scaling_event_scales_the_replica_set(world: World) -> None:
    controllers(world)
    world.api.create(deployment(3))
    settle_running(world)
    current = world.api.get(Deployment, "web", "default")
    world.api.update(
        dataclasses.replace(current, spec=dataclasses.replace(current.spec, replicas=5))
    )  # type: ignore[arg-type]
    settle_running(world)
    (name,) = sets(world)
    assert sets(world) == {name: 5}
    messages = [e.message for e in world.events("ScalingReplicaSet")]
    assert f"Scaled up replica set {name} to 5 from 3" in messages
    assert world.api.get(Deployment, "web", "default").status.available_replicas == 5  # type: ignore[union-attr]


def test_rolling_update_respects_surge_and_finishes(world: World) -> None:
    controllers(world)
    world.api.create(deployment(4))
    settle_running(world)
    (old_name,) = sets(world)
    current = world.api.get(Deployment, "web", "default")
    template = current.spec.template  # type: ignore[union-attr]
    new_template = dataclasses.replace(
        template,
        spec=dataclasses.replace(template.spec, containers=(Container(name="c", image="nginx:2"),)),  # type: ignore[union-attr, arg-type]
    )
    world.api.update(
        dataclasses.replace(current, spec=dataclasses.replace(current.spec, template=new_template))
    )  # type: ignore[arg-type]
    world.settle()
    # 25% of 4: one surge pod, and (rounded down) one unavailable pod allowed.
    counts = sets(world)
    new_name = next(n for n in counts if n != old_name)
    assert counts == {old_name: 3, new_name: 2}
    settle_running(world)
    assert sets(world) == {old_name: 0, new_name: 4}
    current = world.api.get(Deployment, "web", "default")
    assert current.metadata.annotation("deployment.kubernetes.io/revision") == "2"
    status = current.status
    assert status is not None
    assert (status.observed_generation, status.replicas, status.updated_replicas) == (2, 4, 4)
    progressing = next(c for c in status.conditions or () if c.type == "Progressing")
    assert progressing.reason == "NewReplicaSetAvailable"


def test_recreate_scales_old_down_before_creating_new(world: World) -> None:
    controllers(world)
    world.api.create(deployment(2, strategy={"type": "Recreate"}))
    settle_running(world)
    (old_name,) = sets(world)
    current = world.api.get(Deployment, "web", "default")
    template = current.spec.template  # type: ignore[union-attr]
    new_template = dataclasses.replace(
        template,
        spec=dataclasses.replace(template.spec, containers=(Container(name="c", image="nginx:2"),)),  # type: ignore[union-attr, arg-type]
    )
    world.api.update(
        dataclasses.replace(current, spec=dataclasses.replace(current.spec, template=new_template))
    )  # type: ignore[arg-type]
    world.settle()
    # The old pods are terminating (graceful deletes): no new ReplicaSet yet.
    assert sets(world) == {old_name: 0}
    for terminating in world.pod_list():
        world.api.delete(
            type(terminating),
            terminating.metadata.name or "",
            "default",
            options=DeleteRequest(grace_period_seconds=0),
        )
    settle_running(world)
    counts = sets(world)
    new_name = next(n for n in counts if n != old_name)
    assert counts == {old_name: 0, new_name: 2}


FRACTIONS = [
    # (rs replicas, deployment replicas, max-replicas annotation, expected change) - TestGetReplicaSetFraction
    (1, 10, 10, 0),
    (10, 20, 10, 10),
    (5, 0, 10, -5),
    (20, 5, 20, -15),
    (3, 10, 5, 3),
]


@pytest.mark.parametrize(
    ("size", "desired", "before", "change"), FRACTIONS, ids=[str(f) for f in FRACTIONS]
)
def test_replica_set_fraction(size: int, desired: int, before: int, change: int) -> None:
    d = deployment(
        desired,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
    )
    rs = ReplicaSet(
        metadata=ObjectMeta(name="x", annotations={du.MAX_REPLICAS_ANNOTATION: str(before)}),
        spec=ReplicaSetSpec(replicas=size),
    )
    assert du.replica_set_fraction(rs, d) == change


FENCEPOSTS = [
    ("25%", "25%", 4, (1, 1)),
    ("25%", "25%", 3, (1, 0)),
    (0, 0, 5, (0, 1)),
    ("50%", "10%", 10, (5, 1)),
]


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"), FENCEPOSTS, ids=[str(f) for f in FENCEPOSTS]
)
def test_resolve_fenceposts(
    surge: object, unavailable: object, desired: int, expected: tuple[int, int]
) -> None:
    assert du.resolve_fenceposts(surge, unavailable, desired) == expected  # type: ignore[arg-type]


PROPORTIONAL = [
    # (old deployment size, new size, new RS, old RS, expected new RS, expected old RS) - sync_test.go TestScale
    (5, 10, 2, 3, 4, 6),
    (5, 3, 2, 3, 1, 2),
    (10, 20, 5, 5, 10, 10),
]


@pytest.mark.parametrize(
    ("before", "after", "new_size", "old_size", "new_expected", "old_expected"),
    PROPORTIONAL,
    ids=["5-to-10", "5-to-3", "10-to-20"],
)
def test_proportional_scaling_TestScale(
    before: int, after: int, new_size: int, old_size: int, new_expected: int, old_expected: int
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}
    d = deployment(after, strategy=strategy)

    def rs(name: str, size: int, created: str) -> ReplicaSet:
        return ReplicaSet(
            metadata=ObjectMeta(
                name=name,
                creation_timestamp=created,
                annotations={du.MAX_REPLICAS_ANNOTATION: str(before)},
            ),
            spec=ReplicaSetSpec(replicas=size),
        )

    new = rs("foo-v2", new_size, "2026-01-01T01:00:00Z")
    old = rs("foo-v1", old_size, "2026-01-01T00:00:00Z")
    sizes, _ = du.proportional_sizes(d, [new, old])
    assert {rs.metadata.name: size for rs, size in sizes} == {
        "foo-v2": new_expected,
        "foo-v1": old_expected,
    }


def test_a_stale_cache_does_not_create_a_second_replica_set(world: World) -> None:
    """``getNewReplicaSet``: AlreadyExists for a set we own is the set, not a collision."""
    controller = world.deployment_controller()
    world.api.create(deployment(2))
    world.deployments.pump()
    world.replicasets.pump()
    controller.reconcile("default/web")  # creates the ReplicaSet
    world.deployments.pump()  # the ReplicaSet informer has not caught up
    assert world.replicasets.list() == []
    controller.reconcile("default/web")
    assert len(world.api.list(ReplicaSet, "default").items) == 1
    assert (world.api.get(Deployment, "web", "default").status.collision_count or 0) == 0  # type: ignore[union-attr]


def test_rolling_back_with_creation_timestamp_null_reuses_the_old_replica_set(
    world: World,
) -> None:
    """``kubectl rollout undo`` patches the old ReplicaSet's template back into the
    Deployment, Go-marshalled, so with ``creationTimestamp: null``. Upstream's
    ``EqualIgnoreHash`` compares Go structs, where null and absent are the same zero
    value: the old set is found again (``FindNewReplicaSet``), takes the next revision
    and records the one it had (``revision-history``); no third set appears."""
    controllers(world)
    world.api.create(deployment(2))
    settle_running(world)
    (first,) = sets(world)
    current = world.api.get(Deployment, "web", "default")
    old_template = current.spec.template  # type: ignore[union-attr]
    world.api.patch(
        Deployment,
        "web",
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}},
        namespace="default",
    )
    settle_running(world)
    assert len(sets(world)) == 2
    # The rollback, as kubectl sends it: the old template with creationTimestamp: null.
    template = to_dict(old_template)
    template["metadata"]["creationTimestamp"] = None
    world.api.patch(
        Deployment, "web", {"spec": {"template": template}}, namespace="default",
        patch_type="application/merge-patch+json",
    )  # fmt: skip
    settle_running(world)
    counts = sets(world)
    assert len(counts) == 2
    assert counts[first] == 2
    reused = world.api.get(ReplicaSet, first, "default")
    assert reused.metadata.annotation("deployment.kubernetes.io/revision") == "3"
    assert reused.metadata.annotation("deployment.kubernetes.io/revision-history") == "1"


@pytest.mark.parametrize(
    ("history", "old", "expected"),
    [
        (None, "1", "1"),
        ("", "4", "4"),
        ("1,3", "5", "1,3,5"),
        # Past 2,000 characters the oldest entries go (maxRevHistoryLengthInChars).
        (",".join(["9" * 99] * 20), "7", ",".join(["9" * 99] * 19 + ["7"])),
        ("1", "x" * 2001, None),
    ],
    ids=["first", "empty", "append", "trim oldest", "never fits"],
)
def test_revision_history_SetNewReplicaSetAnnotations(history, old, expected):
    assert du.revision_history(history, old) == expected
