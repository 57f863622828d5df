"""The scheduler's volume binder: claim/volume decisions for one pod (upstream ``binder.go``).

Mirrors ``pkg/scheduler/framework/plugins/volumebinding/binder.go`` (``volumeBinder``)
and its assume caches (``assume_cache.go``), trimmed to what kubeprio models (no CSI
translation of in-tree volumes):

* ``get_pod_volume_claims`` sorts the pod's claims into bound, unbound delayed-binding
  (WaitForFirstConsumer, no ``volumeName``) and unbound immediate ones;
* ``find_pod_volumes`` decides, for one node, the static bindings (smallest matching
  Available volume per claim, node affinity checked) and the claims to provision (their
  class's provisioner and topology, and, for a CSI driver tracking storage capacity, a
  CSIStorageCapacity with room reachable from the node: ``capacitycheck``), or the
  conflict reasons;
* ``assume_pod_volumes`` / ``revert_assumed_pod_volumes`` keep those decisions in the
  assume caches, so the next pods' cycles see the volumes as taken;
* ``bind_api_update`` writes them (a volume's ``claimRef``; a claim's
  ``volume.kubernetes.io/selected-node``) and ``check_bindings`` reports whether the PV
  controller and the provisioner finished (``BindPodVolumes``' poll body). A write that
  waits on an admission webhook (``WritePendingError``) reverts nothing: the writes
  done are counted in ``PodVolumes`` and the next call goes on from the one that waits.

Reads through informers and the ``Client``; never blocks (the PreBind wait is the
scheduler's, see ``VolumeBinding.pre_bind``). Must not import the scheduler's cycle.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from kubeprio.api import errors, storagehelpers
from kubeprio.api.core import Node, Pod
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import (
    CLAIM_LOST,
    PersistentVolume,
    PersistentVolumeClaim,
    claim_class,
    claim_phase,
    volume_class,
)
from kubeprio.api.storageclass import BINDING_WAIT_FOR_FIRST_CONSUMER, StorageClass
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import Client
from kubeprio.client.writepending import WritePendingError
from kubeprio.errors import KubeprioError
from kubeprio.scheduler.plugins.assumecache import AssumeCache, version_of
from kubeprio.scheduler.plugins.capacitycheck import CapacityCheck

ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

CLASS_INDEX: Final = "storage-class"
"""The volume informer's index by class (``GetPersistentVolumeClass``), as upstream's
PV assume cache indexes volumes for ``ListPVs(storageClassName)``."""


def by_class(volume: PersistentVolume) -> list[str]:
    """``CLASS_INDEX``'s key."""
    return [volume_class(volume)]


class BinderError(KubeprioError):
    """A binder step failed; the message is upstream's error text."""


@dataclasses.dataclass(slots=True)
class PodVolumeClaims:
    """A pod's claims by state (upstream ``PodVolumeClaims``)."""

    bound: list[PersistentVolumeClaim]
    unbound_delay_binding: list[PersistentVolumeClaim]
    unbound_immediate: list[PersistentVolumeClaim]


@dataclasses.dataclass(slots=True)
class PodVolumes:
    """One node's decisions for a pod (upstream ``PodVolumes``): (claim, volume) pairs to
    bind and claims to provision."""

    static_bindings: list[tuple[PersistentVolumeClaim, PersistentVolume]]
    dynamic_provisions: list[PersistentVolumeClaim]
    written_bindings: int = 0
    """``static_bindings`` written so far (``bind_api_update`` goes on from there)."""
    written_provisions: int = 0
    """``dynamic_provisions`` written so far."""


def _claim_key(claim: PersistentVolumeClaim) -> str:
    return f"{claim.metadata.namespace or ''}/{claim.metadata.name or ''}"


