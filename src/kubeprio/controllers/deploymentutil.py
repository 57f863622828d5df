"""Deployment arithmetic: template hashes, surge and unavailability, conditions, status.

Mirrors ``pkg/controller/deployment/util/deployment_util.go`` and
``pkg/controller/controller_utils.go`` (``ComputeHash``):

* ``pod_template_hash``: a stable hash of the pod template (and ``collisionCount``),
  encoded with the alphabet upstream's ``rand.SafeEncodeString`` uses. Upstream hashes
  a Go ``spew`` dump of the template, which cannot be reproduced outside Go; this
  hashes the template's canonical JSON instead, so names look like upstream's
  (``web-7d9c5b8f6``) but differ in their characters;
* ``resolve_fenceposts``, ``max_surge``, ``max_unavailable``: rolling-update bounds
  (``maxSurge`` rounds up, ``maxUnavailable`` down, never both 0); defaults 25%/25%;
* ``new_rs_new_replicas``, ``replica_set_fraction``: how far to scale;
* ``set_condition`` and the ``Available``/``Progressing`` reasons and messages;
* ``calculate_status`` (``sync.go`` ``calculateStatus``).

Pure: no I/O, times passed in.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Final

from kubeprio.api.apps import (
    Deployment,
    DeploymentStatus,
    ReplicaSet,
    WorkloadCondition,
)
from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import INT32_MAX, evolve
from kubeprio.api.policy import IntOrString
from kubeprio.api.serialization import to_sparse_dict
from kubeprio.api.validation.core import semantic_equal
from kubeprio.clock import parse_rfc3339

REVISION_ANNOTATION: Final = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION: Final = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION: Final = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION: Final = "deployment.kubernetes.io/max-replicas"
POD_TEMPLATE_HASH_LABEL: Final = "pod-template-hash"
SKIPPED_ANNOTATIONS: Final = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
        DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION,
        "deprecated.deployment.rollback.to",
    }
)
"""``skipCopyAnnotation``: deployment annotations not copied to its ReplicaSets."""

RECREATE: Final = "Recreate"
ROLLING_UPDATE: Final = "RollingUpdate"
DEFAULT_MAX_SURGE: Final = "25%"
DEFAULT_MAX_UNAVAILABLE: Final = "25%"
DEFAULT_PROGRESS_DEADLINE_SECONDS: Final = 600
DEFAULT_REVISION_HISTORY_LIMIT: Final = 10

AVAILABLE: Final = "Available"
PROGRESSING: Final = "Progressing"
REPLICA_FAILURE: Final = "ReplicaFailure"
MINIMUM_REPLICAS_AVAILABLE: Final = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE: Final = "MinimumReplicasUnavailable"
NEW_REPLICA_SET_REASON: Final = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON: Final = "FoundNewReplicaSet"
NEW_RS_AVAILABLE_REASON: Final = "NewReplicaSetAvailable"
REPLICA_SET_UPDATED_REASON: Final = "ReplicaSetUpdated"
TIMED_OUT_REASON: Final = "ProgressDeadlineExceeded"
PAUSED_REASON: Final = "DeploymentPaused"
RESUMED_REASON: Final = "DeploymentResumed"

_SAFE_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"


def _fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: map each character into a vowel-free alphabet."""
    return "".join(_SAFE_ALPHABET[ord(c) % len(_SAFE_ALPHABET)] for c in text)


def pod_template_hash(template: PodTemplateSpec | None, collision_count: int | None) -> str:
    """``ComputeHash`` (see the module docstring for how it differs)."""
    document = to_sparse_dict(template) if template is not None else {}
    data = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += collision_count.to_bytes(4, "little", signed=False)
    return safe_encode(str(_fnv32a(data)))


def template_without_hash(template: PodTemplateSpec | None) -> PodTemplateSpec:
    """The template with the ``pod-template-hash`` label removed (``EqualIgnoreHash``)."""
    template = template or PodTemplateSpec()
    meta = template.metadata or ObjectMeta()
    labels = {k: v for k, v in (meta.labels or {}).items() if k != POD_TEMPLATE_HASH_LABEL}
    return evolve(template, metadata=evolve(meta, labels=labels or None))


MAX_REVISION_HISTORY_CHARS: Final = 2000
"""The deployment controller's ``maxRevHistoryLengthInChars``."""


