"""VolumeRestrictions: ReadWriteOncePod claims and in-tree disks used by one pod only.

Mirrors ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``
(v1.32, ReadWriteOncePod GA, queueing hints on):

* PreFilter: the pod's ``persistentVolumeClaim`` volumes are looked up (a missing claim is
  UnschedulableAndUnresolvable ``persistentvolumeclaim "NAME" not found``); of the
  ReadWriteOncePod ones, those some scheduled pod already names are counted
  (``IsPVCUsedByPods``, the scheduler cache's claim references). A pod with no such
  conflict and no GCE PD / AWS EBS / RBD / iSCSI volume is SKIPped: pods without
  volumes never reach Filter, and the fast path keeps them (``fastpath.is_plain_pod``).
* AddPod/RemovePod (preemption's dry runs): the count moves by the number of the other
  pod's claim volumes that name one of the pod's ReadWriteOncePod claims (by name only,
  as upstream: the other pod's namespace is not compared).
* Filter: a disk already used by a pod on the node (the same GCE PD unless both mount it
  read-only, the same EBS volume, the same iSCSI IQN unless both read-only, the same RBD
  image in the same pool with a shared monitor unless both read-only) is Unschedulable
  ``node(s) had no available disk``; then a counted ReadWriteOncePod conflict is
  Unschedulable ``node has pod using PersistentVolumeClaim with the same name and
  ReadWriteOncePod access mode`` on every node. Both are Unschedulable, not unresolvable:
  preempting the pod that holds the claim or the disk can help (KEP-2485). On the node of
  the holder, RemovePod brings the count to zero and the preemptor fits.

Registered events (``EVENTS``): a pod deleted (queued when it used a disk the pod
needs or named one of its claims), a node added, a claim added (one the pod names).
Driven by ``scheduler.runtime``; Filter reads only the NodeInfo it is handed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubeprio.api.core import Pod
from kubeprio.api.persistentvolume import READ_WRITE_ONCE_POD, PersistentVolumeClaim
from kubeprio.api.storagehelpers import DISK_VOLUME_SOURCES, pod_persistent_claim_names
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubeprio.scheduler.plugins.helper.claimhints import after_named_claim
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "VolumeRestrictions"
STATE_KEY: Final = "PreFilter" + NAME
ERR_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_READ_WRITE_ONCE_POD: Final = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
DEFAULT_RBD_POOL: Final = "rbd"
"""``SetDefaults_RBDVolumeSource``: an RBD volume without a pool uses ``rbd``."""

ClaimLookup = Callable[[str, str], PersistentVolumeClaim | None]
"""(name, namespace) -> the claim in the scheduler's informer, None when absent."""
ClaimInUse = Callable[[str], bool]
"""``namespace/name`` -> whether a scheduled pod names the claim (``IsPVCUsedByPods``)."""


def _volumes(pod: Pod) -> list[Mapping[str, Any]]:
    volumes = pod.spec.extra.get("volumes") if pod.spec is not None else None
    return [v for v in volumes if isinstance(v, Mapping)] if isinstance(volumes, list) else []


