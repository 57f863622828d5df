"""Defaulting of apps/v1 StatefulSets (``SetDefaults_StatefulSet`` in ``pkg/apis/apps/v1/defaults.go``).

* ``spec.podManagementPolicy`` defaults to ``OrderedReady``;
* an unset ``spec.updateStrategy.type`` becomes ``RollingUpdate`` with an empty
  ``rollingUpdate``; a RollingUpdate strategy *with* a ``rollingUpdate`` gets
  ``partition: 0`` (an explicit RollingUpdate without ``rollingUpdate`` stays without);
* ``spec.persistentVolumeClaimRetentionPolicy`` gets ``Retain``/``Retain`` where unset
  (feature StatefulSetAutoDeletePVC, on since 1.27);
* ``spec.replicas`` defaults to 1 and ``spec.revisionHistoryLimit`` to 10;
* the pod template gets the pod-spec defaults every workload template gets, and each
  ``volumeClaimTemplates`` entry the claim defaults (``SetDefaults_PersistentVolumeClaim``:
  ``status.phase: Pending``; ``SetDefaults_PersistentVolumeClaimSpec``: ``volumeMode:
  Filesystem``), as the generated ``SetObjectDefaults_StatefulSet`` runs them, with the
  ``apiVersion``/``kind`` the apps/v1 conversion stamps on each.

Two Go zero values are written here too, because a real API server always returns them:
``spec.serviceName`` (``""``, no ``omitempty``) and ``spec.ordinals.start`` (0). Called by
``api.defaults.default_object``; idempotent. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.statefulset import (
    ORDERED_READY,
    RETAIN,
    ROLLING_UPDATE,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetSpec,
    StatefulSetUpdateStrategy,
)

DEFAULT_REPLICAS: Final = 1
DEFAULT_REVISION_HISTORY_LIMIT: Final = 10
VOLUME_CLAIM_TEMPLATES: Final = "volumeClaimTemplates"


def default_update_strategy(
    strategy: StatefulSetUpdateStrategy | None,
) -> StatefulSetUpdateStrategy:
    """The strategy part of ``SetDefaults_StatefulSet``."""
    strategy = strategy or StatefulSetUpdateStrategy()
    changes: dict[str, Any] = {}
    rolling = strategy.rolling_update
    if not strategy.type:
        changes["type"] = ROLLING_UPDATE
        if rolling is None:
            rolling = RollingUpdateStatefulSetStrategy()
    kind = changes.get("type", strategy.type)
    if kind == ROLLING_UPDATE and rolling is not None and rolling.partition is None:
        rolling = evolve(rolling, partition=0)
    if rolling is not strategy.rolling_update:
        changes["rolling_update"] = rolling
    return evolve(strategy, **changes) if changes else strategy


def _default_retention(
    policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None,
) -> StatefulSetPersistentVolumeClaimRetentionPolicy:
    policy = policy or StatefulSetPersistentVolumeClaimRetentionPolicy()
    changes: dict[str, Any] = {}
    if not policy.when_deleted:
        changes["when_deleted"] = RETAIN
    if not policy.when_scaled:
        changes["when_scaled"] = RETAIN
    return evolve(policy, **changes) if changes else policy


def _default_claim(claim: Any) -> Any:
    """A claim template with ``volumeMode: Filesystem`` and ``status.phase: Pending``, and
    what the apps/v1 conversion and Go's encoder add: ``apiVersion: v1``, ``kind:
    PersistentVolumeClaim`` and ``metadata.creationTimestamp: null``."""
    if not isinstance(claim, dict):
        return claim
    new: JsonDict = dict(claim)
    new["apiVersion"] = new.get("apiVersion") or "v1"
    new["kind"] = new.get("kind") or "PersistentVolumeClaim"
    metadata = new.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, dict) else {}
    metadata.setdefault("creationTimestamp", None)
    new["metadata"] = metadata
    spec = new.get("spec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    new["spec"] = spec
    status = new.get("status")
    status = dict(status) if isinstance(status, dict) else {}
    if not status.get("phase"):
        status["phase"] = "Pending"
    new["status"] = status
    return new


def _default_claims(extra: JsonDict) -> JsonDict | None:
    """``spec.extra`` with its claim templates defaulted, or None when nothing changed."""
    claims = extra.get(VOLUME_CLAIM_TEMPLATES)
    if not isinstance(claims, list):
        return None
    defaulted = [_default_claim(claim) for claim in claims]
    if defaulted == claims:
        return None
    return {**extra, VOLUME_CLAIM_TEMPLATES: defaulted}


def default_stateful_set(
    sts: StatefulSet, *, default_template: Callable[[PodTemplateSpec | None], PodTemplateSpec]
) -> StatefulSet:
    """``SetObjectDefaults_StatefulSet`` (``default_template``: ``api.poddefaults.
    default_pod_template``, passed in so this module stays below ``api.defaults``)."""
    spec = sts.spec or StatefulSetSpec()
    changes: dict[str, Any] = {}
    if not spec.pod_management_policy:
        changes["pod_management_policy"] = ORDERED_READY
    strategy = default_update_strategy(spec.update_strategy)
    if strategy is not spec.update_strategy:
        changes["update_strategy"] = strategy
    retention = _default_retention(spec.persistent_volume_claim_retention_policy)
    if retention is not spec.persistent_volume_claim_retention_policy:
        changes["persistent_volume_claim_retention_policy"] = retention
    if spec.replicas is None:
        changes["replicas"] = DEFAULT_REPLICAS
    if spec.revision_history_limit is None:
        changes["revision_history_limit"] = DEFAULT_REVISION_HISTORY_LIMIT
    if spec.service_name is None:
        changes["service_name"] = ""
    if spec.ordinals is not None and spec.ordinals.start is None:
        changes["ordinals"] = evolve(spec.ordinals, start=0)
    template = default_template(spec.template)
    if template is not spec.template:
        changes["template"] = template
    extra = _default_claims(spec.extra)
    if extra is not None:
        changes["extra"] = extra
    if not changes and sts.spec is not None:
        return sts
    return evolve(sts, spec=evolve(spec, **changes))
