"""NodeVolumeLimits: a node may not have more volumes of a CSI driver than it can attach.

Mirrors ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go`` (``CSILimits``, v1.32,
queueing hints on):

* PreFilter: a pod with no ``persistentVolumeClaim``, generic ``ephemeral`` or migratable
  in-tree volume is SKIPped (so pods without volumes never reach Filter and keep the fast
  path: ``storagehelpers.has_scheduling_volumes``). No PreFilter extensions: the state is
  the node's own, so preemption's dry runs see a victim's volumes leave with it.
* Filter: the pod's volumes are resolved to ``driver/handle`` unique names with their
  limit keys (``filterAttachableVolumes``): a claim through its bound volume (a CSI
  source, or an in-tree source translated when ``isCSIMigrationOn`` for the node's
  CSINode), or, unbound or with its volume missing, through its class's provisioner with
  a per-claim placeholder handle (``getCSIDriverInfoFromSC``); a generic ephemeral volume's
  claim must be the pod's; an inline in-tree volume is translated
  (``checkAttachableInlineVolume``). A missing claim of the pod is
  UnschedulableAndUnresolvable ``looking up PVC NS/NAME: persistentvolumeclaim "NAME" not
  found``. The node's limits are its ``attachable-volumes-*`` allocatable plus its
  CSINode drivers' ``allocatable.count`` (keyed ``attachable-volumes-csi-<driver>``); no
  CSINode and no such allocatable means no limit. The volumes already on the node are
  resolved the same way (those that fail to resolve are not counted), a volume the pod
  shares with them counts once, and a driver whose attached plus new volumes exceed its
  limit makes the node Unschedulable ``node(s) exceed max volume count`` -- not
  unresolvable: preempting a pod that holds a slot may help.

Instead of walking the node's pods (upstream's ``nodeInfo.Pods``), Filter reads
``NodeInfo.volume_refs``: each attachable volume reference of the node's pods with its
pod count, kept by the cache as pods come and go (and by the clones of preemption's dry
runs), so a decision costs the pod's volumes plus the node's distinct volumes.

Kubeprio's placeholder handle for an unbound claim is a fixed prefix instead of
upstream's random one (so runs stay reproducible); it cannot collide with a real handle.

Registered events (``EVENTS``): a CSINode added (no hint), a pod deleted (queued when it
was bound and had a claim, an ephemeral or a migratable inline volume), a claim added
(one the pod uses, by name in its namespace). Driven by ``scheduler.runtime``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubeprio.api.attachablevolumes import CLAIM, EPHEMERAL, VolumeRef, pod_volume_refs
from kubeprio.api.core import Pod
from kubeprio.api.csi import CSINode, driver_allocatable_counts
from kubeprio.api.csitranslation import (
    ATTACHABLE_VOLUMES_PREFIX,
    BY_NAME,
    csi_attach_limit_key,
    is_csi_migration_on,
    migratable_source,
    volume_handle,
)
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim, claim_class
from kubeprio.api.storageclass import StorageClass
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "NodeVolumeLimits"
ERR_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
"""``ErrReasonMaxVolumeCountExceeded``."""
UNBOUND_HANDLE_PREFIX: Final = "kubeprio-unbound-claim"
"""Stands for upstream's ``randomVolumeIDPrefix`` in an unbound claim's placeholder handle."""

ClaimLookup = Callable[[str, str], PersistentVolumeClaim | None]
"""(name, namespace) -> the claim in the scheduler's informer, None when absent."""
VolumeLookup = Callable[[str], PersistentVolume | None]
ClassLookup = Callable[[str], StorageClass | None]
CSINodeLookup = Callable[[str], CSINode | None]

Resolved = dict[str, str]
"""Unique volume name (``driver/handle``) -> its limit key."""

_EXCEEDED: Final = framework.unschedulable(ERR_MAX_VOLUME_COUNT_EXCEEDED)


