"""Storage capacity tracking for VolumeBinding: may a claim be provisioned from a node?

Mirrors the capacity half of ``pkg/scheduler/framework/plugins/volumebinding/binder.go``
(v1.32; storage capacity tracking is GA since 1.24): ``hasEnoughCapacity``,
``capacitySufficient``, ``volumeLimit`` and ``nodeHasAccess``.

* A claim without a ``storage`` request has nothing to check.
* Only a provisioner that is a CSIDriver with ``spec.storageCapacity: true`` is checked;
  no such CSIDriver (not CSI, or not opted in) means "enough".
* Otherwise some CSIStorageCapacity must name the claim's class, have a limit
  (``maximumVolumeSize`` when set, else ``capacity``; neither set means no room) of at
  least the request in whole bytes, and select the node's labels with ``nodeTopology``
  (a missing topology selects nothing; an invalid one is logged upstream and selects
  nothing).

Upstream lists every CSIStorageCapacity per claim and node; kubeprio reads them through
an informer indexed by class, so a check touches only that class's objects, and compiles
each object's topology once. Called by ``VolumeBinder`` for claims it must provision, so
pods without such claims never reach it.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import selectors, storagehelpers
from kubeprio.api.core import Node
from kubeprio.api.csi import CSIDriver
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.quantity import Quantity
from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.client.informer import Informer

CAPACITY_CLASS_INDEX: Final = "storage-class"
"""The capacity informer's index by ``storageClassName``."""


def by_storage_class(capacity: CSIStorageCapacity) -> list[str]:
    """``CAPACITY_CLASS_INDEX``'s key."""
    return [capacity.storage_class_name or ""]


def volume_limit(capacity: CSIStorageCapacity) -> Quantity | None:
    """Upstream ``volumeLimit``: ``maximumVolumeSize`` is the more precise answer, so it
    wins over ``capacity`` when present."""
    if capacity.maximum_volume_size is not None:
        return capacity.maximum_volume_size
    return capacity.capacity


def capacity_sufficient(capacity: CSIStorageCapacity, size_in_bytes: int) -> bool:
    """Upstream ``capacitySufficient``: no limit at all counts as no room."""
    limit = volume_limit(capacity)
    return limit is not None and limit.value() >= size_in_bytes


def tracks_capacity(driver: CSIDriver | None) -> bool:
    """Whether a CSIDriver opted into capacity tracking (``spec.storageCapacity``)."""
    spec = driver.spec if driver is not None else None
    return spec is not None and spec.storage_capacity is True


class CapacityCheck:
    """Upstream ``CapacityCheck`` plus ``hasEnoughCapacity``, over kubeprio informers."""

    def __init__(
        self, drivers: Informer[CSIDriver], capacities: Informer[CSIStorageCapacity]
    ) -> None:
        self.drivers = drivers
        self.capacities = capacities
        # (namespace, name) -> (the object compiled, its compiled topology, None when it
        # does not parse); an entry is used only while the informer holds that very object.
        self._compiled: dict[
            tuple[str, str], tuple[CSIStorageCapacity, selectors.Selector | None]
        ] = {}

    def driver_tracks_capacity(self, provisioner: str) -> bool:
        """Whether the provisioner is a CSIDriver that opted into capacity tracking."""
        return tracks_capacity(self.drivers.get(provisioner))

    def has_enough_capacity(
        self, provisioner: str, claim: PersistentVolumeClaim, class_name: str, node: Node
    ) -> bool:
        """Upstream ``hasEnoughCapacity``."""
        quantity = storagehelpers.claim_storage_request(claim)
        if quantity is None:
            return True
        if not self.driver_tracks_capacity(provisioner):
            return True
        size_in_bytes = quantity.value()
        for capacity in self.capacities.by_index(CAPACITY_CLASS_INDEX, class_name):
            if capacity_sufficient(capacity, size_in_bytes) and self.node_has_access(
                node, capacity
            ):
                return True
        return False

    def node_has_access(self, node: Node, capacity: CSIStorageCapacity) -> bool:
        """Upstream ``nodeHasAccess``: ``nodeTopology`` selects the node's labels."""
        if capacity.node_topology is None:
            return False
        compiled = self._topology(capacity)
        return compiled is not None and compiled.matches(node.metadata.labels or {})

    def _topology(self, capacity: CSIStorageCapacity) -> selectors.Selector | None:
        key = (capacity.metadata.namespace or "", capacity.metadata.name or "")
        cached = self._compiled.get(key)
        if cached is not None and cached[0] is capacity:
            return cached[1]
        compiled: selectors.Selector | None
        try:
            compiled = selectors.label_selector_as_selector(capacity.node_topology)
        except selectors.SelectorError:
            compiled = None
        self._compiled[key] = (capacity, compiled)
        return compiled

    def forget(self, capacity: CSIStorageCapacity) -> None:
        """Drop a deleted object's compiled topology."""
        key = (capacity.metadata.namespace or "", capacity.metadata.name or "")
        self._compiled.pop(key, None)
