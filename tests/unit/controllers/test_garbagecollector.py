"""The garbage collector removes dependents of deleted owners (ownerReferences by UID).

Upstream: ``pkg/controller/garbagecollector/garbagecollector.go`` ``attemptToDeleteItem``
(all owners dangling: delete; some: drop those references), foreground deletion
(``foregroundDeletion`` finalizer) and orphaning (``orphan`` finalizer).
"""

from __future__ import annotations

import dataclasses

from kubeprio.api.apps import Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec
from kubeprio.api.core import Pod, PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta, OwnerReference
from kubeprio.controllers.garbagecollector import GarbageCollector
from tests.builders import pod, pod_template
from tests.unit.controllers.conftest import World

LABELS = {"app": "web"}


def collector(world: World, **options: object) -> GarbageCollector:
    gc = GarbageCollector(
        world.api,
        clock=world.clock,
        rng=world.rng,
        owners=[world.deployments, world.replicasets, world.jobs],
        dependents=[world.replicasets, world.pods],
        **options,  # type: ignore[arg-type]
    )
    world.add(gc)
    return gc


def owned_by(owner: object, name: str = "p", **refs: object) -> Pod:
    meta = owner.metadata  # type: ignore[attr-defined]
    built = pod(name).build()
    ref = OwnerReference(
        api_version=owner.api_version, kind=owner.kind, name=meta.name, uid=meta.uid, **refs
    )  # type: ignore[attr-defined]
    return dataclasses.replace(
        built, metadata=dataclasses.replace(built.metadata, owner_references=(ref,))
    )


def rs(name: str = "web", finalizers: tuple[str, ...] | None = None) -> ReplicaSet:
    return ReplicaSet(
        metadata=ObjectMeta(name=name, namespace="default", finalizers=finalizers),
        spec=ReplicaSetSpec(
            replicas=0, selector=LabelSelector(match_labels=LABELS), template=pod_template(LABELS)
        ),
    )


def test_deleting_a_deployment_deletes_its_replica_sets_and_pods(world: World) -> None:
    collector(world)
    world.add(
        world.deployment_controller(),
        world.replicaset_controller(),
    )
    world.api.create(
        Deployment(
            metadata=ObjectMeta(name="web", namespace="default"),
            spec=DeploymentSpec(
                replicas=2,
                selector=LabelSelector(match_labels=LABELS),
                template=PodTemplateSpec(
                    metadata=ObjectMeta(labels=LABELS), spec=pod("t").build().spec
                ),
            ),
        )
    )
    world.settle()
    assert len(world.pod_list()) == 2
    world.api.delete(Deployment, "web", "default")
    world.settle()
    assert world.api.list(ReplicaSet, "default").items == []
    assert world.pod_list() == []


def test_only_dangling_references_are_dropped(world: World) -> None:
    collector(world)
    first = world.api.create(rs("first"))
    second = world.api.create(rs("second"))
    child = owned_by(first, "child")
    extra = OwnerReference(
        api_version="apps/v1", kind="ReplicaSet", name="second", uid=second.metadata.uid
    )
    world.api.create(
        dataclasses.replace(
            child,
            metadata=dataclasses.replace(
                child.metadata, owner_references=(*child.metadata.owner_references, extra)
            ),
        )
    )  # type: ignore[misc]
    world.settle()
    world.api.delete(ReplicaSet, "first", "default")
    world.settle()
    remaining = world.api.get(Pod, "child", "default")
    assert [ref.name for ref in remaining.metadata.owner_references or ()] == ["second"]


def test_owners_absent_from_the_start_are_left_alone_by_default(world: World) -> None:
    """A partial snapshot: pods of a ReplicaSet that was never loaded stay."""
    collector(world)
    ghost = dataclasses.replace(
        rs("ghost"), metadata=ObjectMeta(name="ghost", namespace="default", uid="0000")
    )
    world.api.create(owned_by(ghost, "kept"))
    world.settle()
    assert [p.metadata.name for p in world.pod_list()] == ["kept"]


def test_upstream_rule_collects_pods_of_absent_owners(world: World) -> None:
    collector(world, collect_absent_owners=True)
    ghost = dataclasses.replace(
        rs("ghost"), metadata=ObjectMeta(name="ghost", namespace="default", uid="0000")
    )
    world.api.create(owned_by(ghost, "collected"))
    world.settle()
    assert world.pod_list() == []


def test_orphan_finalizer_keeps_dependents(world: World) -> None:
    collector(world)
    owner = world.api.create(rs("web", finalizers=("orphan",)))
    world.api.create(owned_by(owner, "child"))
    world.settle()
    world.api.delete(ReplicaSet, "web", "default")  # finalizers: marked for deletion
    world.settle()
    assert world.api.list(ReplicaSet, "default").items == []
    assert not world.api.get(Pod, "child", "default").metadata.owner_references


def test_foreground_deletion_deletes_dependents_first(world: World) -> None:
    collector(world)
    owner = world.api.create(rs("web", finalizers=("foregroundDeletion",)))
    world.api.create(owned_by(owner, "child", block_owner_deletion=True))
    world.settle()
    world.api.delete(ReplicaSet, "web", "default")
    world.settle()
    assert world.pod_list() == []
    assert world.api.list(ReplicaSet, "default").items == []
