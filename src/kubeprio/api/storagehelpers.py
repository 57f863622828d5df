"""Claim/volume matching shared by the scheduler's VolumeBinding and the PV controller.

Mirrors ``k8s.io/component-helpers/storage/volume`` (``helpers.go``, ``pv_helpers.go``):
the binding annotations, ``IsVolumeBoundToClaim``, ``GetBindVolumeToClaim``,
``FindMatchingVolume`` (smallest volume that fits, or the one pre-bound to the claim),
``CheckVolumeModeMismatches``, ``CheckAccessModes``, ``CheckNodeAffinity``, and
``k8s.io/component-helpers/storage/ephemeral`` (``VolumeClaimName``, ``VolumeIsForPod``).
Also reads the claims a pod references from ``spec.volumes`` (kept as JSON in
``spec.extra``).
Pure functions over frozen models; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from kubeprio.api import selectors
from kubeprio.api.core import Node, NodeSelector, ObjectReference, Pod
from kubeprio.api.csitranslation import MIGRATABLE_SOURCE_KEYS
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.nodeaffinity import NodeSelector as CompiledNodeSelector
from kubeprio.api.persistentvolume import (
    STORAGE,
    VOLUME_AVAILABLE,
    VOLUME_FILESYSTEM,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    claim_class,
    volume_class,
    volume_phase,
)
from kubeprio.api.quantity import Quantity

ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
"""``AnnBindCompleted``: the claim's binding finished (value irrelevant; "yes")."""
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
"""``AnnBoundByController``: the binding was made by a controller, not pre-bound by a user."""
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
"""``AnnSelectedNode``: the scheduler asks for a volume provisioned for this node."""
ANN_DYNAMICALLY_PROVISIONED: Final = "pv.kubernetes.io/provisioned-by"
"""``AnnDynamicallyProvisioned``: the provisioner that created the volume."""
ANN_STORAGE_PROVISIONER: Final = "volume.kubernetes.io/storage-provisioner"
"""``AnnStorageProvisioner``: the provisioner the PV controller asks to provision a claim."""
ANN_BETA_STORAGE_PROVISIONER: Final = "volume.beta.kubernetes.io/storage-provisioner"
"""``AnnBetaStorageProvisioner`` (still written beside the GA one)."""
NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""``NotSupportedProvisioner``: a class whose volumes are only ever created by hand."""

_NO_LABELS: Final[Mapping[str, str]] = {}


def _dicts(value: object) -> Iterable[Mapping[str, Any]]:
    return (v for v in value if isinstance(v, Mapping)) if isinstance(value, list) else ()


def pod_claim_volumes(pod: Pod) -> list[tuple[str, bool]]:
    """The claims ``pod``'s volumes use, in order, as ``(claim name, is_ephemeral)``.

    A ``persistentVolumeClaim`` volume names its claim; a generic ``ephemeral`` volume
    uses the claim ``<pod>-<volume>`` (``ephemeral.VolumeClaimName``).
    """
    spec = pod.spec
    volumes = spec.extra.get("volumes") if spec is not None else None
    if not volumes:
        return []
    result: list[tuple[str, bool]] = []
    for volume in _dicts(volumes):
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, Mapping):
            result.append((str(source.get("claimName") or ""), False))
        elif isinstance(volume.get("ephemeral"), Mapping):
            result.append((ephemeral_claim_name(pod, str(volume.get("name") or "")), True))
    return result


def ephemeral_claim_name(pod: Pod, volume_name: str) -> str:
    """``ephemeral.VolumeClaimName``: the claim of a generic ephemeral volume."""
    return f"{pod.metadata.name or ''}-{volume_name}"


def pod_ephemeral_volumes(pod: Pod) -> list[tuple[str, Mapping[str, Any]]]:
    """The generic ephemeral volumes of ``pod``, in order, as ``(volume name, the
    ``volumeClaimTemplate`` JSON)`` (an empty mapping when the template is missing)."""
    spec = pod.spec
    volumes = spec.extra.get("volumes") if spec is not None else None
    result: list[tuple[str, Mapping[str, Any]]] = []
    for volume in _dicts(volumes):
        source = volume.get("ephemeral")
        if isinstance(source, Mapping):
            template = source.get("volumeClaimTemplate")
            result.append(
                (str(volume.get("name") or ""), template if isinstance(template, Mapping) else {})
            )
    return result


def claim_is_for_pod(pod: Pod, claim: PersistentVolumeClaim) -> str | None:
    """``ephemeral.VolumeIsForPod``: None when the pod controls the claim, else the error."""
    ref = claim.metadata.controller_ref()
    if claim.metadata.namespace == pod.metadata.namespace and (
        ref is not None and ref.uid == pod.metadata.uid
    ):
        return None
    return (
        f"PVC {claim.metadata.namespace}/{claim.metadata.name} was not created for pod "
        f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)"
    )


def pod_claim_names(pod: Pod) -> list[str]:
    """The names of the claims ``pod``'s volumes use (unnamed ones left out)."""
    return [name for name, _ephemeral in pod_claim_volumes(pod) if name]


