"""A StatefulSet's pods and revisions, worked out without writing anything.

Mirrors ``pkg/controller/statefulset/stateful_set_utils.go`` and the pure parts of
``stateful_set_control.go``:

* identity: a pod's parent and ordinal come from its name (``<set>-<ordinal>``,
  ``getParentNameAndOrdinal``); ``new_pod`` (``newStatefulSetPod``) makes the pod of one
  ordinal from the template (``generateName`` ``<set>-`` as ``GetPodFromTemplate`` sets
  it, then the name), with ``spec.hostname`` its name, ``spec.subdomain`` the set's
  ``serviceName``, the labels ``statefulset.kubernetes.io/pod-name``,
  ``apps.kubernetes.io/pod-index`` and ``controller-revision-hash``, and one
  ``persistentVolumeClaim`` volume per claim template (``<claim>-<set>-<ordinal>``; the
  claims themselves are ``controllers.statefulsetclaims``'s);
  ``identity_matches``/``storage_matches`` and ``update_identity`` repair a pod whose
  labels or volumes someone changed;
* the pod predicates ``isCreated``, ``isRunningAndReady``, ``isRunningAndAvailable``,
  ``isHealthy``, ``isUnavailable`` (``minReadySeconds``);
* history: ``revision_data`` (``getPatch``: ``{"spec":{"template":{..,"$patch":"replace"}}}``,
  keys sorted as Go marshals a map), ``revision_hash`` (``HashControllerRevision``:
  FNV-1 over those JSON bytes and the decimal collision count, safe-encoded, so names
  match a real cluster's for the same template), ``new_revision`` (``newRevision``: the
  template's labels plus the hash, the set's annotations), ``apply_revision``
  (``ApplyRevision``: the set with the revision's template);
* status: ``compute_status`` (``updateStatus``), ``complete_rolling_update``,
  ``inconsistent_status``.

Pure: no client, no clock (``now`` is passed in).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.core import (
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_SUCCEEDED,
    Pod,
    PodSpec,
    PodTemplateSpec,
)
from kubeprio.api.errors import go_json
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.serialization import from_dict
from kubeprio.api.statefulset import (
    PARALLEL,
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_LABEL,
    ROLLING_UPDATE,
    StatefulSet,
    StatefulSetStatus,
    start_ordinal,
    update_strategy,
)
from kubeprio.controllers import daemonsethistory, deploymentutil, podutil

_POD_NAME: Final = re.compile(r"(.*)-([0-9]+)$")
MAX_REVISION_PREFIX: Final = 223
"""``ControllerRevisionName`` keeps at most this much of the parent's name."""
VOLUME_CLAIM_TEMPLATES: Final = "volumeClaimTemplates"


# --- identity -------------------------------------------------------------------------------


def parent_and_ordinal(pod: Pod) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: ``("web", 2)`` for ``web-2``; ``("", -1)`` otherwise."""
    match = _POD_NAME.fullmatch(pod.metadata.name or "")
    if match is None:
        return "", -1
    ordinal = int(match.group(2))
    return match.group(1), ordinal if ordinal < 2**31 else -1


def ordinal_of(pod: Pod) -> int:
    """``getOrdinal``: -1 for a name without one."""
    return parent_and_ordinal(pod)[1]


def is_member_of(sts: StatefulSet, pod: Pod) -> bool:
    """``isMemberOf``: the pod's name says it belongs to the set."""
    return parent_and_ordinal(pod)[0] == sts.metadata.name


def pod_name(sts: StatefulSet, ordinal: int) -> str:
    """``getPodName``."""
    return f"{sts.metadata.name}-{ordinal}"


def in_ordinal_range(sts: StatefulSet, pod: Pod, replicas: int) -> bool:
    """``podInOrdinalRange``: start <= ordinal <= start + replicas - 1."""
    ordinal, start = ordinal_of(pod), start_ordinal(sts)
    return start <= ordinal < start + replicas


def service_name(sts: StatefulSet) -> str:
    """``spec.serviceName`` ('' when unset)."""
    return (sts.spec.service_name if sts.spec else None) or ""


