"""HorizontalPodAutoscalers against a live ``kubeprio serve`` with the real kubectl (v1.32)
and the official Python client.

``kubectl autoscale deployment web --cpu-percent=50 --min=1 --max=5`` (kubectl v1.32 sends
an autoscaling/v1 HPA, as protobuf), ``get hpa`` (``printHorizontalPodAutoscaler``'s
columns, ``cpu: <unknown>/50%`` until the first sync, then ``cpu: 90%/50%``), the v1 view
with upstream's round-trip annotations, the Deployment scaling up within real-time syncs
(its pods use ``kubeprio.io/usage: cpu=900m`` of a 1-CPU request), ``describe hpa``'s
conditions and ``SuccessfulRescale`` events, discovery (v2 preferred, v1 served), a
validation error's upstream text, and the Python client's AutoscalingV2Api.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {kubeprio.io/usage: cpu=900m}
    spec:
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: "1"}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-hpa", ["--nodes", "3"]) as server:
        yield server


def test_kubectl_autoscale_then_the_deployment_scales(served: ServeProcess) -> None:
    ns = new_namespace(served, "hpa")
    served.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)
    out = served.ok(
        "autoscale", "deployment", "web", "-n", ns, "--cpu-percent=50", "--min=1", "--max=5"
    )
    assert out.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    rows = table_rows(served.ok("get", "hpa", "-n", ns))
    assert rows[0] == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert rows[1][:6] == ["web", "Deployment/web", "cpu:", "<unknown>/50%", "1", "5"]
    stored = served.json("get", "hpa", "web", "-n", ns)
    assert stored["apiVersion"] == "autoscaling/v2"
    assert stored["spec"]["metrics"][0]["resource"]["target"] == {
        "type": "Utilization",
        "averageUtilization": 50,
    }

    # 900m of a 1-CPU request is 90 % against 50 %: ceil(1.8 * 1) = 2 at the first sync.
    def scaled() -> list[str] | None:
        row = table_rows(served.ok("get", "hpa", "-n", ns))[1]
        return row if row[3] == "90%/50%" and row[6] != "0" else None

    row = eventually(scaled, timeout=60)
    assert row[:4] == ["web", "Deployment/web", "cpu:", "90%/50%"]
    replicas = int(served.ok("get", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}"))
    assert replicas >= 2
    described = served.ok("describe", "hpa", "web", "-n", ns)
    assert (
        "New size: 2; reason: cpu resource utilization (percentage of request) above target"
        in described
    )
    assert "ValidMetricFound" in described

    v1 = served.json("get", "horizontalpodautoscalers.v1.autoscaling", "web", "-n", ns)
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert v1["status"]["currentCPUUtilizationPercentage"] == 90
    annotations = v1["metadata"]["annotations"]
    assert (
        '"currentAverageUtilization":90'
        in annotations["autoscaling.alpha.kubernetes.io/current-metrics"]
    )
    assert '"type":"AbleToScale"' in annotations["autoscaling.alpha.kubernetes.io/conditions"]


def test_discovery_prefers_v2_and_serves_v1(served: ServeProcess) -> None:
    text = served.ok("get", "--raw", "/apis/autoscaling")
    assert '"preferredVersion":{"groupVersion":"autoscaling/v2","version":"v2"}' in text
    assert '"groupVersion":"autoscaling/v1"' in text
    resources = table_rows(served.ok("api-resources", "--api-group=autoscaling"))
    assert [
        "horizontalpodautoscalers",
        "hpa",
        "autoscaling/v2",
        "true",
        "HorizontalPodAutoscaler",
    ] in resources


def test_validation_error_has_upstreams_text(served: ServeProcess) -> None:
    ns = new_namespace(served, "hpa")
    manifest = f"""\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: bad, namespace: {ns}}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 3
  maxReplicas: 2
"""
    result = served.kubectl("apply", "-f", "-", stdin=manifest)
    assert result.returncode != 0
    assert (
        'The HorizontalPodAutoscaler "bad" is invalid: spec.maxReplicas: Invalid value: 2: '
        "must be greater than or equal to `minReplicas`"
    ) in result.stderr


def test_python_client_reads_and_creates_v2(served: ServeProcess) -> None:
    ns = new_namespace(served, "hpa")
    api = k8s.AutoscalingV2Api(served.client())
    body = k8s.V2HorizontalPodAutoscaler(
        metadata=k8s.V1ObjectMeta(name="api"),
        spec=k8s.V2HorizontalPodAutoscalerSpec(
            scale_target_ref=k8s.V2CrossVersionObjectReference(
                api_version="apps/v1", kind="Deployment", name="api"
            ),
            max_replicas=3,
            behavior=k8s.V2HorizontalPodAutoscalerBehavior(
                scale_down=k8s.V2HPAScalingRules(stabilization_window_seconds=60)
            ),
        ),
    )
    created = api.create_namespaced_horizontal_pod_autoscaler(ns, body)
    assert created.spec.min_replicas == 1
    assert created.spec.metrics[0].resource.target.average_utilization == 80
    assert created.spec.behavior.scale_up.policies[0].value == 4
    assert created.spec.behavior.scale_down.stabilization_window_seconds == 60
    listed = api.list_namespaced_horizontal_pod_autoscaler(ns)
    assert [h.metadata.name for h in listed.items] == ["api"]
