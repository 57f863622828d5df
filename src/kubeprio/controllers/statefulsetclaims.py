"""A StatefulSet's PersistentVolumeClaims and who should own them, worked out without writing.

Mirrors the claim parts of ``pkg/controller/statefulset/stateful_set_utils.go`` (v1.32):

* ``claims_for`` (``getPersistentVolumeClaims``): one claim per ``volumeClaimTemplates``
  entry (the templates sit in the set's ``spec.extra``, already defaulted), named
  ``<template>-<set>-<ordinal>`` (``getPersistentVolumeClaimName``), in the set's
  namespace, labelled with the template's labels plus the selector's ``matchLabels`` (the
  ``matchLabels`` alone when the template has none), everything else -- the storage
  class, size, access modes, annotations -- as the template says;
* the ``persistentVolumeClaimRetentionPolicy`` owner references
  (``isClaimOwnerUpToDate``, ``updateClaimOwnerRefForSetAndPod``)::

      whenScaled  whenDeleted  owner references the claim should carry
      Retain      Retain       none
      Retain      Delete       the set (controller)
      Delete      Retain       the pod, once condemned (scaled away)
      Delete      Delete       the pod once condemned, else the set

  A claim with a stale reference (the set's or the pod's name and kind with another UID:
  an earlier incarnation's) is left alone; another controller owning it makes the
  set's and the pod's references go and none come back (``hasUnexpectedController``); a
  plain (non-controller) reference of the set or pod is made a controller one;
* ``has_stale_owner_ref`` (``hasStaleOwnerRef``), which ``PodClaimIsStale`` uses to hold
  back a pod whose claim still belongs to its deleted predecessor.

Pure: no client. The garbage collector deletes a claim once its owner is gone.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.core import Pod
from kubeprio.api.meta import ApiObject, ObjectMeta, OwnerReference
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.serialization import from_dict
from kubeprio.api.statefulset import StatefulSet, replicas
from kubeprio.controllers import statefulsetutil as util

RETAIN: Final = "Retain"
DELETE: Final = "Delete"
_SET_REF: Final = ("apps/v1", "StatefulSet")
_POD_REF: Final = ("v1", "Pod")


def claim_name(template_name: str, sts: StatefulSet, ordinal: int) -> str:
    """``getPersistentVolumeClaimName``: ``<template>-<set>-<ordinal>``."""
    return f"{template_name}-{sts.metadata.name}-{ordinal}"


def templates(sts: StatefulSet) -> list[JsonDict]:
    """The ``volumeClaimTemplates`` (JSON objects) in their order."""
    found = sts.spec.extra.get(util.VOLUME_CLAIM_TEMPLATES) if sts.spec else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _template_name(template: JsonDict) -> str:
    metadata = template.get("metadata")
    return str(metadata.get("name") or "") if isinstance(metadata, dict) else ""


def claim_names(sts: StatefulSet, ordinal: int) -> list[str]:
    """The claim names of one ordinal, in template order."""
    return [claim_name(_template_name(t), sts, ordinal) for t in templates(sts)]


def claims_for(sts: StatefulSet, pod: Pod) -> list[PersistentVolumeClaim]:
    """``getPersistentVolumeClaims``: the claims ``pod`` mounts, as the set would make them."""
    ordinal = util.ordinal_of(pod)
    selector = sts.spec.selector if sts.spec else None
    match_labels = dict((selector.match_labels if selector else None) or {})
    found: list[PersistentVolumeClaim] = []
    for template in templates(sts):
        document: dict[str, Any] = dict(template)
        metadata = dict(template.get("metadata") or {})
        labels = metadata.get("labels")
        metadata["labels"] = {**labels, **match_labels} if labels else match_labels or None
        metadata["name"] = claim_name(_template_name(template), sts, ordinal)
        metadata["namespace"] = sts.metadata.namespace
        metadata.pop("creationTimestamp", None)
        document["metadata"] = {k: v for k, v in metadata.items() if v is not None}
        found.append(from_dict(PersistentVolumeClaim, document))
    return found


# --- the retention policy ------------------------------------------------------------------


def retention_policy(sts: StatefulSet) -> tuple[str, str]:
    """``getPersistentVolumeClaimRetentionPolicy``: (whenDeleted, whenScaled), Retain when
    unset."""
    policy = sts.spec.persistent_volume_claim_retention_policy if sts.spec else None
    if policy is None:
        return RETAIN, RETAIN
    return policy.when_deleted or RETAIN, policy.when_scaled or RETAIN


def _matches_ref(ref: OwnerReference, obj: ApiObject, gvk: tuple[str, str]) -> bool:
    """``matchesRef``: the same apiVersion, kind and name (the UID aside)."""
    return (ref.api_version, ref.kind) == gvk and ref.name == obj.metadata.name


def has_stale_owner_ref(claim: PersistentVolumeClaim, obj: ApiObject, gvk: tuple[str, str]) -> bool:
    """``hasStaleOwnerRef``: the first reference naming ``obj`` carries another UID."""
    for ref in claim.metadata.owner_references or ():
        if _matches_ref(ref, obj, gvk):
            return ref.uid != obj.metadata.uid
    return False


def pod_ref_is_stale(claim: PersistentVolumeClaim, pod: Pod) -> bool:
    """``hasStaleOwnerRef(claim, pod, podKind)``."""
    return has_stale_owner_ref(claim, pod, _POD_REF)


def has_owner_ref(claim: PersistentVolumeClaim, owner: ApiObject) -> bool:
    """``hasOwnerRef``: some reference carries the owner's UID."""
    uid = owner.metadata.uid
    return any(ref.uid == uid for ref in claim.metadata.owner_references or ())


