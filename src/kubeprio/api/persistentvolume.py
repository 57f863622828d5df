"""core/v1 PersistentVolume and PersistentVolumeClaim: storage and the requests for it.

Mirrors ``k8s.io/api/core/v1/types.go`` (``PersistentVolume``, ``PersistentVolumeSpec``,
``VolumeNodeAffinity``, ``PersistentVolumeStatus``, ``PersistentVolumeClaim``,
``PersistentVolumeClaimSpec``, ``VolumeResourceRequirements``,
``TypedLocalObjectReference``, ``TypedObjectReference``, ``PersistentVolumeClaimStatus``,
``PersistentVolumeClaimCondition``, ``ModifyVolumeStatus``) for what binding, scheduling,
quota, protection and ``kubectl get pv,pvc`` read. The volume's source (``hostPath``,
``local``, ``csi``, ``nfs``, ... — the inlined ``PersistentVolumeSource``) stays in
``spec.extra`` and round-trips; ``api.validation.storage`` reads it there to count the
sources as upstream does.

A volume is cluster-scoped; a claim lives in a namespace and is bound to one volume
(``claim.spec.volumeName`` and ``volume.spec.claimRef``). Phases::

    volume  Pending -> Available -> Bound -> Released -> (Failed)
    claim   Pending -> Bound -> Lost

Defaults are in ``api.storagedefaults``, validation in ``api.validation.storage``.
Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import NodeSelector, ObjectReference, ResourceList
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

# PersistentVolumeAccessMode
READ_WRITE_ONCE: Final = "ReadWriteOnce"
READ_ONLY_MANY: Final = "ReadOnlyMany"
READ_WRITE_MANY: Final = "ReadWriteMany"
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"
ACCESS_MODES: Final = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)
"""``supportedAccessModes`` in upstream's validation, in its order."""

# PersistentVolumeReclaimPolicy
RECLAIM_RECYCLE: Final = "Recycle"
RECLAIM_DELETE: Final = "Delete"
RECLAIM_RETAIN: Final = "Retain"
RECLAIM_POLICIES: Final = (RECLAIM_DELETE, RECLAIM_RECYCLE, RECLAIM_RETAIN)
"""``supportedReclaimPolicy`` (sorted, as ``sets.List`` prints it)."""

# PersistentVolumeMode
VOLUME_BLOCK: Final = "Block"
VOLUME_FILESYSTEM: Final = "Filesystem"
VOLUME_MODES: Final = (VOLUME_BLOCK, VOLUME_FILESYSTEM)
"""``supportedVolumeModes`` (sorted)."""

# PersistentVolumePhase
VOLUME_PENDING: Final = "Pending"
VOLUME_AVAILABLE: Final = "Available"
VOLUME_BOUND: Final = "Bound"
VOLUME_RELEASED: Final = "Released"
VOLUME_FAILED: Final = "Failed"

# PersistentVolumeClaimPhase
CLAIM_PENDING: Final = "Pending"
CLAIM_BOUND: Final = "Bound"
CLAIM_LOST: Final = "Lost"

STORAGE: Final = "storage"
"""``v1.ResourceStorage``: the one resource a claim requests and a volume offers."""

PVC_PROTECTION_FINALIZER: Final = "kubernetes.io/pvc-protection"
"""``volumeutil.PVCProtectionFinalizer``: a claim in use by a pod is not removed."""
PV_PROTECTION_FINALIZER: Final = "kubernetes.io/pv-protection"
"""``volumeutil.PVProtectionFinalizer``: a bound volume is not removed."""

BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
"""``v1.BetaStorageClassAnnotation``: the class of a claim or volume before
``storageClassName`` existed (still honoured)."""

PERSISTENT_VOLUME_SOURCES: Final = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "iscsi",
    "cinder",
    "cephfs",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)
