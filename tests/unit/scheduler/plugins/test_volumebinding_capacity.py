"""VolumeBinding's storage capacity check (CSIStorageCapacity) and its CSI queueing hints.

Upstream rules (v1.32, ``pkg/scheduler/framework/plugins/volumebinding``):
``binder.go`` ``checkVolumeProvisions`` / ``hasEnoughCapacity`` / ``capacitySufficient`` /
``volumeLimit`` / ``nodeHasAccess`` (cases after ``binder_test.go``
``TestCapacity``), the reason ``ErrReasonNotEnoughSpace`` reported by ``Filter`` as
UnschedulableAndUnresolvable, and ``volume_binding.go``'s ``EventsToRegister`` hints
``isSchedulableAfterCSIStorageCapacityChange``, ``isSchedulableAfterCSIDriverChange`` and
``isSchedulableAfterCSINodeChange``; the queue's requeue after
``scheduling_queue.go`` ``MoveAllToActiveOrBackoffQueue``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.api.core import Pod
from kubeprio.api.csi import CSIDriver
from kubeprio.api.model import evolve
from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.apiserver.service import ApiService
from kubeprio.scheduler import events as ev
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import QueueingHint
from kubeprio.scheduler.plugins import csievents, names
from kubeprio.scheduler.plugins.capacitycheck import (
    capacity_sufficient,
    volume_limit,
)
from kubeprio.scheduler.plugins.volumebinder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
)
from kubeprio.scheduler.plugins.volumebinding import VolumeBinding
from kubeprio.scheduler.setup import volume_binder_informers
from tests.builders import node, pod
from tests.conftest import ManualClock
from tests.unit.scheduler.plugins.harness import node_infos
from tests.unit.scheduler.queue_helpers import fail, make_queue, where

DRIVER = "csi.example.com"
NOT_ENOUGH = framework.unresolvable(ERR_REASON_NOT_ENOUGH_SPACE)


def decode(doc: dict[str, Any]) -> Any:
    return manifest.decode_object(doc)


def driver_doc(storage_capacity: bool | None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if storage_capacity is not None:
        spec["storageCapacity"] = storage_capacity
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": DRIVER},
        "spec": spec,
    }


def class_doc(name: str = "fast", provisioner: str = DRIVER) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def claim_doc(name: str = "data", storage: str = "10Gi", cls: str = "fast") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": cls,
            "resources": {"requests": {"storage": storage}},
        },
    }


def capacity_doc(
    name: str,
    capacity: str | None = None,
    maximum: str | None = None,
    zone: Any = "a",
    cls: str = "fast",
) -> dict[str, Any]:
    """A CSIStorageCapacity in kube-system (upstream lists every namespace). ``zone``:
    a value selects ``zone=<value>``; None leaves ``nodeTopology`` out; ``{}`` is the
    empty selector."""
    doc: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": cls,
    }
    if isinstance(zone, str):
        doc["nodeTopology"] = {"matchLabels": {"zone": zone}}
    elif zone is not None:
        doc["nodeTopology"] = zone
    if capacity is not None:
        doc["capacity"] = capacity
    if maximum is not None:
        doc["maximumVolumeSize"] = maximum
    return doc


def pod_using(*claims: str, inline_csi: str | None = None) -> Pod:
    built = pod("app").build()
    volumes: list[dict[str, Any]] = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": name}}
        for i, name in enumerate(claims)
    ]
    if inline_csi is not None:
        volumes.append({"name": "inline", "csi": {"driver": inline_csi}})
    return evolve(built, spec=evolve(built.spec, extra={**built.spec.extra, "volumes": volumes}))


class World:
    """The API, the binder's informers, and a VolumeBinding plugin over them."""

    def __init__(self, api: ApiService, clock: ManualClock) -> None:
        self.api = api
        # The scheduler's own wiring of the binder and its informers (no queue to requeue).
        binder, self.informers = volume_binder_informers(api, lambda event, old, new: None)
        self.check = binder.capacity
        self.plugin = VolumeBinding(binder, clock=clock, node_lookup=lambda name: None)
        self.nodes = node_infos(
            [node("n-a").labels(zone="a").build(), node("n-b").labels(zone="b").build()]
        )

    def create(self, *docs: dict[str, Any]) -> None:
        for doc in docs:
            self.api.create_object(decode(doc))

    def filter(self, target: Pod) -> dict[str, framework.Status | None]:
        for informer in self.informers:
            informer.pump()
        state = framework.CycleState()
        pod_info = framework.PodInfo.of(target)
        _, status = self.plugin.pre_filter(state, pod_info, self.nodes)
        assert status is None, status
        return {info.name: self.plugin.filter(state, pod_info, info) for info in self.nodes}


