"""autoscaling/v2 HorizontalPodAutoscaler (the stored version).

Mirrors ``k8s.io/api/autoscaling/v2/types.go`` (v1.32): the scale target, replica bounds,
the metric specs of the five source types (Resource, ContainerResource, Pods, Object,
External), the scaling behavior (rules and policies per direction) and the status the
controller writes (current and desired replicas, current metrics, conditions
AbleToScale/ScalingActive/ScalingLimited, last scale time). autoscaling/v1 is a view of
this object (``api.autoscalingv1``). Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init
from kubeprio.api.quantity import Quantity

GROUP: Final = "autoscaling"
V2: Final = "autoscaling/v2"
V1: Final = "autoscaling/v1"

# MetricSourceType
OBJECT: Final = "Object"
PODS: Final = "Pods"
RESOURCE: Final = "Resource"
CONTAINER_RESOURCE: Final = "ContainerResource"
EXTERNAL: Final = "External"

# MetricTargetType
UTILIZATION: Final = "Utilization"
VALUE: Final = "Value"
AVERAGE_VALUE: Final = "AverageValue"

# ScalingPolicySelect and HPAScalingPolicyType
MAX_POLICY: Final = "Max"
MIN_POLICY: Final = "Min"
DISABLED_POLICY: Final = "Disabled"
PODS_POLICY: Final = "Pods"
PERCENT_POLICY: Final = "Percent"

# HorizontalPodAutoscalerConditionType
SCALING_ACTIVE: Final = "ScalingActive"
ABLE_TO_SCALE: Final = "AbleToScale"
SCALING_LIMITED: Final = "ScalingLimited"

DEFAULT_CPU_UTILIZATION: Final = 80
"""``autoscaling.DefaultCPUUtilization``: the target when an HPA names no metric."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CrossVersionObjectReference:
    """``scaleTargetRef`` (and an Object metric's ``describedObject``)."""

    kind: str | None = None
    name: str | None = None
    api_version: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MetricTarget:
    """The target value, average value or average utilization of a metric."""

    type: str | None = None
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MetricIdentifier:
    """A custom or external metric's name and selector."""

    name: str | None = None
    selector: LabelSelector | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceMetricSource:
    """A resource (cpu, memory) of the pods, as the resource metrics API reports it."""

    name: str | None = None
    target: MetricTarget | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerResourceMetricSource:
    """A resource of one container of the pods."""

    name: str | None = None
    target: MetricTarget | None = None
    container: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodsMetricSource:
    """A custom metric averaged over the pods."""

    metric: MetricIdentifier | None = None
    target: MetricTarget | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectMetricSource:
    """A custom metric of one object."""

    described_object: CrossVersionObjectReference | None = None
    target: MetricTarget | None = None
    metric: MetricIdentifier | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ExternalMetricSource:
    """A metric from outside the cluster."""

    metric: MetricIdentifier | None = None
    target: MetricTarget | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MetricSpec:
    """One metric the autoscaler follows: its ``type`` and the matching source."""

    type: str | None = None
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HPAScalingPolicy:
    """At most ``value`` pods (``Pods``) or percent (``Percent``) per ``periodSeconds``."""

    type: str | None = None
    value: Int32 | None = None
    period_seconds: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HPAScalingRules:
    """The rules of one direction: stabilization window, policy selection, policies."""

    stabilization_window_seconds: Int32 | None = None
    select_policy: str | None = None
    policies: tuple[HPAScalingPolicy, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HorizontalPodAutoscalerBehavior:
    """``spec.behavior``: scale-up and scale-down rules."""

    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HorizontalPodAutoscalerSpec:
    """``spec`` of a HorizontalPodAutoscaler."""

    scale_target_ref: CrossVersionObjectReference | None = None
    min_replicas: Int32 | None = None
    max_replicas: Int32 | None = None
    metrics: tuple[MetricSpec, ...] | None = None
    behavior: HorizontalPodAutoscalerBehavior | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MetricValueStatus:
    """A metric's current value, average value or average utilization."""

    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceMetricStatus:
    """The current value of a Resource metric."""

    name: str | None = None
    current: MetricValueStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerResourceMetricStatus:
    """The current value of a ContainerResource metric."""

    name: str | None = None
    current: MetricValueStatus | None = None
    container: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodsMetricStatus:
    """The current value of a Pods metric."""

    metric: MetricIdentifier | None = None
    current: MetricValueStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectMetricStatus:
    """The current value of an Object metric."""

    metric: MetricIdentifier | None = None
    current: MetricValueStatus | None = None
    described_object: CrossVersionObjectReference | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ExternalMetricStatus:
    """The current value of an External metric."""

    metric: MetricIdentifier | None = None
    current: MetricValueStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MetricStatus:
    """One entry of ``status.currentMetrics``."""

    type: str | None = None
    object: ObjectMetricStatus | None = None
    pods: PodsMetricStatus | None = None
    resource: ResourceMetricStatus | None = None
    container_resource: ContainerResourceMetricStatus | None = None
    external: ExternalMetricStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HorizontalPodAutoscalerCondition:
    """A condition of the autoscaler (AbleToScale, ScalingActive, ScalingLimited)."""

    type: str | None = None
    status: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HorizontalPodAutoscalerStatus:
    """``status`` of a HorizontalPodAutoscaler, written by its controller."""

    observed_generation: int | None = None
    last_scale_time: str | None = None
    current_replicas: Int32 | None = None
    desired_replicas: Int32 | None = None
    current_metrics: tuple[MetricStatus, ...] | None = None
    conditions: tuple[HorizontalPodAutoscalerCondition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HorizontalPodAutoscaler:
    """An autoscaling/v2 HorizontalPodAutoscaler."""

    api_version: str | None = V2
    kind: str | None = "HorizontalPodAutoscaler"
    metadata: ObjectMeta = ObjectMeta()
    spec: HorizontalPodAutoscalerSpec | None = None
    status: HorizontalPodAutoscalerStatus | None = None
    extra: JsonDict = extra_field()


EMPTY_STATUS: Final = HorizontalPodAutoscalerStatus(desired_replicas=0)
"""What ``PrepareForCreate`` leaves: Go's JSON always sends ``desiredReplicas``."""
