"""The Table of CSIStorageCapacities (``kubectl get csistoragecapacities``):
NAME STORAGECLASSNAME CAPACITY.

Mirrors v1.32 ``pkg/printers/internalversion/printers.go``
(``csiStorageCapacityColumnDefinitions``/``printCSIStorageCapacity``): no AGE column, and
CAPACITY is the quantity's ``String()`` or ``<unset>``. The column descriptions are the
API's field docs (``CSIStorageCapacity{}.SwaggerDoc()``). Who drives it:
``apiserver.tables``. Pure.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.apiserver.tableformat import Cells, Column, RowConditions, name_column

STORAGE_CLASS_NAME_DOC: Final = "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable."
CAPACITY_DOC: Final = "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable."

CSI_STORAGE_CAPACITY_COLUMNS: Final = (
    name_column(),
    Column("StorageClassName", "string", STORAGE_CLASS_NAME_DOC),
    Column("Capacity", "string", CAPACITY_DOC),
)


def print_csi_storage_capacity(
    capacity: CSIStorageCapacity, now: float
) -> tuple[Cells, RowConditions]:
    """``printCSIStorageCapacity``: name, storage class, capacity (``<unset>``)."""
    shown = "<unset>" if capacity.capacity is None else str(capacity.capacity)
    return [capacity.metadata.name or "", capacity.storage_class_name or "", shown], None
