"""The DaemonSet controller against the in-process API, as ``pkg/controller/daemon``.

Each test names the upstream rule (``daemon_controller_test.go`` / ``update_test.go``
tests where one matches). A stand-in scheduler binds every pending daemon pod to the
node its affinity pins (``GetTargetNodeName``) and marks it Running and Ready; a pod
being deleted leaves when the test finishes it (the kubelet's grace-0 delete).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.core import Node, Pod
from kubeprio.api.daemonset import (
    DaemonSet,
    DaemonSetSpec,
    DaemonSetStatus,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
)
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.client.informer import Informer
from kubeprio.controllers import daemonsetutil
from kubeprio.controllers.daemonset import DaemonSetsController
from tests.builders import node, pod, pod_template, with_image
from tests.unit.controllers.conftest import World

LABELS = {"app": "agent"}


class Cluster:
    """The world's informers plus nodes, DaemonSets and revisions, and the controller."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.api = world.api
        self.nodes: Informer[Node] = Informer(world.api, Node)
        self.daemonsets: Informer[DaemonSet] = Informer(world.api, DaemonSet)
        self.revisions: Informer[ControllerRevision] = Informer(world.api, ControllerRevision)
        world.driver.watch(self.nodes, self.daemonsets, self.revisions)
        self.controller = DaemonSetsController(
            world.api,
            clock=world.clock,
            rng=world.rng,
            daemonsets=self.daemonsets,
            revisions=self.revisions,
            pods=world.pods,
            nodes=self.nodes,
        )
        world.add(self.controller)

    def add_nodes(self, *names: str, **labels: str) -> None:
        for name in names:
            self.api.create(node(name).labels(**labels).allocatable(cpu="4", pods="110").build())

    def create(self, ds: DaemonSet) -> DaemonSet:
        created = self.api.create(ds)
        self.world.settle()
        return created

    def get(self, name: str = "agent") -> DaemonSet:
        return self.api.get(DaemonSet, name, "default")

    def pods(self) -> list[Pod]:
        """Daemon pods not being deleted, by target node."""
        return sorted(
            (p for p in self.world.pod_list() if not p.metadata.deletion_timestamp),
            key=lambda p: daemonsetutil.target_node(p) or "",
        )

    def placement(self) -> dict[str, str]:
        """target node -> pod image of the live daemon pods."""
        found: dict[str, str] = {}
        for p in self.pods():
            assert p.spec is not None
            assert p.spec.containers
            found[daemonsetutil.target_node(p) or ""] = p.spec.containers[0].image or ""
        return found

    def schedule(self) -> None:
        """Bind pending pods to their pinned node (if it exists) and make them Running and
        Ready."""
        existing = {n.metadata.name for n in self.api.list(Node).items}
        for p in self.world.pod_list():
            if p.metadata.deletion_timestamp or (p.status and p.status.phase != "Pending"):
                continue
            if daemonsetutil.target_node(p) not in existing:
                continue
            if not (p.spec and p.spec.node_name):
                self.world.bind(p, daemonsetutil.target_node(p) or "")
            self.world.set_phase(p.metadata.name or "", "Running")
        self.world.settle()

    def status(self, name: str = "agent") -> dict[str, int]:
        status = self.get(name).status or DaemonSetStatus()
        return {
            field.name: getattr(status, field.name) or 0
            for field in dataclasses.fields(status)
            if field.name not in ("conditions", "collision_count", "extra")
        }


@pytest.fixture
def cluster(world: World) -> Cluster:
    return Cluster(world)


def daemon_set(name: str = "agent", *, image: str = "agent:1", **spec: Any) -> DaemonSet:
    template = with_image(pod_template(LABELS), image)
    assert template.spec is not None
    pod_spec = spec.pop("pod_spec", {})
    template = dataclasses.replace(template, spec=dataclasses.replace(template.spec, **pod_spec))
    return DaemonSet(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=DaemonSetSpec(selector=LabelSelector(match_labels=LABELS), template=template, **spec),
    )


def set_image(cluster: Cluster, image: str, name: str = "agent") -> DaemonSet:
    ds = cluster.get(name)
    assert ds.spec is not None
    assert ds.spec.template is not None
    template = with_image(ds.spec.template, image)
    updated = cluster.api.update(
        dataclasses.replace(ds, spec=dataclasses.replace(ds.spec, template=template))
    )
    cluster.world.settle()
    return updated