def revision_history(history: str | None, old_revision: str) -> str | None:
    """``SetNewReplicaSetAnnotations``: ``old_revision`` appended to the revision history.

    The oldest entries go first when the list would pass 2,000 characters; None when
    even then it would not fit (upstream logs and leaves the annotation alone).
    """
    if not history:
        return old_revision
    kept = history.split(",")
    total = len(history) + len(old_revision) + 1
    start = 0
    while total > MAX_REVISION_HISTORY_CHARS and start < len(kept):
        total -= len(kept[start]) + 1
        start += 1
    if total > MAX_REVISION_HISTORY_CHARS:
        return None
    return ",".join([*kept[start:], old_revision])


def equal_ignore_hash(a: PodTemplateSpec | None, b: PodTemplateSpec | None) -> bool:
    """``EqualIgnoreHash``: ``Semantic.DeepEqual`` apart from the ``pod-template-hash`` label.

    Upstream compares Go structs, where an explicit JSON ``null`` and an absent field
    decode to the same zero value; kubeprio keeps explicit nulls for round trips
    (``creationTimestamp: null``, which ``kubectl rollout undo`` sends back in the
    template), and ``semantic_equal`` treats them, like empty lists and maps, as absent.
    """
    return semantic_equal(template_without_hash(a), template_without_hash(b))


def replicas(obj: Deployment | ReplicaSet) -> int:
    """``spec.replicas``; the API defaults an unset value to 1."""
    value = obj.spec.replicas if obj.spec else None
    return 1 if value is None else value


def strategy(deployment: Deployment) -> dict[str, Any]:
    """``spec.strategy`` with upstream's defaults (RollingUpdate 25%/25%)."""
    raw = (deployment.spec.extra.get("strategy") if deployment.spec else None) or {}
    kind = raw.get("type") or ROLLING_UPDATE
    if kind != ROLLING_UPDATE:
        return {"type": kind}
    rolling = raw.get("rollingUpdate") or {}
    return {
        "type": ROLLING_UPDATE,
        "maxSurge": rolling.get("maxSurge", DEFAULT_MAX_SURGE),
        "maxUnavailable": rolling.get("maxUnavailable", DEFAULT_MAX_UNAVAILABLE),
    }