def pod_persistent_claim_names(pod: Pod) -> list[str]:
    """The claims ``pod``'s ``persistentVolumeClaim`` volumes name (not its ephemeral ones):
    what the scheduler's ``NodeInfo.PVCRefCounts`` and VolumeRestrictions count."""
    return [name for name, ephemeral in pod_claim_volumes(pod) if not ephemeral]


DISK_VOLUME_SOURCES: Final = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
"""The in-tree disk sources VolumeRestrictions checks for conflicts on a node."""
_SCHEDULING_SOURCES: Final = (*DISK_VOLUME_SOURCES, *MIGRATABLE_SOURCE_KEYS)


def has_scheduling_volumes(pod: Pod) -> bool:
    """Whether a volume plugin of the scheduler has work for ``pod``: a claim (VolumeBinding,
    VolumeRestrictions, VolumeZone, NodeVolumeLimits), an in-tree disk (VolumeRestrictions'
    conflicts) or a migratable in-tree volume (NodeVolumeLimits)."""
    spec = pod.spec
    volumes = spec.extra.get("volumes") if spec is not None else None
    if not volumes:
        return False
    return any(
        "persistentVolumeClaim" in volume
        or "ephemeral" in volume
        or any(key in volume for key in _SCHEDULING_SOURCES)
        for volume in _dicts(volumes)
    )


def claim_storage_request(claim: PersistentVolumeClaim) -> Quantity | None:
    """``spec.resources.requests.storage``, or None when the claim asks for no size."""
    resources = claim.spec.resources if claim.spec else None
    requests = resources.requests if resources else None
    return (requests or {}).get(STORAGE)


def claim_request(claim: PersistentVolumeClaim) -> int:
    """``spec.resources.requests.storage`` in nano-units (0 when unset), for comparing."""
    value = claim_storage_request(claim)
    return value.nanos if value is not None else 0


def volume_capacity(volume: PersistentVolume) -> int:
    """``spec.capacity.storage`` in nano-units (0 when unset), for comparing."""
    capacity = volume.spec.capacity if volume.spec else None
    value = (capacity or {}).get(STORAGE)
    return value.nanos if value is not None else 0


def annotations_of(meta: ObjectMeta) -> Mapping[str, str]:
    """The object's annotations (empty when unset)."""
    return meta.annotations or _NO_LABELS


def is_claim_fully_bound(claim: PersistentVolumeClaim) -> bool:
    """``isPVCFullyBound``: ``spec.volumeName`` set and the bind-completed annotation."""
    return bool(claim.spec and claim.spec.volume_name) and (
        ANN_BIND_COMPLETED in annotations_of(claim.metadata)
    )


def claim_reference(claim: PersistentVolumeClaim) -> ObjectReference:
    """``reference.GetReference`` of a claim: what a volume's ``spec.claimRef`` holds."""
    meta = claim.metadata
    return ObjectReference(
        kind="PersistentVolumeClaim",
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        api_version="v1",
        resource_version=meta.resource_version,
    )


