"""VolumeZone: a pod's bound volumes restrict it to the nodes of their zones and regions.

Mirrors ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go`` (v1.32):

* PreFilter (``getPVbyPod``): for each ``persistentVolumeClaim`` volume, its claim (an
  empty name is UnschedulableAndUnresolvable "PersistentVolumeClaim had no name", a
  missing claim ``persistentvolumeclaim "NAME" not found``); an unbound claim of a
  WaitForFirstConsumer class is skipped (VolumeBinding picks its volume), an unbound one
  of another class is "PersistentVolume had no name" (or "PersistentVolumeClaim had no pv
  name and storageClass name" without a class, ``storageclass.storage.k8s.io "NAME" not
  found`` for a missing one); a bound claim's volume (``persistentvolume "NAME" not
  found``) contributes its topology labels, in upstream's order
  ``failure-domain.beta.kubernetes.io/zone``, ``failure-domain.beta.kubernetes.io/region``,
  ``topology.kubernetes.io/zone``, ``topology.kubernetes.io/region``, each value a set of
  zones separated by ``__`` (``LabelZonesToSet``; a value with an empty zone is ignored).
  No such label: SKIP.
* Filter: a node without any of those labels passes (a single-zone cluster); otherwise
  each volume label must be on the node (a beta key also matches the node's GA key) with a
  value in the volume's set, else UnschedulableAndUnresolvable ``node(s) had no available
  volume zone``: preemption cannot move a volume.

Registered events (``EVENTS``): a storage class added; a node added or its labels or taints
changed; a claim of the pod added or updated; a volume added or updated. Driven by
``scheduler.runtime``; Filter reads only the NodeInfo it is handed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Final

from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim, claim_class
from kubeprio.api.storageclass import BINDING_WAIT_FOR_FIRST_CONSUMER, StorageClass
from kubeprio.api.storagehelpers import pod_persistent_claim_names
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
)
from kubeprio.scheduler.plugins.helper.claimhints import after_named_claim
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "VolumeZone"
STATE_KEY: Final = "PreFilter" + NAME
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
ZONE_BETA: Final = "failure-domain.beta.kubernetes.io/zone"
REGION_BETA: Final = "failure-domain.beta.kubernetes.io/region"
ZONE: Final = "topology.kubernetes.io/zone"
REGION: Final = "topology.kubernetes.io/region"
TOPOLOGY_LABELS: Final = (ZONE_BETA, REGION_BETA, ZONE, REGION)
"""Upstream ``topologyLabels``, in its order."""
_GA_LABEL: Final = {ZONE_BETA: ZONE, REGION_BETA: REGION}
MULTI_ZONE_DELIMITER: Final = "__"
"""``LabelMultiZoneDelimiter``."""

ClaimLookup = Callable[[str, str], PersistentVolumeClaim | None]
VolumeLookup = Callable[[str], PersistentVolume | None]
ClassLookup = Callable[[str], StorageClass | None]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """``LabelZonesToSet``: the ``__``-separated zones, None when one of them is empty."""
    zones = [zone.strip() for zone in value.split(MULTI_ZONE_DELIMITER)]
    return None if any(not zone for zone in zones) else frozenset(zones)


@dataclasses.dataclass(frozen=True, slots=True)
class VolumeTopology:
    """Upstream ``pvTopology``: one topology label of one volume."""

    volume: str
    key: str
    values: frozenset[str]


@dataclasses.dataclass(frozen=True, slots=True)
class _State:
    topologies: tuple[VolumeTopology, ...]

    def clone(self) -> _State:
        return self


_CONFLICT: Final = framework.unresolvable(ERR_REASON_CONFLICT)


class VolumeZone:
    """The VolumeZone plugin (PreFilter, Filter)."""

    name: Final = NAME

    def __init__(self, claims: ClaimLookup, volumes: VolumeLookup, classes: ClassLookup) -> None:
        self.claims = claims
        self.volumes = volumes
        self.classes = classes

    def volume_topologies(
        self, pod: framework.PodInfo
    ) -> tuple[tuple[VolumeTopology, ...], framework.Status | None]:
        """Upstream ``getPVbyPod``."""
        namespace = pod.pod.metadata.namespace or ""
        found: list[VolumeTopology] = []
        for claim_name in pod_persistent_claim_names(pod.pod):
            if not claim_name:
                return (), framework.unresolvable("PersistentVolumeClaim had no name")
            claim = self.claims(claim_name, namespace)
            if claim is None:
                return (), framework.unresolvable(f'persistentvolumeclaim "{claim_name}" not found')
            volume_name = (claim.spec.volume_name if claim.spec else None) or ""
            if not volume_name:
                class_name = claim_class(claim)
                if not class_name:
                    return (), framework.unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                storage_class = self.classes(class_name)
                if storage_class is None:
                    return (), framework.unresolvable(
                        f'storageclass.storage.k8s.io "{class_name}" not found'
                    )
                mode = storage_class.volume_binding_mode
                if mode is None:
                    return (), framework.unresolvable(
                        f'VolumeBindingMode not set for StorageClass "{class_name}"'
                    )
                if mode == BINDING_WAIT_FOR_FIRST_CONSUMER:
                    continue
                return (), framework.unresolvable("PersistentVolume had no name")
            volume = self.volumes(volume_name)
            if volume is None:
                return (), framework.unresolvable(f'persistentvolume "{volume_name}" not found')
            labels = volume.metadata.labels or {}
            for key in TOPOLOGY_LABELS:
                value = labels.get(key)
                if value is None:
                    continue
                zones = label_zones_to_set(value)
                if zones is not None:
                    found.append(VolumeTopology(volume_name, key, zones))
        return tuple(found), None

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Upstream ``PreFilter``."""
        spec = pod.pod.spec
        if spec is None or not spec.extra.get("volumes"):
            return None, framework.SKIP
        topologies, status = self.volume_topologies(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, framework.SKIP
        state.write(STATE_KEY, _State(topologies))
        return None, None

    def pre_filter_extensions(self) -> framework.PreFilterExtensions | None:
        """None: volumes do not depend on other pods."""
        return None

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``Filter``."""
        data = state.read(STATE_KEY)
        if isinstance(data, _State):
            topologies = data.topologies
        else:
            # Upstream falls back to computing them here.
            topologies, status = self.volume_topologies(pod)
            if status is not None:
                return status
        labels = (node.node.metadata.labels if node.node is not None else None) or {}
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_GA_LABEL.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return _CONFLICT
        return None


# --- events and queueing hints ---------------------------------------------------------------


after_claim_change = after_named_claim
"""Upstream ``isSchedulableAfterPersistentVolumeClaimChange``: a claim the pod names (``helper.claimhints``)."""


_A = ActionType
EVENTS: Final[tuple[ClusterEventWithHint, ...]] = (
    ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, _A.ADD)),
    ClusterEventWithHint(
        ClusterEvent(EventResource.NODE, _A.ADD | _A.UPDATE_NODE_LABEL | _A.UPDATE_NODE_TAINT)
    ),
    ClusterEventWithHint(
        ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, _A.ADD | _A.UPDATE),
        after_claim_change,
    ),
    ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, _A.ADD | _A.UPDATE)),
)
"""Upstream ``EventsToRegister``."""
