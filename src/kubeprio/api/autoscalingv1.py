"""autoscaling/v1 HorizontalPodAutoscaler: a view of the stored autoscaling/v2 object.

autoscaling/v1 knows one metric, ``targetCPUUtilizationPercentage``, and reports
``currentCPUUtilizationPercentage``. Upstream converts between the versions through the
internal type and keeps what v1 cannot say in annotations
(``pkg/apis/autoscaling/v1/conversion.go``, v1.32):

* v2 -> v1: the first Resource cpu metric with an average utilization becomes
  ``targetCPUUtilizationPercentage``; every other metric goes to
  ``autoscaling.alpha.kubernetes.io/metrics`` (v1's ``MetricSpec`` shape, the v2beta1
  names: ``targetAverageUtilization``, ``metricName``, ...); the current metrics (all of
  them, the cpu one too, so its raw value survives) to ``.../current-metrics``; the
  conditions to ``.../conditions``; a behavior to ``.../behavior`` (marshalled from the
  internal type, which has no JSON tags: ``{"ScaleUp":{"StabilizationWindowSeconds":0,...}}``);
* v1 -> v2: the annotations' metrics first, then the cpu target; no metric at all gets the
  default 80 % cpu target; the annotations' current metrics, conditions and behavior are
  restored, and the four annotations dropped.

Works on JSON documents (what the wire carries), so the rest of the system sees v2 only.
Who calls it: ``apiserver.rest`` for requests at ``/apis/autoscaling/v1``. Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any, Final

from kubeprio.api.autoscaling import DEFAULT_CPU_UTILIZATION, V1, V2
from kubeprio.api.errors import go_json
from kubeprio.api.model import JsonDict

METRIC_SPECS: Final = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES: Final = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS: Final = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR: Final = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP_ANNOTATIONS: Final = (METRIC_SPECS, METRIC_STATUSES, CONDITIONS, BEHAVIOR)


def _drop_none(doc: JsonDict) -> JsonDict:
    return {k: v for k, v in doc.items() if v is not None}


def _is_cpu_utilization(metric: JsonDict) -> bool:
    resource = metric.get("resource") or {}
    return (
        metric.get("type") == "Resource"
        and resource.get("name") == "cpu"
        and (resource.get("target") or {}).get("averageUtilization") is not None
    )


# --- v2 -> v1 ---------------------------------------------------------------------------------


# The v1 fields that are a plain ``resource.Quantity`` in Go (not a pointer): an unset one
# marshals as "0". Keyed by (source, v1 field); the rest are pointers and are left out.
_SPEC_QUANTITIES: Final = frozenset({("object", "targetValue"), ("pods", "targetAverageValue")})
_STATUS_QUANTITIES: Final = frozenset(
    {
        ("object", "currentValue"),
        ("pods", "currentAverageValue"),
        ("resource", "currentAverageValue"),
        ("containerResource", "currentAverageValue"),
        ("external", "currentValue"),
    }
)


def _sources_v1(metric: JsonDict, side: str, quantities: frozenset[tuple[str, str]]) -> JsonDict:
    """A v2 metric's sources in v1's (v2beta1-shaped) names: ``side`` is ``target`` for a
    spec and ``current`` for a status, and prefixes the value fields (``targetValue``,
    ``currentAverageUtilization``, ...); the ``quantities`` are never null."""

    def value(source: str, field: str, found: object) -> object:
        return found or "0" if (source, field) in quantities else found

    out: JsonDict = {}
    if metric.get("object") is not None:
        src = metric["object"]
        values = src.get(side) or {}
        ident = src.get("metric") or {}
        out["object"] = _drop_none(
            {
                "target": src.get("describedObject") or {},
                "metricName": ident.get("name", ""),
                f"{side}Value": value("object", f"{side}Value", values.get("value")),
                "selector": ident.get("selector"),
                "averageValue": values.get("averageValue"),
            }
        )
    if metric.get("pods") is not None:
        src = metric["pods"]
        ident = src.get("metric") or {}
        average = (src.get(side) or {}).get("averageValue")
        out["pods"] = _drop_none(
            {
                "metricName": ident.get("name", ""),
                f"{side}AverageValue": value("pods", f"{side}AverageValue", average),
                "selector": ident.get("selector"),
            }
        )
    for field in ("resource", "containerResource"):
        if metric.get(field) is not None:
            src = metric[field]
            values = src.get(side) or {}
            converted = {
                "name": src.get("name", ""),
                f"{side}AverageUtilization": values.get("averageUtilization"),
                f"{side}AverageValue": value(
                    field, f"{side}AverageValue", values.get("averageValue")
                ),
            }
            if field == "containerResource":
                converted["container"] = src.get("container", "")
            out[field] = _drop_none(converted)
    if metric.get("external") is not None:
        src = metric["external"]
        values = src.get(side) or {}
        ident = src.get("metric") or {}
        out["external"] = _drop_none(
            {
                "metricName": ident.get("name", ""),
                "metricSelector": ident.get("selector"),
                f"{side}Value": value("external", f"{side}Value", values.get("value")),
                f"{side}AverageValue": values.get("averageValue"),
            }
        )
    return out


def _metric_spec_v1(metric: JsonDict) -> JsonDict:
    """``Convert_autoscaling_MetricSpec_To_v1_MetricSpec`` (v1's, v2beta1-shaped)."""
    return {"type": metric.get("type"), **_sources_v1(metric, "target", _SPEC_QUANTITIES)}


def _metric_status_v1(metric: JsonDict) -> JsonDict:
    """``Convert_autoscaling_MetricStatus_To_v1_MetricStatus``."""
    return {"type": metric.get("type", ""), **_sources_v1(metric, "current", _STATUS_QUANTITIES)}


def _condition_v1(condition: JsonDict) -> JsonDict:
    """v1's ``HorizontalPodAutoscalerCondition`` (the same fields; Go's zero time is null)."""
    return {
        "type": condition.get("type", ""),
        "status": condition.get("status", ""),
        "lastTransitionTime": condition.get("lastTransitionTime"),
        **({"reason": condition["reason"]} if condition.get("reason") else {}),
        **({"message": condition["message"]} if condition.get("message") else {}),
    }


def _internal_rules(rules: JsonDict | None) -> JsonDict | None:
    """The internal ``HPAScalingRules`` as Go marshals a struct without JSON tags."""
    if rules is None:
        return None
    return {
        "StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
        "SelectPolicy": rules.get("selectPolicy"),
        "Policies": [
            {
                "Type": p.get("type", ""),
                "Value": p.get("value", 0),
                "PeriodSeconds": p.get("periodSeconds", 0),
            }
            for p in rules.get("policies") or ()
        ]
        if rules.get("policies") is not None
        else None,
    }


def _go_marshal(value: Any) -> str:
    return go_json(value, sort_keys=False)


def to_v1(doc: JsonDict) -> JsonDict:
    """``Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler``."""
    spec = doc.get("spec") or {}
    status = doc.get("status") or {}
    metrics = spec.get("metrics") or []
    v1_spec: JsonDict = {
        "scaleTargetRef": spec.get("scaleTargetRef") or {},
        **({"minReplicas": spec["minReplicas"]} if spec.get("minReplicas") is not None else {}),
        "maxReplicas": spec.get("maxReplicas", 0),
    }
    cpu = next((m for m in metrics if _is_cpu_utilization(m)), None)
    if cpu is not None:
        v1_spec["targetCPUUtilizationPercentage"] = cpu["resource"]["target"]["averageUtilization"]
    current_metrics = status.get("currentMetrics") or []
    v1_status: JsonDict = {
        **({"observedGeneration": status["observedGeneration"]} if status.get("observedGeneration") is not None else {}),
        **({"lastScaleTime": status["lastScaleTime"]} if status.get("lastScaleTime") else {}),
        # v1's currentReplicas and desiredReplicas are plain int32 without omitempty
        # (autoscaling/v1 types.go): zero is written, and typed clients require both.
        "currentReplicas": status.get("currentReplicas") or 0,
        "desiredReplicas": status.get("desiredReplicas", 0),
    }  # fmt: skip
    for metric in current_metrics:
        resource = metric.get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            utilization = (resource.get("current") or {}).get("averageUtilization")
            if utilization is not None:
                v1_status["currentCPUUtilizationPercentage"] = utilization
    metadata = dict(doc.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    others = [_metric_spec_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[METRIC_SPECS] = _go_marshal(others)
    if current_metrics:
        annotations[METRIC_STATUSES] = _go_marshal([_metric_status_v1(m) for m in current_metrics])
    behavior = spec.get("behavior")
    if behavior is not None:
        annotations[BEHAVIOR] = _go_marshal(
            {
                "ScaleUp": _internal_rules(behavior.get("scaleUp")),
                "ScaleDown": _internal_rules(behavior.get("scaleDown")),
            }
        )
    conditions = status.get("conditions") or []
    if conditions:
        annotations[CONDITIONS] = _go_marshal([_condition_v1(c) for c in conditions])
    if annotations:
        metadata["annotations"] = annotations
    out: JsonDict = {"kind": doc.get("kind", "HorizontalPodAutoscaler"), "apiVersion": V1}
    out["metadata"] = metadata
    out["spec"] = v1_spec
    out["status"] = v1_status
    return out


# --- v1 -> v2 ---------------------------------------------------------------------------------


def _metric_spec_v2(metric: JsonDict) -> JsonDict:
    """``Convert_v1_MetricSpec_To_autoscaling_MetricSpec``."""
    out: JsonDict = {"type": metric.get("type")}
    if metric.get("object") is not None:
        src = metric["object"]
        target: JsonDict = {"type": "AverageValue" if src.get("averageValue") else "Value"}
        if src.get("averageValue"):
            target["averageValue"] = src["averageValue"]
        else:
            target["value"] = src.get("targetValue")
        out["object"] = {
            "describedObject": src.get("target") or {},
            "metric": _drop_none({"name": src.get("metricName"), "selector": src.get("selector")}),
            "target": target,
        }
    if metric.get("pods") is not None:
        src = metric["pods"]
        out["pods"] = {
            "metric": _drop_none({"name": src.get("metricName"), "selector": src.get("selector")}),
            "target": {"type": "AverageValue", "averageValue": src.get("targetAverageValue")},
        }
    for field in ("resource", "containerResource"):
        if metric.get(field) is not None:
            src = metric[field]
            if src.get("targetAverageUtilization") is not None:
                target = {
                    "type": "Utilization",
                    "averageUtilization": src["targetAverageUtilization"],
                }
            else:
                target = {"type": "AverageValue", "averageValue": src.get("targetAverageValue")}
            converted: JsonDict = {"name": src.get("name"), "target": target}
            if field == "containerResource":
                converted["container"] = src.get("container")
            out[field] = converted
    if metric.get("external") is not None:
        src = metric["external"]
        if src.get("targetAverageValue") is not None:
            target = {"type": "AverageValue", "averageValue": src["targetAverageValue"]}
        else:
            target = {"type": "Value", "value": src.get("targetValue")}
        out["external"] = {
            "metric": _drop_none(
                {"name": src.get("metricName"), "selector": src.get("metricSelector")}
            ),
            "target": target,
        }
    return out


def _metric_status_v2(metric: JsonDict) -> JsonDict:
    """``Convert_v1_MetricStatus_To_autoscaling_MetricStatus``."""
    out: JsonDict = {"type": metric.get("type")}
    for field in ("resource", "containerResource"):
        if metric.get(field) is not None:
            src = metric[field]
            converted: JsonDict = {
                "name": src.get("name"),
                "current": _drop_none(
                    {
                        "averageUtilization": src.get("currentAverageUtilization"),
                        "averageValue": src.get("currentAverageValue"),
                    }
                ),
            }
            if field == "containerResource":
                converted["container"] = src.get("container")
            out[field] = converted
    if metric.get("pods") is not None:
        src = metric["pods"]
        out["pods"] = {
            "metric": _drop_none({"name": src.get("metricName"), "selector": src.get("selector")}),
            "current": {"averageValue": src.get("currentAverageValue")},
        }
    if metric.get("object") is not None:
        src = metric["object"]
        out["object"] = {
            "describedObject": src.get("target") or {},
            "metric": _drop_none({"name": src.get("metricName"), "selector": src.get("selector")}),
            "current": _drop_none(
                {"value": src.get("currentValue"), "averageValue": src.get("averageValue")}
            ),
        }
    if metric.get("external") is not None:
        src = metric["external"]
        out["external"] = {
            "metric": _drop_none(
                {"name": src.get("metricName"), "selector": src.get("metricSelector")}
            ),
            "current": _drop_none(
                {"value": src.get("currentValue"), "averageValue": src.get("currentAverageValue")}
            ),
        }
    return out


def _external_rules(rules: JsonDict | None) -> JsonDict | None:
    if not isinstance(rules, dict):
        return None
    policies = rules.get("Policies")
    return _drop_none(
        {
            "stabilizationWindowSeconds": rules.get("StabilizationWindowSeconds"),
            "selectPolicy": rules.get("SelectPolicy"),
            "policies": [
                {
                    "type": p.get("Type"),
                    "value": p.get("Value"),
                    "periodSeconds": p.get("PeriodSeconds"),
                }
                for p in policies
                if isinstance(p, dict)
            ]
            if isinstance(policies, list)
            else None,
        }
    )


def _annotation_list(annotations: JsonDict, key: str) -> list[Any] | None:
    """An annotation's JSON list, or None when absent or unreadable (upstream ignores
    errors rather than break stored objects)."""
    text = annotations.get(key)
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def from_v1(doc: JsonDict) -> JsonDict:
    """``Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler``."""
    out = {k: v for k, v in doc.items() if k not in ("spec", "status")}
    out["apiVersion"] = V2
    metadata = (
        dict(doc.get("metadata") or {})
        if isinstance(doc.get("metadata"), dict)
        else doc.get("metadata")
    )
    raw_spec = doc.get("spec")
    spec: JsonDict = raw_spec if isinstance(raw_spec, dict) else {}
    raw_status = doc.get("status")
    status: JsonDict | None = raw_status if isinstance(raw_status, dict) else None
    annotations = (
        dict((metadata or {}).get("annotations") or {}) if isinstance(metadata, dict) else {}
    )
    v2_spec: JsonDict = {k: v for k, v in spec.items() if k != "targetCPUUtilizationPercentage"}
    metrics: list[JsonDict] = []
    others = _annotation_list(annotations, METRIC_SPECS)
    if others is not None:
        metrics.extend(_metric_spec_v2(m) for m in others if isinstance(m, dict))
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is None and not metrics:
        # autoscaling/v1's implicit default, made explicit with the whole metric set known.
        cpu = DEFAULT_CPU_UTILIZATION
    if cpu is not None:
        metrics.append(
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": cpu},
                },
            }
        )
    v2_spec["metrics"] = metrics
    behavior_text = annotations.get(BEHAVIOR)
    if isinstance(behavior_text, str):
        try:
            behavior = json.loads(behavior_text)
        except ValueError:
            behavior = None
        if isinstance(behavior, dict):
            v2_spec["behavior"] = _drop_none(
                {
                    "scaleUp": _external_rules(behavior.get("ScaleUp")),
                    "scaleDown": _external_rules(behavior.get("ScaleDown")),
                }
            )
    out["spec"] = v2_spec
    if status is not None:
        v2_status: JsonDict = {
            k: v for k, v in status.items() if k != "currentCPUUtilizationPercentage"
        }
        current = _annotation_list(annotations, METRIC_STATUSES)
        if current is not None:
            v2_status["currentMetrics"] = [
                _metric_status_v2(m) for m in current if isinstance(m, dict)
            ]
        elif status.get("currentCPUUtilizationPercentage") is not None:
            v2_status["currentMetrics"] = [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {
                            "averageUtilization": status["currentCPUUtilizationPercentage"]
                        },
                    },
                }
            ]
        conditions = _annotation_list(annotations, CONDITIONS)
        if conditions is not None:
            v2_status["conditions"] = [c for c in conditions if isinstance(c, dict)]
        out["status"] = v2_status
    if isinstance(metadata, dict):
        if annotations:
            kept = {k: v for k, v in annotations.items() if k not in ROUND_TRIP_ANNOTATIONS}
            if kept:
                metadata["annotations"] = kept
            else:
                metadata.pop("annotations", None)
        out["metadata"] = metadata
    return out


V2BETA1: Final = "autoscaling/v2beta1"


def from_v2beta1(doc: JsonDict) -> JsonDict:
    """An autoscaling/v2beta1 HPA (removed upstream in 1.25, still in old dumps) as v2: its
    metrics have the shape v1's annotations keep (``targetAverageUtilization``,
    ``metricName``, ...), so they convert the same way."""
    out = dict(doc)
    out["apiVersion"] = V2
    spec = doc.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("metrics"), list):
        out["spec"] = {
            **spec,
            "metrics": [_metric_spec_v2(m) for m in spec["metrics"] if isinstance(m, dict)],
        }
    status = doc.get("status")
    if isinstance(status, dict) and isinstance(status.get("currentMetrics"), list):
        out["status"] = {
            **status,
            "currentMetrics": [
                _metric_status_v2(m) for m in status["currentMetrics"] if isinstance(m, dict)
            ],
        }
    return out