# --- manage ------------------------------------------------------------------------------------


def test_one_pod_per_eligible_node_pinned_by_affinity_in_node_order(cluster: Cluster) -> None:
    """TestSimpleDaemonSetLaunchesPods / TestDaemonSetPodCreateExpectationsError: a pod per
    node, created unbound with required affinity metadata.name In [node] (the scheduler
    places it), the daemon tolerations, the revision labels and a controller reference;
    created in node-name order; events SuccessfulCreate."""
    cluster.add_nodes("n3", "n1", "n2")
    created = cluster.create(daemon_set())
    pods = cluster.pods()
    assert [daemonsetutil.target_node(p) for p in pods] == ["n1", "n2", "n3"]
    revision = cluster.revisions.list()[0]
    for p in pods:
        assert p.spec is not None
        assert not p.spec.node_name
        assert p.metadata.name
        assert p.metadata.name.startswith("agent-")
        assert p.metadata.labels == {
            **LABELS,
            "controller-revision-hash": revision.metadata.label("controller-revision-hash"),
            "pod-template-generation": "1",
        }
        assert p.spec.tolerations == daemonsetutil.DAEMON_TOLERATIONS
        (ref,) = p.metadata.owner_references or ()
        assert (ref.kind, ref.name, ref.uid, ref.controller) == (
            "DaemonSet",
            "agent",
            created.metadata.uid,
            True,
        )
    by_creation = sorted(pods, key=lambda p: p.metadata.resource_version or "")
    by_creation.sort(key=lambda p: int(p.metadata.resource_version or 0))
    assert [daemonsetutil.target_node(p) for p in by_creation] == ["n1", "n2", "n3"]
    assert len(cluster.world.events("SuccessfulCreate")) == 3


def test_nodes_that_do_not_match_or_taint_get_no_pod(cluster: Cluster) -> None:
    """TestNodeSelectorDaemonLaunchesPods, TestTaintedNodeDaemonDoesNotLaunchPod: the
    template's nodeSelector and untolerated taints skip nodes; counted nowhere."""
    cluster.add_nodes("a1", "a2", role="agent")
    cluster.add_nodes("b1", role="other")
    cluster.api.create(
        node("t1").label("role", "agent").taint("dedicated", "db", "NoSchedule").build()
    )
    cluster.create(daemon_set(pod_spec={"node_selector": {"role": "agent"}}))
    cluster.schedule()
    assert set(cluster.placement()) == {"a1", "a2"}
    status = cluster.status()
    assert status["desired_number_scheduled"] == 2
    assert status["number_misscheduled"] == 0


def test_a_new_node_gets_a_pod_and_a_relabelled_one_loses_it(cluster: Cluster) -> None:
    """addNode/updateNode: a node added or relabelled into the selector gets a pod; one
    relabelled out of it loses its pod (misscheduled until then)."""
    cluster.add_nodes("n1", role="agent")
    cluster.create(daemon_set(pod_spec={"node_selector": {"role": "agent"}}))
    cluster.schedule()
    cluster.add_nodes("n2", role="agent")
    cluster.world.settle()
    cluster.schedule()
    assert set(cluster.placement()) == {"n1", "n2"}
    n1 = cluster.api.get(Node, "n1")
    cluster.api.update(
        dataclasses.replace(n1, metadata=dataclasses.replace(n1.metadata, labels={}))
    )
    cluster.world.settle()
    assert set(cluster.placement()) == {"n2"}
    assert cluster.world.events("SuccessfulDelete")


def test_noschedule_taint_keeps_a_running_pod_noexecute_removes_it(cluster: Cluster) -> None:
    """NodeShouldRunDaemonPod: a new NoSchedule taint keeps the pod (shouldContinueRunning),
    a NoExecute one deletes it."""
    cluster.add_nodes("n1", "n2")
    cluster.create(daemon_set())
    cluster.schedule()
    for name, effect in (("n1", "NoSchedule"), ("n2", "NoExecute")):
        current = cluster.api.get(Node, name)
        tainted = node(name).taint("dedicated", "x", effect).build()
        cluster.api.update(dataclasses.replace(current, spec=tainted.spec))
    cluster.world.settle()
    assert set(cluster.placement()) == {"n1"}
    # A pod being deleted still counts (misscheduled) until it is gone.
    assert cluster.status()["number_misscheduled"] == 2
    cluster.world.finish_deleted()
    status = cluster.status()
    assert (status["desired_number_scheduled"], status["number_misscheduled"]) == (0, 1)