"""The JSON keys of ``v1.PersistentVolumeSource`` (kept in ``spec.extra``), in its order."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeNodeAffinity:
    """``spec.nodeAffinity``: the nodes the volume can be reached from."""

    required: NodeSelector | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolumeSpec:
    """``spec`` of a PersistentVolume; the volume source (``hostPath``, ``csi``, ...) is
    in ``extra``."""

    capacity: ResourceList | None = None
    access_modes: tuple[str, ...] | None = None
    claim_ref: ObjectReference | None = None
    persistent_volume_reclaim_policy: str | None = None
    storage_class_name: str | None = None
    mount_options: tuple[str, ...] | None = None
    volume_mode: str | None = None
    node_affinity: VolumeNodeAffinity | None = None
    volume_attributes_class_name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolumeStatus:
    """``status`` of a PersistentVolume."""

    phase: str | None = None
    message: str | None = None
    reason: str | None = None
    last_phase_transition_time: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolume:
    """A core/v1 PersistentVolume (cluster-scoped)."""

    api_version: str | None = "v1"
    kind: str | None = "PersistentVolume"
    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeSpec | None = None
    status: PersistentVolumeStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeResourceRequirements:
    """A claim's ``spec.resources``: ``requests.storage`` (and ``limits``)."""

    limits: ResourceList | None = None
    requests: ResourceList | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TypedLocalObjectReference:
    """``spec.dataSource``: an object in the claim's namespace to populate it from."""

    api_group: str | None = None
    kind: str | None = None
    name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TypedObjectReference:
    """``spec.dataSourceRef``: like ``dataSource``, possibly in another namespace."""

    api_group: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolumeClaimSpec:
    """``spec`` of a PersistentVolumeClaim (also a StatefulSet's ``volumeClaimTemplates``)."""

    access_modes: tuple[str, ...] | None = None
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements | None = None
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: TypedLocalObjectReference | None = None
    data_source_ref: TypedObjectReference | None = None
    volume_attributes_class_name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolumeClaimCondition:
    """One ``status.conditions`` entry (Resizing, FileSystemResizePending, ...)."""

    type: str | None = None
    status: str | None = None
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ModifyVolumeStatus:
    """``status.modifyVolumeStatus`` (VolumeAttributesClass, beta and off in v1.32)."""

    target_volume_attributes_class_name: str | None = None
    status: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolumeClaimStatus:
    """``status`` of a PersistentVolumeClaim, as the volume controller writes it."""

    phase: str | None = None
    access_modes: tuple[str, ...] | None = None
    capacity: ResourceList | None = None
    conditions: tuple[PersistentVolumeClaimCondition, ...] | None = None
    allocated_resources: ResourceList | None = None
    allocated_resource_statuses: Mapping[str, str] | None = None
    current_volume_attributes_class_name: str | None = None
    modify_volume_status: ModifyVolumeStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PersistentVolumeClaim:
    """A core/v1 PersistentVolumeClaim (namespaced)."""

    api_version: str | None = "v1"
    kind: str | None = "PersistentVolumeClaim"
    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeClaimSpec | None = None
    status: PersistentVolumeClaimStatus | None = None
    extra: JsonDict = extra_field()


def volume_class(volume: PersistentVolume) -> str:
    """``storagehelpers.GetPersistentVolumeClass``: the beta annotation first, then
    ``spec.storageClassName`` ("" when neither)."""
    annotations = volume.metadata.annotations or {}
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return (volume.spec.storage_class_name if volume.spec else None) or ""


def claim_class(claim: PersistentVolumeClaim) -> str:
    """``storagehelpers.GetPersistentVolumeClaimClass``: the beta annotation first, then
    ``spec.storageClassName`` ("" when neither)."""
    annotations = claim.metadata.annotations or {}
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return (claim.spec.storage_class_name if claim.spec else None) or ""


def claim_phase(claim: PersistentVolumeClaim) -> str:
    """``status.phase`` ("" when unset)."""
    return (claim.status.phase if claim.status else None) or ""


def volume_phase(volume: PersistentVolume) -> str:
    """``status.phase`` ("" when unset)."""
    return (volume.status.phase if volume.status else None) or ""


def volume_source_keys(volume: PersistentVolume) -> tuple[str, ...]:
    """The volume source keys set in ``spec`` (``("hostPath",)``), in upstream's order."""
    extra = volume.spec.extra if volume.spec else {}
    return tuple(key for key in PERSISTENT_VOLUME_SOURCES if extra.get(key) is not None)
