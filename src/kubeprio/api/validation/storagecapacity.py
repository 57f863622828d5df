"""CSIStorageCapacity validation.

Mirrors v1.32 ``pkg/apis/storage/validation/validation.go``:

* ``ValidateCSIStorageCapacity`` (create): the name is a DNS subdomain (the generic
  metadata rules), ``nodeTopology`` a valid label selector, ``storageClassName`` a DNS
  subdomain (``ValidateClassName``: so it may not be empty) and ``capacity``, when set,
  not negative. ``maximumVolumeSize`` is not checked, as upstream.
* ``ValidateCSIStorageCapacityUpdate``: only the metadata update rules and the two
  immutable inputs of the CSI ``GetCapacity`` call, ``nodeTopology`` and
  ``storageClassName`` (the create rules do not run again).

Pure.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.api.validation.meta import (
    IS_NEGATIVE_ERROR,
    KindUpdateValidator,
    KindValidator,
    dns1123_subdomain_errors,
    label_selector_value,
    validate_immutable,
    validate_label_selector,
)


def validate_csi_storage_capacity(capacity: CSIStorageCapacity) -> list[FieldError]:
    """``ValidateCSIStorageCapacity`` beyond the generic metadata rules."""
    found = validate_label_selector(capacity.node_topology, "nodeTopology")
    class_name = capacity.storage_class_name or ""
    found.extend(
        errors.invalid("storageClassName", class_name, message)
        for message in dns1123_subdomain_errors(class_name)
    )
    if capacity.capacity is not None and capacity.capacity.sign() < 0:
        found.append(errors.invalid("capacity", str(capacity.capacity), IS_NEGATIVE_ERROR))
    return found


def validate_csi_storage_capacity_update(
    new: CSIStorageCapacity, old: CSIStorageCapacity
) -> list[FieldError]:
    """``ValidateCSIStorageCapacityUpdate``: nodeTopology and storageClassName are immutable."""
    shown = None if new.node_topology is None else label_selector_value(new.node_topology)
    found = validate_immutable(new.node_topology, old.node_topology, "nodeTopology", shown)
    found.extend(
        validate_immutable(
            new.storage_class_name or "", old.storage_class_name or "", "storageClassName"
        )
    )
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {CSIStorageCapacity: validate_csi_storage_capacity}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    CSIStorageCapacity: validate_csi_storage_capacity_update
}