def scaled(value: IntOrString, total: int, *, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%"))
    result = percent * total / 100
    return math.ceil(result) if round_up else math.floor(result)


def resolve_fenceposts(
    max_surge: IntOrString, max_unavailable: IntOrString, desired: int
) -> tuple[int, int]:
    """``ResolveFenceposts``: surge rounds up, unavailable down; both 0 makes unavailable 1."""
    surge = scaled(max_surge, desired, round_up=True)
    unavailable = scaled(max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(deployment: Deployment) -> int:
    """``MaxSurge`` (0 for Recreate)."""
    config = strategy(deployment)
    if config["type"] != ROLLING_UPDATE:
        return 0
    surge, _ = resolve_fenceposts(
        config["maxSurge"], config["maxUnavailable"], replicas(deployment)
    )
    return surge


def max_unavailable(deployment: Deployment) -> int:
    """``MaxUnavailable`` (0 for Recreate or zero replicas; at most the replicas)."""
    config = strategy(deployment)
    desired = replicas(deployment)
    if config["type"] != ROLLING_UPDATE or desired == 0:
        return 0
    _, unavailable = resolve_fenceposts(config["maxSurge"], config["maxUnavailable"], desired)
    return min(unavailable, desired)


def total_spec_replicas(sets: Sequence[ReplicaSet | None]) -> int:
    """``GetReplicaCountForReplicaSets``: the sum of ``spec.replicas``."""
    return sum(replicas(rs) for rs in sets if rs is not None)


def _status_sum(sets: Sequence[ReplicaSet | None], field: str) -> int:
    return sum(getattr(rs.status, field) or 0 for rs in sets if rs is not None and rs.status)


def actual_replicas(sets: Sequence[ReplicaSet | None]) -> int:
    """``GetActualReplicaCountForReplicaSets``: the sum of ``status.replicas``."""
    return _status_sum(sets, "replicas")


def ready_replicas(sets: Sequence[ReplicaSet | None]) -> int:
    """``GetReadyReplicaCountForReplicaSets``."""
    return _status_sum(sets, "ready_replicas")


def available_replicas(sets: Sequence[ReplicaSet | None]) -> int:
    """``GetAvailableReplicaCountForReplicaSets``."""
    return _status_sum(sets, "available_replicas")


def new_rs_new_replicas(
    deployment: Deployment, all_sets: Sequence[ReplicaSet | None], new: ReplicaSet | None
) -> int:
    """``NewRSNewReplicas``: how big the new ReplicaSet may be now."""
    new_count = replicas(new) if new is not None else 0
    if strategy(deployment)["type"] != ROLLING_UPDATE:
        return replicas(deployment)
    desired = replicas(deployment)
    current = total_spec_replicas(all_sets)
    max_total = desired + max_surge(deployment)
    if current >= max_total:
        return new_count
    scale_up = min(max_total - current, desired - new_count)
    return new_count + scale_up


def copied_annotations(deployment: Deployment) -> dict[str, str]:
    """The Deployment's annotations its ReplicaSets carry: all but ``SKIPPED_ANNOTATIONS``
    (``skipCopyAnnotation``)."""
    return {
        key: value
        for key, value in (deployment.metadata.annotations or {}).items()
        if key not in SKIPPED_ANNOTATIONS
    }


def annotations_to_copy(deployment: Deployment, rs: ReplicaSet) -> dict[str, str]:
    """``copyDeploymentAnnotationsToReplicaSet``: the copied annotations the set lacks or
    holds with another value. Nothing is removed, so a set keeps the
    ``kubernetes.io/change-cause`` of its own rollout once it is old."""
    current = rs.metadata.annotations or {}
    return {
        key: value
        for key, value in copied_annotations(deployment).items()
        if current.get(key) != value
    }


def annotation_int(rs: ReplicaSet, key: str) -> int | None:
    """An integer annotation of ``rs``, or None."""
    text = rs.metadata.annotation(key)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def revision(rs: ReplicaSet) -> int:
    """``Revision``: the ``deployment.kubernetes.io/revision`` annotation (0 if absent)."""
    return annotation_int(rs, REVISION_ANNOTATION) or 0


def replica_set_fraction(rs: ReplicaSet, deployment: Deployment) -> int:
    """``getReplicaSetFraction``: the change ``rs`` gets in a proportional scale."""
    desired = replicas(deployment)
    if desired == 0:
        return -replicas(rs)
    deployment_max = desired + max_surge(deployment)
    before = annotation_int(rs, MAX_REPLICAS_ANNOTATION) or 0
    if not before:
        before = (deployment.status.replicas if deployment.status else None) or 0
        if not before:
            return -replicas(rs)
    new_size = replicas(rs) * deployment_max / before
    return _round_half_away(new_size) - replicas(rs)


def _round_half_away(value: float) -> int:
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


def proportion(rs: ReplicaSet, deployment: Deployment, to_add: int, added: int) -> int:
    """``GetProportion``."""
    if replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = replica_set_fraction(rs, deployment)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _created(rs: ReplicaSet) -> float:
    stamp = rs.metadata.creation_timestamp
    return parse_rfc3339(stamp) if stamp else 0.0


def is_saturated(deployment: Deployment, rs: ReplicaSet | None) -> bool:
    """``IsSaturated``: the set has every replica, says so, and all are available."""
    if rs is None:
        return False
    desired = replicas(deployment)
    available = (rs.status.available_replicas if rs.status else None) or 0
    return (
        replicas(rs) == desired
        and annotation_int(rs, DESIRED_REPLICAS_ANNOTATION) == desired
        and available == desired
    )


def proportional_sizes(
    deployment: Deployment, active: Sequence[ReplicaSet]
) -> tuple[list[tuple[ReplicaSet, int]], str]:
    """``scale`` for several active sets: new sizes in scaling order, and "up"/"down".

    The sets share ``replicas + maxSurge`` in proportion to their size
    (``GetProportion``); the leftover goes to the first set, which is the largest
    (``ReplicaSetsBySizeNewer`` when growing, ``ReplicaSetsBySizeOlder`` when shrinking).
    """
    desired = replicas(deployment)
    allowed = desired + max_surge(deployment) if desired > 0 else 0
    to_add = allowed - total_spec_replicas(active)
    if to_add > 0:
        # Larger first; among equals the newer first, then the name in reverse.
        ordered = sorted(active, key=lambda rs: rs.metadata.name or "", reverse=True)
        ordered.sort(key=lambda rs: (-replicas(rs), -_created(rs)))
    else:
        ordered = sorted(
            active, key=lambda rs: (-replicas(rs), _created(rs), rs.metadata.name or "")
        )
    sizes: list[tuple[ReplicaSet, int]] = []
    added = 0
    for rs in ordered:
        share = proportion(rs, deployment, to_add, added) if to_add else 0
        sizes.append((rs, replicas(rs) + share))
        added += share
    if sizes and to_add:
        first, size = sizes[0]
        sizes[0] = (first, max(size + to_add - added, 0))
    return sizes, "up" if to_add > 0 else "down"


def has_progress_deadline(deployment: Deployment) -> bool:
    """``HasProgressDeadline`` (unset means the v1 default, 600 s)."""
    seconds = deployment.spec.progress_deadline_seconds if deployment.spec else None
    return seconds is None or seconds != INT32_MAX


def progress_deadline(deployment: Deployment) -> int:
    """``spec.progressDeadlineSeconds`` with its default."""
    seconds = deployment.spec.progress_deadline_seconds if deployment.spec else None
    return DEFAULT_PROGRESS_DEADLINE_SECONDS if seconds is None else seconds


def get_condition(status: DeploymentStatus | None, type_: str) -> WorkloadCondition | None:
    """``GetDeploymentCondition``."""
    for condition in (status.conditions if status else None) or ():
        if condition.type == type_:
            return condition
    return None


def new_condition(
    type_: str, status: str, reason: str, message: str, now: str
) -> WorkloadCondition:
    """``NewDeploymentCondition``: update and transition time now."""
    return WorkloadCondition(
        type=type_,
        status=status,
        last_update_time=now,
        last_transition_time=now,
        reason=reason,
        message=message,
    )


def set_condition(status: DeploymentStatus, condition: WorkloadCondition) -> DeploymentStatus:
    """``SetDeploymentCondition``: same status and reason is a no-op; the condition moves last."""
    current = get_condition(status, condition.type or "")
    if (
        current is not None
        and current.status == condition.status
        and current.reason == condition.reason
    ):
        return status
    if current is not None and current.status == condition.status:
        condition = evolve(condition, last_transition_time=current.last_transition_time)
    kept = tuple(c for c in status.conditions or () if c.type != condition.type)
    return evolve(status, conditions=(*kept, condition))


def remove_condition(status: DeploymentStatus, type_: str) -> DeploymentStatus:
    """``RemoveDeploymentCondition``."""
    kept = tuple(c for c in status.conditions or () if c.type != type_)
    return evolve(status, conditions=kept or None)


def deployment_complete(deployment: Deployment, status: DeploymentStatus) -> bool:
    """``DeploymentComplete``."""
    desired = replicas(deployment)
    return (
        (status.updated_replicas or 0) == desired
        and (status.replicas or 0) == desired
        and (status.available_replicas or 0) == desired
        and (status.observed_generation or 0) >= (deployment.metadata.generation or 0)
    )


def deployment_progressing(deployment: Deployment, status: DeploymentStatus) -> bool:
    """``DeploymentProgressing``: more updated, fewer old, more ready or available."""
    old = deployment.status or DeploymentStatus()
    old_old = (old.replicas or 0) - (old.updated_replicas or 0)
    new_old = (status.replicas or 0) - (status.updated_replicas or 0)
    return (
        (status.updated_replicas or 0) > (old.updated_replicas or 0)
        or new_old < old_old
        or (status.ready_replicas or 0) > (old.ready_replicas or 0)
        or (status.available_replicas or 0) > (old.available_replicas or 0)
    )


def progress_deadline_at(deployment: Deployment, status: DeploymentStatus) -> float | None:
    """When the Progressing condition times out (``DeploymentTimedOut``), if it can."""
    if not has_progress_deadline(deployment):
        return None
    condition = get_condition(status, PROGRESSING)
    if condition is None or condition.reason in (NEW_RS_AVAILABLE_REASON, TIMED_OUT_REASON):
        return None
    if not condition.last_update_time:
        return None
    return parse_rfc3339(condition.last_update_time) + progress_deadline(deployment)


def calculate_status(
    deployment: Deployment,
    all_sets: Sequence[ReplicaSet | None],
    new: ReplicaSet | None,
    *,
    now: str,
) -> DeploymentStatus:
    """``calculateStatus``: counts from the ReplicaSets, and the ``Available`` condition."""
    available = available_replicas(all_sets)
    total = total_spec_replicas(all_sets)
    old = deployment.status or DeploymentStatus()
    status = DeploymentStatus(
        observed_generation=deployment.metadata.generation,
        replicas=actual_replicas(all_sets),
        updated_replicas=actual_replicas([new]),
        ready_replicas=ready_replicas(all_sets),
        available_replicas=available,
        unavailable_replicas=max(total - available, 0),
        collision_count=old.collision_count,
        conditions=old.conditions,
        extra=old.extra,
    )
    if available >= replicas(deployment) - max_unavailable(deployment):
        condition = new_condition(
            AVAILABLE,
            "True",
            MINIMUM_REPLICAS_AVAILABLE,
            "Deployment has minimum availability.",
            now,
        )
    else:
        condition = new_condition(
            AVAILABLE,
            "False",
            MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    return set_condition(status, condition)
