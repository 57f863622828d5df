"""Deployment, ReplicaSet, Job and PodDisruptionBudget validation with upstream texts.

Rules and texts: ``pkg/apis/apps/validation/validation.go`` (``ValidateDeploymentSpec``,
``ValidateReplicaSetSpec``, ``ValidatePodTemplateSpecForReplicaSet``,
``ValidateRollingUpdateDeployment``, ``ValidatePositiveIntOrPercent``) and the apps/v1
selector immutability of ``pkg/registry/apps/*/strategy.go``;
``pkg/apis/batch/validation/validation.go`` (``ValidateJob``,
``validateGeneratedSelector``, ``validateJobSpec``, ``ValidateJobSpecUpdate``) with the
selector generation of ``pkg/registry/batch/job/strategy.go``;
``pkg/apis/policy/validation/validation.go`` (``ValidatePodDisruptionBudgetSpec``).
Case names follow ``TestValidateDeployment``, ``TestValidateReplicaSet``,
``TestValidateJob`` and ``TestValidatePodDisruptionBudgetSpec`` where they match.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from kubeprio.api import errors, manifest
from kubeprio.api.apps import Deployment, DeploymentStatus, ReplicaSet
from kubeprio.api.batch import Job
from kubeprio.api.meta import LabelSelector
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.apiserver.service import ApiService
from tests.manifests import (
    causes,
    create,
    deployment_doc,
    job_doc,
    pdb_doc,
    rejected,
    replica_set_doc,
    template_doc,
    with_path,
)

MISMATCH = "`selector` does not match template `labels`"
PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)

DEPLOYMENT_CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "missing selector (a nil selector matches nothing)",
        "spec.selector",
        None,
        [
            "spec.selector: Required value",
            f'spec.template.metadata.labels: Invalid value: map[string]string{{"app":"web"}}: {MISMATCH}',
        ],
    ),
    (
        "empty selector",
        "spec.selector",
        {},
        [
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
        ],
    ),
    (
        "selector does not match template",
        "spec.template.metadata.labels",
        {"app": "db"},
        [
            f'spec.template.metadata.labels: Invalid value: map[string]string{{"app":"db"}}: {MISMATCH}'
        ],
    ),
    (
        "selector with unknown operator",
        "spec.selector",
        {"matchExpressions": [{"key": "app", "operator": "Like", "values": ["web"]}]},
        [
            'spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator',
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
            'MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", '
            'Operator:"Like", Values:[]string{"web"}}}}: invalid label selector',
        ],
    ),
    (
        "negative replicas",
        "spec.replicas",
        -1,
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "template restartPolicy must be Always",
        "spec.template.spec.restartPolicy",
        "OnFailure",
        [
            'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'
        ],
    ),
    (
        "template activeDeadlineSeconds (upstream says ReplicaSet)",
        "spec.template.spec.activeDeadlineSeconds",
        30,
        [
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"
        ],
    ),
    (
        "template container invalid",
        "spec.template.spec.containers",
        [],
        ["spec.template.spec.containers: Required value"],
    ),
    (
        "unknown strategy type",
        "spec.strategy",
        {"type": "BlueGreen"},
        [
            'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", '
            "RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "
            '"Recreate", "RollingUpdate"'
        ],
    ),
    (
        "Recreate with rollingUpdate",
        "spec.strategy",
        {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}},
        [
            "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"
        ],
    ),
    (
        "maxSurge and maxUnavailable both 0",
        "spec.strategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}},
        [
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: may not be 0 when `maxSurge` is 0'
        ],
    ),
    (
        # getIntOrPercentValue reads a string that is no percent with IntValue ("5" is 5),
        # so only the percent error is reported, not "may not be 0".
        "maxUnavailable a bare number string, maxSurge 0",
        "spec.strategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "5"}},
        [
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"5"}: a valid percent '
            "string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
            "regex used for validation is '[0-9]+%')"
        ],
    ),
    (
        "maxUnavailable over 100%",
        "spec.strategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "150%"}},
        [
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%'
        ],
    ),
    (
        "maxSurge not a percent",
        "spec.strategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "10"}},
        [
            f'spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"10"}}: {PERCENT}'
        ],
    ),
    (
        "progress deadline not above minReadySeconds",
        "spec.minReadySeconds",
        600,
        ["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
    ),
    (
        "negative revisionHistoryLimit",
        "spec.revisionHistoryLimit",
        -1,
        ["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [c[1:] for c in DEPLOYMENT_CASES],
    ids=[c[0] for c in DEPLOYMENT_CASES],
)
def test_invalid_deployment(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    error = rejected(api, with_path(deployment_doc(), path, value))
    assert causes(error) == expected
    assert error.message.startswith('Deployment.apps "d" is invalid: ')


def test_deployment_selector_is_immutable(api: ApiService) -> None:
    created = create(api, deployment_doc())
    assert isinstance(created, Deployment)
    assert created.spec is not None
    template = created.spec.template
    assert template is not None
    assert template.metadata is not None
    moved = dataclasses.replace(
        created,
        spec=dataclasses.replace(
            created.spec,
            selector=LabelSelector(match_labels={"app": "web", "v": "2"}),
            template=dataclasses.replace(
                template,
                metadata=dataclasses.replace(template.metadata, labels={"app": "web", "v": "2"}),
            ),
        ),
    )
    with pytest.raises(errors.InvalidError) as caught:
        api.update(moved)
    assert causes(caught.value) == [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", '
        '"v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'
    ]


DEPLOYMENT_STATUS_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("counts unchanged", {}, []),
    ("collisionCount raised", {"collisionCount": 3}, []),
    (
        "updatedReplicas above replicas (no fullyLabeledReplicas check: a ReplicaSet's)",
        {"replicas": 1, "updatedReplicas": 2},
        ["status.updatedReplicas: Invalid value: 2: cannot be greater than status.replicas"],
    ),
    (
        "collisionCount decremented",
        {"collisionCount": 1},
        ["status.collisionCount: Invalid value: 1: cannot be decremented"],
    ),
    (
        "collisionCount dropped",
        {"collisionCount": None},
        ["status.collisionCount: Invalid value: 0: cannot be decremented"],
    ),
    (
        "negative count, then the decrement",
        {"observedGeneration": -1, "collisionCount": 0},
        [
            "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
            "status.collisionCount: Invalid value: 0: cannot be decremented",
        ],
    ),
]


@pytest.mark.parametrize(
    ("status", "expected"),
    [c[1:] for c in DEPLOYMENT_STATUS_CASES],
    ids=[c[0] for c in DEPLOYMENT_STATUS_CASES],
)
def test_deployment_status_update(
    api: ApiService, status: dict[str, Any], expected: list[str]
) -> None:
    """``ValidateDeploymentStatusUpdate`` (apps/validation/validation.go): the status
    counts, then ``IsDecremented(update.Status.CollisionCount, old.Status.CollisionCount)``
    with the new value (0 when unset) in the error. The stored collisionCount is 2."""
    created = create(api, deployment_doc())
    assert isinstance(created, Deployment)
    stored = api.update_status(
        dataclasses.replace(created, status=DeploymentStatus(collision_count=2))
    )
    doc = to_dict(stored)
    doc["status"] = {k: v for k, v in {**doc["status"], **status}.items() if v is not None}
    changed = from_dict(Deployment, doc)
    if not expected:
        api.update_status(changed)
        return
    with pytest.raises(errors.InvalidError) as caught:
        api.update_status(changed)
    assert causes(caught.value) == expected
    assert api.get(Deployment, created.metadata.name, "default").status == stored.status


REPLICA_SET_CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "empty selector (upstream says deployment)",
        "spec.selector",
        {},
        [
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
        ],
    ),
    (
        "negative replicas",
        "spec.replicas",
        -2,
        ["spec.replicas: Invalid value: -2: must be greater than or equal to 0"],
    ),
    (
        "negative minReadySeconds",
        "spec.minReadySeconds",
        -1,
        ["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "template labels missing",
        "spec.template",
        template_doc(labels={}),
        [f"spec.template.metadata.labels: Invalid value: map[string]string{{}}: {MISMATCH}"],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [c[1:] for c in REPLICA_SET_CASES],
    ids=[c[0] for c in REPLICA_SET_CASES],
)
def test_invalid_replica_set(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    assert causes(rejected(api, with_path(replica_set_doc(), path, value))) == expected


def test_valid_workloads_are_accepted(api: ApiService) -> None:
    assert isinstance(create(api, deployment_doc()), Deployment)
    assert isinstance(create(api, replica_set_doc()), ReplicaSet)


# --- jobs ----------------------------------------------------------------------------------------

JOB_CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "restartPolicy unset (defaulted to Always)",
        "spec.template.spec",
        {"containers": [{"name": "c", "image": "busybox"}]},
        ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
    ),
    (
        "restartPolicy Always",
        "spec.template.spec.restartPolicy",
        "Always",
        ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
    ),
    (
        "restartPolicy unknown",
        "spec.template.spec.restartPolicy",
        "Sometimes",
        [
            'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
            'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"',
        ],
    ),
    (
        "negative parallelism",
        "spec.parallelism",
        -1,
        ["spec.parallelism: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "negative completions",
        "spec.completions",
        -1,
        ["spec.completions: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "negative backoffLimit",
        "spec.backoffLimit",
        -1,
        ["spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "unknown completionMode",
        "spec.completionMode",
        "Sometimes",
        [
            'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'
        ],
    ),
    (
        "Indexed without completions",
        "spec",
        {
            "completionMode": "Indexed",
            "parallelism": 2,
            "template": template_doc(labels={}, restart="Never"),
        },
        ["spec.completions: Required value: when completion mode is Indexed"],
    ),
    (
        "manual selector without selector",
        "spec.manualSelector",
        True,
        [
            "spec.selector: Required value",
            f"spec.template.metadata.labels: Invalid value: map[string]string{{}}: {MISMATCH}",
        ],
    ),
    (
        "pod failure policy rule without action or condition",
        "spec",
        {"podFailurePolicy": {"rules": [{}]}, "template": template_doc(labels={}, restart="Never")},
        [
            'spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]',
            "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
        ],
    ),
    (
        "pod failure policy needs restartPolicy Never",
        "spec",
        {
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            },
            "template": template_doc(labels={}, restart="OnFailure"),
        },
        [
            'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified'
        ],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), [c[1:] for c in JOB_CASES], ids=[c[0] for c in JOB_CASES]
)
def test_invalid_job(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    error = rejected(api, with_path(job_doc(), path, value))
    assert causes(error) == expected
    assert error.message.startswith('Job.batch "j" is invalid: ')


def test_job_selector_and_labels_are_generated(api: ApiService) -> None:
    """``generateSelector``: uid-based selector, four template labels, manualSelector false."""
    job = create(api, job_doc())
    assert isinstance(job, Job)
    assert job.spec is not None
    uid = job.metadata.uid
    assert job.spec.manual_selector is False
    assert job.spec.selector == LabelSelector(
        match_labels={"batch.kubernetes.io/controller-uid": uid or ""}
    )
    expected_labels = {
        "job-name": "j",
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid,
    }
    assert job.spec.template is not None
    assert job.spec.template.metadata is not None
    assert job.spec.template.metadata.labels == expected_labels
    # SetDefaults_Job gives a label-less Job its template's labels.
    assert job.metadata.labels == expected_labels


def test_job_with_conflicting_generated_label_is_rejected(api: ApiService) -> None:
    """``ValidateHasLabel``: the bad value is the whole label map (with the generated labels)."""
    doc = with_path(job_doc(), "spec.template.metadata.labels", {"job-name": "other"})
    [cause] = causes(rejected(api, doc))
    assert re.fullmatch(
        r"spec\.template\.metadata\.labels\[job-name\]: Invalid value: map\[string\]string"
        r'\{"batch\.kubernetes\.io/controller-uid":"[-0-9a-f]{36}", "batch\.kubernetes\.io/job-name":"j", '
        r'"controller-uid":"[-0-9a-f]{36}", "job-name":"other"\}: must be \'j\'',
        cause,
    )


def test_job_with_manual_selector_keeps_it(api: ApiService) -> None:
    doc = with_path(job_doc(), "spec.manualSelector", True)
    doc = with_path(doc, "spec.selector", {"matchLabels": {"app": "batch"}})
    doc = with_path(doc, "spec.template.metadata.labels", {"app": "batch"})
    job = create(api, doc)
    assert job.spec.selector == LabelSelector(match_labels={"app": "batch"})


def test_job_template_is_immutable(api: ApiService) -> None:
    job = create(api, job_doc())
    template = job.spec.template
    changed = dataclasses.replace(template.spec, active_deadline_seconds=10)
    with pytest.raises(errors.InvalidError) as caught:
        api.update(
            dataclasses.replace(
                job,
                spec=dataclasses.replace(
                    job.spec, template=dataclasses.replace(template, spec=changed)
                ),
            )
        )
    [cause] = {c for c in causes(caught.value)}
    assert cause.startswith('spec.template: Invalid value: {"metadata":')
    assert cause.endswith(": field is immutable")


def test_suspended_job_may_change_its_node_selector(api: ApiService) -> None:
    """``AllowMutableSchedulingDirectives``: suspended and never started."""
    job = create(api, with_path(job_doc(), "spec.suspend", True))
    template = job.spec.template
    moved = dataclasses.replace(
        template, spec=dataclasses.replace(template.spec, node_selector={"zone": "b"})
    )
    updated = api.update(
        dataclasses.replace(job, spec=dataclasses.replace(job.spec, template=moved))
    )
    assert updated.spec.template.spec.node_selector == {"zone": "b"}


def test_job_completions_are_immutable_when_not_indexed(api: ApiService) -> None:
    job = create(api, job_doc())
    with pytest.raises(errors.InvalidError) as caught:
        api.update(dataclasses.replace(job, spec=dataclasses.replace(job.spec, completions=3)))
    assert set(causes(caught.value)) == {"spec.completions: Invalid value: 3: field is immutable"}


# --- pod disruption budgets ------------------------------------------------------------------------

PDB_CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "minAvailable and maxUnavailable both set",
        "spec.maxUnavailable",
        1,
        [
            'spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},'
            '"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set'
        ],
    ),
    (
        "minAvailable not a percent",
        "spec.minAvailable",
        "50",
        [
            f'spec.minAvailable: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"50"}}: {PERCENT}'
        ],
    ),
    (
        "minAvailable negative",
        "spec.minAvailable",
        -1,
        ["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "minAvailable over 100%",
        "spec.minAvailable",
        "101%",
        [
            'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"101%"}: must not be greater than 100%'
        ],
    ),
    (
        "selector with Exists and values",
        "spec.selector",
        {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]},
        [
            "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is "
            "'Exists' or 'DoesNotExist'"
        ],
    ),
    (
        "unknown unhealthyPodEvictionPolicy",
        "spec.unhealthyPodEvictionPolicy",
        "Sometimes",
        [
            'spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"'
        ],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), [c[1:] for c in PDB_CASES], ids=[c[0] for c in PDB_CASES]
)
def test_invalid_pdb(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    error = rejected(api, with_path(pdb_doc(), path, value))
    assert causes(error) == expected
    assert error.message.startswith('PodDisruptionBudget.policy "b" is invalid: ')


@pytest.mark.parametrize("value", [0, 3, "0%", "100%", "50%"])
def test_valid_pdb_bounds(api: ApiService, value: int | str) -> None:
    assert isinstance(
        create(api, with_path(pdb_doc(), "spec.minAvailable", value)), PodDisruptionBudget
    )


def test_pdb_spec_is_mutable_in_policy_v1(api: ApiService) -> None:
    budget = create(api, pdb_doc())
    updated = api.update(
        dataclasses.replace(budget, spec=dataclasses.replace(budget.spec, min_available="50%"))
    )
    assert updated.spec.min_available == "50%"
    assert updated.metadata.generation == 2


@pytest.mark.parametrize(
    "make", [deployment_doc, replica_set_doc, job_doc], ids=["deployment", "replicaset", "job"]
)
def test_negative_template_grace_period_is_a_warning(api: ApiService, make: Any) -> None:
    """``GetWarningsForPodTemplate``: the path runs through the template."""
    doc = with_path(make(), "spec.template.spec.terminationGracePeriodSeconds", -1)
    result = api.create_object(manifest.decode_request(doc))
    assert result.warnings == (
        "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid "
        "and will be treated as 1",
    )