@pytest.fixture
def world(api: ApiService, clock: ManualClock) -> World:
    return World(api, clock)


@dataclasses.dataclass(frozen=True)
class Case:
    capacities: list[dict[str, Any]]
    on_a: framework.Status | None
    on_b: framework.Status | None = NOT_ENOUGH
    driver: dict[str, Any] | None = dataclasses.field(default_factory=lambda: driver_doc(True))
    storage: str = "10Gi"


CASES = {
    # hasEnoughCapacity: some object of the class, with room, selecting the node.
    "enough-capacity-on-its-topology": Case([capacity_doc("c", "20Gi")], None),
    "capacity-equal-to-the-request-is-enough": Case([capacity_doc("c", "10Gi")], None),
    "not-enough-capacity": Case([capacity_doc("c", "5Gi")], NOT_ENOUGH),
    "request-rounded-up-to-bytes-one-byte-short": Case(
        [capacity_doc("c", "1000")], NOT_ENOUGH, storage="1001"
    ),
    # volumeLimit: maximumVolumeSize wins over capacity when set.
    "maximum-volume-size-too-small-despite-capacity": Case(
        [capacity_doc("c", "100Gi", maximum="5Gi")], NOT_ENOUGH
    ),
    "maximum-volume-size-enough-despite-small-capacity": Case(
        [capacity_doc("c", "1Gi", maximum="10Gi")], None
    ),
    "maximum-volume-size-without-capacity": Case([capacity_doc("c", maximum="10Gi")], None),
    "neither-capacity-nor-maximum-is-no-room": Case([capacity_doc("c")], NOT_ENOUGH),
    # nodeHasAccess: nil topology matches nothing, the empty selector everything.
    "topology-of-another-zone": Case([capacity_doc("c", "20Gi", zone="c")], NOT_ENOUGH),
    "nil-topology-matches-no-node": Case([capacity_doc("c", "20Gi", zone=None)], NOT_ENOUGH),
    "empty-topology-matches-every-node": Case([capacity_doc("c", "20Gi", zone={})], None, None),
    "match-expressions-topology": Case(
        [
            capacity_doc(
                "c",
                "20Gi",
                zone={"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
            )
        ],
        NOT_ENOUGH,
        None,
    ),
    # Only objects of the claim's class count.
    "capacity-of-another-class": Case([capacity_doc("c", "20Gi", cls="slow")], NOT_ENOUGH),
    "no-capacity-objects": Case([], NOT_ENOUGH),
    "one-of-several-objects-suffices": Case(
        [
            capacity_doc("small", "1Gi"),
            capacity_doc("big", "20Gi"),
            capacity_doc("b", "1Gi", zone="b"),
        ],
        None,
    ),
    # Only a CSIDriver with storageCapacity: true opts into the check.
    "driver-storage-capacity-false-no-check": Case([], None, None, driver=driver_doc(False)),
    "driver-storage-capacity-unset-no-check": Case([], None, None, driver=driver_doc(None)),
    "no-csidriver-no-check": Case([], None, None, driver=None),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_filter_checks_storage_capacity_for_claims_to_provision(world: World, case: Case) -> None:
    world.create(class_doc(), claim_doc(storage=case.storage), *case.capacities)
    if case.driver is not None:
        world.create(case.driver)
    assert world.filter(pod_using("data")) == {"n-a": case.on_a, "n-b": case.on_b}


def test_not_enough_space_is_unresolvable_so_preemption_skips_the_node(world: World) -> None:
    # Filter: every FindPodVolumes reason is UnschedulableAndUnresolvable.
    world.create(driver_doc(True), class_doc(), claim_doc())
    status = world.filter(pod_using("data"))["n-a"]
    assert status is not None
    assert status.code is framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("node(s) did not have enough free storage",)


def test_every_claim_to_provision_must_fit(world: World) -> None:
    # checkVolumeProvisions returns at the first claim without room.
    world.create(driver_doc(True), class_doc(), claim_doc("small", "1Gi"), claim_doc("big", "50Gi"))
    world.create(capacity_doc("c", "20Gi"))
    assert world.filter(pod_using("small", "big"))["n-a"] == NOT_ENOUGH
    assert world.filter(pod_using("small"))["n-a"] is None


def test_a_claim_selected_for_another_node_reports_only_the_bind_conflict(world: World) -> None:
    # FindPodVolumes' fast path: a claim whose selected-node is another node.
    doc = claim_doc()
    doc["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": "n-b"}
    world.create(driver_doc(True), class_doc(), doc)
    result = world.filter(pod_using("data"))
    assert result["n-a"] == framework.unresolvable(ERR_REASON_BIND_CONFLICT)
    assert result["n-b"] == NOT_ENOUGH


def test_a_claim_without_a_storage_request_has_nothing_to_check(world: World) -> None:
    # hasEnoughCapacity: no storage request, no capacity to check for.
    world.create(driver_doc(True))
    for informer in world.informers:
        informer.pump()
    claim = decode(claim_doc())
    claim = evolve(claim, spec=evolve(claim.spec, resources=None))
    labelled = node("n").labels(zone="a").build()
    assert world.check.has_enough_capacity(DRIVER, claim, "fast", labelled)
    assert not world.check.has_enough_capacity(DRIVER, decode(claim_doc()), "fast", labelled)


def test_a_replaced_topology_is_recompiled(world: World) -> None:
    world.create(capacity_doc("c", "20Gi", zone="a"))
    for informer in world.informers:
        informer.pump()
    (first,) = world.check.capacities.list()
    on_a = node("n").labels(zone="a").build()
    assert world.check.node_has_access(on_a, first)
    moved = evolve(first, node_topology=decode(capacity_doc("x", zone="b")).node_topology)
    assert not world.check.node_has_access(on_a, moved)


@pytest.mark.parametrize(
    ("capacity", "maximum", "limit", "fits_10"),
    [
        ("20", None, 20, True),
        ("20", "10", 10, True),
        ("20", "9", 9, False),
        (None, None, None, False),
        (None, "10", 10, True),
    ],
)
def test_volume_limit_prefers_maximum_volume_size(capacity, maximum, limit, fits_10) -> None:
    # volumeLimit / capacitySufficient.
    obj = decode(capacity_doc("c", capacity, maximum))
    got = volume_limit(obj)
    assert (got.value() if got is not None else None) == limit
    assert capacity_sufficient(obj, 10) is fits_10


# --- queueing hints -------------------------------------------------------------------------


def cap(capacity: str | None = None, maximum: str | None = None) -> CSIStorageCapacity:
    return decode(capacity_doc("c", capacity, maximum))


def driver(storage_capacity: bool | None) -> CSIDriver:
    return decode(driver_doc(storage_capacity))


def csi_node(migrated: str | None) -> Any:
    annotations = {"storage.alpha.kubernetes.io/migrated-plugins": migrated} if migrated else {}
    return decode(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "n-a", "annotations": annotations},
            "spec": {"drivers": []},
        }
    )


