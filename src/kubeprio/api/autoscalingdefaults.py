"""Defaults of autoscaling/v2 HorizontalPodAutoscaler.

Mirrors ``pkg/apis/autoscaling/v2/defaults.go`` (v1.32):

* ``minReplicas`` 1;
* no metrics: one Resource metric, cpu at 80 % average utilization;
* ``SetDefaults_HorizontalPodAutoscalerBehavior``: only when ``behavior`` is given, each
  direction's unset fields are filled from the defaults: scale up with no stabilization,
  ``Max`` of 4 pods or 100 % per 15 s; scale down ``Max`` of 100 % per 15 s and no window
  (the controller applies its ``--horizontal-pod-autoscaler-downscale-stabilization``,
  300 s). An HPA without ``behavior`` keeps none, and the controller uses its older rules
  (``normalizeDesiredReplicas``).

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.autoscaling import (
    DEFAULT_CPU_UTILIZATION,
    MAX_POLICY,
    PERCENT_POLICY,
    PODS_POLICY,
    RESOURCE,
    UTILIZATION,
    HorizontalPodAutoscaler,
    HorizontalPodAutoscalerSpec,
    HPAScalingPolicy,
    HPAScalingRules,
    MetricSpec,
    MetricTarget,
    ResourceMetricSource,
)
from kubeprio.api.model import evolve
from kubeprio.api.resources import CPU

DEFAULT_SCALE_UP: Final = HPAScalingRules(
    stabilization_window_seconds=0,
    select_policy=MAX_POLICY,
    policies=(
        HPAScalingPolicy(type=PODS_POLICY, value=4, period_seconds=15),
        HPAScalingPolicy(type=PERCENT_POLICY, value=100, period_seconds=15),
    ),
)
"""``defaultHPAScaleUpRules``."""

DEFAULT_SCALE_DOWN: Final = HPAScalingRules(
    select_policy=MAX_POLICY,
    policies=(HPAScalingPolicy(type=PERCENT_POLICY, value=100, period_seconds=15),),
)
"""``defaultHPAScaleDownRules``: no window, the controller's flag decides it."""

DEFAULT_METRIC: Final = MetricSpec(
    type=RESOURCE,
    resource=ResourceMetricSource(
        name=CPU,
        target=MetricTarget(type=UTILIZATION, average_utilization=DEFAULT_CPU_UTILIZATION),
    ),
)


def scaling_rules(given: HPAScalingRules | None, defaults: HPAScalingRules) -> HPAScalingRules:
    """``GenerateHPAScaleUpRules``/``GenerateHPAScaleDownRules`` (``copyHPAScalingRules``):
    the defaults, with every field ``given`` sets."""
    if given is None:
        return defaults
    return evolve(
        defaults,
        select_policy=given.select_policy
        if given.select_policy is not None
        else defaults.select_policy,
        stabilization_window_seconds=given.stabilization_window_seconds
        if given.stabilization_window_seconds is not None
        else defaults.stabilization_window_seconds,
        policies=given.policies if given.policies is not None else defaults.policies,
        extra=given.extra,
    )


def default_horizontal_pod_autoscaler(hpa: HorizontalPodAutoscaler) -> HorizontalPodAutoscaler:
    """``SetObjectDefaults_HorizontalPodAutoscaler``."""
    spec = hpa.spec or HorizontalPodAutoscalerSpec()
    changes: dict[str, Any] = {}
    if spec.min_replicas is None:
        changes["min_replicas"] = 1
    if not spec.metrics:
        changes["metrics"] = (DEFAULT_METRIC,)
    behavior = spec.behavior
    if behavior is not None:
        changes["behavior"] = evolve(
            behavior,
            scale_up=scaling_rules(behavior.scale_up, DEFAULT_SCALE_UP),
            scale_down=scaling_rules(behavior.scale_down, DEFAULT_SCALE_DOWN),
        )
    if not changes and hpa.spec is not None:
        return hpa
    return evolve(hpa, spec=evolve(spec, **changes))