class _ResolveError(Exception):
    """A pod volume that cannot be resolved (``filterAttachableVolumes``' error)."""

    def __init__(self, message: str, *, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


class NodeVolumeLimits:
    """The NodeVolumeLimits plugin (``CSILimits``: PreFilter, Filter)."""

    name: Final = NAME

    def __init__(
        self,
        claims: ClaimLookup,
        volumes: VolumeLookup,
        classes: ClassLookup,
        csi_nodes: CSINodeLookup,
    ) -> None:
        self.claims = claims
        self.volumes = volumes
        self.classes = classes
        self.csi_nodes = csi_nodes

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Upstream ``PreFilter``: nothing to count -> SKIP."""
        return None, (None if pod.volume_refs else framework.SKIP)

    def pre_filter_extensions(self) -> framework.PreFilterExtensions | None:
        """None: Filter reads only the node info it is handed."""
        return None

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``Filter``."""
        if not pod.volume_refs:
            return None
        csi_node = self.csi_nodes(node.name)
        new_volumes: Resolved = {}
        try:
            for ref in pod.volume_refs:
                self._resolve(ref, csi_node, new_volumes, new_pod=True)
        except _ResolveError as err:
            if err.not_found:
                return framework.unresolvable(str(err))
            return framework.error(str(err))
        if not new_volumes:
            return None
        limits = volume_limits(node, csi_node)
        if not limits:
            return None
        attached: Resolved = {}
        try:
            for ref in node.volume_refs:
                self._resolve(ref, csi_node, attached, new_pod=False)
        except _ResolveError as err:
            return framework.error(str(err))
        attached_count: dict[str, int] = {}
        for unique_name, limit_key in attached.items():
            # A volume the pod shares with a pod on the node is attached once.
            new_volumes.pop(unique_name, None)
            attached_count[limit_key] = attached_count.get(limit_key, 0) + 1
        new_count: dict[str, int] = {}
        for limit_key in new_volumes.values():
            new_count[limit_key] = new_count.get(limit_key, 0) + 1
        for limit_key, count in new_count.items():
            limit = limits.get(limit_key)
            if limit is not None and attached_count.get(limit_key, 0) + count > limit:
                return _EXCEEDED
        return None

    # --- resolving volumes ---------------------------------------------------------------

    def _resolve(
        self, ref: VolumeRef, csi_node: CSINode | None, result: Resolved, *, new_pod: bool
    ) -> None:
        """Add ``ref``'s unique name and limit key to ``result`` when it counts."""
        if ref.kind not in (CLAIM, EPHEMERAL):
            plugin = BY_NAME[ref.scope]
            if is_csi_migration_on(csi_node, plugin):
                result[f"{plugin.driver}/{ref.name}"] = csi_attach_limit_key(plugin.driver)
            return
        namespace, claim_name = ref.scope, ref.name
        if not claim_name:
            raise _ResolveError("PersistentVolumeClaim had no name")
        claim = self.claims(claim_name, namespace)
        if claim is None:
            if new_pod:
                raise _ResolveError(
                    f"looking up PVC {namespace}/{claim_name}: "
                    f'persistentvolumeclaim "{claim_name}" not found',
                    not_found=True,
                )
            return  # an existing pod's missing claim is not counted
        if ref.kind == EPHEMERAL:
            owner = claim.metadata.controller_ref()
            if owner is None or owner.uid != ref.pod_uid:
                raise _ResolveError(
                    f"PVC {namespace}/{claim_name} was not created for pod "
                    f"{namespace}/{ref.pod_name} (pod is not owner)"
                )
        driver, handle = self._claim_driver(claim, csi_node)
        if driver and handle:
            result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)

    def _claim_driver(
        self, claim: PersistentVolumeClaim, csi_node: CSINode | None
    ) -> tuple[str, str]:
        """``getCSIDriverInfo``: the claim's CSI driver and volume handle ("" when none)."""
        volume_name = claim.spec.volume_name if claim.spec is not None else None
        volume = self.volumes(volume_name) if volume_name else None
        if volume is None:
            return self._class_driver(claim, csi_node)
        sources: Mapping[str, Any] = volume.spec.extra if volume.spec is not None else {}
        csi = sources.get("csi")
        if isinstance(csi, Mapping):
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        migratable = migratable_source(sources)
        if migratable is None:
            return "", ""
        plugin, source = migratable
        if not is_csi_migration_on(csi_node, plugin):
            return "", ""
        return plugin.driver, volume_handle(plugin, source, volume.metadata.labels or {})

    def _class_driver(
        self, claim: PersistentVolumeClaim, csi_node: CSINode | None
    ) -> tuple[str, str]:
        """``getCSIDriverInfoFromSC``: the class's provisioner (its CSI driver when it is a
        migrated in-tree plugin) and a placeholder handle for this claim."""
        class_name = claim_class(claim)
        storage_class = self.classes(class_name) if class_name else None
        if storage_class is None:
            return "", ""
        meta = claim.metadata
        handle = f"{UNBOUND_HANDLE_PREFIX}-{meta.namespace or ''}/{meta.name or ''}"
        provisioner = storage_class.provisioner or ""
        plugin = BY_NAME.get(provisioner)
        if plugin is None:
            return provisioner, handle
        if not is_csi_migration_on(csi_node, plugin):
            return "", ""
        return plugin.driver, handle


def volume_limits(node: NodeInfo, csi_node: CSINode | None) -> dict[str, int]:
    """``getVolumeLimits``: the node's ``attachable-volumes-*`` allocatable, overridden
    by its CSINode drivers' ``allocatable.count``."""
    limits = {
        name: value
        for name, value in node.allocatable.items()
        if name.startswith(ATTACHABLE_VOLUMES_PREFIX)
    }
    if csi_node is not None:
        for driver, count in driver_allocatable_counts(csi_node).items():
            limits[csi_attach_limit_key(driver)] = count
    return limits


# --- events and queueing hints ---------------------------------------------------------------


def after_pod_deleted(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``isSchedulableAfterPodDeleted``: a bound pod with a volume that counts."""
    deleted = old if isinstance(old, Pod) else None
    if deleted is None:
        return QueueingHint.QUEUE
    if deleted.spec is None or not deleted.spec.node_name:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if pod_volume_refs(deleted) else QueueingHint.QUEUE_SKIP


def after_claim_added(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``isSchedulableAfterPVCAdded``: a claim of the pod's namespace that one of
    its claim or ephemeral volumes uses."""
    if not isinstance(new, PersistentVolumeClaim):
        return QueueingHint.QUEUE
    if new.metadata.namespace != pod.pod.metadata.namespace:
        return QueueingHint.QUEUE_SKIP
    used = {ref.name for ref in pod.volume_refs if ref.kind in (CLAIM, EPHEMERAL)}
    return QueueingHint.QUEUE if new.metadata.name in used else QueueingHint.QUEUE_SKIP


EVENTS: Final[tuple[ClusterEventWithHint, ...]] = (
    # Any new CSINode may lift a limit, so no hint (upstream registers none either).
    ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
    ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE), after_pod_deleted),
    ClusterEventWithHint(
        ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), after_claim_added
    ),
)
"""Upstream ``EventsToRegister`` with queueing hints on."""
