"""autoscaling/v1 <-> v2 conversion (``pkg/apis/autoscaling/v1/conversion.go``; cases after
``conversion_test.go``'s ``TestHorizontalPodAutoscalerAnnotations`` and the round trips of
``TestHorizontalPodAutoscalerConversion``)."""

from __future__ import annotations

import json
from typing import Any

from kubeprio.api import autoscalingv1 as v1

V2_FULL: dict[str, Any] = {
    "apiVersion": "autoscaling/v2",
    "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "a"}},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 9,
        "metrics": [
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "200Mi"}}},
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
        ],
        "behavior": {
            "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                        "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]},
            "scaleDown": {"selectPolicy": "Min",
                          "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]},
        },
    },
    "status": {
        "currentReplicas": 3,
        "desiredReplicas": 4,
        "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 75, "averageValue": "750m"}}},
        ],
        "conditions": [
            {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
             "reason": "SucceededRescale", "message": "the HPA controller was able to update the target scale to 4"},
        ],
    },
}  # fmt: skip


def test_v1_keeps_the_cpu_target_and_annotates_the_rest() -> None:
    out = v1.to_v1(V2_FULL)
    assert out["apiVersion"] == "autoscaling/v1"
    assert out["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 9,
        "targetCPUUtilizationPercentage": 60,
    }
    assert out["status"] == {
        "currentReplicas": 3,
        "desiredReplicas": 4,
        "currentCPUUtilizationPercentage": 75,
    }
    annotations = out["metadata"]["annotations"]
    assert annotations["team"] == "a"
    assert json.loads(annotations[v1.METRIC_SPECS]) == [
        {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "200Mi"}}
    ]
    assert annotations[v1.METRIC_STATUSES] == (
        '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":75,'
        '"currentAverageValue":"750m"}}]'
    )
    # The internal type has no JSON tags: Go marshals its field names.
    assert annotations[v1.BEHAVIOR] == (
        '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":'
        '[{"Type":"Pods","Value":4,"PeriodSeconds":15}]},"ScaleDown":'
        '{"StabilizationWindowSeconds":null,"SelectPolicy":"Min","Policies":'
        '[{"Type":"Percent","Value":10,"PeriodSeconds":60}]}}'
    )
    assert '"reason":"SucceededRescale"' in annotations[v1.CONDITIONS]


def test_v2_to_v1_to_v2_round_trips() -> None:
    back = v1.from_v1(v1.to_v1(V2_FULL))
    assert back["spec"] == V2_FULL["spec"]
    assert back["status"] == V2_FULL["status"]
    assert back["metadata"]["annotations"] == {"team": "a"}


def test_a_v1_hpa_without_target_gets_the_default_80_percent() -> None:
    doc = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    }
    out = v1.from_v1(doc)
    assert out["apiVersion"] == "autoscaling/v2"
    assert out["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}
    ]  # fmt: skip


def test_unreadable_annotations_are_ignored() -> None:
    doc = {
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": "web", "annotations": {v1.METRIC_SPECS: "{not json"}},
        "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 40},
    }
    out = v1.from_v1(doc)
    assert out["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 40
    assert "annotations" not in out["metadata"]


def test_a_v1_manifest_loads_as_the_stored_version() -> None:
    """A dump of an older cluster (autoscaling/v1 preferred) loads into simulate."""
    from kubeprio.api.autoscaling import HorizontalPodAutoscaler
    from kubeprio.api.manifest import decode_object

    obj = decode_object(
        {
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3,
                     "targetCPUUtilizationPercentage": 40},
        }
    )  # fmt: skip
    assert isinstance(obj, HorizontalPodAutoscaler)
    assert obj.spec.metrics[0].resource.target.average_utilization == 40  # type: ignore[index,union-attr]


def test_a_v2beta1_manifest_converts_its_metrics() -> None:
    from kubeprio.api.autoscaling import HorizontalPodAutoscaler
    from kubeprio.api.manifest import decode_object

    obj = decode_object(
        {
            "apiVersion": "autoscaling/v2beta1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3,
                     "metrics": [{"type": "Resource",
                                  "resource": {"name": "memory", "targetAverageValue": "1Gi"}}]},
        }
    )  # fmt: skip
    assert isinstance(obj, HorizontalPodAutoscaler)
    target = obj.spec.metrics[0].resource.target  # type: ignore[index,union-attr]
    assert (target.type, str(target.average_value)) == ("AverageValue", "1Gi")  # type: ignore[union-attr]


def test_v1_status_always_has_both_replica_counts() -> None:
    """autoscaling/v1 ``HorizontalPodAutoscalerStatus``: ``currentReplicas`` and
    ``desiredReplicas`` are int32 without ``omitempty`` (``autoscaling/v1/types.go``), so a
    new HPA's v1 status reads ``{currentReplicas: 0, desiredReplicas: 0}`` (the typed
    clients require both)."""
    fresh = {**V2_FULL, "status": {"desiredReplicas": 0}}
    assert v1.to_v1(fresh)["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    assert v1.to_v1({**V2_FULL, "status": {}})["status"] == {
        "currentReplicas": 0,
        "desiredReplicas": 0,
    }