def test_failed_daemon_pod_is_replaced_with_backoff(cluster: Cluster) -> None:
    """TestDaemonKillFailedPods / TestDaemonKillFailedPodsBackoff: a Failed daemon pod is
    deleted (Warning FailedDaemonPod) and recreated; failing again within the backoff (1 s,
    then 2 s) waits for it."""
    cluster.add_nodes("n1")
    cluster.create(daemon_set())
    cluster.schedule()

    def fail_current() -> str:
        (current,) = cluster.pods()
        cluster.world.set_phase(current.metadata.name or "", "Failed")
        cluster.world.settle()
        return current.metadata.name or ""

    first = fail_current()
    assert [p.metadata.name for p in cluster.pods()] != [first]
    (event,) = cluster.world.events("FailedDaemonPod")
    assert event.type == "Warning"
    assert (
        event.message == f"Found failed daemon pod default/{first} on node n1, will try to kill it"
    )
    cluster.world.finish_deleted()
    cluster.schedule()
    second = fail_current()
    assert [p.metadata.name for p in cluster.pods()] == [second]  # in backoff: kept
    cluster.world.advance(1.0)
    assert second not in [p.metadata.name for p in cluster.pods()]
    cluster.world.finish_deleted()
    cluster.schedule()
    third = fail_current()
    cluster.world.advance(1.5)
    assert [p.metadata.name for p in cluster.pods()] == [third]  # now 2 s
    cluster.world.advance(0.5)
    assert third not in [p.metadata.name for p in cluster.pods()]


def test_succeeded_daemon_pod_is_deleted_and_replaced(cluster: Cluster) -> None:
    """podsShouldBeOnNode: a Succeeded daemon pod is deleted (Normal SucceededDaemonPod)."""
    cluster.add_nodes("n1")
    cluster.create(daemon_set())
    cluster.schedule()
    (current,) = cluster.pods()
    cluster.world.set_phase(current.metadata.name or "", "Succeeded")
    cluster.world.settle()
    cluster.world.finish_deleted()
    (replacement,) = cluster.pods()
    assert replacement.metadata.name != current.metadata.name
    (event,) = cluster.world.events("SucceededDaemonPod")
    assert event.type == "Normal"


def test_extra_pods_on_a_node_are_pruned_to_the_oldest(cluster: Cluster) -> None:
    """podsShouldBeOnNode without surge: of several running pods only the oldest stays;
    orphans matching the selector are adopted first (ClaimPods)."""
    cluster.add_nodes("n1")
    cluster.create(daemon_set())
    cluster.schedule()
    (original,) = cluster.pods()
    cluster.world.clock.time += 10
    orphan = pod("stray").labels(**LABELS).on("n1").build()
    cluster.api.create(orphan)
    cluster.world.settle()
    assert [p.metadata.name for p in cluster.pods()] == [original.metadata.name]
    adopted = cluster.api.get(Pod, "stray", "default")
    (ref,) = adopted.metadata.owner_references or ()
    assert ref.kind == "DaemonSet"


def test_pods_pinned_to_a_deleted_node_are_deleted(cluster: Cluster) -> None:
    """getUnscheduledPodsWithoutNode: an unbound pod pinned to a node that is gone is
    deleted at the next sync (upstream has no node-delete handler: any later event of the
    DaemonSet or its pods triggers it)."""
    cluster.add_nodes("n1", "n2")
    cluster.create(daemon_set())
    cluster.api.delete(Node, "n2")
    cluster.world.settle()
    assert set(cluster.placement()) == {"n1", "n2"}
    cluster.schedule()  # n1's pod becomes Ready: a pod event syncs the DaemonSet
    assert set(cluster.placement()) == {"n1"}


# --- status ------------------------------------------------------------------------------------