class VolumeBinder:
    """Upstream ``volumeBinder`` over kubeprio informers."""

    def __init__(
        self,
        client: Client,
        *,
        claims: Informer[PersistentVolumeClaim],
        volumes: Informer[PersistentVolume],
        classes: Informer[StorageClass],
        capacity: CapacityCheck,
    ) -> None:
        self.client = client
        self.claims = AssumeCache(claims)
        self.volumes = AssumeCache(volumes)
        self.classes = classes
        self.capacity = capacity
        """Upstream's ``CapacityCheck`` (CSIDriver and CSIStorageCapacity listers)."""

    # --- PreFilter ------------------------------------------------------------------------

    def is_delay_binding_mode(self, claim: PersistentVolumeClaim) -> bool:
        """``IsDelayBindingMode``: the claim's class exists and waits for a consumer."""
        name = claim_class(claim)
        if not name:
            return False
        storage_class = self.classes.get(name)
        if storage_class is None:
            return False
        if storage_class.volume_binding_mode is None:
            raise BinderError(f"VolumeBindingMode not set for StorageClass {name!r}")
        return storage_class.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """``GetPodVolumeClaims``: every claim the pod uses, sorted by state."""
        result = PodVolumeClaims([], [], [])
        namespace = pod.metadata.namespace or ""
        for name, _ephemeral in storagehelpers.pod_claim_volumes(pod):
            claim = self.claims.get(name, namespace)
            if claim is None:
                raise BinderError(f'error getting PVC "{namespace}/{name}": not found')
            if storagehelpers.is_claim_fully_bound(claim):
                result.bound.append(claim)
            elif self.is_delay_binding_mode(claim) and not (claim.spec and claim.spec.volume_name):
                result.unbound_delay_binding.append(claim)
            else:
                # Pre-bound claims (volumeName set) count as immediate, as upstream.
                result.unbound_immediate.append(claim)
        return result

    # --- Filter ---------------------------------------------------------------------------

    def find_pod_volumes(
        self, pod: Pod, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, list[str]]:
        """``FindPodVolumes``: this node's bindings and provisions, or the reasons it
        cannot serve the pod's claims (raises ``BinderError`` on an error)."""
        volumes = PodVolumes([], [])
        bound_satisfied = pvs_found = unbound_satisfied = sufficient_storage = True
        if claims.bound:
            bound_satisfied, pvs_found = self._check_bound_claims(claims.bound, node)
        to_bind = claims.unbound_delay_binding
        if to_bind:
            unbound_satisfied, sufficient_storage = self._find_unbound(to_bind, node, volumes)
        reasons: list[str] = []
        if not bound_satisfied:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_satisfied:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return volumes, reasons

    def _check_bound_claims(
        self, claims: list[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool]:
        """``checkBoundClaims``: (node affinity satisfied, every bound volume exists)."""
        for claim in claims:
            volume = self.volumes.get((claim.spec.volume_name if claim.spec else None) or "")
            if volume is None:
                return True, False
            if not storagehelpers.check_node_affinity(volume, node):
                return False, True
        return True, True

    def _find_unbound(
        self, claims: list[PersistentVolumeClaim], node: Node, result: PodVolumes
    ) -> tuple[bool, bool]:
        """(the unbound claims are satisfied, there is storage enough to provision)."""
        node_name = node.metadata.name or ""
        to_match: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        for claim in claims:
            selected = storagehelpers.annotations_of(claim.metadata).get(
                storagehelpers.ANN_SELECTED_NODE
            )
            if selected is not None:
                if selected != node_name:
                    return False, True  # upstream's fast path: provisioning is for another node
                to_provision.append(claim)
            else:
                to_match.append(claim)
        satisfied = True
        if to_match:
            # Smallest requests first, so each takes the smallest volume that fits.
            chosen: list[str] = []
            for claim in sorted(to_match, key=storagehelpers.claim_request):
                volume = storagehelpers.find_matching_volume(
                    claim, self._volumes_of_class(claim_class(claim)), node=node, excluded=chosen
                )
                if volume is None:
                    to_provision.append(claim)
                    satisfied = False
                    continue
                chosen.append(volume.metadata.name or "")
                result.static_bindings.append((claim, volume))
        if to_provision:
            # As upstream, the provisioning verdict replaces the matching one.
            return self._check_volume_provisions(to_provision, node, result)
        return satisfied, True

    def _volumes_of_class(self, name: str) -> list[PersistentVolume]:
        """``pvCache.ListPVs(class)``: the informer's volumes of a class, assumed versions
        taking precedence."""
        listed = self.volumes.informer.by_index(CLASS_INDEX, name)
        return [self.volumes.get(v.metadata.name or "") or v for v in listed]

    def _check_volume_provisions(
        self, claims: list[PersistentVolumeClaim], node: Node, result: PodVolumes
    ) -> tuple[bool, bool]:
        """``checkVolumeProvisions``: (every claim's class can provision on this node,
        its driver reports room for it there); the first failing claim decides."""
        provisions: list[PersistentVolumeClaim] = []
        for claim in claims:
            name = claim_class(claim)
            if not name:
                raise BinderError(f'no class for claim "{_claim_key(claim)}"')
            storage_class = self.classes.get(name)
            if storage_class is None:
                raise BinderError(f'failed to find storage class "{name}"')
            provisioner = storage_class.provisioner or ""
            if provisioner in ("", storagehelpers.NOT_SUPPORTED_PROVISIONER):
                return False, True
            if not _matches_topology(storage_class, node):
                return False, True
            if not self.capacity.has_enough_capacity(provisioner, claim, name, node):
                return True, False
            provisions.append(claim)
        result.dynamic_provisions = provisions
        return True, True

    # --- Reserve / Unreserve ---------------------------------------------------------------

    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        """``arePodVolumesBound``: every claim the pod uses is fully bound."""
        namespace = pod.metadata.namespace or ""
        for name, _ephemeral in storagehelpers.pod_claim_volumes(pod):
            claim = self.claims.get(name, namespace)
            if claim is None or not storagehelpers.is_claim_fully_bound(claim):
                return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """``AssumePodVolumes``: hold the decisions in the caches; True if all is bound
        already (nothing to do at PreBind)."""
        if self.are_pod_volumes_bound(pod):
            return True
        bindings: list[tuple[PersistentVolumeClaim, PersistentVolume]] = []
        for claim, volume in volumes.static_bindings:
            new_volume, dirty = storagehelpers.bind_volume_to_claim(volume, claim)
            if dirty:
                self.volumes.assume(new_volume)
            bindings.append((claim, new_volume))
        provisions: list[PersistentVolumeClaim] = []
        for claim in volumes.dynamic_provisions:
            annotations = {
                **storagehelpers.annotations_of(claim.metadata),
                storagehelpers.ANN_SELECTED_NODE: node_name,
            }
            assumed = evolve(claim, metadata=evolve(claim.metadata, annotations=annotations))
            self.claims.assume(assumed)
            provisions.append(assumed)
        volumes.static_bindings = bindings
        volumes.dynamic_provisions = provisions
        return False

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        """``RevertAssumedPodVolumes``."""
        for _claim, volume in volumes.static_bindings:
            self.volumes.restore(volume.metadata.name or "")
        for claim in volumes.dynamic_provisions:
            self.claims.restore(claim.metadata.name or "", claim.metadata.namespace)

    # --- PreBind ------------------------------------------------------------------------------

    def bind_api_update(self, volumes: PodVolumes) -> None:
        """``bindAPIUpdate``: write the volumes' claimRefs and the claims' selected node
        (raises the API error; unwritten assumptions are reverted). A write waiting on
        webhook answers raises ``WritePendingError`` and reverts nothing: call again to
        go on from it (the writes done are not sent twice)."""
        try:
            while volumes.written_bindings < len(volumes.static_bindings):
                i = volumes.written_bindings
                claim, volume = volumes.static_bindings[i]
                volumes.static_bindings[i] = (claim, self.client.update(volume))
                volumes.written_bindings += 1
            while volumes.written_provisions < len(volumes.dynamic_provisions):
                i = volumes.written_provisions
                volumes.dynamic_provisions[i] = self.client.update(volumes.dynamic_provisions[i])
                volumes.written_provisions += 1
        except WritePendingError:
            raise  # still assumed, as while upstream's binding goroutine waits on the call
        except BaseException:
            for _claim, volume in volumes.static_bindings[volumes.written_bindings :]:
                self.volumes.restore(volume.metadata.name or "")
            for claim in volumes.dynamic_provisions[volumes.written_provisions :]:
                self.claims.restore(claim.metadata.name or "", claim.metadata.namespace)
            raise

    def check_bindings(self, pod: Pod, node: Node | None, volumes: PodVolumes) -> bool:
        """``checkBindings``: True once every claim is fully bound; raises ``BinderError``
        when binding must be retried from scratch."""
        node_name = (pod.spec.node_name if pod.spec else None) or ""
        if node is None:
            raise BinderError(f'failed to get node "{node_name}": node "{node_name}" not found')
        namespace = pod.metadata.namespace or ""
        try:
            self.client.get(Pod, pod.metadata.name or "", namespace)
        except errors.NotFoundError as exc:
            raise BinderError(f"pod does not exist any more: {exc}") from exc
        for claim, written in volumes.static_bindings:
            volume = self.volumes.get_api(written.metadata.name or "")
            current = self.claims.get_api(claim.metadata.name or "", claim.metadata.namespace)
            if volume is None:
                raise BinderError(
                    f'failed to check binding: PersistentVolume "{written.metadata.name}" not found'
                )
            if current is None:
                raise BinderError(
                    f'failed to check binding: PersistentVolumeClaim "{_claim_key(claim)}" not found'
                )
            if version_of(written) > version_of(volume):
                return False  # our write has not reached the informer yet
            if not storagehelpers.check_node_affinity(volume, node):
                raise BinderError(
                    f'pv "{volume.metadata.name}" node affinity doesn\'t match node '
                    f'"{node_name}": no matching NodeSelectorTerms'
                )
            ref = volume.spec.claim_ref if volume.spec else None
            if ref is None or not ref.uid:
                raise BinderError(f'ClaimRef got reset for pv "{volume.metadata.name}"')
            if not storagehelpers.is_claim_fully_bound(current):
                return False
        for written_claim in volumes.dynamic_provisions:
            latest = self.claims.get_api(
                written_claim.metadata.name or "", written_claim.metadata.namespace
            )
            if latest is None:
                raise BinderError(
                    "failed to check provisioning pvc: PersistentVolumeClaim "
                    f'"{_claim_key(written_claim)}" not found'
                )
            claim = latest
            if version_of(written_claim) > version_of(claim):
                return False
            selected = storagehelpers.annotations_of(claim.metadata).get(
                storagehelpers.ANN_SELECTED_NODE
            )
            if selected != node_name:
                raise BinderError(f'provisioning failed for PVC "{claim.metadata.name}"')
            volume_name = claim.spec.volume_name if claim.spec else None
            if volume_name:
                volume = self.volumes.get_api(volume_name)
                if volume is None:
                    return False  # tolerated: the volume may not have reached us yet
                if not storagehelpers.check_node_affinity(volume, node):
                    raise BinderError(
                        f'pv "{volume_name}" node affinity doesn\'t match node '
                        f'"{node_name}": no matching NodeSelectorTerms'
                    )
            if not storagehelpers.is_claim_fully_bound(claim):
                return False
        return True


def _matches_topology(storage_class: StorageClass, node: Node) -> bool:
    """``MatchTopologySelectorTerms``: no terms match every node; else any term whose
    every requirement has the node's label value among its values."""
    terms = storage_class.allowed_topologies
    if not terms:
        return True
    labels = node.metadata.labels or {}
    for term in terms:
        requirements = term.match_label_expressions or ()
        if all(labels.get(req.key or "\0") in (req.values or ()) for req in requirements):
            return True
    return False


def claim_lost_message(claim: PersistentVolumeClaim) -> str | None:
    """PreFilter's text for a Lost claim, or None."""
    if claim_phase(claim) != CLAIM_LOST:
        return None
    volume_name = (claim.spec.volume_name if claim.spec else None) or ""
    return (
        f'persistentvolumeclaim "{claim.metadata.name}" bound to non-existent '
        f'persistentvolume "{volume_name}"'
    )
