"""VolumeBinding's queueing hints for the CSI objects: CSINode, CSIDriver, CSIStorageCapacity.

Mirrors ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`` (v1.32, whose
``EventsToRegister`` gained these hints in 1.31):

* ``isSchedulableAfterCSINodeChange``: a new CSINode, or one whose
  ``storage.alpha.kubernetes.io/migrated-plugins`` annotation changed.
* ``isSchedulableAfterCSIDriverChange`` (updates only): the pod has an inline ``csi``
  volume of that driver and the driver stopped tracking storage capacity. Upstream looks
  at inline CSI volumes only, so a pod whose claims wait for capacity is not woken by a
  CSIDriver update; kubeprio keeps that.
* ``isSchedulableAfterCSIStorageCapacityChange``: a new object, or one whose volume limit
  (``maximumVolumeSize``, else ``capacity``) appeared or grew; ``nodeTopology`` and
  ``storageClassName`` are immutable, so nothing else can help.

An object of an unexpected type queues the pod, as upstream does on a conversion error.
Pure functions of the event's objects; registered in ``volumebinding.EVENTS``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from kubeprio.api.csi import MIGRATED_PLUGINS_ANNOTATION, CSIDriver, CSINode
from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import QueueingHint
from kubeprio.scheduler.plugins.capacitycheck import tracks_capacity, volume_limit

_QUEUE: Final = QueueingHint.QUEUE
_SKIP: Final = QueueingHint.QUEUE_SKIP


def after_csi_node_change(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``isSchedulableAfterCSINodeChange``."""
    if old is None:
        return _QUEUE
    if not isinstance(old, CSINode) or not isinstance(new, CSINode):
        return _QUEUE
    before = (old.metadata.annotations or {}).get(MIGRATED_PLUGINS_ANNOTATION, "")
    after = (new.metadata.annotations or {}).get(MIGRATED_PLUGINS_ANNOTATION, "")
    return _QUEUE if before != after else _SKIP


def _inline_csi_drivers(pod: framework.PodInfo) -> Iterator[str]:
    """The drivers of the pod's inline ``csi`` volumes (``spec.volumes[].csi.driver``)."""
    spec = pod.pod.spec
    volumes: Any = spec.extra.get("volumes") if spec is not None else None
    for volume in volumes if isinstance(volumes, list) else ():
        source = volume.get("csi") if isinstance(volume, Mapping) else None
        if isinstance(source, Mapping):
            yield str(source.get("driver") or "")


def after_csi_driver_change(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``isSchedulableAfterCSIDriverChange``."""
    if not isinstance(old, CSIDriver) or not isinstance(new, CSIDriver):
        return _QUEUE
    name = new.metadata.name or ""
    for driver in _inline_csi_drivers(pod):
        if driver == name and tracks_capacity(old) and not tracks_capacity(new):
            return _QUEUE
    return _SKIP


def after_csi_storage_capacity_change(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``isSchedulableAfterCSIStorageCapacityChange``."""
    if not isinstance(new, CSIStorageCapacity):
        return _QUEUE
    if old is None:
        return _QUEUE
    if not isinstance(old, CSIStorageCapacity):
        return _QUEUE
    old_limit = volume_limit(old)
    new_limit = volume_limit(new)
    if new_limit is not None and (old_limit is None or new_limit.value() > old_limit.value()):
        return _QUEUE
    return _SKIP
