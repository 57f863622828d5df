"""Defaulting as the API server applies it before admission.

Rules: ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_Pod``, ``SetDefaults_PodSpec``,
``SetDefaults_Container``, ``SetDefaults_ResourceList``, ``SetDefaults_Namespace``,
``SetDefaults_NodeStatus``) with the generated wiring in ``zz_generated.defaults.go``
(which function runs on pods, which on templates), ``pkg/apis/apps/v1/defaults.go``,
``pkg/apis/batch/v1/defaults.go``. Cases follow ``TestSetDefaultPod*``,
``TestSetDefaultImagePullPolicy`` (core), ``TestSetDefaultDeployment`` (apps) and
``TestSetDefaultJob`` (batch) in the matching ``defaults_test.go`` files.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api import manifest
from kubeprio.api.defaults import default_object, default_pull_policy, image_tag
from kubeprio.api.poddefaults import round_up_milli
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.serialization import to_dict
from tests.manifests import deployment_doc, job_doc, node_doc, pod_doc, replica_set_doc, with_path


def _defaulted(doc: dict[str, Any]) -> dict[str, Any]:
    return to_dict(default_object(manifest.decode_request(doc)))


def test_pod_defaults_match_what_a_server_returns() -> None:
    doc = with_path(pod_doc(), "spec.containers.0.ports", [{"containerPort": 80}])
    spec = _defaulted(doc)["spec"]
    assert spec == {
        "containers": [
            {
                "name": "c",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {},
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "enableServiceLinks": True,
    }


@pytest.mark.parametrize(
    ("resources", "expected_requests"),
    [
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, {"cpu": "1", "memory": "1Gi"}),
        (
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
            {"cpu": "500m", "memory": "1Gi"},
        ),
        ({"requests": {"cpu": "500m"}}, {"cpu": "500m"}),
    ],
    ids=["requests from limits", "explicit request kept", "no limits"],
)
def test_pod_requests_default_to_limits(
    resources: dict[str, Any], expected_requests: dict[str, str]
) -> None:
    """``SetDefaults_Pod``: only for missing requests of limited resources, pods only."""
    doc = with_path(pod_doc(), "spec.containers.0.resources", resources)
    assert _defaulted(doc)["spec"]["containers"][0]["resources"]["requests"] == expected_requests
    init = with_path(
        pod_doc(), "spec.initContainers", [{"name": "i", "image": "x", "resources": resources}]
    )
    assert (
        _defaulted(init)["spec"]["initContainers"][0]["resources"]["requests"] == expected_requests
    )


def test_templates_get_pod_spec_defaults_but_not_pod_defaults() -> None:
    """``SetDefaults_PodSpec`` runs on templates; ``SetDefaults_Pod`` (requests, enableServiceLinks) does not."""
    doc = with_path(
        deployment_doc(), "spec.template.spec.containers.0.resources", {"limits": {"cpu": "1"}}
    )
    template_spec = _defaulted(doc)["spec"]["template"]["spec"]
    assert template_spec["dnsPolicy"] == "ClusterFirst"
    assert template_spec["schedulerName"] == "default-scheduler"
    assert "enableServiceLinks" not in template_spec
    assert "requests" not in template_spec["containers"][0]["resources"]


SERVICE_ACCOUNT_ALIAS = [
    ({"serviceAccountName": "bot"}, {"serviceAccountName": "bot", "serviceAccount": "bot"}),
    ({"serviceAccount": "bot"}, {"serviceAccountName": "bot", "serviceAccount": "bot"}),
    (
        {"serviceAccountName": "new", "serviceAccount": "old"},
        {"serviceAccountName": "new", "serviceAccount": "new"},
    ),
    ({}, {}),
    ({"serviceAccountName": "", "serviceAccount": ""}, {"serviceAccountName": ""}),
]


@pytest.mark.parametrize(
    ("given", "expected"),
    SERVICE_ACCOUNT_ALIAS,
    ids=["name only", "alias only", "name wins", "neither", "both empty"],
)
@pytest.mark.parametrize("where", ["spec", "spec.template.spec"], ids=["pod", "template"])
def test_deprecated_service_account_mirrors_the_name(
    where: str, given: dict[str, str], expected: dict[str, str]
) -> None:
    """``Convert_v1_PodSpec_To_core_PodSpec`` reads ``serviceAccount`` when the name is
    empty; ``Convert_core_PodSpec_To_v1_PodSpec`` writes it back equal to the name, on pods
    and templates alike (``pkg/apis/core/v1/conversion.go``)."""
    doc = pod_doc() if where == "spec" else deployment_doc()
    for key, value in given.items():
        doc = with_path(doc, f"{where}.{key}", value)
    spec: Any = _defaulted(doc)
    for part in where.split("."):
        spec = spec[part]
    found = {k: spec[k] for k in ("serviceAccountName", "serviceAccount") if k in spec}
    assert found == expected


def test_host_network_pod_ports_get_host_ports() -> None:
    """``defaultHostNetworkPorts`` (``TestSetDefaultPodSpecHostNetwork``)."""
    doc = with_path(pod_doc(), "spec.hostNetwork", True)
    doc = with_path(
        doc,
        "spec.containers.0.ports",
        [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 9090}],
    )
    ports = _defaulted(doc)["spec"]["containers"][0]["ports"]
    assert [(p["containerPort"], p["hostPort"]) for p in ports] == [(8080, 8080), (9090, 9090)]


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry.example.com:5000/team/app", "Always"),
        ("registry.example.com:5000/team/app:v2", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
        ("nginx:latest@sha256:" + "a" * 64, "Always"),
        ("Nginx", "IfNotPresent"),
        ("", "IfNotPresent"),
    ],
)
def test_image_pull_policy(image: str, policy: str) -> None:
    """``SetDefaults_Container``: Always for ``:latest`` (the default tag), else IfNotPresent;
    an unparsable reference is not ``latest``."""
    assert default_pull_policy(image) == policy


def test_explicit_fields_are_not_overwritten() -> None:
    doc = with_path(
        pod_doc(),
        "spec",
        {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx",
                    "imagePullPolicy": "Never",
                    "terminationMessagePolicy": "FallbackToLogsOnError",
                }
            ],
            "restartPolicy": "OnFailure",
            "dnsPolicy": "None",
            "schedulerName": "mine",
            "terminationGracePeriodSeconds": 5,
            "enableServiceLinks": False,
        },
    )
    spec = _defaulted(doc)["spec"]
    assert (
        spec["restartPolicy"],
        spec["dnsPolicy"],
        spec["schedulerName"],
        spec["terminationGracePeriodSeconds"],
        spec["enableServiceLinks"],
    ) == (
        "OnFailure",
        "None",
        "mine",
        5,
        False,
    )
    assert spec["containers"][0]["imagePullPolicy"] == "Never"
    assert spec["containers"][0]["terminationMessagePolicy"] == "FallbackToLogsOnError"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.0001", "1m"), ("1.0001", "1001m"), ("-0.0001", "-1m"), ("100m", "100m"), ("1Gi", "1Gi")],
)
def test_quantities_round_up_to_milli(text: str, expected: str) -> None:
    """``SetDefaults_ResourceList``: ``RoundUp(-3)``, away from zero."""
    assert str(round_up_milli(parse_quantity(text))) == expected
    doc = with_path(pod_doc(), "spec.containers.0.resources", {"requests": {"cpu": text}})
    assert _defaulted(doc)["spec"]["containers"][0]["resources"]["requests"]["cpu"] == expected


def test_deployment_defaults() -> None:
    spec = _defaulted(deployment_doc())["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (
        1,
        10,
        600,
    )
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ({"type": "Recreate"}, {"type": "Recreate"}),
        (
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": "25%"}},
        ),
        (
            {"rollingUpdate": {"maxUnavailable": 0}},
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}},
        ),
    ],
    ids=["recreate", "surge given", "type missing"],
)
def test_deployment_strategy_defaults(strategy: dict[str, Any], expected: dict[str, Any]) -> None:
    assert (
        _defaulted(with_path(deployment_doc(), "spec.strategy", strategy))["spec"]["strategy"]
        == expected
    )


def test_replica_set_defaults_to_one_replica() -> None:
    assert _defaulted(replica_set_doc())["spec"]["replicas"] == 1


@pytest.mark.parametrize(
    ("given", "completions", "parallelism"),
    [
        ({}, 1, 1),
        ({"completions": 5}, 5, 1),
        ({"parallelism": 3}, None, 3),
        ({"completions": 5, "parallelism": 3}, 5, 3),
    ],
    ids=["neither", "completions only", "parallelism only", "both"],
)
def test_job_completions_and_parallelism(
    given: dict[str, int], completions: int | None, parallelism: int
) -> None:
    """``TestSetDefaultJob``: both unset -> 1/1; parallelism alone leaves completions unset."""
    doc = job_doc()
    doc["spec"].update(given)
    spec = _defaulted(doc)["spec"]
    assert spec.get("completions") == completions
    assert spec["parallelism"] == parallelism
    assert (
        spec["backoffLimit"],
        spec["completionMode"],
        spec["suspend"],
        spec["podReplacementPolicy"],
    ) == (
        6,
        "NonIndexed",
        False,
        "TerminatingOrFailed",
    )


def test_job_with_pod_failure_policy_defaults() -> None:
    doc = with_path(
        job_doc(),
        "spec.podFailurePolicy",
        {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
    )
    spec = _defaulted(doc)["spec"]
    assert spec["podReplacementPolicy"] == "Failed"
    assert spec["podFailurePolicy"]["rules"][0]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}
    ]


def test_job_with_backoff_limit_per_index_defaults_backoff_to_max_int32() -> None:
    doc = with_path(job_doc(), "spec.backoffLimitPerIndex", 1)
    assert _defaulted(doc)["spec"]["backoffLimit"] == 2**31 - 1


def test_job_takes_its_template_labels_when_it_has_none() -> None:
    doc = with_path(job_doc(), "spec.template.metadata.labels", {"app": "batch"})
    assert _defaulted(doc)["metadata"]["labels"] == {"app": "batch"}
    doc = with_path(doc, "metadata.labels", {"own": "x"})
    assert _defaulted(doc)["metadata"]["labels"] == {"own": "x"}


def test_node_allocatable_defaults_to_capacity() -> None:
    status = _defaulted(node_doc())["status"]
    assert (
        status["allocatable"] == status["capacity"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"podCIDR": "10.1.0.0/24"}, ("10.1.0.0/24", ["10.1.0.0/24"])),
        ({"podCIDRs": ["10.2.0.0/24", "fd00::/64"]}, ("10.2.0.0/24", ["10.2.0.0/24", "fd00::/64"])),
        (
            {"podCIDR": "10.9.0.0/24", "podCIDRs": ["10.3.0.0/24"]},
            ("10.3.0.0/24", ["10.3.0.0/24"]),
        ),
        ({}, (None, None)),
    ],
)
def test_node_pod_cidr_fields_agree_Convert_v1_NodeSpec_To_core_NodeSpec(
    spec: dict[str, Any], expected: tuple[str | None, list[str] | None]
) -> None:
    """Upstream's internal NodeSpec keeps only ``podCIDRs``: a lone ``podCIDR`` fills it
    (``Convert_v1_NodeSpec_To_core_NodeSpec``) and ``podCIDR`` is served as its first
    element (``Convert_core_NodeSpec_To_v1_NodeSpec``), so both always come back."""
    served = _defaulted(with_path(node_doc(), "spec", spec)).get("spec", {})
    assert (served.get("podCIDR"), served.get("podCIDRs")) == expected


def test_namespace_gets_name_label() -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"x": "y"}},
    }
    assert _defaulted(doc)["metadata"]["labels"] == {
        "x": "y",
        "kubernetes.io/metadata.name": "team-a",
    }


@pytest.mark.parametrize(
    "doc",
    [
        pod_doc(),
        deployment_doc(),
        replica_set_doc(),
        job_doc(),
        node_doc(),
        with_path(pod_doc(), "spec.hostNetwork", True),
        with_path(pod_doc(), "spec.serviceAccount", "bot"),
    ],
    ids=["pod", "deployment", "replicaset", "job", "node", "hostNetwork pod", "alias"],
)
def test_defaulting_is_idempotent(doc: dict[str, Any]) -> None:
    once = default_object(manifest.decode_request(doc))
    assert default_object(once) == once


@given(st.text(alphabet="abcXYZ09./:@-_", max_size=40))
def test_image_tag_never_raises(image: str) -> None:
    tag = image_tag(image)
    assert tag is None or isinstance(tag, str)
