"""PersistentVolume, PersistentVolumeClaim and StorageClass models: JSON round trips.

Shapes as ``k8s.io/api`` v0.32 ``core/v1/types.go`` and ``storage/v1/types.go``: the
modelled fields decode into attributes, the volume source (``hostPath``, ``csi``, ...)
stays in ``spec.extra`` and every document comes back unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import gozeros, kinds, manifest, serialization
from kubeprio.api.persistentvolume import (
    PersistentVolume,
    PersistentVolumeClaim,
    claim_class,
    volume_class,
    volume_source_keys,
)
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.storageclass import StorageClass, binding_mode, is_default_class

PV: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "pv0", "finalizers": ["kubernetes.io/pv-protection"]},
    "spec": {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "claimRef": {
            "kind": "PersistentVolumeClaim",
            "namespace": "default",
            "name": "data",
            "uid": "u1",
            "apiVersion": "v1",
            "resourceVersion": "12",
        },
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "local",
        "mountOptions": ["ro"],
        "volumeMode": "Filesystem",
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}
                        ]
                    }
                ]
            }
        },
        "local": {"path": "/mnt/disks/vol1"},
    },
    "status": {"phase": "Bound", "lastPhaseTransitionTime": "2024-01-01T00:00:00Z"},
}

PVC: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "default"},
    "spec": {
        "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
        "selector": {"matchLabels": {"tier": "db"}},
        "resources": {"requests": {"storage": "5Gi"}, "limits": {"storage": "8Gi"}},
        "volumeName": "pv0",
        "storageClassName": "local",
        "volumeMode": "Block",
        "dataSource": {"apiGroup": None, "kind": "PersistentVolumeClaim", "name": "src"},
        "dataSourceRef": {
            "apiGroup": "snapshot.storage.k8s.io",
            "kind": "VolumeSnapshot",
            "name": "s",
            "namespace": "ns2",
        },
        "volumeAttributesClassName": "gold",
    },
    "status": {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "10Gi"},
        "conditions": [
            {
                "type": "Resizing",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        ],
        "allocatedResources": {"storage": "10Gi"},
        "allocatedResourceStatuses": {"storage": "ControllerResizeInProgress"},
        "currentVolumeAttributesClassName": "gold",
        "modifyVolumeStatus": {"targetVolumeAttributesClassName": "silver", "status": "InProgress"},
    },
}

SC: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {
        "name": "standard",
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
    },
    "provisioner": "rancher.io/local-path",
    "parameters": {"type": "ssd"},
    "reclaimPolicy": "Delete",
    "mountOptions": ["debug"],
    "allowVolumeExpansion": True,
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowedTopologies": [
        {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}
    ],
}


@pytest.mark.parametrize(
    ("model", "document"),
    [(PersistentVolume, PV), (PersistentVolumeClaim, PVC), (StorageClass, SC)],
    ids=["pv", "pvc", "sc"],
)
def test_document_round_trips(model: type[Any], document: dict[str, Any]) -> None:
    obj = serialization.from_dict(model, document)
    # Served as Go writes it: the document plus the zero values of what it leaves unset
    # (``metadata.creationTimestamp: null``, the PV's ``status: {}``).
    root = gozeros.root_type(kinds.for_model(model).kind)
    assert root is not None
    assert serialization.to_dict(obj) == gozeros.filled(document, root)
    assert type(manifest.decode_object(document)) is model


def test_volume_fields_decode() -> None:
    pv = serialization.from_dict(PersistentVolume, PV)
    assert pv.spec is not None
    assert pv.spec.capacity is not None
    assert pv.spec.capacity["storage"] == parse_quantity("10Gi")
    assert pv.spec.claim_ref is not None
    assert pv.spec.claim_ref.name == "data"
    assert pv.spec.node_affinity is not None
    assert pv.spec.node_affinity.required is not None
    assert pv.spec.extra == {"local": {"path": "/mnt/disks/vol1"}}
    assert volume_source_keys(pv) == ("local",)
    assert volume_class(pv) == "local"


def test_claim_fields_decode() -> None:
    pvc = serialization.from_dict(PersistentVolumeClaim, PVC)
    assert pvc.spec is not None
    assert pvc.spec.resources is not None
    assert pvc.spec.resources.requests == {"storage": parse_quantity("5Gi")}
    assert pvc.spec.data_source_ref is not None
    assert pvc.spec.data_source_ref.namespace == "ns2"
    assert pvc.status is not None
    assert pvc.status.allocated_resource_statuses is not None
    assert claim_class(pvc) == "local"


@pytest.mark.parametrize(
    ("annotations", "spec_class", "expected"),
    [
        (None, "fast", "fast"),
        ({"volume.beta.kubernetes.io/storage-class": "old"}, "fast", "old"),
        ({"volume.beta.kubernetes.io/storage-class": ""}, "fast", ""),
        (None, None, ""),
    ],
    ids=["field", "beta-annotation-wins", "empty-annotation-wins", "none"],
)
def test_claim_class_prefers_the_beta_annotation(
    annotations: dict[str, str] | None, spec_class: str | None, expected: str
) -> None:
    """``GetPersistentVolumeClaimClass`` (component-helpers storage/volume/helpers.go)."""
    data: dict[str, Any] = {"metadata": {"name": "c"}, "spec": {}}
    if annotations is not None:
        data["metadata"]["annotations"] = annotations
    if spec_class is not None:
        data["spec"]["storageClassName"] = spec_class
    assert claim_class(serialization.from_dict(PersistentVolumeClaim, data)) == expected


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({"storageclass.kubernetes.io/is-default-class": "true"}, True),
        ({"storageclass.beta.kubernetes.io/is-default-class": "true"}, True),
        ({"storageclass.kubernetes.io/is-default-class": "True"}, False),
        (None, False),
    ],
    ids=["ga", "beta", "not-exactly-true", "none"],
)
def test_is_default_class(annotations: dict[str, str] | None, expected: bool) -> None:
    """``IsDefaultAnnotation`` (pkg/apis/storage/util/helpers.go): exactly "true"."""
    data: dict[str, Any] = {"metadata": {"name": "c"}, "provisioner": "p"}
    if annotations is not None:
        data["metadata"]["annotations"] = annotations
    storage_class = serialization.from_dict(StorageClass, data)
    assert is_default_class(storage_class) is expected
    assert binding_mode(storage_class) == "Immediate"


@pytest.mark.parametrize(
    ("name", "plural", "namespaced", "status"),
    [
        ("pv", "persistentvolumes", False, True),
        ("pvc", "persistentvolumeclaims", True, True),
        ("sc", "storageclasses", False, False),
    ],
    ids=["pv", "pvc", "sc"],
)
def test_resource_rows(name: str, plural: str, namespaced: bool, status: bool) -> None:
    info = kinds.for_name(name)
    assert (info.plural, info.namespaced, info.has_subresource("status")) == (
        plural,
        namespaced,
        status,
    )
