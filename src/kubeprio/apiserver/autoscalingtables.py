"""Table columns of HorizontalPodAutoscaler (``kubectl get hpa``).

Mirrors ``printHorizontalPodAutoscaler`` and ``formatHPAMetrics`` in upstream's
``pkg/printers/internalversion/printers.go`` (v1.32): NAME, REFERENCE (``Kind/name``),
TARGETS (at most two metrics, then ``+ N more...``; a Resource utilization metric as
``cpu: 45%/50%``, ``<unknown>`` until the controller has measured it, ``<auto>`` without a
target; average values as quantities), MINPODS (``<unset>`` when nil), MAXPODS,
REPLICAS (``status.currentReplicas``), AGE. The column descriptions are upstream's
(autoscaling/v2beta1 swagger docs). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubeprio.api.autoscaling import (
    CONTAINER_RESOURCE,
    EXTERNAL,
    OBJECT,
    PODS,
    RESOURCE,
    HorizontalPodAutoscaler,
    MetricSpec,
    MetricStatus,
    MetricTarget,
    MetricValueStatus,
)
from kubeprio.apiserver.tableformat import (
    NONE,
    UNKNOWN,
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

HPA_COLUMNS: Final = (
    name_column(),
    Column("Reference", "string", "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count."),
    Column("Targets", "string", "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond."),
    Column("MinPods", "string", "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available."),
    Column("MaxPods", "integer", "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas."),
    Column("Replicas", "integer", "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."),
    age_column(),
)  # fmt: skip

MAX_SHOWN: Final = 2
"""``formatHPAMetrics`` shows this many metrics, then ``+ N more...``."""


def _quantity(value: object) -> str:
    """``(*Quantity).String()``: ``<nil>`` for a nil pointer."""
    return str(value) if value is not None else "<nil>"


def _value_or_average(
    target: MetricTarget, current: MetricValueStatus | None, has_status: bool
) -> str:
    """An Object or External metric: ``current/target (avg)`` or ``current/target``."""
    if target.average_value is not None:
        shown = UNKNOWN
        if has_status and current is not None and current.average_value is not None:
            shown = str(current.average_value)
        return f"{shown}/{target.average_value} (avg)"
    shown = UNKNOWN
    if has_status:
        shown = _quantity(current.value if current else None)
    return f"{shown}/{_quantity(target.value)}"


def _resource(
    name: str, target: MetricTarget, current: MetricValueStatus | None, has_status: bool
) -> str:
    """A Resource or ContainerResource metric: ``cpu: 45%/50%`` or ``memory: 120Mi/100Mi``."""
    if target.average_value is not None:
        shown = UNKNOWN
        if has_status:
            shown = _quantity(current.average_value if current else None)
        return f"{name}: {shown}/{target.average_value}"
    shown = UNKNOWN
    if has_status and current is not None and current.average_utilization is not None:
        shown = f"{current.average_utilization}%"
    wanted = "<auto>"
    if target.average_utilization is not None:
        wanted = f"{target.average_utilization}%"
    return f"{name}: {shown}/{wanted}"


def _one(spec: MetricSpec, status: MetricStatus | None) -> str:
    kind = spec.type
    if kind == EXTERNAL and spec.external is not None:
        src = status.external if status else None
        return _value_or_average(
            spec.external.target or MetricTarget(), src.current if src else None, src is not None
        )
    if kind == PODS and spec.pods is not None:
        pods = status.pods if status else None
        shown = UNKNOWN
        if pods is not None:
            shown = _quantity(pods.current.average_value if pods.current else None)
        return f"{shown}/{_quantity((spec.pods.target or MetricTarget()).average_value)}"
    if kind == OBJECT and spec.object is not None:
        obj = status.object if status else None
        return _value_or_average(
            spec.object.target or MetricTarget(), obj.current if obj else None, obj is not None
        )
    if kind == RESOURCE and spec.resource is not None:
        res = status.resource if status else None
        return _resource(
            spec.resource.name or "",
            spec.resource.target or MetricTarget(),
            res.current if res else None,
            res is not None,
        )
    if kind == CONTAINER_RESOURCE and spec.container_resource is not None:
        cres = status.container_resource if status else None
        return _resource(
            spec.container_resource.name or "",
            spec.container_resource.target or MetricTarget(),
            cres.current if cres else None,
            cres is not None,
        )
    return "<unknown type>"


def format_metrics(specs: Sequence[MetricSpec], statuses: Sequence[MetricStatus]) -> str:
    """``formatHPAMetrics``: the spec's metrics against the status's, in spec order."""
    if not specs:
        return NONE
    shown = [_one(spec, statuses[i] if i < len(statuses) else None) for i, spec in enumerate(specs)]
    text = ", ".join(shown[:MAX_SHOWN])
    if len(shown) > MAX_SHOWN:
        return f"{text} + {len(shown) - MAX_SHOWN} more..."
    return text


def print_hpa(hpa: HorizontalPodAutoscaler, now: float) -> tuple[Cells, RowConditions]:
    """``printHorizontalPodAutoscaler``."""
    spec = hpa.spec
    status = hpa.status
    ref = spec.scale_target_ref if spec else None
    reference = f"{(ref.kind if ref else None) or ''}/{(ref.name if ref else None) or ''}"
    min_replicas = spec.min_replicas if spec else None
    cells: Cells = [
        hpa.metadata.name or "",
        reference,
        format_metrics(
            (spec.metrics if spec else None) or (),
            (status.current_metrics if status else None) or (),
        ),
        "<unset>" if min_replicas is None else str(min_replicas),
        (spec.max_replicas if spec else None) or 0,
        (status.current_replicas if status else None) or 0,
        since(hpa.metadata.creation_timestamp, now),
    ]
    return cells, None
