"""Validation of autoscaling/v2 HorizontalPodAutoscaler.

Mirrors ``pkg/apis/autoscaling/validation/validation.go`` (v1.32) with its feature gates
at their 1.32 defaults (``HPAScaleToZero`` off, ``HPAContainerMetrics`` on):

* ``ValidateHorizontalPodAutoscaler``: object metadata with DNS-subdomain names (checked
  by the caller), then ``validateHorizontalPodAutoscalerSpec``: ``minReplicas`` at least 1
  (0 is kept on update when the stored object already had it), ``maxReplicas`` above 0
  and not below ``minReplicas``, the scale target reference (kind and name, each a valid
  path segment), every metric (``validateMetricSpec``: one known type with exactly its
  source set, each source's rules and ``validateMetricTarget``) and the behavior
  (stabilization windows 0..3600 s, ``selectPolicy`` Max/Min/Disabled, at least one
  policy, each ``Pods``/``Percent`` with a positive value and a period of 1..1800 s);
* ``ValidateHorizontalPodAutoscalerStatusUpdate``: current and desired replicas not
  negative.

Bad values print as upstream's ``field.Error`` does (pointers dereferenced, quantities
as their JSON strings). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.autoscaling import (
    AVERAGE_VALUE,
    CONTAINER_RESOURCE,
    DISABLED_POLICY,
    EXTERNAL,
    MAX_POLICY,
    MIN_POLICY,
    OBJECT,
    PERCENT_POLICY,
    PODS,
    PODS_POLICY,
    RESOURCE,
    UTILIZATION,
    VALUE,
    ContainerResourceMetricSource,
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerSpec,
    HPAScalingPolicy,
    HPAScalingRules,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
)
from kubeprio.api.errors import FieldError, GoValue, go_json
from kubeprio.api.quantity import Quantity
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    dns1123_label_errors,
    index,
    path_segment_errors,
    validate_nonnegative,
)
from kubeprio.api.validation.resources import validate_container_resource_name

MAX_PERIOD_SECONDS: Final = 1800
"""``MaxPeriodSeconds``: the longest scaling policy period."""
MAX_STABILIZATION_WINDOW_SECONDS: Final = 3600
"""``MaxStabilizationWindowSeconds``."""
METRIC_SOURCE_TYPES: Final = (CONTAINER_RESOURCE, EXTERNAL, OBJECT, PODS, RESOURCE)
"""``validMetricSourceTypesList`` (a sorted set)."""
SELECT_POLICIES: Final = (DISABLED_POLICY, MAX_POLICY, MIN_POLICY)
POLICY_TYPES: Final = (PERCENT_POLICY, PODS_POLICY)


def _quantity(value: Quantity) -> GoValue:
    return GoValue(go_json(str(value)))


def validate_cross_version_object_reference(
    ref: CrossVersionObjectReference | None, path: str
) -> list[FieldError]:
    """``ValidateCrossVersionObjectReference``."""
    ref = ref or CrossVersionObjectReference()
    found: list[FieldError] = []
    for attr in ("kind", "name"):
        value = getattr(ref, attr) or ""
        if not value:
            found.append(errors.required(child(path, attr), ""))
        else:
            found.extend(
                errors.invalid(child(path, attr), value, m) for m in path_segment_errors(value)
            )
    return found


def validate_metric_target(target: MetricTarget, path: str) -> list[FieldError]:
    """``validateMetricTarget``."""
    found: list[FieldError] = []
    if not target.type:
        found.append(errors.required(child(path, "type"), "must specify a metric target type"))
    if target.type not in (UTILIZATION, VALUE, AVERAGE_VALUE):
        found.append(
            errors.invalid(
                child(path, "type"),
                target.type or "",
                "must be either Utilization, Value, or AverageValue",
            )
        )
    if target.value is not None and target.value.sign() != 1:
        found.append(
            errors.invalid(child(path, "value"), _quantity(target.value), "must be positive")
        )
    if target.average_value is not None and target.average_value.sign() != 1:
        found.append(
            errors.invalid(
                child(path, "averageValue"), _quantity(target.average_value), "must be positive"
            )
        )
    if target.average_utilization is not None and target.average_utilization < 1:
        found.append(
            errors.invalid(
                child(path, "averageUtilization"),
                target.average_utilization,
                "must be greater than 0",
            )
        )
    return found


def validate_metric_identifier(metric: MetricIdentifier | None, path: str) -> list[FieldError]:
    """``validateMetricIdentifier``."""
    name = (metric.name if metric else None) or ""
    if not name:
        return [errors.required(child(path, "name"), "must specify a metric name")]
    return [errors.invalid(child(path, "name"), name, m) for m in path_segment_errors(name)]


def _object_source(src: ObjectMetricSource, path: str) -> list[FieldError]:
    target = src.target or MetricTarget()
    found = validate_cross_version_object_reference(
        src.described_object, child(path, "describedObject")
    )
    found += validate_metric_identifier(src.metric, child(path, "metric"))
    found += validate_metric_target(target, child(path, "target"))
    if target.value is None and target.average_value is None:
        found.append(
            errors.required(
                f"{path}.target.averageValue", "must set either a target value or averageValue"
            )
        )
    return found


def _external_source(src: ExternalMetricSource, path: str) -> list[FieldError]:
    target = src.target or MetricTarget()
    found = validate_metric_identifier(src.metric, child(path, "metric"))
    found += validate_metric_target(target, child(path, "target"))
    if target.value is None and target.average_value is None:
        found.append(
            errors.required(
                f"{path}.target.averageValue",
                "must set either a target value for metric or a per-pod target",
            )
        )
    if target.value is not None and target.average_value is not None:
        found.append(
            errors.forbidden(
                f"{path}.target.value",
                "may not set both a target value for metric and a per-pod target",
            )
        )
    return found


def _pods_source(src: PodsMetricSource, path: str) -> list[FieldError]:
    target = src.target or MetricTarget()
    found = validate_metric_identifier(src.metric, child(path, "metric"))
    found += validate_metric_target(target, child(path, "target"))
    if target.average_value is None:
        found.append(
            errors.required(
                f"{path}.target.averageValue", "must specify a positive target averageValue"
            )
        )
    return found


def _utilization_or_value(target: MetricTarget, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    if target.average_utilization is None and target.average_value is None:
        found.append(
            errors.required(
                f"{path}.target.averageUtilization",
                "must set either a target raw value or a target utilization",
            )
        )
    if target.average_utilization is not None and target.average_value is not None:
        found.append(
            errors.forbidden(
                f"{path}.target.averageValue",
                "may not set both a target raw value and a target utilization",
            )
        )
    return found


def _container_resource_source(src: ContainerResourceMetricSource, path: str) -> list[FieldError]:
    target = src.target or MetricTarget()
    found: list[FieldError] = []
    if not src.name:
        found.append(errors.required(child(path, "name"), "must specify a resource name"))
    else:
        found += validate_container_resource_name(src.name, child(path, "name"))
    if not src.container:
        found.append(errors.required(child(path, "container"), "must specify a container"))
    else:
        found += [
            errors.invalid(child(path, "container"), src.container, m)
            for m in dns1123_label_errors(src.container)
        ]
    found += validate_metric_target(target, child(path, "target"))
    return found + _utilization_or_value(target, path)


def _resource_source(src: ResourceMetricSource, path: str) -> list[FieldError]:
    target = src.target or MetricTarget()
    found: list[FieldError] = []
    if not src.name:
        found.append(errors.required(child(path, "name"), "must specify a resource name"))
    found += validate_metric_target(target, child(path, "target"))
    return found + _utilization_or_value(target, path)


_SOURCES: Final[tuple[tuple[str, str, Any], ...]] = (
    # (attribute, JSON field, validator) in upstream's order of checks.
    ("object", "object", _object_source),
    ("external", "external", _external_source),
    ("pods", "pods", _pods_source),
    ("resource", "resource", _resource_source),
    ("container_resource", "containerResource", _container_resource_source),
)
_FIELD_OF_TYPE: Final = {
    OBJECT: "object",
    PODS: "pods",
    RESOURCE: "resource",
    EXTERNAL: "external",
    CONTAINER_RESOURCE: "containerResource",
}


def validate_metric_spec(spec: MetricSpec, path: str) -> list[FieldError]:
    """``validateMetricSpec``: a known type, its source set, no other source."""
    found: list[FieldError] = []
    if not spec.type:
        found.append(errors.required(child(path, "type"), "must specify a metric source type"))
    if spec.type not in METRIC_SOURCE_TYPES:
        found.append(
            errors.not_supported(child(path, "type"), spec.type or "", METRIC_SOURCE_TYPES)
        )
    present: list[str] = []
    for attr, field, validator in _SOURCES:
        source = getattr(spec, attr)
        if source is not None:
            present.append(field)
            if len(present) == 1:
                found += validator(source, child(path, field))
    expected = _FIELD_OF_TYPE.get(spec.type or "")
    if expected is None:
        found.append(
            errors.not_supported(child(path, "type"), spec.type or "", METRIC_SOURCE_TYPES)
        )
    elif expected not in present:
        found.append(
            errors.required(
                child(path, expected), "must populate information for the given metric source"
            )
        )
    if len(present) != 1:
        # Go ranges over a set (random order); report the extra sources in field order.
        found.extend(
            errors.forbidden(child(path, field), "must populate the given metric source only")
            for field in present
            if field != expected
        )
    return found


def _validate_metrics(metrics: tuple[MetricSpec, ...] | None, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    for i, metric in enumerate(metrics or ()):
        found += validate_metric_spec(metric, index(path, i))
    return found


def _validate_scaling_policy(policy: HPAScalingPolicy, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    if policy.type not in POLICY_TYPES:
        found.append(errors.not_supported(child(path, "type"), policy.type or "", POLICY_TYPES))
    value = policy.value or 0
    if value <= 0:
        found.append(errors.invalid(child(path, "value"), value, "must be greater than zero"))
    period = policy.period_seconds or 0
    if period <= 0:
        found.append(
            errors.invalid(child(path, "periodSeconds"), period, "must be greater than zero")
        )
    if period > MAX_PERIOD_SECONDS:
        found.append(
            errors.invalid(
                child(path, "periodSeconds"),
                period,
                f"must be less than or equal to {MAX_PERIOD_SECONDS}",
            )
        )
    return found


def _validate_scaling_rules(rules: HPAScalingRules | None, path: str) -> list[FieldError]:
    if rules is None:
        return []
    found: list[FieldError] = []
    window = rules.stabilization_window_seconds
    window_path = child(path, "stabilizationWindowSeconds")
    if window is not None and window < 0:
        found.append(errors.invalid(window_path, window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        found.append(
            errors.invalid(
                window_path,
                window,
                f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}",
            )
        )
    if rules.select_policy is not None and rules.select_policy not in SELECT_POLICIES:
        found.append(
            errors.not_supported(child(path, "selectPolicy"), rules.select_policy, SELECT_POLICIES)
        )
    policies_path = child(path, "policies")
    if not rules.policies:
        found.append(errors.required(policies_path, "must specify at least one Policy"))
    for i, policy in enumerate(rules.policies or ()):
        found += _validate_scaling_policy(policy, index(policies_path, i))
    return found


def _validate_behavior(
    behavior: HorizontalPodAutoscalerBehavior | None, path: str
) -> list[FieldError]:
    if behavior is None:
        return []
    return _validate_scaling_rules(behavior.scale_up, child(path, "scaleUp")) + (
        _validate_scaling_rules(behavior.scale_down, child(path, "scaleDown"))
    )


def validate_spec(
    spec: HorizontalPodAutoscalerSpec, *, min_replicas_lower_bound: int
) -> list[FieldError]:
    """``validateHorizontalPodAutoscalerSpec``."""
    found: list[FieldError] = []
    if spec.min_replicas is not None and spec.min_replicas < min_replicas_lower_bound:
        found.append(
            errors.invalid(
                "spec.minReplicas",
                spec.min_replicas,
                f"must be greater than or equal to {min_replicas_lower_bound}",
            )
        )
    max_replicas = spec.max_replicas or 0
    if max_replicas < 1:
        found.append(errors.invalid("spec.maxReplicas", max_replicas, "must be greater than 0"))
    if spec.min_replicas is not None and max_replicas < spec.min_replicas:
        found.append(
            errors.invalid(
                "spec.maxReplicas", max_replicas, "must be greater than or equal to `minReplicas`"
            )
        )
    found += validate_cross_version_object_reference(spec.scale_target_ref, "spec.scaleTargetRef")
    found += _validate_metrics(spec.metrics, "spec.metrics")
    found += _validate_behavior(spec.behavior, "spec.behavior")
    return found


def validate_horizontal_pod_autoscaler(hpa: HorizontalPodAutoscaler) -> list[FieldError]:
    """``ValidateHorizontalPodAutoscaler`` (beyond metadata)."""
    return validate_spec(hpa.spec or HorizontalPodAutoscalerSpec(), min_replicas_lower_bound=1)


def validate_horizontal_pod_autoscaler_update(
    new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler
) -> list[FieldError]:
    """``ValidateHorizontalPodAutoscalerUpdate``: an HPA stored with ``minReplicas: 0``
    may keep it."""
    old_min = old.spec.min_replicas if old.spec else None
    bound = 0 if old_min == 0 else 1
    return validate_spec(new.spec or HorizontalPodAutoscalerSpec(), min_replicas_lower_bound=bound)


def validate_status_update(
    new: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler
) -> list[FieldError]:
    """``ValidateHorizontalPodAutoscalerStatusUpdate``."""
    status = new.status
    current = (status.current_replicas if status else None) or 0
    desired = (status.desired_replicas if status else None) or 0
    return validate_nonnegative(current, "status.currentReplicas") + validate_nonnegative(
        desired, "status.desiredReplicas"
    )


CREATE: Final[dict[type[Any], KindValidator]] = {
    HorizontalPodAutoscaler: validate_horizontal_pod_autoscaler
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    HorizontalPodAutoscaler: validate_horizontal_pod_autoscaler_update
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    HorizontalPodAutoscaler: validate_status_update
}
