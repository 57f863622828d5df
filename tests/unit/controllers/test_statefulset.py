"""The StatefulSet controller against the in-process API, as ``pkg/controller/statefulset``.

Each test names the upstream rule (``stateful_set_control_test.go`` / ``stateful_set_test.go``
where one matches). The world's fake kubelet binds and starts pods when a test says so
(``run``); a pod being deleted leaves when the test finishes it (``World.finish_deleted``,
the kubelet's grace-0 delete after the grace period).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.core import Pod
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.statefulset import (
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetOrdinals,
    StatefulSetSpec,
    StatefulSetStatus,
    StatefulSetUpdateStrategy,
)
from kubeprio.client.informer import Informer
from kubeprio.controllers import statefulsetutil
from kubeprio.controllers.statefulset import StatefulSetController
from tests.builders import pod_template, with_image
from tests.unit.controllers.conftest import World

LABELS = {"app": "web"}


class Cluster:
    """The world's informers plus StatefulSets and revisions, and the controller."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.api = world.api
        self.statefulsets: Informer[StatefulSet] = Informer(world.api, StatefulSet)
        self.revisions: Informer[ControllerRevision] = Informer(world.api, ControllerRevision)
        self.claims: Informer[PersistentVolumeClaim] = Informer(world.api, PersistentVolumeClaim)
        world.driver.watch(self.statefulsets, self.revisions, self.claims)
        self.controller = StatefulSetController(
            world.api,
            clock=world.clock,
            rng=world.rng,
            statefulsets=self.statefulsets,
            revisions=self.revisions,
            pods=world.pods,
            claims=self.claims,
        )
        world.add(self.controller)

    def create(self, sts: StatefulSet) -> StatefulSet:
        created = self.api.create(sts)
        self.world.settle()
        return created

    def get(self, name: str = "web") -> StatefulSet:
        return self.api.get(StatefulSet, name, "default")

    def update(self, **spec: Any) -> StatefulSet:
        current = self.get()
        assert current.spec is not None
        updated = self.api.update(
            dataclasses.replace(current, spec=dataclasses.replace(current.spec, **spec))
        )
        self.world.settle()
        return updated

    def set_image(self, image: str) -> None:
        current = self.get()
        assert current.spec is not None
        self.update(template=with_image(current.spec.template, image))

    def names(self, *, live: bool = True) -> list[str]:
        """Pod names by ordinal (live: not being deleted)."""
        found = [p for p in self.world.pod_list() if not (live and p.metadata.deletion_timestamp)]
        return [p.metadata.name or "" for p in sorted(found, key=statefulsetutil.ordinal_of)]

    def pod(self, name: str) -> Pod:
        return self.api.get(Pod, name, "default")

    def image(self, name: str) -> str:
        spec = self.pod(name).spec
        assert spec is not None
        assert spec.containers
        return spec.containers[0].image or ""

    def run(self, *names: str) -> None:
        """Bind the named pending pods (all when none named) and make them Running and Ready."""
        for p in self.world.pod_list():
            name = p.metadata.name or ""
            if names and name not in names:
                continue
            if p.metadata.deletion_timestamp or (p.status and p.status.phase != "Pending"):
                continue
            if not (p.spec and p.spec.node_name):
                self.world.bind(p)
            self.world.set_phase(name, "Running")
        self.world.settle()

    def run_until_stable(self, limit: int = 20) -> None:
        for _ in range(limit):
            before = self.names(live=False)
            self.world.finish_deleted()
            self.run()
            if self.names(live=False) == before and all(
                p.status and p.status.phase == "Running" and not p.metadata.deletion_timestamp
                for p in self.world.pod_list()
            ):
                return

    def status(self) -> StatefulSetStatus:
        return self.get().status or StatefulSetStatus()


@pytest.fixture
def cluster(world: World) -> Cluster:
    return Cluster(world)


def stateful_set(
    name: str = "web", *, replicas: int = 3, image: str = "nginx:1", **spec: Any
) -> StatefulSet:
    return StatefulSet(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=StatefulSetSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=LABELS),
            service_name="nginx",
            template=with_image(pod_template(LABELS), image),
            **spec,
        ),
    )


def events(cluster: Cluster, reason: str) -> list[str]:
    return [e.message or "" for e in cluster.world.events(reason)]


# --- pod management --------------------------------------------------------------------------


