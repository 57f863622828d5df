"""Defaulting of PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Mirrors upstream v1.32 ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_PersistentVolume``:
``status.phase: Pending``, ``persistentVolumeReclaimPolicy: Retain``, ``volumeMode:
Filesystem``; ``SetDefaults_PersistentVolumeClaim``: ``status.phase: Pending``;
``SetDefaults_PersistentVolumeClaimSpec``: ``volumeMode: Filesystem``;
``SetDefaults_HostPathVolumeSource``: a ``hostPath`` without ``type`` gets ``type: ""``),
the generated ``SetDefaults_ResourceList`` rounding of ``capacity`` and of a claim's
``resources``, and ``pkg/apis/storage/v1/defaults.go`` (``SetDefaults_StorageClass``:
``reclaimPolicy: Delete``, ``volumeBindingMode: Immediate``). Called by
``api.defaults.default_object``; idempotent. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubeprio.api.core import ResourceList
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import (
    CLAIM_PENDING,
    RECLAIM_DELETE,
    RECLAIM_RETAIN,
    VOLUME_FILESYSTEM,
    VOLUME_PENDING,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimStatus,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
)
from kubeprio.api.storageclass import BINDING_IMMEDIATE, StorageClass

ListDefaulter = Callable[[ResourceList | None], ResourceList | None]


def default_persistent_volume(
    pv: PersistentVolume, default_list: ListDefaulter
) -> PersistentVolume:
    """``SetObjectDefaults_PersistentVolume``."""
    spec = pv.spec or PersistentVolumeSpec()
    changes: dict[str, Any] = {}
    if not spec.persistent_volume_reclaim_policy:
        changes["persistent_volume_reclaim_policy"] = RECLAIM_RETAIN
    if spec.volume_mode is None:
        changes["volume_mode"] = VOLUME_FILESYSTEM
    capacity = default_list(spec.capacity)
    if capacity is not spec.capacity:
        changes["capacity"] = capacity
    host_path = spec.extra.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        changes["extra"] = {**spec.extra, "hostPath": {**host_path, "type": ""}}
    status = pv.status or PersistentVolumeStatus()
    if not status.phase:
        pv = evolve(pv, status=evolve(status, phase=VOLUME_PENDING))
    return evolve(pv, spec=evolve(spec, **changes)) if changes or pv.spec is None else pv


def default_claim_spec(
    spec: PersistentVolumeClaimSpec | None, default_list: ListDefaulter
) -> PersistentVolumeClaimSpec:
    """``SetDefaults_PersistentVolumeClaimSpec`` and the rounding of its resources."""
    spec = spec or PersistentVolumeClaimSpec()
    changes: dict[str, Any] = {}
    if spec.volume_mode is None:
        changes["volume_mode"] = VOLUME_FILESYSTEM
    if spec.resources is not None:
        requests = default_list(spec.resources.requests)
        limits = default_list(spec.resources.limits)
        if requests is not spec.resources.requests or limits is not spec.resources.limits:
            changes["resources"] = evolve(spec.resources, requests=requests, limits=limits)
    return evolve(spec, **changes) if changes else spec


def default_persistent_volume_claim(
    pvc: PersistentVolumeClaim, default_list: ListDefaulter
) -> PersistentVolumeClaim:
    """``SetObjectDefaults_PersistentVolumeClaim``."""
    changes: dict[str, Any] = {}
    spec = default_claim_spec(pvc.spec, default_list)
    if spec is not pvc.spec:
        changes["spec"] = spec
    status = pvc.status or PersistentVolumeClaimStatus()
    if not status.phase:
        changes["status"] = evolve(status, phase=CLAIM_PENDING)
    return evolve(pvc, **changes) if changes else pvc


def default_storage_class(sc: StorageClass) -> StorageClass:
    """``SetDefaults_StorageClass``."""
    changes: dict[str, Any] = {}
    if sc.reclaim_policy is None:
        changes["reclaim_policy"] = RECLAIM_DELETE
    if sc.volume_binding_mode is None:
        changes["volume_binding_mode"] = BINDING_IMMEDIATE
    return evolve(sc, **changes) if changes else sc
