"""Claims, volumes and pods through the whole control plane: PV controller, simulated
provisioner, scheduler (VolumeBinding) and kubelets, in virtual time.

Upstream: ``pkg/controller/volume/persistentvolume/pv_controller.go`` (binding, events),
``pkg/scheduler/framework/plugins/volumebinding`` (PreFilter texts, PreBind wait), the
external-provisioner library (``pvc-<uid>`` volumes, ``Provisioning``/``ProvisioningSucceeded``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.api.core import Event, Pod
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubeprio.api.storagehelpers import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
)
from kubeprio.kubelet.registration import register_node
from kubeprio.sim.controlplane import ControlPlane
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver

CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}


@pytest.fixture
def plane(clock: ManualClock) -> ControlPlane:
    plane = ControlPlane(MemoryStore(), clock=clock, seed=5)
    plane.attach_fleet()
    plane.start()
    return plane


@pytest.fixture
def driver(plane: ControlPlane, clock: ManualClock) -> Driver:
    return Driver(clock, informers=plane.components, components=plane.components)


def create(plane: ControlPlane, doc: dict[str, Any]) -> Any:
    return plane.api.create_object(manifest.decode_object(doc))


def storage_class(
    name: str, mode: str, provisioner: str = "kubeprio.io/simulated"
) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }


def claim(name: str, storage: str = "1Gi", cls: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": storage}},
    }
    if cls is not None:
        spec["storageClassName"] = cls
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def volume(
    name: str, storage: str, cls: str = "", phase_labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": phase_labels or {}},
        "spec": {
            "capacity": {"storage": storage},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": cls,
            "hostPath": {"path": f"/data/{name}"},
        },
    }


def pod_with_claim(name: str, claim_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "app", "image": "busybox"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
        },
    }


def events_for(plane: ControlPlane, name: str) -> list[tuple[str, str]]:
    return [
        (e.reason or "", e.message or "")
        for e in plane.api.list(Event, "default").items
        if e.involved_object is not None and e.involved_object.name == name
    ]


def settle(driver: Driver) -> None:
    """Engine.settle: pump and run every component until none has work now."""
    for _round in range(10_000):
        progressed = False
        for component in driver.components:
            if component.pump():
                progressed = True
        for component in driver.components:
            while component.run_once():
                progressed = True
                for other in driver.components:
                    other.pump()
        if not progressed:
            return
    raise AssertionError("did not settle")


def run(driver: Driver, seconds: float) -> None:
    """Settle, then move virtual time wakeup by wakeup for ``seconds``."""
    end = driver.clock.now() + seconds
    settle(driver)
    while (wakeup := driver.next_wakeup()) is not None and wakeup <= end:
        driver.clock.time = max(wakeup, driver.clock.now())
        settle(driver)
    driver.clock.time = end
    settle(driver)


def test_wait_for_first_consumer_claim_is_provisioned_on_the_pods_node(plane, driver, clock):
    """WaitForFirstConsumer: the claim waits (event), the scheduler annotates the selected
    node, the provisioner creates ``pvc-<uid>``, the PV controller binds, PreBind sees the
    claim bound and the pod is bound and runs."""
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    create(plane, storage_class("standard", "WaitForFirstConsumer", "rancher.io/local-path"))
    create(plane, claim("data", cls="standard"))
    run(driver, 5)
    assert ("WaitForFirstConsumer", "waiting for first consumer to be created before binding") in (
        events_for(plane, "data")
    )
    create(plane, pod_with_claim("app", "data"))
    run(driver, 30)
    bound = plane.api.get(PersistentVolumeClaim, "data", "default")
    pv_name = f"pvc-{bound.metadata.uid}"
    assert bound.status.phase == "Bound"
    assert bound.spec.volume_name == pv_name
    assert bound.metadata.annotations[ANN_SELECTED_NODE] == "n1"
    assert ANN_BIND_COMPLETED in bound.metadata.annotations
    pv = plane.api.get(PersistentVolume, pv_name)
    assert pv.status.phase == "Bound"
    assert str(pv.spec.capacity["storage"]) == "1Gi"
    assert pv.metadata.annotations["pv.kubernetes.io/provisioned-by"] == "rancher.io/local-path"
    terms = pv.spec.node_affinity.required.node_selector_terms
    assert terms[0].match_expressions[0].values == ("n1",)
    pod = plane.api.get(Pod, "app", "default")
    assert pod.spec.node_name == "n1"
    assert pod.status.phase == "Running"
    reasons = [reason for reason, _ in events_for(plane, "data")]
    assert reasons.index("ExternalProvisioning") < reasons.index("ProvisioningSucceeded")


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ([], 'persistentvolumeclaim "data" not found'),
        ([claim("data", cls="missing")], "pod has unbound immediate PersistentVolumeClaims"),
    ],
    ids=["missing-claim", "missing-class"],
)
def test_unschedulable_claims_keep_the_pod_pending_with_upstreams_message(
    plane, driver, clock, claims, message
):
    """volume_binding.go PreFilter: UnschedulableAndUnresolvable, so preemption says
    it is not helpful on any node."""
    for name in ("n1", "n2", "n3"):
        register_node(plane.api, name, clock=clock, capacity=CAPACITY)
    for doc in claims:
        create(plane, doc)
    create(plane, pod_with_claim("app", "data"))
    run(driver, 10)
    pod = plane.api.get(Pod, "app", "default")
    assert not pod.spec.node_name
    expected = (
        f"0/3 nodes are available: {message}. preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling."
    )
    assert ("FailedScheduling", expected) in events_for(plane, "app")


def test_immediate_claim_binds_the_smallest_available_volume(plane, driver, clock):
    """pv_controller syncUnboundClaim + FindMatchingVolume: smallest volume that fits;
    bind-completed and bound-by-controller annotations; the pod then schedules."""
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    create(plane, volume("big", "10Gi"))
    create(plane, volume("small", "2Gi"))
    create(plane, volume("tiny", "500Mi"))
    run(driver, 2)
    create(plane, claim("data", "1Gi", cls=""))
    create(plane, pod_with_claim("app", "data"))
    run(driver, 10)
    bound = plane.api.get(PersistentVolumeClaim, "data", "default")
    assert bound.spec.volume_name == "small"
    assert bound.status.phase == "Bound"
    assert str(bound.status.capacity["storage"]) == "2Gi"
    assert bound.metadata.annotations[ANN_BOUND_BY_CONTROLLER] == "yes"
    small = plane.api.get(PersistentVolume, "small")
    assert small.status.phase == "Bound"
    assert small.spec.claim_ref.uid == bound.metadata.uid
    assert plane.api.get(PersistentVolume, "big").status.phase == "Available"
    assert plane.api.get(Pod, "app", "default").spec.node_name == "n1"


def test_claim_without_class_or_volume_reports_failed_binding(plane, driver, clock):
    create(plane, claim("data", cls=""))
    run(driver, 2)
    assert (
        "FailedBinding",
        "no persistent volumes available for this claim and no storage class is set",
    ) in events_for(plane, "data")


def test_deleting_the_claim_releases_a_retained_volume_and_deletes_a_provisioned_one(
    plane, driver, clock
):
    """reclaimVolume: Retain -> Released; Delete on a provisioned volume -> the provisioner deletes it."""
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    create(plane, volume("kept", "1Gi"))
    create(plane, storage_class("fast", "Immediate"))
    create(plane, claim("static", cls=""))
    create(plane, claim("dynamic", cls="fast"))
    run(driver, 10)
    dynamic = plane.api.get(PersistentVolumeClaim, "dynamic", "default")
    assert dynamic.status.phase == "Bound"
    pv_name = dynamic.spec.volume_name
    assert pv_name == f"pvc-{dynamic.metadata.uid}"
    plane.api.delete(PersistentVolumeClaim, "static", "default")
    plane.api.delete(PersistentVolumeClaim, "dynamic", "default")
    run(driver, 10)
    assert plane.api.get(PersistentVolume, "kept").status.phase == "Released"
    assert pv_name not in {v.metadata.name for v in plane.api.list(PersistentVolume).items}
