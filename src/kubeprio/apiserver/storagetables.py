"""Table columns and cells of PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Mirrors upstream v1.32 ``pkg/printers/internalversion/printers.go``
(``persistentVolumeColumnDefinitions``/``printPersistentVolume``,
``persistentVolumeClaimColumnDefinitions``/``printPersistentVolumeClaim``,
``storageClassColumnDefinitions``/``printStorageClass``) and
``helper.GetAccessModesAsString`` (``RWO,ROX,RWX,RWOP`` in that order, each once):

    PV   NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS
         VOLUMEATTRIBUTESCLASS REASON AGE [VOLUMEMODE]
    PVC  NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE
         [VOLUMEMODE]
    SC   NAME ("name (default)" for the default class) PROVISIONER RECLAIMPOLICY
         VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE

A volume or claim being deleted shows ``Terminating``; a claim shows its capacity and
access modes (from ``status``) only once it names a volume. Who drives it:
``apiserver.tables``. Rules: pure.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.persistentvolume import (
    READ_ONLY_MANY,
    READ_WRITE_MANY,
    READ_WRITE_ONCE,
    READ_WRITE_ONCE_POD,
    STORAGE,
    PersistentVolume,
    PersistentVolumeClaim,
    claim_class,
    volume_class,
)
from kubeprio.api.storageclass import BINDING_IMMEDIATE, StorageClass, is_default_class
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

UNSET: Final = "<unset>"
TERMINATING: Final = "Terminating"
_SHORT_MODES: Final = (
    (READ_WRITE_ONCE, "RWO"),
    (READ_ONLY_MANY, "ROX"),
    (READ_WRITE_MANY, "RWX"),
    (READ_WRITE_ONCE_POD, "RWOP"),
)


def access_modes_text(modes: tuple[str, ...] | None) -> str:
    """``GetAccessModesAsString``: ``RWO,ROX`` (upstream's order, duplicates once)."""
    present = set(modes or ())
    return ",".join(short for mode, short in _SHORT_MODES if mode in present)


PERSISTENT_VOLUME_COLUMNS: Final = (
    name_column(),
    Column("Capacity", "string", "capacity is the description of the persistent volume's resources and capacity."),
    Column("Access Modes", "string", "accessModes contains all ways the volume can be mounted."),
    Column("Reclaim Policy", "string", "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim."),
    Column("Status", "string", "phase indicates if a volume is available, bound to a claim, or released by a claim."),
    Column("Claim", "string", "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim."),
    Column("StorageClass", "string", "StorageClass of the pv"),
    Column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
    Column("Reason", "string", "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI."),
    age_column(),
    Column("VolumeMode", "string", "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.", priority=1),
)  # fmt: skip


def print_persistent_volume(pv: PersistentVolume, now: float) -> tuple[Cells, RowConditions]:
    """``printPersistentVolume``."""
    spec = pv.spec
    claim = spec.claim_ref if spec else None
    claim_text = f"{claim.namespace or ''}/{claim.name or ''}" if claim is not None else ""
    capacity = (spec.capacity if spec else None) or {}
    size = str(capacity[STORAGE]) if STORAGE in capacity else "0"
    phase = (pv.status.phase if pv.status else None) or ""
    if pv.metadata.deletion_timestamp is not None:
        phase = TERMINATING
    return [
        pv.metadata.name or "",
        size,
        access_modes_text(spec.access_modes if spec else None),
        (spec.persistent_volume_reclaim_policy if spec else None) or "",
        phase,
        claim_text,
        volume_class(pv),
        (spec.volume_attributes_class_name if spec else None) or UNSET,
        (pv.status.reason if pv.status else None) or "",
        since(pv.metadata.creation_timestamp, now),
        (spec.volume_mode if spec else None) or UNSET,
    ], None


PERSISTENT_VOLUME_CLAIM_COLUMNS: Final = (
    name_column(),
    Column("Status", "string", "phase represents the current phase of PersistentVolumeClaim."),
    Column("Volume", "string", "volumeName is the binding reference to the PersistentVolume backing this claim."),
    Column("Capacity", "string", "capacity represents the actual resources of the underlying volume."),
    Column("Access Modes", "string", "accessModes contains the actual access modes the volume backing the PVC has."),
    Column("StorageClass", "string", "StorageClass of the pvc"),
    Column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
    age_column(),
    Column("VolumeMode", "string", "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.", priority=1),
)  # fmt: skip


def print_persistent_volume_claim(
    pvc: PersistentVolumeClaim, now: float
) -> tuple[Cells, RowConditions]:
    """``printPersistentVolumeClaim``."""
    spec = pvc.spec
    status = pvc.status
    phase = (status.phase if status else None) or ""
    if pvc.metadata.deletion_timestamp is not None:
        phase = TERMINATING
    volume = (spec.volume_name if spec else None) or ""
    capacity = access = ""
    if volume:
        access = access_modes_text(status.access_modes if status else None)
        held = (status.capacity if status else None) or {}
        capacity = str(held[STORAGE]) if STORAGE in held else "0"
    return [
        pvc.metadata.name or "",
        phase,
        volume,
        capacity,
        access,
        claim_class(pvc),
        (spec.volume_attributes_class_name if spec else None) or UNSET,
        since(pvc.metadata.creation_timestamp, now),
        (spec.volume_mode if spec else None) or UNSET,
    ], None


STORAGE_CLASS_COLUMNS: Final = (
    name_column(),
    Column("Provisioner", "string", "provisioner indicates the type of the provisioner."),
    Column("ReclaimPolicy", "string", "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete."),
    Column("VolumeBindingMode", "string", "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature."),
    Column("AllowVolumeExpansion", "string", "allowVolumeExpansion shows whether the storage class allow volume expand."),
    age_column(),
)  # fmt: skip


def print_storage_class(sc: StorageClass, now: float) -> tuple[Cells, RowConditions]:
    """``printStorageClass``: the default class's name gets `` (default)``."""
    name = sc.metadata.name or ""
    if is_default_class(sc):
        name += " (default)"
    return [
        name,
        sc.provisioner or "",
        sc.reclaim_policy or "Delete",
        sc.volume_binding_mode or BINDING_IMMEDIATE,
        bool(sc.allow_volume_expansion),
        since(sc.metadata.creation_timestamp, now),
    ], None