def _claim_templates(sts: StatefulSet) -> list[JsonDict]:
    claims = sts.spec.extra.get(VOLUME_CLAIM_TEMPLATES) if sts.spec else None
    return [c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else []


def _claim_name(claim: JsonDict) -> str:
    metadata = claim.get("metadata")
    return str(metadata.get("name") or "") if isinstance(metadata, dict) else ""


def claim_volumes(sts: StatefulSet, ordinal: int) -> list[JsonDict]:
    """The volumes ``updateStorage`` adds: one claim per template, ``<claim>-<set>-<n>``."""
    return [
        {
            "name": _claim_name(claim),
            "persistentVolumeClaim": {
                "claimName": f"{_claim_name(claim)}-{sts.metadata.name}-{ordinal}"
            },
        }
        for claim in _claim_templates(sts)
    ]


def identity_matches(sts: StatefulSet, pod: Pod) -> bool:
    """``identityMatches``: name, namespace, hostname, subdomain and identity labels."""
    parent, ordinal = parent_and_ordinal(pod)
    extra = pod.spec.extra if pod.spec else {}
    return (
        ordinal >= 0
        and parent == sts.metadata.name
        and pod.metadata.name == pod_name(sts, ordinal)
        and pod.metadata.namespace == sts.metadata.namespace
        and (extra.get("hostname") or "") == pod.metadata.name
        and (extra.get("subdomain") or "") == service_name(sts)
        and pod.metadata.label(POD_NAME_LABEL) == pod.metadata.name
        and pod.metadata.label(POD_INDEX_LABEL) == str(ordinal)
    )


def storage_matches(sts: StatefulSet, pod: Pod) -> bool:
    """``storageMatches``: the pod mounts the claim of every template under its name."""
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        return False
    volumes = (pod.spec.extra.get("volumes") if pod.spec else None) or []
    by_name = {v.get("name"): v for v in volumes if isinstance(v, dict)}
    for wanted in claim_volumes(sts, ordinal):
        have = by_name.get(wanted["name"])
        claim = have.get("persistentVolumeClaim") if have else None
        if (
            not isinstance(claim, dict)
            or claim.get("claimName") != (wanted["persistentVolumeClaim"]["claimName"])
        ):
            return False
    return True


def update_identity(sts: StatefulSet, pod: Pod) -> Pod:
    """``updateIdentity`` and ``updateStorage``: the pod's name, hostname, subdomain,
    identity labels and claim volumes as the set wants them."""
    ordinal = ordinal_of(pod)
    name = pod_name(sts, ordinal)
    spec = pod.spec or PodSpec()
    extra = dict(spec.extra)
    extra["hostname"] = name
    if service_name(sts):
        extra["subdomain"] = service_name(sts)
    else:
        extra.pop("subdomain", None)
    claims = claim_volumes(sts, ordinal)
    if claims:
        claimed = {c["name"] for c in claims}
        others = [
            v
            for v in extra.get("volumes") or []
            if not (isinstance(v, dict) and v.get("name") in claimed)
        ]
        extra["volumes"] = [*claims, *others]
    labels = {
        **(pod.metadata.labels or {}),
        POD_NAME_LABEL: name,
        POD_INDEX_LABEL: str(ordinal),
    }
    metadata = evolve(pod.metadata, name=name, namespace=sts.metadata.namespace, labels=labels)
    return evolve(pod, metadata=metadata, spec=evolve(spec, extra=extra))


def new_pod(sts: StatefulSet, ordinal: int, revision: str) -> Pod:
    """``newStatefulSetPod`` + ``setPodRevision``: the pod of ``ordinal`` at ``revision``."""
    template = sts.spec.template if sts.spec else None
    pod = podutil.pod_from_template(
        template, sts, generate_name=podutil.pods_prefix(sts.metadata.name or "")
    )
    pod = evolve(pod, metadata=evolve(pod.metadata, name=pod_name(sts, ordinal)))
    pod = update_identity(sts, pod)
    labels = {**(pod.metadata.labels or {}), REVISION_LABEL: revision}
    return evolve(pod, metadata=evolve(pod.metadata, labels=labels))


def new_versioned_pod(
    current_set: StatefulSet,
    update_set: StatefulSet,
    current_revision: str,
    update_revision: str,
    ordinal: int,
) -> Pod:
    """``newVersionedStatefulSetPod``: below the partition (or, without a ``rollingUpdate``,
    below ``currentReplicas``) a pod keeps the current revision, else the update one.

    Upstream's condition reads ``(RollingUpdate && rollingUpdate == nil && ...) ||
    (rollingUpdate != nil && ...)``: Go's ``&&`` binds tighter, kept as it is."""
    strategy = update_strategy(current_set)
    rolling = strategy.rolling_update
    start = start_ordinal(current_set)
    current_replicas = (current_set.status.current_replicas if current_set.status else None) or 0
    if (
        strategy.type == ROLLING_UPDATE and rolling is None and ordinal < start + current_replicas
    ) or (rolling is not None and ordinal < start + (rolling.partition or 0)):
        return new_pod(current_set, ordinal, current_revision)
    return new_pod(update_set, ordinal, update_revision)


def allows_burst(sts: StatefulSet) -> bool:
    """``allowsBurst``: podManagementPolicy Parallel."""
    return (sts.spec.pod_management_policy if sts.spec else None) == PARALLEL


# --- pod predicates -------------------------------------------------------------------------


def is_created(pod: Pod) -> bool:
    """``isCreated``: the API server has given it a phase."""
    return bool(podutil.phase(pod))


def is_pending(pod: Pod) -> bool:
    """``isPending``."""
    return podutil.phase(pod) == PHASE_PENDING


def is_failed_or_succeeded(pod: Pod) -> bool:
    """``isFailed(pod) || isSucceeded(pod)``: a pod to delete and make anew."""
    return podutil.phase(pod) in (PHASE_FAILED, PHASE_SUCCEEDED)


def is_terminating(pod: Pod) -> bool:
    """``isTerminating``: it has a deletion timestamp."""
    return bool(pod.metadata.deletion_timestamp)


def is_running_and_ready(pod: Pod) -> bool:
    """``isRunningAndReady``: phase Running and condition Ready."""
    return podutil.phase(pod) == "Running" and podutil.is_pod_ready(pod)


def is_running_and_available(pod: Pod, min_ready_seconds: int, now: float) -> bool:
    """``isRunningAndAvailable``: ready for ``minReadySeconds``."""
    return podutil.is_pod_available(pod, min_ready_seconds, now)


def is_healthy(pod: Pod) -> bool:
    """``isHealthy``: running, ready and not terminating."""
    return is_running_and_ready(pod) and not is_terminating(pod)


def is_unavailable(pod: Pod, min_ready_seconds: int, now: float) -> bool:
    """``isUnavailable``: not healthy, or not yet available."""
    return not is_healthy(pod) or not is_running_and_available(pod, min_ready_seconds, now)


def pod_revision(pod: Pod) -> str:
    """``getPodRevision``: the ``controller-revision-hash`` label ('' if none)."""
    return pod.metadata.label(REVISION_LABEL) or ""


# --- history --------------------------------------------------------------------------------


def revision_data(sts: StatefulSet) -> JsonDict:
    """``getPatch``: a strategic merge patch that restores the set's template (the
    DaemonSet's, ``daemonsethistory.template_patch``)."""
    template = (sts.spec.template if sts.spec else None) or PodTemplateSpec()
    return daemonsethistory.template_patch(template)


def data_bytes(data: Any) -> bytes:
    """The revision's ``data`` as Go's ``json.Marshal`` of a map writes it (sorted keys)."""
    return go_json(data).encode()


def _fnv1_32(data: bytes) -> int:
    """``hash/fnv.New32`` (FNV-1: multiply, then xor)."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value * 0x01000193) & 0xFFFFFFFF) ^ byte
    return value


def revision_hash(data: Any, collision_count: int | None) -> str:
    """``HashControllerRevision``: FNV-1 over the data bytes and the decimal probe."""
    raw = data_bytes(data)
    if collision_count is not None:
        raw += str(collision_count).encode()
    return deploymentutil.safe_encode(str(_fnv1_32(raw)))


def revision_name(parent: str, hash_: str) -> str:
    """``ControllerRevisionName``."""
    return f"{parent[:MAX_REVISION_PREFIX]}-{hash_}"


def new_revision(sts: StatefulSet, revision: int, collision_count: int) -> ControllerRevision:
    """``newRevision``: labelled like the template plus the hash, annotated like the set."""
    data = revision_data(sts)
    hash_ = revision_hash(data, collision_count)
    template = sts.spec.template if sts.spec else None
    labels = dict((template.metadata.labels if template and template.metadata else None) or {})
    labels[REVISION_LABEL] = hash_
    annotations = sts.metadata.annotations
    return ControllerRevision(
        metadata=ObjectMeta(
            name=revision_name(sts.metadata.name or "", hash_),
            namespace=sts.metadata.namespace,
            labels=labels,
            annotations=dict(annotations) if annotations else None,
            owner_references=(podutil.new_controller_ref(sts),),
        ),
        data=data,
        revision=revision,
    )


def equal_revision(a: ControllerRevision, b: ControllerRevision) -> bool:
    """``EqualRevision``: the same data bytes."""
    return data_bytes(a.data) == data_bytes(b.data)


def sort_key(revision: ControllerRevision) -> tuple[int, str, str]:
    """``SortControllerRevisions``: by revision, then creation time, then name."""
    meta = revision.metadata
    return revision.revision or 0, meta.creation_timestamp or "", meta.name or ""


def next_revision(revisions: list[ControllerRevision]) -> int:
    """``nextRevision``: one past the last of the sorted revisions (1 for none)."""
    return (revisions[-1].revision or 0) + 1 if revisions else 1


def apply_revision(sts: StatefulSet, revision: ControllerRevision) -> StatefulSet:
    """``ApplyRevision``: the set with the template the revision restores."""
    spec = (revision.data or {}).get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    if not isinstance(template, dict):
        return sts
    document = {k: v for k, v in template.items() if k != daemonsethistory.PATCH_DIRECTIVE}
    restored = from_dict(PodTemplateSpec, document)
    return evolve(sts, spec=evolve(sts.spec, template=restored))


# --- status ---------------------------------------------------------------------------------


def compute_status(
    pods: Iterable[Pod],
    min_ready_seconds: int,
    current_revision: str,
    update_revision: str,
    now: float,
) -> dict[str, int]:
    """``updateStatus``/``computeReplicaStatus``: the five counts over ``pods``."""
    counts = {"replicas": 0, "ready": 0, "available": 0, "current": 0, "updated": 0}
    for pod in pods:
        created = is_created(pod)
        if created:
            counts["replicas"] += 1
        if is_running_and_ready(pod):
            counts["ready"] += 1
            if is_running_and_available(pod, min_ready_seconds, now):
                counts["available"] += 1
        if created and not is_terminating(pod):
            revision = pod_revision(pod)
            if revision == current_revision:
                counts["current"] += 1
            if revision == update_revision:
                counts["updated"] += 1
    return counts


def complete_rolling_update(sts: StatefulSet, status: StatefulSetStatus) -> StatefulSetStatus:
    """``completeRollingUpdate``: once every pod is updated and ready, the update revision
    becomes the current one."""
    replicas = status.replicas or 0
    if (
        update_strategy(sts).type == ROLLING_UPDATE
        and (status.updated_replicas or 0) == replicas
        and (status.ready_replicas or 0) == replicas
    ):
        return evolve(
            status,
            current_replicas=status.updated_replicas,
            current_revision=status.update_revision,
        )
    return status


def inconsistent_status(sts: StatefulSet, status: StatefulSetStatus) -> bool:
    """``inconsistentStatus``: whether the computed status differs from the stored one in
    anything the controller keeps (observedGeneration moving up, a count, a revision)."""
    stored = sts.status or StatefulSetStatus()
    return (
        (status.observed_generation or 0) > (stored.observed_generation or 0)
        or (status.replicas or 0) != (stored.replicas or 0)
        or (status.current_replicas or 0) != (stored.current_replicas or 0)
        or (status.ready_replicas or 0) != (stored.ready_replicas or 0)
        or (status.updated_replicas or 0) != (stored.updated_replicas or 0)
        or (status.current_revision or "") != (stored.current_revision or "")
        or (status.available_replicas or 0) != (stored.available_replicas or 0)
        or (status.update_revision or "") != (stored.update_revision or "")
    )
