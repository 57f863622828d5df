"""apps/v1 Deployment and ReplicaSet (and the autoscaling/v1 Scale subresource).

Mirrors ``k8s.io/api/apps/v1/types.go`` for what the ReplicaSet and Deployment
controllers and ``kubectl get``/``scale``/``rollout status`` need. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadCondition:
    """A Deployment or ReplicaSet condition."""

    type: str | None = None
    status: str | None = None
    last_update_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DeploymentSpec:
    """``spec`` of a Deployment; ``strategy`` is kept verbatim in ``extra``."""

    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    min_ready_seconds: Int32 | None = None
    revision_history_limit: Int32 | None = None
    paused: bool | None = None
    progress_deadline_seconds: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DeploymentStatus:
    """``status`` of a Deployment."""

    observed_generation: int | None = None
    replicas: Int32 | None = None
    updated_replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    available_replicas: Int32 | None = None
    unavailable_replicas: Int32 | None = None
    conditions: tuple[WorkloadCondition, ...] | None = None
    collision_count: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Deployment:
    """An apps/v1 Deployment."""

    api_version: str | None = "apps/v1"
    kind: str | None = "Deployment"
    metadata: ObjectMeta = ObjectMeta()
    spec: DeploymentSpec | None = None
    status: DeploymentStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaSetSpec:
    """``spec`` of a ReplicaSet."""

    replicas: Int32 | None = None
    min_ready_seconds: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaSetStatus:
    """``status`` of a ReplicaSet."""

    replicas: Int32 | None = None
    fully_labeled_replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    available_replicas: Int32 | None = None
    observed_generation: int | None = None
    conditions: tuple[WorkloadCondition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaSet:
    """An apps/v1 ReplicaSet."""

    api_version: str | None = "apps/v1"
    kind: str | None = "ReplicaSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: ReplicaSetSpec | None = None
    status: ReplicaSetStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ScaleSpec:
    """``spec`` of a Scale."""

    replicas: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ScaleStatus:
    """``status`` of a Scale: current replicas and the selector string."""

    replicas: Int32 | None = None
    selector: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Scale:
    """autoscaling/v1 Scale, the ``deployments/scale`` subresource."""

    api_version: str | None = "autoscaling/v1"
    kind: str | None = "Scale"
    metadata: ObjectMeta = ObjectMeta()
    spec: ScaleSpec | None = None
    status: ScaleStatus | None = None
    extra: JsonDict = extra_field()