def _source(volume: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    source = volume.get(key)
    return source if isinstance(source, Mapping) else None


def _disk_volumes(pod: Pod) -> list[Mapping[str, Any]]:
    """``needsRestrictionsCheck``: the pod's volumes of a checked in-tree disk source."""
    return [v for v in _volumes(pod) if any(_source(v, k) for k in DISK_VOLUME_SOURCES)]


def _both_read_only(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return bool(a.get("readOnly")) and bool(b.get("readOnly"))


def is_volume_conflict(volume: Mapping[str, Any], existing: Pod) -> bool:
    """Upstream ``isVolumeConflict``: ``volume`` clashes with a volume of ``existing``."""
    gce, ebs = _source(volume, "gcePersistentDisk"), _source(volume, "awsElasticBlockStore")
    iscsi, rbd = _source(volume, "iscsi"), _source(volume, "rbd")
    for other in _volumes(existing):
        other_gce = _source(other, "gcePersistentDisk")
        if gce and other_gce and gce.get("pdName") == other_gce.get("pdName"):
            shared_read_only = _both_read_only(gce, other_gce)
            if not shared_read_only:
                return True
        other_ebs = _source(other, "awsElasticBlockStore")
        if ebs and other_ebs and ebs.get("volumeID") == other_ebs.get("volumeID"):
            return True
        other_iscsi = _source(other, "iscsi")
        if iscsi and other_iscsi and iscsi.get("iqn") == other_iscsi.get("iqn"):
            shared_read_only = _both_read_only(iscsi, other_iscsi)
            if not shared_read_only:
                return True
        other_rbd = _source(other, "rbd")
        if rbd and other_rbd and _same_rbd_image(rbd, other_rbd):
            shared_read_only = _both_read_only(rbd, other_rbd)
            if not shared_read_only:
                return True
    return False


def _same_rbd_image(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """A shared Ceph monitor, the same pool and the same image (``haveOverlap`` & co)."""
    monitors = set(a.get("monitors") or ())
    if not monitors.intersection(b.get("monitors") or ()):
        return False
    return (a.get("pool") or DEFAULT_RBD_POOL) == (b.get("pool") or DEFAULT_RBD_POOL) and a.get(
        "image"
    ) == b.get("image")


@dataclasses.dataclass(slots=True)
class _State:
    """Upstream ``preFilterState``: the pod's ReadWriteOncePod claims and the number of
    references to them by scheduled pods."""

    read_write_once_pod_claims: frozenset[str]
    conflicting_refs: int
    disks: tuple[Mapping[str, Any], ...]

    def clone(self) -> _State:
        return _State(self.read_write_once_pod_claims, self.conflicting_refs, self.disks)

    def refs_of(self, pod: Pod) -> int:
        """``conflictingPVCRefCountForPod``."""
        claims = self.read_write_once_pod_claims
        return sum(1 for name in pod_persistent_claim_names(pod) if name in claims)


_CONFLICT: Final = framework.unschedulable(ERR_READ_WRITE_ONCE_POD)
_DISK_CONFLICT: Final = framework.unschedulable(ERR_DISK_CONFLICT)
_NO_STATE: Final = framework.error(f'cannot read "{STATE_KEY}" from cycleState')


class VolumeRestrictions:
    """The VolumeRestrictions plugin (PreFilter with AddPod/RemovePod, Filter)."""

    name: Final = NAME

    def __init__(self, claims: ClaimLookup, claim_in_use: ClaimInUse) -> None:
        self.claims = claims
        self.claim_in_use = claim_in_use

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Upstream ``PreFilter``."""
        the_pod = pod.pod
        if not (the_pod.spec is not None and the_pod.spec.extra.get("volumes")):
            return None, framework.SKIP
        namespace = the_pod.metadata.namespace or ""
        exclusive: set[str] = set()
        for name in pod_persistent_claim_names(the_pod):
            claim = self.claims(name, namespace)
            if claim is None:
                return None, framework.unresolvable(f'persistentvolumeclaim "{name}" not found')
            modes = (claim.spec.access_modes if claim.spec else None) or ()
            if READ_WRITE_ONCE_POD in modes:
                exclusive.add(name)
        conflicting = sum(1 for name in exclusive if self.claim_in_use(f"{namespace}/{name}"))
        disks = tuple(_disk_volumes(the_pod))
        if not disks and conflicting == 0:
            return None, framework.SKIP
        state.write(STATE_KEY, _State(frozenset(exclusive), conflicting, disks))
        return None, None

    def pre_filter_extensions(self) -> framework.PreFilterExtensions | None:
        """AddPod/RemovePod keep the conflict count right during preemption."""
        return self

    def add_pod(
        self,
        state: framework.CycleState,
        pod: framework.PodInfo,
        pod_to_add: framework.PodInfo,
        node: NodeInfo,
    ) -> framework.Status | None:
        """Upstream ``AddPod``."""
        data = state.read(STATE_KEY)
        if not isinstance(data, _State):
            return _NO_STATE
        data.conflicting_refs += data.refs_of(pod_to_add.pod)
        return None

    def remove_pod(
        self,
        state: framework.CycleState,
        pod: framework.PodInfo,
        pod_to_remove: framework.PodInfo,
        node: NodeInfo,
    ) -> framework.Status | None:
        """Upstream ``RemovePod``."""
        data = state.read(STATE_KEY)
        if not isinstance(data, _State):
            return _NO_STATE
        data.conflicting_refs -= data.refs_of(pod_to_remove.pod)
        return None

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``Filter``: disk conflicts on this node, then the claim conflict."""
        data = state.read(STATE_KEY)
        if not isinstance(data, _State):
            return _NO_STATE
        for volume in data.disks:
            for existing in node.pods:
                if is_volume_conflict(volume, existing.pod):
                    return _DISK_CONFLICT
        return _CONFLICT if data.conflicting_refs > 0 else None


# --- events and queueing hints ---------------------------------------------------------------


def after_pod_deleted(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``isSchedulableAfterPodDeleted``: the deleted pod (same namespace) used a
    disk the pod needs, or named one of its claims (the access mode is not looked up)."""
    deleted = old if isinstance(old, Pod) else None
    if deleted is None:
        return QueueingHint.QUEUE
    if deleted.metadata.namespace != pod.pod.metadata.namespace:
        return QueueingHint.QUEUE_SKIP
    if any(is_volume_conflict(volume, deleted) for volume in _disk_volumes(pod.pod)):
        return QueueingHint.QUEUE
    claims = set(pod_persistent_claim_names(pod.pod))
    if any(name in claims for name in pod_persistent_claim_names(deleted)):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


after_claim_added = after_named_claim
"""Upstream ``isSchedulableAfterPersistentVolumeClaimAdded``: a claim the pod names (``helper.claimhints``)."""


EVENTS: Final[tuple[ClusterEventWithHint, ...]] = (
    ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), after_pod_deleted),
    ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
    ClusterEventWithHint(
        ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), after_claim_added
    ),
)
"""Upstream ``EventsToRegister`` with queueing hints on."""
