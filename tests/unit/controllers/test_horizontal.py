"""The HPA controller against the in-process API on a ManualClock (``horizontal.go``).

The pods are written by the test (running, ready, with ``kubeprio.io/usage``), so their
usage can change between syncs; the Deployment is only scaled (no Deployment controller
runs), as upstream's ``horizontal_test.go`` drives the controller with fake clients.
Checked: the 15 s sync period, the SuccessfulRescale event text, the status (current and
desired replicas, current metrics, conditions with upstream reasons), the 300 s scale-down
stabilization window, behavior policies across syncs, min/max clamping, ScalingDisabled,
FailedGetScale, missing metrics and AmbiguousSelector.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from kubeprio.api.apps import Deployment
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.core import Event, Node, Pod, PodCondition, PodStatus
from kubeprio.api.manifest import decode_object as decode
from kubeprio.api.statefulset import StatefulSet
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import DeleteRequest
from kubeprio.clock import rfc3339
from kubeprio.controllers.horizontal import HorizontalController
from tests.builders import node, pod
from tests.conftest import ManualClock
from tests.driving import Driver

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        },
    },
}


def hpa_doc(name: str = "web", *, behavior: dict | None = None, **spec: object) -> dict:
    doc = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50},
                    },
                }
            ],
            **spec,
        },
    }
    if behavior is not None:
        doc["spec"]["behavior"] = behavior
    return doc


class Rig:
    def __init__(self, api: ApiService, clock: ManualClock) -> None:
        self.api = api
        self.clock = clock
        api.create(
            node("n1")
            .allocatable(cpu="64", memory="64Gi", pods="110")
            .condition("Ready", "True")
            .build()
        )
        self.hpas = Informer(api, HorizontalPodAutoscaler)
        self.pods = Informer(api, Pod)
        self.nodes = Informer(api, Node)
        self.controller = HorizontalController(
            api, clock=clock, rng=random.Random(0), hpas=self.hpas, pods=self.pods, nodes=self.nodes
        )
        self.driver = Driver(clock, [self.hpas, self.pods, self.nodes], [self.controller])
        self.hpas.start()
        self.pods.start()
        self.nodes.start()
        api.create(decode(DEPLOYMENT))

    def pods_using(self, *usages: str) -> None:
        """Make the deployment's pods exactly these, running and ready for an hour."""
        for existing in self.api.list(Pod, "default").items:
            self.api.delete(
                Pod, existing.metadata.name or "", "default",
                options=DeleteRequest(grace_period_seconds=0),
            )  # fmt: skip
        long_ago = rfc3339(self.clock.now() - 3600)
        for i, usage in enumerate(usages):
            built = (
                pod(f"web-{i}").labels(app="web").requests(cpu="1").on("n1")
                .annotate("kubeprio.io/usage", f"cpu={usage}").build()
            )  # fmt: skip
            created = self.api.create(built)
            status = PodStatus(
                phase="Running",
                start_time=long_ago,
                conditions=(
                    PodCondition(type="Ready", status="True", last_transition_time=long_ago),
                ),
            )
            self.api.update_status(dataclasses.replace(created, status=status))

    def replicas(self) -> int:
        return self.api.get(Deployment, "web", "default").spec.replicas  # type: ignore[union-attr]

    def hpa(self, name: str = "web") -> HorizontalPodAutoscaler:
        return self.api.get(HorizontalPodAutoscaler, name, "default")

    def conditions(self, name: str = "web") -> dict[str, tuple[str, str]]:
        status = self.hpa(name).status
        return {c.type: (c.status, c.reason) for c in (status.conditions if status else None) or ()}  # type: ignore[misc]

    def events(self, reason: str) -> list[str]:
        return [
            e.message or "" for e in self.api.list(Event, "default").items if e.reason == reason
        ]

    def advance(self, seconds: float) -> None:
        self.driver.advance(seconds)


@pytest.fixture
def rig(api: ApiService, clock: ManualClock) -> Rig:
    return Rig(api, clock)


