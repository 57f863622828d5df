"""Objects served as Go's ``encoding/json`` writes them, seen by the real kubectl and the
official Python client.

Upstream's API server encodes with Go's ``encoding/json``: ``omitempty`` never drops a
struct value and ``metav1.Time`` writes its zero value as ``null``; a field without
``omitempty`` is always written. So a real v1.32 cluster answers ``kubectl create
deployment`` with ``"status": {}`` (apps/v1 types.go ``Status DeploymentStatus
`json:"status,omitempty"```) and a template whose ``metadata`` holds
``"creationTimestamp": null`` (core/v1 ``PodTemplateSpec.ObjectMeta``, apimachinery
``ObjectMeta.CreationTimestamp Time `json:"creationTimestamp,omitempty"```).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    running,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

NAMESPACE = "zeros"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-zeros", ["--nodes", "1"]) as process:
        created = process.kubectl("create", "namespace", NAMESPACE)
        assert created.returncode == 0, created.stderr
        yield process


def kubectl_json(server: ServeProcess, *args: str) -> Any:
    done = server.kubectl(*args, "-n", NAMESPACE, "-o", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_created_deployment_has_an_empty_status_and_a_null_template_timestamp(server):
    created = kubectl_json(server, "create", "deployment", "web", "--image=nginx")
    assert created["status"] == {}
    template = created["spec"]["template"]
    assert template["metadata"]["creationTimestamp"] is None
    assert template["spec"]["containers"][0]["resources"] == {}
    assert created["spec"]["strategy"]["type"] == "RollingUpdate"
    got = kubectl_json(server, "get", "deploy", "web")
    # The controller may have written the status by now; the template is the user's.
    assert isinstance(got["status"], dict)
    assert got["spec"]["template"]["metadata"]["creationTimestamp"] is None


APPLIED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: applied}
spec:
  selector: {matchLabels: {app: applied}}
  template:
    metadata: {labels: {app: applied}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Service
metadata: {name: applied}
spec: {ports: [{port: 80}]}
"""


def test_an_applied_manifest_is_served_with_what_it_left_unset(server):
    """kubectl apply sends the manifest as written (no Go encoding on the way in), so the
    zero values come from the server alone."""
    done = server.kubectl("apply", "-n", NAMESPACE, "-f", "-", stdin=APPLIED)
    assert done.returncode == 0, done.stderr
    deployment = kubectl_json(server, "get", "deploy", "applied")
    assert deployment["spec"]["template"]["metadata"] == {
        "creationTimestamp": None,
        "labels": {"app": "applied"},
    }
    service = kubectl_json(server, "get", "service", "applied")
    assert service["status"] == {"loadBalancer": {}}
    # Applying it again changes nothing: the served zeros are no difference to kubectl.
    again = server.kubectl("apply", "-n", NAMESPACE, "-f", "-", stdin=APPLIED)
    assert again.stdout.split("\n")[:2] == [
        "deployment.apps/applied unchanged",
        "service/applied unchanged",
    ]
    diff = server.kubectl("diff", "-n", NAMESPACE, "-f", "-", stdin=APPLIED)
    assert (diff.returncode, diff.stdout) == (0, ""), diff.stderr

    def replica_sets() -> int:
        return len(kubectl_json(server, "get", "rs", "-l", "app=applied")["items"])

    assert eventually(replica_sets) == 1


@pytest.mark.parametrize(
    ("args", "path", "expected", "upstream"),
    [
        (
            ("create", "pdb", "guard", "--selector=app=none", "--min-available=1"),
            ("status",),
            {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0},
            'policy/v1 PodDisruptionBudgetStatus.CurrentHealthy int32 `json:"currentHealthy"`',
        ),
        (
            ("create", "service", "clusterip", "front", "--tcp=80:80"),
            ("status",),
            {"loadBalancer": {}},
            'core/v1 ServiceStatus.LoadBalancer LoadBalancerStatus `json:"loadBalancer,omitempty"`',
        ),
        (
            ("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *"),
            ("spec", "jobTemplate", "metadata", "creationTimestamp"),
            None,
            'batch/v1 JobTemplateSpec.ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty"`',
        ),
    ],
    ids=["pdb-status-counts", "service-load-balancer", "cronjob-job-template"],
)
def test_created_objects_carry_go_zero_values(server, args, path, expected, upstream):
    created = kubectl_json(server, *args)
    value = created
    for key in path:
        value = value[key]
    assert value == expected, upstream