def test_status_counts_follow_the_pods(cluster: Cluster) -> None:
    """updateDaemonSetStatus/storeDaemonSetStatus: desired, current, ready, available,
    updated, unavailable, observedGeneration; rewritten only when something changed."""
    cluster.add_nodes("n1", "n2", "n3")
    cluster.create(daemon_set())
    assert cluster.status() == {
        "current_number_scheduled": 3,
        "number_misscheduled": 0,
        "desired_number_scheduled": 3,
        "number_ready": 0,
        "observed_generation": 1,
        "updated_number_scheduled": 3,
        "number_available": 0,
        "number_unavailable": 3,
    }
    cluster.schedule()
    status = cluster.status()
    assert (status["number_ready"], status["number_available"], status["number_unavailable"]) == (
        3,
        3,
        0,
    )
    stored = cluster.get().status
    assert stored is not None
    assert stored.number_unavailable is None
    version = cluster.get().metadata.resource_version
    cluster.controller.queue.add("default/agent")
    cluster.world.settle()
    assert cluster.get().metadata.resource_version == version


def test_min_ready_seconds_delays_availability(cluster: Cluster) -> None:
    """IsPodAvailable with minReadySeconds: ready pods count as available after it (the
    controller requeues itself for that moment)."""
    cluster.add_nodes("n1")
    cluster.create(daemon_set(min_ready_seconds=30))
    (p,) = cluster.pods()
    cluster.world.bind(p, "n1")
    cluster.world.set_phase(p.metadata.name or "", "Running")
    cluster.world.settle()
    assert cluster.status()["number_ready"] == 1
    assert cluster.status()["number_available"] == 0
    cluster.world.advance(31)
    assert cluster.status()["number_available"] == 1


# --- rolling update ------------------------------------------------------------------------------


def test_rolling_update_replaces_one_node_at_a_time(cluster: Cluster) -> None:
    """TestDaemonSetUpdatesPods (maxUnavailable 1): one old pod deleted; its replacement is
    created once it is gone; the next old pod only when the new one is available."""
    cluster.add_nodes("n1", "n2", "n3")
    cluster.create(daemon_set())
    cluster.schedule()
    set_image(cluster, "agent:2")
    assert cluster.placement() == {"n2": "agent:1", "n3": "agent:1"}  # n1's pod is going
    cluster.world.finish_deleted()
    assert cluster.placement() == {"n1": "agent:2", "n2": "agent:1", "n3": "agent:1"}
    cluster.world.settle()
    assert len(cluster.pods()) == 3  # the new pod is not available yet: no second deletion
    cluster.schedule()
    assert cluster.placement() == {"n1": "agent:2", "n3": "agent:1"}
    for _ in range(2):
        cluster.world.finish_deleted()
        cluster.schedule()
    assert cluster.placement() == {"n1": "agent:2", "n2": "agent:2", "n3": "agent:2"}
    status = cluster.status()
    assert status["updated_number_scheduled"] == 3
    assert status["observed_generation"] == 2


def test_rolling_update_with_max_surge_starts_new_pods_before_deleting(cluster: Cluster) -> None:
    """TestDaemonSetUpdatesPodsWithMaxSurge (maxSurge 1, maxUnavailable 0): a new pod
    next to the old one, the old one deleted once the new is available."""
    cluster.add_nodes("n1", "n2")
    surge = DaemonSetUpdateStrategy(
        type="RollingUpdate", rolling_update=RollingUpdateDaemonSet(max_unavailable=0, max_surge=1)
    )
    cluster.create(daemon_set(update_strategy=surge))
    cluster.schedule()
    set_image(cluster, "agent:2")
    images = sorted(
        (daemonsetutil.target_node(p), p.spec.containers[0].image)  # type: ignore[union-attr,index]
        for p in cluster.pods()
    )
    assert images == [("n1", "agent:1"), ("n1", "agent:2"), ("n2", "agent:1")]
    cluster.schedule()
    cluster.world.finish_deleted()
    cluster.schedule()
    cluster.world.finish_deleted()
    assert cluster.placement() == {"n1": "agent:2", "n2": "agent:2"}


def test_on_delete_only_replaces_deleted_pods(cluster: Cluster) -> None:
    """OnDelete: a template change touches nothing; a deleted pod comes back new."""
    cluster.add_nodes("n1", "n2")
    cluster.create(daemon_set(update_strategy=DaemonSetUpdateStrategy(type="OnDelete")))
    cluster.schedule()
    set_image(cluster, "agent:2")
    assert cluster.placement() == {"n1": "agent:1", "n2": "agent:1"}
    (first, _) = cluster.pods()
    cluster.api.delete(Pod, first.metadata.name or "", "default")
    cluster.world.settle()
    cluster.world.finish_deleted()
    assert cluster.placement() == {"n1": "agent:2", "n2": "agent:1"}
    assert cluster.status()["updated_number_scheduled"] == 1


