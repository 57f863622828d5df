"""The replica count an HPA's metrics ask for: ``computeReplicasForMetrics``.

Mirrors ``pkg/controller/podautoscaler/horizontal.go`` (v1.32) ``computeReplicasForMetrics``
and ``computeReplicasForMetric``: every metric proposes a replica count and the largest
wins; a failed metric is skipped (its status entry left zero, as upstream's
``make([]MetricStatus, n)``) unless every metric fails or the ones that worked would scale
down, in which case the first failure's condition is set and no count is proposed
(``invalid metrics (1 invalid out of 2), first error is: ...``). Success sets
``ScalingActive`` ``ValidMetricFound``.

Resource and ContainerResource metrics go through ``controllers.replicacalculator``
(``computeStatusForResourceMetricGeneric``) over the target's pods; Pods, Object and
External metrics fail as upstream's do without a custom or external metrics API
(``FailedGetPodsMetric``, ...); an unknown type is ``InvalidMetricSourceType``.

Driven by ``controllers.horizontal``, which validates the target's selector first and
hands over the pods it selects. Conditions and events go to the ``hpastatus.Working`` it
is given; no writes, no clock reads (``now`` is given). Must not import ``apiserver``,
``store`` or ``admission``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kubeprio.api.autoscaling import (
    CONTAINER_RESOURCE,
    RESOURCE,
    SCALING_ACTIVE,
    ContainerResourceMetricStatus,
    HorizontalPodAutoscalerCondition,
    MetricSpec,
    MetricStatus,
    MetricTarget,
    ResourceMetricStatus,
)
from kubeprio.api.core import Pod
from kubeprio.controllers import replicacalculator as rc
from kubeprio.controllers.hpastatus import FALSE, TRUE, Working


class MetricFailedError(Exception):
    """One metric failed: the error text and the condition it proposes."""

    def __init__(self, message: str, condition: HorizontalPodAutoscalerCondition) -> None:
        super().__init__(message)
        self.message = message
        self.condition = condition


def replicas_for_metrics(
    working: Working,
    specs: tuple[MetricSpec, ...],
    *,
    spec_replicas: int,
    pods: Sequence[Pod],
    calc: rc.Calculator,
    now: float,
    node_answers: Callable[[str], bool],
) -> tuple[int, str, list[MetricStatus], str | None]:
    """``computeReplicasForMetrics`` after the selector: (replicas or -1, metric name,
    statuses, error)."""
    # Upstream's make([]MetricStatus, n): a failed metric leaves a zero entry.
    statuses: list[MetricStatus] = [MetricStatus(type="") for _ in specs]
    replicas = 0
    metric = ""
    invalid = 0
    first_error: str | None = None
    first_condition: HorizontalPodAutoscalerCondition | None = None
    for i, spec in enumerate(specs):
        try:
            proposal, name, statuses[i] = replicas_for_metric(
                working,
                spec,
                spec_replicas=spec_replicas,
                pods=pods,
                calc=calc,
                now=now,
                node_answers=node_answers,
            )
        except MetricFailedError as failure:
            if invalid == 0:
                first_condition = failure.condition
                first_error = failure.message
            invalid += 1
            continue
        if replicas == 0 or proposal > replicas:
            replicas = proposal
            metric = name
    error = None
    if first_error is not None:
        error = f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first_error}"
    if invalid >= len(specs) or (invalid > 0 and replicas < spec_replicas):
        if first_condition is not None:
            working.set_condition(
                first_condition.type or SCALING_ACTIVE,
                first_condition.status or FALSE,
                first_condition.reason or "",
                first_condition.message or "",
            )
        return -1, "", statuses, error or ""
    working.set_condition(
        SCALING_ACTIVE,
        TRUE,
        "ValidMetricFound",
        f"the HPA was able to successfully calculate a replica count from {metric}",
    )
    return replicas, metric, statuses, error


def replicas_for_metric(
    working: Working,
    spec: MetricSpec,
    *,
    spec_replicas: int,
    pods: Sequence[Pod],
    calc: rc.Calculator,
    now: float,
    node_answers: Callable[[str], bool],
) -> tuple[int, str, MetricStatus]:
    """``computeReplicasForMetric`` for one spec; raises ``MetricFailedError``."""
    kind = spec.type
    if kind == RESOURCE and spec.resource is not None:
        name = spec.resource.name or ""
        try:
            replicas, current, metric = rc.resource_metric_status(
                calc,
                target=spec.resource.target or MetricTarget(),
                resource=name,
                container="",
                pods=pods,
                current_replicas=spec_replicas,
                container_source=False,
                now=now,
                node_answers=node_answers,
            )
        except rc.MetricsError as exc:
            condition = working.unable_condition("FailedGetResourceMetric", str(exc))
            raise MetricFailedError(
                f"failed to get {name} resource metric value: {exc}", condition
            ) from exc
        return (
            replicas,
            metric,
            MetricStatus(type=RESOURCE, resource=ResourceMetricStatus(name=name, current=current)),
        )
    if kind == CONTAINER_RESOURCE and spec.container_resource is not None:
        source = spec.container_resource
        name = source.name or ""
        container = source.container or ""
        try:
            replicas, current, metric = rc.resource_metric_status(
                calc,
                target=source.target or MetricTarget(),
                resource=name,
                container=container,
                pods=pods,
                current_replicas=spec_replicas,
                container_source=True,
                now=now,
                node_answers=node_answers,
            )
        except rc.MetricsError as exc:
            condition = working.unable_condition("FailedGetContainerResourceMetric", str(exc))
            raise MetricFailedError(
                f"failed to get {container} container metric value: {exc}", condition
            ) from exc
        return (
            replicas,
            metric,
            MetricStatus(
                type=CONTAINER_RESOURCE,
                container_resource=ContainerResourceMetricStatus(
                    name=name, container=container, current=current
                ),
            ),
        )
    custom = rc.custom_metric_failure(spec)
    if custom is not None:
        reason, text = custom
        raise MetricFailedError(text, working.unable_condition(reason, text))
    message = f'unknown metric source type "{kind or ""}"'
    raise MetricFailedError(message, working.unable_condition("InvalidMetricSourceType", message))
