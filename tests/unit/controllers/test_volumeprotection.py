"""The PVC and PV protection controllers (upstream v1.32
``pkg/controller/volume/pvcprotection``, ``pkg/controller/volume/pvprotection``) with the
``StorageObjectInUseProtection`` and ``DefaultStorageClass`` admission plugins
(``plugin/pkg/admission/storage/...``)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission import plugins
from kubeprio.admission.defaults import default_chain
from kubeprio.api import serialization
from kubeprio.api.core import Pod, PodStatus
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import (
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeStatus,
)
from kubeprio.api.storageclass import StorageClass
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.volumeprotection import PVCProtectionController, PVProtectionController
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver


@pytest.fixture
def admitted(store: MemoryStore, clock: ManualClock) -> ApiService:
    """An API service with kube-apiserver's default admission plugins."""
    return ApiService(
        store, clock=clock, rng=random.Random(1), admission=default_chain(StoreListers(store))
    )


def claim(name: str = "data", **spec: Any) -> PersistentVolumeClaim:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}
    return serialization.from_dict(
        PersistentVolumeClaim, {"metadata": {"name": name, "namespace": "default"}, "spec": body}
    )


def volume() -> PersistentVolume:
    return serialization.from_dict(
        PersistentVolume,
        {
            "metadata": {"name": "pv0"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/d"},
            },
        },
    )


def storage_class(name: str, default: bool) -> StorageClass:
    annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
    return serialization.from_dict(
        StorageClass,
        {"metadata": {"name": name, "annotations": annotations}, "provisioner": "p.io/x"},
    )


def pod_using(name: str, claim_name: str, node: str = "n1") -> Pod:
    return serialization.from_dict(
        Pod,
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "nodeName": node,
                "containers": [{"name": "c", "image": "i"}],
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim_name}}],
            },
        },
    )


def test_plugins_are_on_by_default_and_implemented() -> None:
    for name in ("DefaultStorageClass", "StorageObjectInUseProtection"):
        assert name in plugins.DEFAULT_ON
        assert name in plugins.IMPLEMENTED


def test_new_claim_and_volume_get_protection_finalizers(admitted: ApiService) -> None:
    """StorageObjectInUseProtection: admitPVC/admitPV on create."""
    assert admitted.create(claim()).metadata.finalizers == ("kubernetes.io/pvc-protection",)
    assert admitted.create(volume()).metadata.finalizers == ("kubernetes.io/pv-protection",)


@pytest.mark.parametrize(
    ("classes", "spec", "expected"),
    [
        ([("slow", False)], {}, None),
        ([("slow", False), ("fast", True)], {}, "fast"),
        ([("fast", True)], {"storageClassName": ""}, ""),
        ([("fast", True)], {"storageClassName": "slow"}, "slow"),
        ([("a", True), ("b", True)], {}, "b"),
    ],
    ids=["no-default", "default", "explicit-empty-kept", "explicit-kept", "newest-default-wins"],
)
def test_default_storage_class(
    admitted: ApiService,
    clock: ManualClock,
    classes: list[tuple[str, bool]],
    spec: dict[str, Any],
    expected: str | None,
) -> None:
    """DefaultStorageClass: a class-less claim gets the default; GetDefaultClass picks the
    newest of several defaults."""
    for name, default in classes:
        admitted.create(storage_class(name, default))
        clock.advance(1)
    created = admitted.create(claim(**spec))
    assert created.spec is not None
    assert created.spec.storage_class_name == expected


def test_claim_in_use_stays_terminating_until_its_pod_goes(
    admitted: ApiService, clock: ManualClock
) -> None:
    pods = Informer(admitted, Pod)
    claims = Informer(admitted, PersistentVolumeClaim)
    controller = PVCProtectionController(
        admitted, clock=clock, rng=random.Random(0), claims=claims, pods=pods
    )
    driver = Driver(clock, [pods, claims], [controller])
    admitted.create(claim())
    admitted.create(pod_using("user", "data"))
    driver.settle()
    admitted.delete(PersistentVolumeClaim, "data", "default")
    driver.settle()
    held = admitted.get(PersistentVolumeClaim, "data", "default")
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.finalizers == ("kubernetes.io/pvc-protection",)
    pod = admitted.get(Pod, "user", "default")
    admitted.update_status(evolve(pod, status=PodStatus(phase="Succeeded")))
    driver.settle()
    assert [c.metadata.name for c in admitted.list(PersistentVolumeClaim, "default").items] == []


def test_unused_claim_is_deleted_at_once_and_a_missing_finalizer_is_added(
    admitted: ApiService, clock: ManualClock
) -> None:
    pods = Informer(admitted, Pod)
    claims = Informer(admitted, PersistentVolumeClaim)
    controller = PVCProtectionController(
        admitted, clock=clock, rng=random.Random(0), claims=claims, pods=pods
    )
    driver = Driver(clock, [pods, claims], [controller])
    created = admitted.create(claim())
    admitted.update(evolve(created, metadata=evolve(created.metadata, finalizers=None)))
    driver.settle()
    assert admitted.get(PersistentVolumeClaim, "data", "default").metadata.finalizers == (
        "kubernetes.io/pvc-protection",
    )
    admitted.create(pod_using("unscheduled", "data", node=""))
    admitted.delete(PersistentVolumeClaim, "data", "default")
    driver.settle()
    assert admitted.list(PersistentVolumeClaim, "default").items == []


def test_bound_volume_keeps_its_finalizer(admitted: ApiService, clock: ManualClock) -> None:
    volumes = Informer(admitted, PersistentVolume)
    controller = PVProtectionController(
        admitted, clock=clock, rng=random.Random(0), volumes=volumes
    )
    driver = Driver(clock, [volumes], [controller])
    created = admitted.create(volume())
    admitted.update_status(evolve(created, status=PersistentVolumeStatus(phase="Bound")))
    admitted.delete(PersistentVolume, "pv0")
    driver.settle()
    assert admitted.get(PersistentVolume, "pv0").metadata.finalizers == (
        "kubernetes.io/pv-protection",
    )
    held = admitted.get(PersistentVolume, "pv0")
    admitted.update_status(evolve(held, status=PersistentVolumeStatus(phase="Released")))
    driver.settle()
    assert admitted.list(PersistentVolume).items == []