def is_volume_bound_to_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: ``claimRef`` names the claim (and its UID, when set)."""
    ref = volume.spec.claim_ref if volume.spec else None
    if ref is None:
        return False
    if ref.name != claim.metadata.name or ref.namespace != claim.metadata.namespace:
        return False
    return not ref.uid or ref.uid == claim.metadata.uid


def bind_volume_to_claim(
    volume: PersistentVolume, claim: PersistentVolumeClaim
) -> tuple[PersistentVolume, bool]:
    """``GetBindVolumeToClaim``: the volume with ``claimRef`` set to the claim (and
    ``bound-by-controller`` unless a user pre-bound it), and whether anything changed."""
    set_bound_by_controller = not is_volume_bound_to_claim(volume, claim)
    spec = volume.spec or PersistentVolumeSpec()
    ref = spec.claim_ref
    meta = claim.metadata
    dirty = False
    if ref is None or (ref.name, ref.namespace, ref.uid) != (meta.name, meta.namespace, meta.uid):
        spec = evolve(spec, claim_ref=claim_reference(claim))
        dirty = True
    metadata = volume.metadata
    annotations = annotations_of(metadata)
    if set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in annotations:
        metadata = evolve(metadata, annotations={**annotations, ANN_BOUND_BY_CONTROLLER: "yes"})
        dirty = True
    if not dirty:
        return volume, False
    return evolve(volume, metadata=metadata, spec=spec), True


def volume_mode_mismatch(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """``CheckVolumeModeMismatches``: unset modes count as Filesystem."""
    wanted = (claim.spec.volume_mode if claim.spec else None) or VOLUME_FILESYSTEM
    offered = (volume.spec.volume_mode if volume.spec else None) or VOLUME_FILESYSTEM
    return wanted != offered


def check_access_modes(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """``CheckAccessModes``: the volume offers every mode the claim asks for."""
    offered = set((volume.spec.access_modes if volume.spec else None) or ())
    return all(mode in offered for mode in (claim.spec.access_modes if claim.spec else None) or ())


def volume_node_selector(volume: PersistentVolume) -> NodeSelector | None:
    """``spec.nodeAffinity.required`` (None: reachable from every node)."""
    affinity = volume.spec.node_affinity if volume.spec else None
    return affinity.required if affinity is not None else None


def check_node_affinity(volume: PersistentVolume, node: Node) -> bool:
    """``CheckNodeAffinity``: the volume's required node affinity selects ``node``.

    Upstream matches the terms against the node's labels only (it builds a node from
    them), so ``matchFields`` on ``metadata.name`` never matches here either.
    """
    required = volume_node_selector(volume)
    if required is None:
        return True
    labels_only = Node(metadata=ObjectMeta(labels=node.metadata.labels))
    return CompiledNodeSelector(required).matches(labels_only)


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    *,
    node: Node | None = None,
    excluded: Iterable[str] = (),
    delay_binding: bool = False,
) -> PersistentVolume | None:
    """``FindMatchingVolume``: the volume pre-bound to ``claim`` if any, else the smallest
    Available volume of the claim's class that fits it.

    ``node`` is given on the scheduler's path (node affinity and access modes are checked
    there); ``delay_binding`` on the PV controller's path for WaitForFirstConsumer claims
    (then only a pre-bound volume is returned: the scheduler picks the others).
    """
    skip = set(excluded)
    requested = claim_request(claim)
    requested_class = claim_class(claim)
    selector = claim.spec.selector if claim.spec else None
    compiled = selectors.label_selector_as_selector(selector) if selector is not None else None
    smallest: PersistentVolume | None = None
    smallest_size = 0
    for volume in volumes:
        name = volume.metadata.name or ""
        if name in skip:
            continue
        ref = volume.spec.claim_ref if volume.spec else None
        if ref is not None and not is_volume_bound_to_claim(volume, claim):
            continue
        size = volume_capacity(volume)
        if size < requested or volume_mode_mismatch(claim, volume):
            continue
        if volume.metadata.deletion_timestamp:
            continue
        affinity_ok = node is None or check_node_affinity(volume, node)
        if ref is not None:
            # Pre-bound to this claim: that volume or nothing.
            return volume if affinity_ok else None
        if node is None and delay_binding:
            continue
        if volume_phase(volume) != VOLUME_AVAILABLE:
            continue
        if compiled is not None and not compiled.matches(volume.metadata.labels or _NO_LABELS):
            continue
        if volume_class(volume) != requested_class or not affinity_ok:
            continue
        if node is not None and not check_access_modes(claim, volume):
            continue
        if smallest is None or smallest_size > size:
            smallest, smallest_size = volume, size
    return smallest