def test_ordered_ready_creates_one_pod_at_a_time(cluster: Cluster) -> None:
    """OrderedReady (``processReplica`` monotonic): pod N+1 only once pod N is Running and
    Ready (``TestStatefulSetControlScaleUp``)."""
    cluster.create(stateful_set())
    assert cluster.names() == ["web-0"]
    cluster.world.set_phase("web-0", "Running", ready=False)
    cluster.world.settle()
    assert cluster.names() == ["web-0"]
    cluster.world.set_phase("web-0", "Running", ready=True)
    cluster.world.settle()
    assert cluster.names() == ["web-0", "web-1"]
    cluster.run_until_stable()
    assert cluster.names() == ["web-0", "web-1", "web-2"]
    assert events(cluster, "SuccessfulCreate") == [
        "create Pod web-0 in StatefulSet web successful",
        "create Pod web-1 in StatefulSet web successful",
        "create Pod web-2 in StatefulSet web successful",
    ]


def test_parallel_creates_every_pod_at_once(cluster: Cluster) -> None:
    """Parallel (``allowsBurst``): every replica in slow-start batches, without waiting."""
    cluster.create(stateful_set(pod_management_policy="Parallel", replicas=4))
    assert cluster.names() == ["web-0", "web-1", "web-2", "web-3"]