Q, S = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
CLAIM_POD = pod_using("data")
INLINE_POD = pod_using("data", inline_csi=DRIVER)
OTHER_INLINE_POD = pod_using(inline_csi="other.example.com")

HINT_CASES = {
    # isSchedulableAfterCSIStorageCapacityChange
    "capacity-added": (csievents.after_csi_storage_capacity_change, CLAIM_POD, None, cap("1Gi"), Q),
    "capacity-grew": (
        csievents.after_csi_storage_capacity_change, CLAIM_POD, cap("1Gi"), cap("2Gi"), Q
    ),
    "capacity-shrank": (
        csievents.after_csi_storage_capacity_change, CLAIM_POD, cap("2Gi"), cap("1Gi"), S
    ),
    "capacity-unchanged": (
        csievents.after_csi_storage_capacity_change, CLAIM_POD, cap("2Gi"), cap("2Gi"), S
    ),
    "capacity-appeared": (csievents.after_csi_storage_capacity_change, CLAIM_POD, cap(), cap("1"), Q),
    "capacity-removed": (csievents.after_csi_storage_capacity_change, CLAIM_POD, cap("1"), cap(), S),
    "maximum-limits-a-grown-capacity": (
        csievents.after_csi_storage_capacity_change,
        CLAIM_POD,
        cap("1Gi", "1Gi"),
        cap("9Gi", "1Gi"),
        S,
    ),
    "maximum-grew": (
        csievents.after_csi_storage_capacity_change,
        CLAIM_POD,
        cap("9Gi", "1Gi"),
        cap("9Gi", "2Gi"),
        Q,
    ),
    # isSchedulableAfterCSIDriverChange: inline CSI volumes of the driver only.
    "driver-stopped-tracking-inline": (
        csievents.after_csi_driver_change, INLINE_POD, driver(True), driver(False), Q
    ),
    "driver-stopped-tracking-claims-only": (
        csievents.after_csi_driver_change, CLAIM_POD, driver(True), driver(False), S
    ),
    "driver-stopped-tracking-other-inline": (
        csievents.after_csi_driver_change, OTHER_INLINE_POD, driver(True), driver(None), S
    ),
    "driver-started-tracking": (
        csievents.after_csi_driver_change, INLINE_POD, driver(False), driver(True), S
    ),
    # isSchedulableAfterCSINodeChange
    "csinode-added": (csievents.after_csi_node_change, CLAIM_POD, None, csi_node(None), Q),
    "csinode-migrated-changed": (
        csievents.after_csi_node_change, CLAIM_POD, csi_node(None), csi_node("kubernetes.io/gce-pd"), Q
    ),
    "csinode-unchanged": (
        csievents.after_csi_node_change, CLAIM_POD, csi_node("x"), csi_node("x"), S
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("hint", "target", "old", "new", "expected"), list(HINT_CASES.values()), ids=list(HINT_CASES)
)
def test_csi_queueing_hints(hint, target, old, new, expected) -> None:  # fmt: skip
    assert hint(framework.PodInfo.of(target), old, new) is expected


CAPACITY_ADD = ev.ClusterEvent(ev.EventResource.CSI_STORAGE_CAPACITY, ev.ActionType.ADD)
CAPACITY_UPDATE = ev.ClusterEvent(ev.EventResource.CSI_STORAGE_CAPACITY, ev.ActionType.UPDATE)


@pytest.mark.parametrize(
    ("event", "old", "new", "rejector", "expected"),
    [
        (CAPACITY_ADD, None, cap("1Gi"), names.VOLUME_BINDING, "Active"),
        (CAPACITY_UPDATE, cap("1Gi"), cap("2Gi"), names.VOLUME_BINDING, "Active"),
        (CAPACITY_UPDATE, cap("2Gi"), cap("1Gi"), names.VOLUME_BINDING, "Unschedulable"),
        # Only VolumeBinding registers CSIStorageCapacity events.
        (CAPACITY_ADD, None, cap("1Gi"), names.NODE_RESOURCES_FIT, "Unschedulable"),
    ],
    ids=["added", "grew", "shrank", "other-rejector"],
)
def test_a_capacity_event_requeues_pods_volume_binding_rejected(
    clock: ManualClock, event, old, new, rejector, expected
) -> None:
    # MoveAllToActiveOrBackoffQueue with VolumeBinding's registered events and hints.
    queue = make_queue(clock)
    queue.add(CLAIM_POD)
    qpi = queue.pop()
    assert qpi is not None
    fail(queue, qpi, rejector)
    clock.advance(5)  # past the initial backoff
    queue.move_all_to_active_or_backoff(event, old, new)
    assert where(queue, CLAIM_POD) == expected