def has_unexpected_controller(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """``hasUnexpectedController``: with a Delete policy, a controller reference that is
    neither the set nor the pod (or theirs with a stale UID)."""
    if retention_policy(sts) == (RETAIN, RETAIN):
        return False
    for ref in claim.metadata.owner_references or ():
        if _matches_ref(ref, sts, _SET_REF):
            if ref.uid != sts.metadata.uid:
                return True
            continue
        if _matches_ref(ref, pod, _POD_REF):
            if ref.uid != pod.metadata.uid:
                return True
            continue
        if ref.controller:
            return True
    return False


def _has_non_controller_owner(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """``hasNonControllerOwner``: the set or pod owns the claim without being its controller."""
    uids = {sts.metadata.uid, pod.metadata.uid}
    return any(
        ref.uid in uids and not ref.controller for ref in claim.metadata.owner_references or ()
    )


def _scaled_down(sts: StatefulSet, pod: Pod) -> bool:
    """``!podInOrdinalRange``: the pod's ordinal is past the set's replicas."""
    return not util.in_ordinal_range(sts, pod, replicas(sts))


def is_claim_owner_up_to_date(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """``isClaimOwnerUpToDate``: the claim's references agree with the retention policy
    (stale references and foreign controllers leave it as it is)."""
    if has_stale_owner_ref(claim, sts, _SET_REF) or has_stale_owner_ref(claim, pod, _POD_REF):
        return True
    if has_unexpected_controller(claim, sts, pod):
        # Our references must go; without any there is nothing to change.
        return not (has_owner_ref(claim, sts) or has_owner_ref(claim, pod))
    if _has_non_controller_owner(claim, sts, pod):
        return False
    when_deleted, when_scaled = retention_policy(sts)
    set_ref, pod_ref = has_owner_ref(claim, sts), has_owner_ref(claim, pod)
    if when_scaled == DELETE and when_deleted in (RETAIN, DELETE):
        scaled_down = _scaled_down(sts, pod)
        if when_deleted == RETAIN and set_ref:
            return False
        if when_deleted == DELETE and scaled_down == set_ref:
            return False
        return scaled_down == pod_ref
    if when_scaled == RETAIN and when_deleted == DELETE:
        return set_ref and not pod_ref
    # Retain/Retain, and an unknown policy treated as Retain.
    return not (set_ref or pod_ref)


def _controller_ref(owner: ApiObject, gvk: tuple[str, str]) -> OwnerReference:
    """``metav1.NewControllerRef``."""
    return OwnerReference(
        api_version=gvk[0],
        kind=gvk[1],
        name=owner.metadata.name,
        uid=owner.metadata.uid,
        controller=True,
        block_owner_deletion=True,
    )


def _add_controller_ref(
    refs: list[OwnerReference], owner: ApiObject, gvk: tuple[str, str]
) -> list[OwnerReference]:
    """``addControllerRef``: append unless a reference with the owner's UID is there."""
    if any(ref.uid == owner.metadata.uid for ref in refs):
        return refs
    return [*refs, _controller_ref(owner, gvk)]


def with_policy_owner_refs(
    claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod
) -> PersistentVolumeClaim:
    """``updateClaimOwnerRefForSetAndPod``: the claim with the set's and pod's references
    scrubbed and put back as the retention policy wants (none under a foreign
    controller)."""
    unexpected = has_unexpected_controller(claim, sts, pod)
    refs = [
        ref
        for ref in claim.metadata.owner_references or ()
        if not (_matches_ref(ref, sts, _SET_REF) or _matches_ref(ref, pod, _POD_REF))
    ]
    if not unexpected:
        when_deleted, when_scaled = retention_policy(sts)
        scaled_down = _scaled_down(sts, pod)
        if when_scaled == RETAIN and when_deleted == DELETE:
            refs = _add_controller_ref(refs, sts, _SET_REF)
        elif when_scaled == DELETE and when_deleted in (RETAIN, DELETE):
            if scaled_down:
                refs = _add_controller_ref(refs, pod, _POD_REF)
            elif when_deleted == DELETE:
                refs = _add_controller_ref(refs, sts, _SET_REF)
    metadata: ObjectMeta = evolve(claim.metadata, owner_references=tuple(refs) or None)
    return evolve(claim, metadata=metadata)