def test_the_official_client_reads_each_kind_typed(server):
    """The typed models refuse a body that lacks a required field (the PDB status counts,
    a DaemonSet status's four counts, ...): every kind touched here deserialises."""
    labels = {"app": "typed"}
    template = k8s.V1PodTemplateSpec(
        metadata=k8s.V1ObjectMeta(labels=labels),
        spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
    )
    selector = k8s.V1LabelSelector(match_labels=labels)
    for args in (
        ("deployment", "typed", "--image=nginx"),
        ("cronjob", "typed", "--image=busybox", "--schedule=*/5 * * * *"),
        ("service", "clusterip", "typed", "--tcp=80:80"),
    ):
        kubectl_json(server, "create", *args)
    with server.client() as api:
        apps, core = k8s.AppsV1Api(api), k8s.CoreV1Api(api)
        policy, batch = k8s.PolicyV1Api(api), k8s.BatchV1Api(api)
        meta = k8s.V1ObjectMeta(name="typed")
        made = [
            apps.create_namespaced_daemon_set(
                NAMESPACE,
                k8s.V1DaemonSet(
                    metadata=meta, spec=k8s.V1DaemonSetSpec(selector=selector, template=template)
                ),
            ),
            apps.create_namespaced_stateful_set(
                NAMESPACE,
                k8s.V1StatefulSet(
                    metadata=meta,
                    spec=k8s.V1StatefulSetSpec(
                        selector=selector, template=template, service_name="typed", replicas=0
                    ),
                ),
            ),
            apps.create_namespaced_replica_set(
                NAMESPACE,
                k8s.V1ReplicaSet(
                    metadata=meta,
                    spec=k8s.V1ReplicaSetSpec(selector=selector, template=template, replicas=0),
                ),
            ),
            policy.create_namespaced_pod_disruption_budget(
                NAMESPACE,
                k8s.V1PodDisruptionBudget(
                    metadata=meta,
                    spec=k8s.V1PodDisruptionBudgetSpec(selector=selector, min_available=1),
                ),
            ),
            batch.create_namespaced_job(
                NAMESPACE,
                k8s.V1Job(
                    metadata=meta,
                    spec=k8s.V1JobSpec(
                        suspend=True,
                        template=k8s.V1PodTemplateSpec(
                            spec=k8s.V1PodSpec(
                                restart_policy="Never",
                                containers=[k8s.V1Container(name="c", image="busybox")],
                            )
                        ),
                    ),
                ),
            ),
        ]
        assert made[0].status.desired_number_scheduled is not None
        assert made[3].status.current_healthy == 0
        reads = [
            apps.read_namespaced_daemon_set("typed", NAMESPACE),
            apps.read_namespaced_stateful_set("typed", NAMESPACE),
            apps.read_namespaced_replica_set("typed", NAMESPACE),
            apps.read_namespaced_deployment("typed", NAMESPACE),
            policy.read_namespaced_pod_disruption_budget("typed", NAMESPACE),
            batch.read_namespaced_job("typed", NAMESPACE),
            batch.read_namespaced_cron_job("typed", NAMESPACE),
            core.read_namespaced_service("typed", NAMESPACE),
            core.read_namespace(NAMESPACE),
        ]
        assert [obj.metadata.namespace or obj.metadata.name for obj in reads][-1] == NAMESPACE
        # A pod template's zero timestamp reads back as None, as from a real cluster.
        assert reads[0].spec.template.metadata.creation_timestamp is None
        assert reads[7].status.load_balancer is not None
