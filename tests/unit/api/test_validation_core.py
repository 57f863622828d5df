"""Pod, Node, Namespace and Event validation, with upstream's field paths and texts.

Rules and texts are those of ``pkg/apis/core/validation/validation.go`` (v1.35 line):
``ValidatePodSpec``, ``validateContainers``, ``validateContainerPorts``,
``validateResourceRequirements``, ``ValidateTolerations``, ``validateAffinity``,
``validateTopologySpreadConstraints``, ``ValidatePreemptionPolicy``,
``ValidatePodUpdate``, ``ValidatePodStatusUpdate``, ``validateNodeTaints``,
``ValidateNodeUpdate``; ``events.go`` ``legacyValidateEvent``. Case names follow the
cases of ``validation_test.go`` (``TestValidatePodSpec``, ``TestValidateContainers``,
``TestValidateTolerations``, ``TestValidateTopologySpreadConstraints``,
``TestValidatePodUpdate``, ``TestValidateNode``...) where one exists. Each case goes
through ``ApiService`` so that defaulting runs first, as on a real server, and checks
that a rejected object is not stored.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api import errors, manifest
from kubeprio.api.core import (
    Container,
    Namespace,
    NamespaceStatus,
    Node,
    NodeSpec,
    Pod,
    PodCondition,
    PodStatus,
    Taint,
    Toleration,
)
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.apiserver.service import ApiService
from tests.manifests import causes, create, node_doc, pod_doc, rejected, with_path

DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
C0 = "spec.containers[0]"


def _container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "nginx:1.27", **fields}


POD_CASES: list[tuple[str, str, Any, list[str]]] = [
    # (id, path in the pod manifest, new value, expected causes)
    ("no containers", "spec.containers", [], ["spec.containers: Required value"]),
    ("container name missing", "spec.containers.0.name", "", [f"{C0}.name: Required value"]),
    (
        "container name not a DNS label",
        "spec.containers.0.name",
        "Web_1",
        [f'{C0}.name: Invalid value: "Web_1": {DNS_LABEL}'],
    ),
    (
        "container name with dots",
        "spec.containers.0.name",
        "a.b",
        [f'{C0}.name: Invalid value: "a.b": must not contain dots'],
    ),
    (
        "duplicate container names",
        "spec.containers",
        [_container(), _container()],
        ['spec.containers[1].name: Duplicate value: "c"'],
    ),
    ("image missing", "spec.containers.0.image", "", [f"{C0}.image: Required value"]),
    (
        "image with whitespace (pods only)",
        "spec.containers.0.image",
        " nginx",
        [f'{C0}.image: Invalid value: " nginx": must not have leading or trailing whitespace'],
    ),
    (
        "negative request",
        "spec.containers.0.resources",
        {"requests": {"cpu": "-1"}},
        [f'{C0}.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
    ),
    (
        "request above limit",
        "spec.containers.0.resources",
        {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
        [
            f'{C0}.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'
        ],
    ),
    (
        "request above limit, memory",
        "spec.containers.0.resources",
        {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}},
        [
            f'{C0}.resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi'
        ],
    ),
    (
        "fractional extended resource (limits copied to requests)",
        "spec.containers.0.resources",
        {"limits": {"nvidia.com/gpu": "500m"}},
        [
            f'{C0}.resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer',
            f'{C0}.resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer',
        ],
    ),
    (
        "extended resource request differs from limit",
        "spec.containers.0.resources",
        {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}},
        [
            f'{C0}.resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2'
        ],
    ),
    (
        "extended resource requested without a limit",
        "spec.containers.0.resources",
        {"requests": {"example.com/foo": "1"}},
        [
            f"{C0}.resources.limits: Required value: Limit must be set for non overcommitable resources"
        ],
    ),
    (
        "unknown unprefixed resource",
        "spec.containers.0.resources",
        {"requests": {"disk": "1"}},
        [
            f'{C0}.resources.requests[disk]: Invalid value: "disk": must be a standard resource type or fully qualified',
            f'{C0}.resources.requests[disk]: Invalid value: "disk": must be a standard resource for containers',
        ],
    ),
    (
        "quota-only resource on a container",
        "spec.containers.0.resources",
        {"requests": {"pods": "1"}},
        [
            f'{C0}.resources.requests[pods]: Invalid value: "pods": must be a standard resource for containers'
        ],
    ),
    (
        "container port out of range",
        "spec.containers.0.ports",
        [{"containerPort": 70000}],
        [
            f"{C0}.ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"
        ],
    ),
    (
        "container port missing",
        "spec.containers.0.ports",
        [{"name": "http"}],
        [f"{C0}.ports[0].containerPort: Required value"],
    ),
    (
        "host port out of range",
        "spec.containers.0.ports",
        [{"containerPort": 80, "hostPort": 65536}],
        [f"{C0}.ports[0].hostPort: Invalid value: 65536: must be between 1 and 65535, inclusive"],
    ),
    (
        "unsupported protocol",
        "spec.containers.0.ports",
        [{"containerPort": 80, "protocol": "ICMP"}],
        [
            f'{C0}.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'
        ],
    ),
    (
        "port name with consecutive hyphens",
        "spec.containers.0.ports",
        [{"containerPort": 80, "name": "web--x"}],
        [f'{C0}.ports[0].name: Invalid value: "web--x": must not contain consecutive hyphens'],
    ),
    (
        "duplicate port names",
        "spec.containers.0.ports",
        [{"containerPort": 80, "name": "web"}, {"containerPort": 81, "name": "web"}],
        [f'{C0}.ports[1].name: Duplicate value: "web"'],
    ),
    (
        "host port used twice in a pod",
        "spec.containers",
        [
            _container(ports=[{"containerPort": 80, "hostPort": 8080}]),
            _container(name="d", ports=[{"containerPort": 81, "hostPort": 8080}]),
        ],
        ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"'],
    ),
    (
        "regular container with restartPolicy",
        "spec.containers.0.restartPolicy",
        "Always",
        [f"{C0}.restartPolicy: Forbidden: may not be set for non-init containers"],
    ),
    (
        "init container restartPolicy other than Always",
        "spec.initContainers",
        [_container(name="init", restartPolicy="Never")],
        [
            'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"'
        ],
    ),
    (
        "init container named like a container",
        "spec.initContainers",
        [_container()],
        ['spec.initContainers[0].name: Duplicate value: "c"'],
    ),
    (
        "init container with a probe",
        "spec.initContainers",
        [_container(name="init", readinessProbe={"exec": {"command": ["true"]}})],
        [
            "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"
        ],
    ),
    (
        "unsupported imagePullPolicy",
        "spec.containers.0.imagePullPolicy",
        "Sometimes",
        [
            f'{C0}.imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'
        ],
    ),
    (
        "unsupported restartPolicy",
        "spec.restartPolicy",
        "Sometimes",
        [
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
        ],
    ),
    (
        "unsupported dnsPolicy",
        "spec.dnsPolicy",
        "Google",
        [
            'spec.dnsPolicy: Unsupported value: "Google": supported values: '
            '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'
        ],
    ),
    (
        "invalid nodeSelector value",
        "spec.nodeSelector",
        {"disk": "s s"},
        [f'spec.nodeSelector: Invalid value: "s s": {LABEL_VALUE}'],
    ),
    (
        "invalid nodeSelector key",
        "spec.nodeSelector",
        {"a/b/c": "x"},
        [
            'spec.nodeSelector: Invalid value: "a/b/c": a valid label key must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ],
    ),
    (
        "required node affinity without terms",
        "spec.affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
            }
        },
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
            "Required value: must have at least one node selector term"
        ],
    ),
    (
        "node affinity operator unknown, In without values, Gt with two",
        "spec.affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "Near", "values": ["a"]},
                                {"key": "zone", "operator": "In"},
                                {"key": "cores", "operator": "Gt", "values": ["1", "2"]},
                            ]
                        }
                    ]
                }
            }
        },
        [
            f"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[{i}].{msg}"
            for i, msg in (
                (0, 'operator: Invalid value: "Near": not a valid selector operator'),
                (1, "values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
                (
                    2,
                    "values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
                ),
            )
        ],
    ),
    (
        "node affinity field selector on another field",
        "spec.affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.uid", "operator": "In", "values": ["x"]}
                            ]
                        }
                    ]
                }
            }
        },
        [
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            '.matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key'
        ],
    ),
    (
        "preferred node affinity weight 0",
        "spec.affinity",
        {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 0,
                        "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
                    }
                ]
            }
        },
        [
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
            "Invalid value: 0: must be in the range 1-100"
        ],
    ),
    (
        "pod anti-affinity without topologyKey",
        "spec.affinity",
        {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "web"}}}
                ]
            }
        },
        [
            f"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: {msg}"
            for msg in (
                "Required value: can not be empty",
                'Invalid value: "": name part must be non-empty',
                f'Invalid value: "": {NAME_PART}',
            )
        ],
    ),
    (
        "pod affinity selector with a bad operator",
        "spec.affinity",
        {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {
                            "matchExpressions": [{"key": "app", "operator": "Is", "values": ["x"]}]
                        },
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        [
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector"
            '.matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator'
        ],
    ),
    (
        "toleration with empty key must use Exists",
        "spec.tolerations",
        [{"operator": "Equal", "value": "x"}],
        [
            'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is '
            'empty, which means "match all values and all keys"'
        ],
    ),
    (
        "toleration Exists with a value",
        "spec.tolerations",
        [{"key": "k", "operator": "Exists", "value": "v"}],
        [
            "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"
        ],
    ),
    (
        "toleration seconds without NoExecute",
        "spec.tolerations",
        [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 10}],
        [
            "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
        ],
    ),
    (
        "toleration operator and effect unknown",
        "spec.tolerations",
        [{"key": "k", "operator": "Like", "effect": "NoRun"}],
        [
            'spec.tolerations[0].operator: Unsupported value: "Like": supported values: "Equal", "Exists"',
            'spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: '
            '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        ],
    ),
    (
        "topology spread: maxSkew 0, bad action",
        "spec.topologySpreadConstraints",
        [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}],
        [
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
            'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported '
            'values: "DoNotSchedule", "ScheduleAnyway"',
        ],
    ),
    (
        "topology spread: repeated constraint",
        "spec.topologySpreadConstraints",
        [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        ],
        [
            'spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"'
        ],
    ),
    (
        "topology spread: minDomains needs DoNotSchedule",
        "spec.topologySpreadConstraints",
        [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "minDomains": 2,
            }
        ],
        [
            "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if "
            "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"
        ],
    ),
    (
        "priorityClassName not a DNS subdomain",
        "spec.priorityClassName",
        "High_Priority",
        [f'spec.priorityClassName: Invalid value: "High_Priority": {DNS_SUBDOMAIN}'],
    ),
    (
        "unsupported preemptionPolicy",
        "spec.preemptionPolicy",
        "Sometimes",
        [
            'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'
        ],
    ),
    (
        "empty preemptionPolicy",
        "spec.preemptionPolicy",
        "",
        ["spec.preemptionPolicy: Required value"],
    ),
    (
        "activeDeadlineSeconds 0",
        "spec.activeDeadlineSeconds",
        0,
        [
            "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"
        ],
    ),
    (
        "nodeName not a DNS subdomain",
        "spec.nodeName",
        "Node_1",
        [f'spec.nodeName: Invalid value: "Node_1": {DNS_SUBDOMAIN}'],
    ),
    (
        "negative overhead (reported under overhead.limits)",
        "spec.overhead",
        {"cpu": "-100m"},
        ['spec.overhead.limits[cpu]: Invalid value: "-100m": must be greater than or equal to 0'],
    ),
    (
        "hostNetwork host port must equal container port",
        "spec",
        {
            "hostNetwork": True,
            "containers": [_container(ports=[{"containerPort": 80, "hostPort": 81}])],
        },
        [
            f"{C0}.ports[0].hostPort: Invalid value: 81: must match `containerPort` when `hostNetwork` is true"
        ],
    ),
    (
        "pod name not a DNS subdomain",
        "metadata.name",
        "My_Pod",
        [f'metadata.name: Invalid value: "My_Pod": {DNS_SUBDOMAIN}'],
    ),
    (
        "invalid label value",
        "metadata.labels",
        {"app": "a b"},
        [f'metadata.labels: Invalid value: "a b": {LABEL_VALUE}'],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), [c[1:] for c in POD_CASES], ids=[c[0] for c in POD_CASES]
)
def test_invalid_pod_is_rejected_with_upstream_causes(
    api: ApiService, path: str, value: Any, expected: list[str]
) -> None:
    error = rejected(api, with_path(pod_doc(), path, value))
    assert causes(error) == expected
    assert error.status.code == 422
    assert error.status.reason == "Invalid"


def test_all_errors_are_collected_into_one_message(api: ApiService) -> None:
    """``NewInvalid``: every cause, bracketed and comma-joined after the object name."""
    doc = with_path(pod_doc("web"), "spec.containers.0.image", "")
    doc = with_path(doc, "spec.preemptionPolicy", "Sometimes")
    error = rejected(api, doc)
    assert error.message == (
        'Pod "web" is invalid: [spec.containers[0].image: Required value, spec.preemptionPolicy: '
        'Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"]'
    )
    details = error.status.details
    assert details is not None
    assert (details.kind, details.name, details.group) == ("Pod", "web", None)
    assert [(c.reason, c.field) for c in details.causes or ()] == [
        ("FieldValueRequired", "spec.containers[0].image"),
        ("FieldValueNotSupported", "spec.preemptionPolicy"),
    ]


def test_single_error_message_has_no_brackets(api: ApiService) -> None:
    error = rejected(api, with_path(pod_doc("web"), "spec.restartPolicy", "Sometimes"))
    assert error.message == (
        'Pod "web" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "OnFailure", "Never"'
    )


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.tolerations", [{"operator": "Exists"}]),
        (
            "spec.tolerations",
            [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}],
        ),
        (
            "spec.containers.0.resources",
            {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}},
        ),
        ("spec.containers.0.resources", {"limits": {"hugepages-2Mi": "4Mi", "memory": "1Gi"}}),
        ("spec.priorityClassName", "system-node-critical"),
        (
            "spec.topologySpreadConstraints",
            [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}],
        ),
        (
            "spec.initContainers",
            [
                _container(
                    name="sidecar",
                    restartPolicy="Always",
                    readinessProbe={"exec": {"command": ["true"]}},
                )
            ],
        ),
    ],
    ids=[
        "match-all toleration",
        "NoExecute with seconds",
        "whole GPUs",
        "hugepages with memory",
        "system class name",
        "soft spread",
        "sidecar with probe",
    ],
)
def test_valid_pod_fields_are_accepted(api: ApiService, path: str, value: Any) -> None:
    assert isinstance(create(api, with_path(pod_doc(), path, value)), Pod)


def test_negative_grace_period_is_accepted_with_a_warning(api: ApiService) -> None:
    """Upstream validates nothing here; ``GetWarningsForPod`` warns (pkg/api/pod/warnings.go)."""
    result = api.create_object(
        manifest.decode_request(with_path(pod_doc(), "spec.terminationGracePeriodSeconds", -1))
    )
    assert result.warnings == (
        "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
    )


def test_hugepages_must_be_whole_pages(api: ApiService) -> None:
    error = rejected(
        api,
        with_path(
            pod_doc(),
            "spec.containers.0.resources",
            {"limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}},
        ),
    )
    assert causes(error) == [
        f'{C0}.resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
        f'{C0}.resources.requests[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
    ]


# --- updates (ValidatePodUpdate) -------------------------------------------------------------

FORBIDDEN_HEAD = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
    "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
    "previously negative)\n"
)


def _stored_pod(api: ApiService, **spec: Any) -> Pod:
    doc = pod_doc()
    doc["spec"].update(spec)
    return create(api, doc)


def _update(api: ApiService, pod: Pod, **spec_changes: Any) -> Pod:
    assert pod.spec is not None
    return api.update(dataclasses.replace(pod, spec=dataclasses.replace(pod.spec, **spec_changes)))


@pytest.mark.parametrize(
    ("changes", "diff_line"),
    [
        ({"node_selector": {"disk": "ssd"}}, '+ \tNodeSelector: {"disk":"ssd"},'),
        ({"priority": 1000}, "+ \tPriority: 1000,"),
        ({"priority_class_name": "high"}, '+ \tPriorityClassName: "high",'),
        ({"preemption_policy": "Never"}, '+ \tPreemptionPolicy: "Never",'),
        ({"scheduler_name": "other"}, '+ \tSchedulerName: "other",'),
        ({"termination_grace_period_seconds": 60}, "+ \tTerminationGracePeriodSeconds: 60,"),
    ],
    ids=[
        "nodeSelector",
        "priority",
        "priorityClassName",
        "preemptionPolicy",
        "schedulerName",
        "grace period",
    ],
)
def test_pod_spec_is_immutable_except_the_listed_fields(
    api: ApiService, changes: dict[str, Any], diff_line: str
) -> None:
    pod = _stored_pod(api)
    before = api.store.current_revision()
    with pytest.raises(errors.InvalidError) as caught:
        _update(api, pod, **changes)
    [cause] = causes(caught.value)
    assert cause.startswith(FORBIDDEN_HEAD)
    assert diff_line in cause.splitlines()
    assert caught.value.message.startswith('Pod "p" is invalid: ' + FORBIDDEN_HEAD)
    assert api.store.current_revision() == before


def test_pod_image_update_is_allowed(api: ApiService) -> None:
    pod = _stored_pod(api)
    assert pod.spec is not None
    assert pod.spec.containers
    new_container = dataclasses.replace(pod.spec.containers[0], image="nginx:1.28")
    updated = _update(api, pod, containers=(new_container,))
    assert updated.spec is not None
    assert updated.spec.containers
    assert updated.spec.containers[0].image == "nginx:1.28"


def test_pod_may_gain_tolerations_but_not_change_them(api: ApiService) -> None:
    pod = _stored_pod(api, tolerations=[{"key": "a", "operator": "Exists"}])
    added = (Toleration(key="a", operator="Exists"), Toleration(key="b", operator="Exists"))
    pod = _update(api, pod, tolerations=added)
    with pytest.raises(errors.InvalidError) as caught:
        _update(api, pod, tolerations=(Toleration(key="b", operator="Exists"),))
    assert causes(caught.value) == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
    ]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, 30, []),
        (30, 10, []),
        (
            30,
            60,
            [
                "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"
            ],
        ),
        (
            30,
            None,
            [
                "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"
            ],
        ),
    ],
    ids=["set from nil", "lowered", "raised", "removed"],
)
def test_active_deadline_may_only_be_set_or_lowered(
    api: ApiService, old: int | None, new: int | None, expected: list[str]
) -> None:
    pod = _stored_pod(api, **({"activeDeadlineSeconds": old} if old is not None else {}))
    if expected:
        with pytest.raises(errors.InvalidError) as caught:
            _update(api, pod, active_deadline_seconds=new)
        assert causes(caught.value) == expected
    else:
        assert _update(api, pod, active_deadline_seconds=new).spec.active_deadline_seconds == new  # type: ignore[union-attr]


def test_containers_may_not_be_added(api: ApiService) -> None:
    pod = _stored_pod(api)
    assert pod.spec is not None
    assert pod.spec.containers
    with pytest.raises(errors.InvalidError) as caught:
        _update(api, pod, containers=(*pod.spec.containers, Container(name="d", image="x")))
    assert causes(caught.value) == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"
    ]


def test_negative_grace_period_may_be_raised_to_one(api: ApiService) -> None:
    pod = _stored_pod(api, terminationGracePeriodSeconds=-1)
    assert (
        _update(api, pod, termination_grace_period_seconds=1).spec.termination_grace_period_seconds
        == 1
    )  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("status_changes", "expected"),
    [
        ({"qos_class": "BestEffort"}, []),
        (
            {"qos_class": "Guaranteed"},
            ['status.qosClass: Invalid value: "Guaranteed": field is immutable'],
        ),
        (
            {"nominated_node_name": "Node_1"},
            [f'status.nominatedNodeName: Invalid value: "Node_1": {DNS_SUBDOMAIN}'],
        ),
    ],
    ids=["unchanged qos", "qos changed", "bad nominated node"],
)
def test_pod_status_update_rules(
    api: ApiService, status_changes: dict[str, Any], expected: list[str]
) -> None:
    """``ValidatePodStatusUpdate``: QoS immutable, nominated node a valid node name."""
    pod = _stored_pod(api)
    assert pod.status is not None
    new = dataclasses.replace(pod, status=dataclasses.replace(pod.status, **status_changes))
    if expected:
        with pytest.raises(errors.InvalidError) as caught:
            api.update_status(new)
        assert causes(caught.value) == expected
    else:
        api.update_status(new)


@pytest.mark.parametrize(
    "status",
    [PodStatus(phase="Running"), None],
    ids=["status without qosClass", "no status at all"],
)
def test_pod_status_update_without_qos_class_keeps_the_stored_one(
    api: ApiService, status: PodStatus | None
) -> None:
    """``podStatusStrategy.PrepareForUpdate`` (pkg/registry/core/pod/strategy.go) backfills
    an empty ``status.qosClass`` from the stored pod, so writers that build a status from
    scratch are not refused as changing an immutable field."""
    pod = _stored_pod(api)
    assert pod.status is not None
    assert pod.status.qos_class == "BestEffort"
    written = api.update_status(dataclasses.replace(pod, status=status))
    assert written.status is not None
    assert written.status.qos_class == "BestEffort"
    assert written.status.phase == (status.phase if status is not None else None)


def test_custom_pod_condition_type_is_reported_under_metadata(api: ApiService) -> None:
    """Upstream quirk: ``validatePodConditions`` is handed the metadata path."""
    pod = _stored_pod(api)
    assert pod.status is not None
    new = dataclasses.replace(
        pod,
        status=dataclasses.replace(
            pod.status, conditions=(PodCondition(type="bad type", status="True"),)
        ),
    )
    with pytest.raises(errors.InvalidError) as caught:
        api.update_status(new)
    assert causes(caught.value) == [
        f'metadata.conditions[0].Type: Invalid value: "bad type": {NAME_PART}'
    ]


# --- nodes ----------------------------------------------------------------------------------------


NODE_CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "taint effect unknown (reported under metadata.taints)",
        "spec.taints",
        [{"key": "k", "effect": "NoRun"}],
        [
            'metadata.taints[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
        ],
    ),
    (
        "taint effect missing",
        "spec.taints",
        [{"key": "k"}],
        ["metadata.taints[0].effect: Required value"],
    ),
    (
        "taint key invalid",
        "spec.taints",
        [{"key": "a b", "effect": "NoSchedule"}],
        [f'metadata.taints[0].key: Invalid value: "a b": {NAME_PART}'],
    ),
    (
        "duplicate taint",
        "spec.taints",
        [
            {"key": "k", "value": "1", "effect": "NoSchedule"},
            {"key": "k", "value": "2", "effect": "NoSchedule"},
        ],
        [
            'metadata.taints[1]: Duplicate value: core.Taint{Key:"k", Value:"2", Effect:"NoSchedule", '
            "TimeAdded:(*v1.Time)(nil)}: "
            "taints must be unique by key and effect pair"
        ],
    ),
    (
        "negative capacity (allocatable defaults to it)",
        "status.capacity",
        {"cpu": "-1"},
        [
            'status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0',
            'status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0',
        ],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), [c[1:] for c in NODE_CASES], ids=[c[0] for c in NODE_CASES]
)
def test_invalid_node_is_rejected(
    api: ApiService, path: str, value: Any, expected: list[str]
) -> None:
    assert causes(rejected(api, with_path(node_doc(), path, value))) == expected


def test_node_allocatable_defaults_to_capacity_and_taints_may_change(api: ApiService) -> None:
    node = create(api, node_doc())
    assert isinstance(node, Node)
    assert node.status is not None
    assert node.status.allocatable == node.status.capacity
    assert node.spec is None
    tainted = api.update(
        dataclasses.replace(node, spec=NodeSpec(taints=(Taint(key="k", effect="NoSchedule"),)))
    )
    assert tainted.spec is not None
    assert tainted.spec.taints


def test_node_provider_id_is_set_once(api: ApiService) -> None:
    node = create(api, with_path(node_doc(), "spec", {"providerID": "aws:///i-1"}))
    with pytest.raises(errors.InvalidError) as caught:
        api.update(dataclasses.replace(node, spec=NodeSpec(provider_id="aws:///i-2")))
    assert causes(caught.value) == [
        'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid'
    ]


# --- namespaces and events ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Team-A", [f'metadata.name: Invalid value: "Team-A": {DNS_LABEL}']),
        ("team.a", ['metadata.name: Invalid value: "team.a": must not contain dots']),
        (
            "a" * 64,
            [
                f'metadata.name: Invalid value: "{"a" * 64}": must be no more than 63 characters',
                # SetDefaults_Namespace copies the name into a label first; label values
                # count bytes (content.MaxLenError), names count characters.
                f'metadata.labels: Invalid value: "{"a" * 64}": must be no more than 63 characters',
            ],
        ),
    ],
    ids=["uppercase", "dots", "too long"],
)
def test_namespace_name_is_a_dns_label(api: ApiService, name: str, expected: list[str]) -> None:
    doc = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert causes(rejected(api, doc)) == expected


def test_namespace_gets_its_name_label(api: ApiService) -> None:
    """``SetDefaults_Namespace``: label ``kubernetes.io/metadata.name``."""
    ns = create(api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    assert isinstance(ns, Namespace)
    assert ns.metadata.labels == {"kubernetes.io/metadata.name": "team-a"}


def test_active_namespace_status_must_stay_active(api: ApiService) -> None:
    ns = api.get(Namespace, "default")
    with pytest.raises(errors.InvalidError) as caught:
        api.update_status(dataclasses.replace(ns, status=NamespaceStatus(phase="Terminating")))
    assert causes(caught.value) == [
        "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"
    ]


@pytest.mark.parametrize(
    ("involved_namespace", "expected"),
    [
        ("default", []),
        (
            "other",
            ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
        ),
    ],
    ids=["same namespace", "other namespace"],
)
def test_event_involved_object_namespace_must_match(
    api: ApiService, involved_namespace: str, expected: list[str]
) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "p.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": involved_namespace},
        "reason": "Scheduled",
    }
    if expected:
        assert causes(rejected(api, doc)) == expected
    else:
        create(api, doc)


def test_event_names_are_not_checked_by_core_v1(api: ApiService) -> None:
    """Events created through core/v1 skip ``ValidateObjectMeta`` (legacy validation only)."""
    doc = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "Pod.Name_1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
    }
    create(api, doc)


def test_semantically_equal_spec_is_not_a_change(api: ApiService) -> None:
    """``apiequality.Semantic.DeepEqual``: empty equals unset, quantities compare by value."""
    pod = _stored_pod(
        api, containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1000m"}}}]
    )
    assert pod.spec is not None
    assert pod.spec.containers
    resources = pod.spec.containers[0].resources
    assert resources is not None
    same = dataclasses.replace(
        pod.spec.containers[0],
        resources=dataclasses.replace(resources, requests={"cpu": parse_quantity("1")}),
    )
    updated = _update(api, pod, node_selector={}, tolerations=(), containers=(same,))
    assert updated.metadata.resource_version is not None


SINGLE_STACK = {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]}
DUAL_STACK = {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24", "fd00:10:244:1::/64"]}
CIDR_FORBIDDEN = (
    'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid'
)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # A CIDR may be assigned once, from "" (the node IPAM controller does that).
        (None, SINGLE_STACK, []),
        (SINGLE_STACK, SINGLE_STACK, []),
        (DUAL_STACK, DUAL_STACK, []),
        # The list changed length: one error, however many entries differ.
        (SINGLE_STACK, DUAL_STACK, [CIDR_FORBIDDEN]),
        (DUAL_STACK, SINGLE_STACK, [CIDR_FORBIDDEN]),
        # Same length: one error per changed entry; the second entry alone is checked too.
        (
            DUAL_STACK,
            {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24", "fd00:10:244:9::/64"]},
            [CIDR_FORBIDDEN],
        ),
        (
            DUAL_STACK,
            {"podCIDR": "10.244.9.0/24", "podCIDRs": ["10.244.9.0/24", "fd00:10:244:9::/64"]},
            [CIDR_FORBIDDEN, CIDR_FORBIDDEN],
        ),
    ],
    ids=["assigned", "same", "same dual", "grown", "shrunk", "second changed", "both changed"],
)
def test_node_pod_cidrs_are_set_once(
    api: ApiService, before: dict[str, Any] | None, after: dict[str, Any], expected: list[str]
) -> None:
    """``ValidateNodeUpdate`` (pkg/apis/core/validation): once set, ``spec.podCIDRs`` is
    compared as a whole list."""
    doc = node_doc() if before is None else with_path(node_doc(), "spec", before)
    node = create(api, doc)
    changed = to_dict(node)
    changed["spec"] = after
    if not expected:
        api.update(from_dict(Node, changed))
        return
    with pytest.raises(errors.InvalidError) as caught:
        api.update(from_dict(Node, changed))
    assert causes(caught.value) == expected
    assert api.get(Node, node.metadata.name or "") == node