def test_first_sync_after_one_period_scales_up_with_upstreams_event(rig: Rig) -> None:
    rig.pods_using("900m", "900m")
    rig.api.create(decode(hpa_doc()))
    rig.advance(14)
    assert rig.replicas() == 2
    rig.advance(1)
    # 90 % against 50 %: ceil(1.8 * 2) = 4.
    assert rig.replicas() == 4
    assert rig.events("SuccessfulRescale") == [
        "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    ]
    status = rig.hpa().status
    assert status is not None
    assert (status.current_replicas, status.desired_replicas) == (2, 4)
    assert status.last_scale_time == rfc3339(rig.clock.now())
    current = status.current_metrics[0].resource.current  # type: ignore[index,union-attr]
    assert (current.average_utilization, str(current.average_value)) == (90, "900m")
    assert rig.conditions() == {
        "AbleToScale": ("True", "SucceededRescale"),
        "ScalingActive": ("True", "ValidMetricFound"),
        "ScalingLimited": ("False", "DesiredWithinRange"),
    }


def test_within_tolerance_nothing_changes(rig: Rig) -> None:
    rig.pods_using("530m", "530m")
    rig.api.create(decode(hpa_doc()))
    rig.advance(60)
    assert rig.replicas() == 2
    assert rig.events("SuccessfulRescale") == []
    assert rig.conditions()["AbleToScale"] == ("True", "ReadyForNewScale")


def test_scale_down_waits_for_the_300_second_stabilization_window(rig: Rig) -> None:
    rig.pods_using("900m", "900m")
    rig.api.create(decode(hpa_doc()))
    rig.advance(15)
    assert rig.replicas() == 4
    rig.pods_using("100m", "100m", "100m", "100m")  # now 10 %: wants 1
    rig.advance(15)
    assert rig.replicas() == 4
    assert rig.conditions()["AbleToScale"] == ("True", "ScaleDownStabilized")
    # The recommendation of 4 (t=15) leaves the window after 300 s.
    rig.advance(270)
    assert rig.replicas() == 4
    rig.advance(30)
    assert rig.replicas() == 1
    assert rig.events("SuccessfulRescale")[-1] == "New size: 1; reason: All metrics below target"


def test_behavior_policies_limit_each_period(rig: Rig) -> None:
    behavior = {
        "scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]},
        "scaleDown": {"stabilizationWindowSeconds": 0},
    }
    rig.pods_using("1", "1")
    rig.api.create(decode(hpa_doc(behavior=behavior)))
    rig.advance(15)
    assert rig.replicas() == 3
    assert rig.conditions()["ScalingLimited"] == ("True", "ScaleUpLimit")
    rig.advance(15)
    assert rig.replicas() == 3  # one pod per 60 s
    rig.advance(45)
    assert rig.replicas() == 4


def test_replicas_outside_the_bounds_are_brought_inside(rig: Rig) -> None:
    rig.pods_using("500m", "500m")
    rig.api.create(decode(hpa_doc(minReplicas=3)))
    rig.advance(15)
    assert rig.replicas() == 3
    assert rig.events("SuccessfulRescale") == [
        "New size: 3; reason: Current number of replicas below Spec.MinReplicas"
    ]


def test_a_target_at_zero_is_left_alone(rig: Rig) -> None:
    rig.api.patch(Deployment, "web", {"spec": {"replicas": 0}}, namespace="default")
    rig.api.create(decode(hpa_doc()))
    rig.advance(15)
    assert rig.replicas() == 0
    assert rig.conditions()["ScalingActive"] == ("False", "ScalingDisabled")


def test_a_missing_target_is_failed_get_scale(rig: Rig) -> None:
    doc = hpa_doc()
    doc["spec"]["scaleTargetRef"]["name"] = "nope"
    rig.api.create(decode(doc))
    rig.advance(15)
    assert rig.events("FailedGetScale") == ['deployments.apps "nope" not found']
    assert rig.conditions() == {"AbleToScale": ("False", "FailedGetScale")}


def test_pods_without_metrics_fail_the_metric(rig: Rig) -> None:
    rig.api.create(decode(hpa_doc()))
    rig.advance(15)
    assert rig.conditions()["ScalingActive"] == ("False", "FailedGetResourceMetric")
    assert rig.events("FailedComputeMetricsReplicas") == [
        "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource "
        "metric value: failed to get cpu utilization: unable to get metrics for resource cpu: "
        "no metrics returned from resource metrics API"
    ]


def test_two_hpas_on_the_same_pods_are_ambiguous(rig: Rig) -> None:
    rig.pods_using("900m", "900m")
    rig.api.create(decode(hpa_doc("web")))
    rig.api.create(decode(hpa_doc("web-2")))
    rig.advance(30)
    assert rig.conditions("web-2")["ScalingActive"][1] == "AmbiguousSelector"
    assert any(
        "are controlled by multiple HPAs: [{web default} {web-2 default}]" in m
        for m in rig.events("AmbiguousSelector")
    )


def test_a_stateful_set_target_is_scaled_through_its_scale_subresource(rig: Rig) -> None:
    """Upstream's HPA scales any kind with a ``scale`` subresource (``scaleNamespacer``), so a
    StatefulSet over the same pods is scaled as the Deployment is."""
    rig.api.create(
        decode(
            {
                **DEPLOYMENT,
                "kind": "StatefulSet",
                "metadata": {"name": "db", "namespace": "default"},
            }
        )
    )
    rig.pods_using("900m", "900m")
    target = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"}
    rig.api.delete(Deployment, "web", "default")
    rig.api.create(decode(hpa_doc(scaleTargetRef=target)))
    rig.advance(15)
    stateful = rig.api.get(StatefulSet, "db", "default")
    assert stateful.spec is not None
    assert stateful.spec.replicas == 4
    assert rig.events("SuccessfulRescale") == [
        "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    ]
