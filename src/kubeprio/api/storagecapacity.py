"""storage.k8s.io/v1 CSIStorageCapacity: one CSI ``GetCapacity`` answer, per topology.

Mirrors ``k8s.io/api/storage/v1/types.go`` (v1.32): a namespaced object (the CSI driver's
namespace) saying that StorageClass ``storageClassName`` has ``capacity`` free (and may
provision volumes up to ``maximumVolumeSize``) on the nodes that ``nodeTopology`` selects.
The fields are top level: the kind has no ``spec``. ``nodeTopology`` and
``storageClassName`` are immutable.

Validation is in ``api.validation.storagecapacity``, the Table in
``apiserver.storagecapacitytables``. The VolumeBinding scheduler plugin reads them
(``scheduler.plugins.capacitycheck``) for CSI drivers that track storage capacity.
Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init
from kubeprio.api.quantity import Quantity


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CSIStorageCapacity:
    """A storage.k8s.io/v1 CSIStorageCapacity (namespaced)."""

    api_version: str | None = "storage.k8s.io/v1"
    kind: str | None = "CSIStorageCapacity"
    metadata: ObjectMeta = ObjectMeta()
    node_topology: LabelSelector | None = None
    storage_class_name: str | None = None
    capacity: Quantity | None = None
    maximum_volume_size: Quantity | None = None
    extra: JsonDict = extra_field()