# --- history -----------------------------------------------------------------------------------


def revisions(cluster: Cluster) -> list[tuple[int, str]]:
    return sorted(
        (r.revision or 0, r.metadata.label("controller-revision-hash") or "")
        for r in cluster.api.list(ControllerRevision, "default").items
    )


def test_history_one_revision_per_template_and_rollback_moves_it_up(cluster: Cluster) -> None:
    """constructHistory/snapshot: revision 1 for the first template, 2 for the next; going
    back to the first template moves its revision to 3 instead of making a new one."""
    cluster.add_nodes("n1")
    cluster.create(daemon_set())
    (first,) = revisions(cluster)
    assert first[0] == 1
    (revision,) = cluster.api.list(ControllerRevision, "default").items
    assert revision.metadata.name == f"agent-{first[1]}"
    assert revision.data is not None
    assert revision.data["spec"]["template"]["$patch"] == "replace"
    assert revision.data["spec"]["template"]["metadata"]["creationTimestamp"] is None
    set_image(cluster, "agent:2")
    assert [r for r, _ in revisions(cluster)] == [1, 2]
    set_image(cluster, "agent:1")
    assert revisions(cluster) == sorted([(2, revisions(cluster)[0][1]), (3, first[1])])


def test_history_beyond_the_limit_is_cleaned_oldest_first(cluster: Cluster) -> None:
    """cleanupHistory: old revisions beyond revisionHistoryLimit go, oldest first, except
    those a pod still runs."""
    cluster.add_nodes("n1")
    cluster.create(daemon_set(revision_history_limit=1))
    cluster.schedule()
    for image in ("agent:2", "agent:3"):
        set_image(cluster, image)
    # The pod of revision 1 is still running (rolling update waiting for its deletion).
    kept = [r for r, _ in revisions(cluster)]
    assert kept == [1, 3]
    cluster.world.finish_deleted()
    cluster.schedule()
    set_image(cluster, "agent:4")
    cluster.world.finish_deleted()
    cluster.schedule()
    assert [r for r, _ in revisions(cluster)] == [3, 4]


def test_deleting_the_daemon_set_collects_its_pods_and_revisions(cluster: Cluster) -> None:
    """Garbage collection through ownerReferences (the DaemonSet owns its pods and its
    ControllerRevisions; apps/v1 deletes dependents in the background)."""
    from kubeprio.controllers.garbagecollector import GarbageCollector

    world = cluster.world
    world.add(
        GarbageCollector(
            world.api,
            clock=world.clock,
            rng=world.rng,
            owners=[cluster.daemonsets],
            dependents=[world.pods, cluster.revisions],
        )
    )
    cluster.add_nodes("n1", "n2")
    cluster.create(daemon_set())
    cluster.schedule()
    cluster.api.delete(DaemonSet, "agent", "default")
    world.settle()
    cluster.world.finish_deleted()
    assert world.pod_list() == []
    assert cluster.api.list(ControllerRevision, "default").items == []


def test_selecting_all_pods_is_refused_with_an_event(cluster: Cluster, world: World) -> None:
    """syncDaemonSet: an empty selector (stored before validation refused it) selects
    everything: Warning SelectingAll, and nothing else happens."""
    cluster.add_nodes("n1")
    ds = daemon_set()
    assert ds.spec is not None
    everything = dataclasses.replace(
        ds, spec=dataclasses.replace(ds.spec, selector=LabelSelector())
    )
    cluster.controller.daemonsets = _StubInformer(everything)  # type: ignore[assignment]
    cluster.controller.reconcile("default/agent")
    (event,) = world.events("SelectingAll")
    assert event.type == "Warning"
    assert event.message == (
        "This daemon set is selecting all pods. A non-empty selector is required."
    )
    assert cluster.pods() == []


class _StubInformer:
    """Stands in for the DaemonSet informer with an object the API would refuse."""

    def __init__(self, ds: DaemonSet) -> None:
        self.ds = dataclasses.replace(
            ds, metadata=dataclasses.replace(ds.metadata, uid="uid-1", generation=1)
        )

    def get(self, name: str, namespace: str | None = None) -> DaemonSet | None:
        return self.ds
