"""apps/v1 StatefulSet: pods with stable names, ordinals and network identities.

Mirrors ``k8s.io/api/apps/v1/types.go`` (``StatefulSet``, ``StatefulSetSpec``,
``StatefulSetUpdateStrategy``, ``RollingUpdateStatefulSetStrategy``,
``StatefulSetPersistentVolumeClaimRetentionPolicy``, ``StatefulSetOrdinals``,
``StatefulSetStatus``) for what the StatefulSet controller, ``kubectl get sts``, ``scale``
and ``rollout status`` need; everything else stays in the ``extra`` of its level. The
``volumeClaimTemplates`` are kept verbatim in ``spec.extra``; the StatefulSet controller
makes each pod's claims from them (``controllers.statefulsetclaims``).

Pod management and update strategies::

    OrderedReady  create web-0, wait until it is Running and Ready, then web-1, ...;
                  scale down from the highest ordinal, one at a time
    Parallel      create and delete all at once
    RollingUpdate replace pods from the highest ordinal down to ``partition``, one at a
                  time, each once its successor is Ready again
    OnDelete      new pods only where old ones were deleted by someone else

Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.apps import WorkloadCondition
from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.daemonset import CONTROLLER_REVISION_HASH_LABEL, IntOrString
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init

ORDERED_READY: Final = "OrderedReady"
PARALLEL: Final = "Parallel"
ROLLING_UPDATE: Final = "RollingUpdate"
ON_DELETE: Final = "OnDelete"
RETAIN: Final = "Retain"
DELETE: Final = "Delete"
POD_NAME_LABEL: Final = "statefulset.kubernetes.io/pod-name"
"""``appsv1.StatefulSetPodNameLabel``: every pod carries its own name."""
POD_INDEX_LABEL: Final = "apps.kubernetes.io/pod-index"
"""``appsv1.PodIndexLabel``: the pod's ordinal (feature PodIndexLabel, on since 1.28)."""
REVISION_LABEL: Final = CONTROLLER_REVISION_HASH_LABEL
"""``appsv1.StatefulSetRevisionLabel``: the revision a pod was made from."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RollingUpdateStatefulSetStrategy:
    """``spec.updateStrategy.rollingUpdate``: pods below ``partition`` keep the old revision.

    ``maxUnavailable`` belongs to the alpha feature MaxUnavailableStatefulSet (off in
    v1.32): the registry drops it, as upstream's ``dropStatefulSetDisabledFields``."""

    partition: Int32 | None = None
    max_unavailable: IntOrString | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StatefulSetUpdateStrategy:
    """``spec.updateStrategy``: RollingUpdate (default) or OnDelete."""

    type: str | None = None
    rolling_update: RollingUpdateStatefulSetStrategy | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StatefulSetPersistentVolumeClaimRetentionPolicy:
    """``spec.persistentVolumeClaimRetentionPolicy``: Retain or Delete, per event."""

    when_deleted: str | None = None
    when_scaled: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StatefulSetOrdinals:
    """``spec.ordinals``: the first ordinal (``start``, sent even when 0)."""

    start: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StatefulSetSpec:
    """``spec`` of a StatefulSet (``volumeClaimTemplates`` are in ``extra``)."""

    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    service_name: str | None = None
    pod_management_policy: str | None = None
    update_strategy: StatefulSetUpdateStrategy | None = None
    revision_history_limit: Int32 | None = None
    min_ready_seconds: Int32 | None = None
    persistent_volume_claim_retention_policy: (
        StatefulSetPersistentVolumeClaimRetentionPolicy | None
    ) = None
    ordinals: StatefulSetOrdinals | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StatefulSetStatus:
    """``status`` of a StatefulSet, as the controller writes it.

    ``replicas`` and ``availableReplicas`` have no ``omitempty`` upstream (always sent);
    the other counts are left out when zero.
    """

    observed_generation: int | None = None
    replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    current_replicas: Int32 | None = None
    updated_replicas: Int32 | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: Int32 | None = None
    conditions: tuple[WorkloadCondition, ...] | None = None
    available_replicas: Int32 | None = None
    extra: JsonDict = extra_field()


EMPTY_STATUS: Final = StatefulSetStatus(replicas=0, available_replicas=0)
"""``StatefulSetStatus{}`` as Go's JSON sends it: the two counts without ``omitempty``."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StatefulSet:
    """An apps/v1 StatefulSet."""

    api_version: str | None = "apps/v1"
    kind: str | None = "StatefulSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: StatefulSetSpec | None = None
    status: StatefulSetStatus | None = None
    extra: JsonDict = extra_field()


def start_ordinal(sts: StatefulSet) -> int:
    """``getStartOrdinal``: ``spec.ordinals.start``, 0 when unset."""
    ordinals = sts.spec.ordinals if sts.spec else None
    return (ordinals.start if ordinals else None) or 0


def replicas(sts: StatefulSet) -> int:
    """``*spec.replicas`` (defaulted to 1 by the API)."""
    value = sts.spec.replicas if sts.spec else None
    return 1 if value is None else value


def pod_management_policy(sts: StatefulSet) -> str:
    """``spec.podManagementPolicy`` (OrderedReady when unset)."""
    return (sts.spec.pod_management_policy if sts.spec else None) or ORDERED_READY


def update_strategy(sts: StatefulSet) -> StatefulSetUpdateStrategy:
    """``spec.updateStrategy`` (an empty one when unset)."""
    return (sts.spec.update_strategy if sts.spec else None) or StatefulSetUpdateStrategy()
