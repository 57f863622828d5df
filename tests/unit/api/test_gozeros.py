"""Unset fields encoded as Go's ``encoding/json`` writes them (``api.gozeros``).

Go's rule (encoding/json ``isEmptyValue``): ``omitempty`` drops false, 0, a nil pointer
or interface, and an empty array, slice, map or string, never a struct value; a field
without ``omitempty`` is always written; ``metav1.Time`` (and ``MicroTime``) marshal
their zero value as ``null``. Each row names the upstream declaration it follows
(k8s.io/api v0.32.9 ``types.go`` unless said otherwise).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import gozeros
from kubeprio.api.apps import Deployment, DeploymentSpec, ReplicaSet
from kubeprio.api.batch import CronJob, Job, JobSpec
from kubeprio.api.core import (
    Container,
    Event,
    Namespace,
    Node,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
)
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.serialization import from_dict, to_dict, to_sparse_dict
from kubeprio.api.service import Service
from kubeprio.controllers.deploymentutil import pod_template_hash

BARE_TEMPLATE = PodTemplateSpec(spec=PodSpec(containers=(Container(name="c", image="nginx"),)))


def _at(document: Any, path: str) -> Any:
    for key in path.split("."):
        document = document[int(key)] if isinstance(document, list) else document[key]
    return document


ROWS: list[tuple[str, Any, str, Any]] = [
    (
        'apps/v1 Deployment.Status DeploymentStatus `json:"status,omitempty"`',
        Deployment(),
        "status",
        {},
    ),
    (
        "core/v1 PodTemplateSpec.ObjectMeta (a value) and apimachinery meta/v1 "
        'ObjectMeta.CreationTimestamp Time `json:"creationTimestamp,omitempty"`',
        Deployment(spec=DeploymentSpec(template=BARE_TEMPLATE)),
        "spec.template.metadata",
        {"creationTimestamp": None},
    ),
    (
        'apps/v1 DeploymentSpec.Strategy DeploymentStrategy `json:"strategy,omitempty"`',
        Deployment(spec=DeploymentSpec(template=BARE_TEMPLATE)),
        "spec.strategy",
        {},
    ),
    (
        'core/v1 Container.Resources ResourceRequirements `json:"resources,omitempty"`',
        Pod(spec=PodSpec(containers=(Container(name="c", image="nginx"),))),
        "spec.containers.0.resources",
        {},
    ),
    (
        'core/v1 Pod.Status PodStatus `json:"status,omitempty"`',
        Pod(spec=PodSpec(containers=(Container(name="c"),))),
        "status",
        {},
    ),
    (
        'core/v1 PodCondition.LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`',
        Pod(status=PodStatus(conditions=(PodCondition(type="Ready", status="True"),))),
        "status.conditions.0.lastProbeTime",
        None,
    ),
    (
        'policy/v1 PodDisruptionBudgetStatus.CurrentHealthy int32 `json:"currentHealthy"` '
        "(and DesiredHealthy, DisruptionsAllowed, ExpectedPods: no omitempty)",
        PodDisruptionBudget(),
        "status",
        {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0},
    ),
    (
        'core/v1 ServiceStatus.LoadBalancer LoadBalancerStatus `json:"loadBalancer,omitempty"`',
        Service(),
        "status",
        {"loadBalancer": {}},
    ),
    (
        'apps/v1 ReplicaSetStatus.Replicas int32 `json:"replicas"`',
        ReplicaSet(),
        "status",
        {"replicas": 0},
    ),
    (
        'apps/v1 DaemonSetStatus.CurrentNumberScheduled int32 `json:"currentNumberScheduled"` '
        "(and the other three counts)",
        DaemonSet(),
        "status",
        {
            "currentNumberScheduled": 0,
            "desiredNumberScheduled": 0,
            "numberMisscheduled": 0,
            "numberReady": 0,
        },
    ),
    (
        'batch/v1 CronJobSpec.JobTemplate JobTemplateSpec `json:"jobTemplate"` and '
        "JobSpec.Template PodTemplateSpec: both templates' metadata",
        CronJob(),
        "spec.jobTemplate",
        {
            "metadata": {"creationTimestamp": None},
            "spec": {
                "template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}}
            },
        },
    ),
    (
        "core/v1 Event.FirstTimestamp/LastTimestamp metav1.Time, EventTime metav1.MicroTime, "
        'Source EventSource, ReportingController string `json:"reportingComponent"`',
        Event(),
        "",
        None,  # checked key by key below
    ),
    (
        'core/v1 Namespace.Spec NamespaceSpec `json:"spec,omitempty"` and Status',
        Namespace(),
        "spec",
        {},
    ),
    (
        'core/v1 NodeStatus.DaemonEndpoints NodeDaemonEndpoints `json:"daemonEndpoints,omitempty"`, '
        'DaemonEndpoint.Port int32 `json:"Port"`',
        Node(),
        "status.daemonEndpoints",
        {"kubeletEndpoint": {"Port": 0}},
    ),
]


@pytest.mark.parametrize(
    ("upstream", "obj", "path", "expected"), ROWS, ids=[r[2] or "event" for r in ROWS]
)
def test_unset_fields_are_written_as_go_writes_them(upstream, obj, path, expected):
    encoded = to_dict(obj)
    if not path:
        zeros = {"firstTimestamp": None, "lastTimestamp": None, "eventTime": None}
        assert {key: encoded[key] for key in zeros} == zeros, upstream
        assert (encoded["source"], encoded["reportingComponent"]) == ({}, ""), upstream
        return
    assert _at(encoded, path) == expected, upstream


@pytest.mark.parametrize(
    ("obj", "absent", "upstream"),
    [
        (
            Job(spec=JobSpec(template=BARE_TEMPLATE)),
            "parallelism",
            'JobSpec.Parallelism *int32 `json:"parallelism,omitempty"`',
        ),
        (
            Job(spec=JobSpec(template=BARE_TEMPLATE)),
            "suspend",
            'JobSpec.Suspend *bool `json:"suspend,omitempty"`',
        ),
        (
            Deployment(spec=DeploymentSpec(template=BARE_TEMPLATE)),
            "replicas",
            "DeploymentSpec.Replicas *int32",
        ),
        (
            Deployment(spec=DeploymentSpec(template=BARE_TEMPLATE)),
            "selector",
            "DeploymentSpec.Selector *metav1.LabelSelector",
        ),
    ],
)
def test_pointers_and_omitempty_scalars_stay_out(obj, absent, upstream):
    assert absent not in to_dict(obj)["spec"], upstream


def test_set_values_are_kept_and_nothing_is_added_beside_them():
    pdb = from_dict(PodDisruptionBudget, {"status": {"currentHealthy": 3, "expectedPods": 4}})
    assert to_dict(pdb)["status"] == {
        "currentHealthy": 3,
        "expectedPods": 4,
        "desiredHealthy": 0,
        "disruptionsAllowed": 0,
    }


def test_a_null_time_decodes_as_unset_and_is_written_back_as_null():
    """Go decodes ``null`` into a struct as a no-op: the zero Time, written back as null."""
    data = {
        "metadata": {"labels": {"a": "b"}, "creationTimestamp": None},
        "spec": {"containers": []},
    }
    template = from_dict(PodTemplateSpec, data)
    assert template.metadata == ObjectMeta(labels={"a": "b"})
    assert to_dict(template)["metadata"] == {"creationTimestamp": None, "labels": {"a": "b"}}


def test_the_sparse_form_holds_only_what_is_set():
    assert to_sparse_dict(Deployment()) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {},
    }


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        # Values computed by the code before zero values were written (main at 6c3aadd):
        # a template's hash does not move with the encoding.
        ({"metadata": {"labels": {"app": "web"}}}, ("6f46fc5b9", "6d4548f544")),
        # An explicit null timestamp is Go's zero value, so it hashes as an absent one
        # (before, it was kept as an unknown key and hashed apart: 7ccf746bcc).
        (
            {"metadata": {"labels": {"app": "web"}, "creationTimestamp": None}},
            ("6f46fc5b9", "6d4548f544"),
        ),
    ],
)
def test_pod_template_hash_is_computed_from_the_sparse_form(template, expected):
    data = {**template, "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {}}]}}
    parsed = from_dict(PodTemplateSpec, data)
    assert (pod_template_hash(parsed, None), pod_template_hash(parsed, 1)) == expected


def test_only_the_workload_condition_has_types_that_disagree():
    """One model class, several upstream types: DeploymentCondition alone has
    ``LastUpdateTime metav1.Time``, so the shared WorkloadCondition leaves it out."""
    assert gozeros.disagreements() == {"WorkloadCondition": ["lastUpdateTime"]}


def test_filled_json_matches_the_compiled_encoder():
    """``filled`` (for JSON built without a model) and the compiled encoders agree."""
    for model, root in ((Deployment, "V1Deployment"), (CronJob, "V1CronJob"), (Pod, "V1Pod")):
        sparse = to_sparse_dict(model())
        assert gozeros.filled(sparse, root) == to_dict(model()), model.__name__
        assert to_sparse_dict(model()) == sparse  # the input is not modified
