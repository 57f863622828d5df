"""HorizontalPodAutoscaler defaults and validation through the write path.

Defaults: ``pkg/apis/autoscaling/v2/defaults.go`` (``TestSetDefaultHPA``,
``TestGenerateScaleUpRules``); validation: ``pkg/apis/autoscaling/validation/validation.go``
(``TestValidateHorizontalPodAutoscaler`` cases), with upstream's field paths and texts.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.manifest import decode_object
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.service import ApiService

BASE: dict[str, Any] = {
    "apiVersion": "autoscaling/v2",
    "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 5,
    },
}


def with_spec(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc["spec"].update(changes)
    return doc


def create(api: ApiService, doc: dict[str, Any]) -> dict[str, Any]:
    return to_dict(api.create(decode_object(doc)))


def test_defaults_min_replicas_and_the_80_percent_cpu_metric(api: ApiService) -> None:
    spec = create(api, BASE)["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]
    assert "behavior" not in spec


def test_a_given_behavior_is_completed_with_the_default_rules(api: ApiService) -> None:
    doc = with_spec(behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})
    behavior = create(api, doc)["spec"]["behavior"]
    assert behavior == {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ],
        },
        "scaleDown": {
            "stabilizationWindowSeconds": 60,
            "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
        },
    }


def test_a_new_hpa_starts_with_an_empty_status(api: ApiService) -> None:
    doc = with_spec()
    doc["status"] = {"currentReplicas": 3, "desiredReplicas": 3}
    # autoscaling/v2 HorizontalPodAutoscalerStatus: DesiredReplicas int32 `json:"desiredReplicas"`
    # and CurrentMetrics []MetricStatus `json:"currentMetrics"` (no omitempty: a nil slice
    # is written as null).
    assert create(api, doc)["status"] == {"desiredReplicas": 0, "currentMetrics": None}


CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"minReplicas": 0}, ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]),
        # minReplicas defaults to 1 first, so 0 is also below it.
        ({"maxReplicas": 0}, ["spec.maxReplicas: Invalid value: 0: must be greater than 0",
                              "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"]),
        ({"minReplicas": 6}, ["spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`"]),
        ({"scaleTargetRef": {"name": "web"}}, ["spec.scaleTargetRef.kind: Required value"]),
        ({"scaleTargetRef": {"kind": "..", "name": "a/b"}},
         ["spec.scaleTargetRef.kind: Invalid value: \"..\": may not be '..'",
          "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'"]),
        ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}]},
         ["spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization"]),
        ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 0}}}]},
         ["spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"]),
        ({"metrics": [{"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "-1"}}}]},
         ['spec.metrics[0].resource.target.averageValue: Invalid value: "-1": must be positive']),
        ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Bogus", "averageUtilization": 5}}}]},
         ['spec.metrics[0].resource.target.type: Invalid value: "Bogus": must be either Utilization, Value, or AverageValue']),
        ({"metrics": [{"type": "Resource"}]},
         ["spec.metrics[0].resource: Required value: must populate information for the given metric source"]),
        ({"metrics": [{"type": "Pods", "resource": CPU["resource"]}]},
         ["spec.metrics[0].pods: Required value: must populate information for the given metric source"]),
        ({"metrics": [{"type": "Pods", "resource": CPU["resource"], "containerResource": {
            "name": "cpu", "container": "c", "target": {"type": "Utilization", "averageUtilization": 5}}}]},
         ["spec.metrics[0].pods: Required value: must populate information for the given metric source",
          "spec.metrics[0].resource: Forbidden: must populate the given metric source only",
          "spec.metrics[0].containerResource: Forbidden: must populate the given metric source only"]),
        ({"metrics": [{"type": "Cpu"}]},
         # Upstream reports it twice: the set check, then the switch's default.
         ['spec.metrics[0].type: Unsupported value: "Cpu": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"'] * 2),
        ({"behavior": {"scaleUp": {"stabilizationWindowSeconds": 3601, "selectPolicy": "Most", "policies": []}}},
         ["spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
          'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: "Disabled", "Max", "Min"',
          "spec.behavior.scaleUp.policies: Required value: must specify at least one Policy"]),
        ({"behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 1801}]}}},
         ["spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
          "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800"]),
    ],
    ids=[
        "min-zero", "max-zero", "max-below-min", "ref-no-kind", "ref-path-segments",
        "utilization-missing", "utilization-zero", "average-value-negative", "target-type",
        "source-missing", "wrong-source", "two-extra-sources", "unknown-type", "scaling-rules", "scaling-policy",
    ],
)  # fmt: skip
def test_validation_texts(api: ApiService, changes: dict[str, Any], expected: list[str]) -> None:
    with pytest.raises(errors.InvalidError) as caught:
        create(api, with_spec(**changes))
    causes = [f"{c.field}: {c.message}" for c in caught.value.status.details.causes]  # type: ignore[union-attr]
    assert causes == expected
    assert caught.value.message.startswith('HorizontalPodAutoscaler.autoscaling "web" is invalid: ')


def test_status_update_rejects_negative_counts(api: ApiService) -> None:
    stored = api.create(decode_object(BASE))
    assert isinstance(stored, HorizontalPodAutoscaler)
    doc = to_dict(stored)
    doc["status"] = {"currentReplicas": -1, "desiredReplicas": 2}
    with pytest.raises(errors.InvalidError) as caught:
        api.update_status(decode_object(doc))
    assert "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0" in (
        caught.value.message
    )