def test_pod_identity(cluster: Cluster) -> None:
    """``newStatefulSetPod``: name, generateName, hostname/subdomain, identity and revision
    labels, controller reference; a claim volume per template (the claims are
    ``test_claims_*``'s)."""
    sts = stateful_set(replicas=1)
    assert sts.spec is not None
    claims = [
        {
            "metadata": {"name": "www"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    ]
    sts = dataclasses.replace(
        sts, spec=dataclasses.replace(sts.spec, extra={"volumeClaimTemplates": claims})
    )
    created = cluster.create(sts)
    pod = cluster.pod("web-0")
    revision = cluster.status().update_revision
    assert pod.metadata.generate_name == "web-"
    assert pod.metadata.labels == {
        "app": "web",
        "statefulset.kubernetes.io/pod-name": "web-0",
        "apps.kubernetes.io/pod-index": "0",
        "controller-revision-hash": revision,
    }
    assert pod.spec is not None
    assert pod.spec.extra["hostname"] == "web-0"
    assert pod.spec.extra["subdomain"] == "nginx"
    assert pod.spec.extra["volumes"] == [
        {"name": "www", "persistentVolumeClaim": {"claimName": "www-web-0"}}
    ]
    ref = pod.metadata.controller_ref()
    assert ref is not None
    assert (ref.kind, ref.name, ref.uid) == ("StatefulSet", "web", created.metadata.uid)


def test_ordinals_start(cluster: Cluster) -> None:
    """``spec.ordinals.start`` (``getStartOrdinal``): pods web-5, web-6."""
    cluster.create(stateful_set(replicas=2, ordinals=StatefulSetOrdinals(start=5)))
    cluster.run_until_stable()
    assert cluster.names() == ["web-5", "web-6"]
    cluster.update(ordinals=StatefulSetOrdinals(start=6))
    cluster.run_until_stable()
    assert cluster.names() == ["web-6", "web-7"]


def test_scale_down_highest_ordinal_first_one_at_a_time(cluster: Cluster) -> None:
    """``processCondemned`` monotonic: delete web-3, wait for it to go, then web-2
    (``TestStatefulSetControlScaleDown``)."""
    cluster.create(stateful_set(replicas=4))
    cluster.run_until_stable()
    cluster.update(replicas=2)
    assert cluster.names() == ["web-0", "web-1", "web-2"]
    assert cluster.names(live=False) == ["web-0", "web-1", "web-2", "web-3"]
    cluster.world.settle()
    assert cluster.names(live=False) == ["web-0", "web-1", "web-2", "web-3"]
    cluster.world.finish_deleted()
    assert cluster.names() == ["web-0", "web-1"]
    cluster.world.finish_deleted()
    assert cluster.names(live=False) == ["web-0", "web-1"]
    assert events(cluster, "SuccessfulDelete") == [
        "delete Pod web-3 in StatefulSet web successful",
        "delete Pod web-2 in StatefulSet web successful",
    ]
    assert cluster.status().replicas == 2


def test_parallel_scale_down_deletes_all_at_once(cluster: Cluster) -> None:
    cluster.create(stateful_set(replicas=4, pod_management_policy="Parallel"))
    cluster.run_until_stable()
    cluster.update(replicas=1)
    assert cluster.names() == ["web-0"]


def test_preempted_pod_comes_back_with_its_name(cluster: Cluster) -> None:
    """A pod deleted gracefully (as preemption does) holds the walk while it terminates;
    once gone it is created again with the same name, Pending, for the scheduler."""
    cluster.create(stateful_set())
    cluster.run_until_stable()
    first_uid = cluster.pod("web-1").metadata.uid
    cluster.api.delete(Pod, "web-1", "default")
    cluster.world.settle()
    assert cluster.names() == ["web-0", "web-2"]
    cluster.world.finish_deleted()
    assert cluster.names() == ["web-0", "web-1", "web-2"]
    again = cluster.pod("web-1")
    assert again.metadata.uid != first_uid
    assert again.status is not None
    assert again.status.phase == "Pending"
    assert not (again.spec and again.spec.node_name)
    assert cluster.status().ready_replicas == 2


def test_failed_pod_is_deleted_and_made_anew(cluster: Cluster) -> None:
    """``processReplica``: a Failed (or Succeeded) pod is deleted, then recreated."""
    cluster.create(stateful_set(replicas=2))
    cluster.run_until_stable()
    first_uid = cluster.pod("web-0").metadata.uid
    cluster.world.set_phase("web-0", "Failed")
    cluster.world.settle()
    cluster.world.finish_deleted()
    assert cluster.names() == ["web-0", "web-1"]
    assert cluster.pod("web-0").metadata.uid != first_uid
    assert cluster.pod("web-0").status.phase == "Pending"  # type: ignore[union-attr]
    assert events(cluster, "SuccessfulDelete") == ["delete Pod web-0 in StatefulSet web successful"]


def test_ordered_ready_waits_for_a_recreated_lower_pod(cluster: Cluster) -> None:
    """Scale-up stops behind a pod that is not Ready: web-2 waits for web-1."""
    cluster.create(stateful_set(replicas=2))
    cluster.run_until_stable()
    cluster.api.delete(Pod, "web-1", "default")
    cluster.world.finish_deleted()
    cluster.update(replicas=3)
    assert cluster.names() == ["web-0", "web-1"]
    cluster.run("web-1")
    assert cluster.names() == ["web-0", "web-1", "web-2"]


# --- updates ----------------------------------------------------------------------------------


def test_rolling_update_replaces_highest_ordinal_first(cluster: Cluster) -> None:
    """RollingUpdate: delete the highest outdated pod, wait for its replacement to be
    Ready, then the next (``TestStatefulSetControlRollingUpdate``)."""
    cluster.create(stateful_set())
    cluster.run_until_stable()
    old_revision = cluster.status().current_revision
    cluster.set_image("nginx:2")
    assert cluster.names() == ["web-0", "web-1"]
    status = cluster.status()
    assert status.current_revision == old_revision
    assert status.update_revision != old_revision
    cluster.world.finish_deleted()
    assert cluster.image("web-2") == "nginx:2"
    assert cluster.names() == ["web-0", "web-1", "web-2"]
    cluster.run("web-2")
    assert cluster.names() == ["web-0", "web-2"]
    cluster.run_until_stable()
    assert [cluster.image(n) for n in ("web-0", "web-1", "web-2")] == ["nginx:2"] * 3
    status = cluster.status()
    assert status.current_revision == status.update_revision
    assert (status.current_replicas, status.updated_replicas) == (3, 3)


def test_partition_keeps_lower_ordinals(cluster: Cluster) -> None:
    """``partition``: ordinals below it keep the current revision, even when recreated
    (``newVersionedStatefulSetPod``)."""
    strategy = StatefulSetUpdateStrategy(
        type="RollingUpdate", rolling_update=RollingUpdateStatefulSetStrategy(partition=2)
    )
    cluster.create(stateful_set(update_strategy=strategy))
    cluster.run_until_stable()
    cluster.set_image("nginx:2")
    cluster.run_until_stable()
    assert [cluster.image(n) for n in ("web-0", "web-1", "web-2")] == [
        "nginx:1",
        "nginx:1",
        "nginx:2",
    ]
    status = cluster.status()
    assert (status.current_replicas, status.updated_replicas) == (2, 1)
    assert status.current_revision != status.update_revision
    cluster.api.delete(Pod, "web-0", "default")
    cluster.run_until_stable()
    assert cluster.image("web-0") == "nginx:1"


def test_on_delete_waits_for_deletions(cluster: Cluster) -> None:
    """OnDelete: nothing is replaced until someone deletes a pod; it then comes back at
    the update revision."""
    cluster.create(stateful_set(update_strategy=StatefulSetUpdateStrategy(type="OnDelete")))
    cluster.run_until_stable()
    cluster.set_image("nginx:2")
    cluster.run_until_stable()
    assert [cluster.image(n) for n in ("web-0", "web-1", "web-2")] == ["nginx:1"] * 3
    cluster.api.delete(Pod, "web-1", "default")
    cluster.run_until_stable()
    assert cluster.image("web-1") == "nginx:2"
    assert cluster.status().updated_replicas == 1


# --- status and history --------------------------------------------------------------------------


def test_status_counts_and_available_after_min_ready_seconds(cluster: Cluster) -> None:
    """``updateStatus``: replicas, ready and available (``minReadySeconds``), observedGeneration."""
    cluster.create(stateful_set(replicas=2, pod_management_policy="Parallel", min_ready_seconds=10))
    cluster.run()
    status = cluster.status()
    assert (status.replicas, status.ready_replicas, status.available_replicas) == (2, 2, 0)
    assert status.observed_generation == 1
    assert status.collision_count == 0
    cluster.world.advance(11)
    assert cluster.status().available_replicas == 2


def test_history_is_truncated_to_the_limit(cluster: Cluster) -> None:
    """``truncateHistory``: old revisions beyond ``revisionHistoryLimit`` that no pod uses."""
    cluster.create(stateful_set(replicas=1, revision_history_limit=1))
    cluster.run_until_stable()
    for version in range(2, 5):
        cluster.set_image(f"nginx:{version}")
        cluster.run_until_stable()
    revisions = sorted(r.revision or 0 for r in cluster.api.list(ControllerRevision).items)
    assert revisions == [3, 4]


def test_rollback_moves_the_old_revision_up(cluster: Cluster) -> None:
    """``getStatefulSetRevisions``: a template that comes back reuses its revision,
    renumbered as the newest."""
    cluster.create(stateful_set(replicas=1))
    cluster.run_until_stable()
    first = cluster.status().update_revision
    cluster.set_image("nginx:2")
    cluster.run_until_stable()
    cluster.set_image("nginx:1")
    cluster.run_until_stable()
    assert cluster.status().update_revision == first
    revision = cluster.api.get(ControllerRevision, first or "", "default")
    assert revision.revision == 3


def test_revision_object(cluster: Cluster) -> None:
    """``newRevision``: template labels plus the hash, the set's annotations, owned."""
    sts = stateful_set(replicas=1)
    sts = dataclasses.replace(
        sts, metadata=dataclasses.replace(sts.metadata, annotations={"team": "a"})
    )
    cluster.create(sts)
    name = cluster.status().update_revision or ""
    revision = cluster.api.get(ControllerRevision, name, "default")
    hash_ = name.removeprefix("web-")
    assert revision.metadata.labels == {"app": "web", "controller-revision-hash": hash_}
    assert revision.metadata.annotations == {"team": "a"}
    assert revision.revision == 1
    assert revision.data is not None
    assert revision.data["spec"]["template"]["$patch"] == "replace"
    assert statefulsetutil.revision_hash(revision.data, 0) == hash_


def test_deleting_the_set_collects_its_pods(world: World, cluster: Cluster) -> None:
    """The garbage collector deletes pods and revisions a deleted StatefulSet owned."""
    from kubeprio.api.core import Pod as PodKind
    from kubeprio.controllers.garbagecollector import GarbageCollector

    world.add(
        GarbageCollector(
            world.api,
            clock=world.clock,
            rng=world.rng,
            owners=[cluster.statefulsets],
            dependents=[world.pods, cluster.revisions],
        )
    )
    cluster.create(stateful_set(replicas=2, pod_management_policy="Parallel"))
    cluster.api.delete(StatefulSet, "web", "default")
    world.settle()
    cluster.world.finish_deleted()
    assert world.api.list(PodKind, "default").items == []
    assert world.api.list(ControllerRevision, "default").items == []


def test_disruption_budget_counts_the_set_scale(world: World, cluster: Cluster) -> None:
    """``getPodStatefulSet`` (disruption controller finders): a maxUnavailable budget over a
    StatefulSet's pods expects ``spec.replicas`` pods."""
    from kubeprio.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec

    world.add(world.disruption_controller(cluster.statefulsets))
    cluster.create(stateful_set())
    cluster.run_until_stable()
    world.api.create(
        PodDisruptionBudget(
            metadata=ObjectMeta(name="web", namespace="default"),
            spec=PodDisruptionBudgetSpec(
                max_unavailable=1, selector=LabelSelector(match_labels=LABELS)
            ),
        )
    )
    world.settle()
    status = world.api.get(PodDisruptionBudget, "web", "default").status
    assert status is not None
    assert (status.expected_pods, status.current_healthy, status.disruptions_allowed) == (3, 3, 1)
