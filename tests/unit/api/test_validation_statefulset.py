"""StatefulSet defaulting, validation and registry strategy, with upstream's texts.

Rules and texts: ``pkg/apis/apps/v1/defaults.go`` (``SetDefaults_StatefulSet``),
``pkg/apis/apps/validation/validation.go`` (``ValidateStatefulSetName``,
``ValidateStatefulSetSpec``, ``ValidatePodTemplateSpecForStatefulSet``,
``ValidatePersistentVolumeClaimRetentionPolicy``, ``ValidateStatefulSetUpdate``,
``ValidateStatefulSetStatus``) and ``pkg/registry/apps/statefulset/strategy.go``
(status reset and generation 1 on create, generation bump on spec changes, the alpha
``maxUnavailable`` dropped). Case names follow ``TestValidateStatefulSet`` where they match.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.serialization import to_dict
from kubeprio.api.statefulset import StatefulSet, StatefulSetStatus
from kubeprio.apiserver.service import ApiService
from tests.manifests import causes, create, rejected, template_doc, with_path

MISMATCH = "`selector` does not match template `labels`"
FORBIDDEN_UPDATE = (
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
    "'ordinals', 'template', 'updateStrategy', "
    "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)


def stateful_set_doc(name: str = "web") -> dict[str, Any]:
    """A minimal valid StatefulSet selecting ``app=web``."""
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "serviceName": "nginx",
            "template": template_doc(),
        },
    }


# --- defaulting -------------------------------------------------------------------------------

STRATEGY_DEFAULTS: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "no strategy: RollingUpdate, partition 0",
        None,
        {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
    ),
    (
        "explicit RollingUpdate without rollingUpdate stays without",
        {"type": "RollingUpdate"},
        {"type": "RollingUpdate"},
    ),
    (
        "a rollingUpdate without partition gets 0",
        {"type": "RollingUpdate", "rollingUpdate": {}},
        {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
    ),
    (
        "a partition is kept",
        {"rollingUpdate": {"partition": 2}},
        {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
    ),
    ("OnDelete is left alone", {"type": "OnDelete"}, {"type": "OnDelete"}),
]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [c[1:] for c in STRATEGY_DEFAULTS],
    ids=[c[0] for c in STRATEGY_DEFAULTS],
)
def test_set_defaults_stateful_set(
    api: ApiService, strategy: Any, expected: dict[str, Any]
) -> None:
    """SetDefaults_StatefulSet: OrderedReady, the strategy, Retain/Retain, replicas 1,
    revisionHistoryLimit 10, the pod-template defaults."""
    doc = stateful_set_doc()
    if strategy is not None:
        doc["spec"]["updateStrategy"] = strategy
    spec = to_dict(create(api, doc))["spec"]
    assert spec["updateStrategy"] == expected
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 10
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert spec["template"]["spec"]["schedulerName"] == "default-scheduler"


def test_claim_templates_round_trip_with_their_defaults(api: ApiService) -> None:
    """``volumeClaimTemplates`` are kept (no claims are made from them) with the claim
    defaults a real API server returns (apiVersion, kind, volumeMode, phase Pending)."""
    doc = stateful_set_doc()
    doc["spec"]["volumeClaimTemplates"] = [
        {
            "metadata": {"name": "www"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    ]
    claims = to_dict(create(api, doc))["spec"]["volumeClaimTemplates"]
    assert claims == [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "www", "creationTimestamp": None},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        }
    ]


def test_service_name_and_ordinals_start_are_always_sent(api: ApiService) -> None:
    """Go's zero values without omitempty: ``serviceName: ""``, ``ordinals.start: 0``."""
    doc = stateful_set_doc()
    del doc["spec"]["serviceName"]
    doc["spec"]["ordinals"] = {}
    spec = to_dict(create(api, doc))["spec"]
    assert spec["serviceName"] == ""
    assert spec["ordinals"] == {"start": 0}


def test_create_resets_status_sets_generation_and_drops_max_unavailable(api: ApiService) -> None:
    """statefulSetStrategy.PrepareForCreate: status {} (replicas and availableReplicas
    have no omitempty), generation 1; MaxUnavailableStatefulSet is alpha (off): dropped."""
    doc = stateful_set_doc()
    doc["status"] = {"replicas": 4, "readyReplicas": 4}
    doc["spec"]["updateStrategy"] = {"rollingUpdate": {"maxUnavailable": 2}}
    created = to_dict(create(api, doc))
    assert created["status"] == {"replicas": 0, "availableReplicas": 0}
    assert created["metadata"]["generation"] == 1
    assert created["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 0},
    }


def test_update_bumps_generation_on_spec_changes(api: ApiService) -> None:
    sts = create(api, stateful_set_doc())
    assert isinstance(sts, StatefulSet)
    assert sts.spec is not None
    sts = api.update(dataclasses.replace(sts, spec=dataclasses.replace(sts.spec, replicas=3)))
    assert sts.metadata.generation == 2
    labels = {**(sts.metadata.labels or {}), "x": "y"}
    sts = api.update(
        dataclasses.replace(sts, metadata=dataclasses.replace(sts.metadata, labels=labels))
    )
    assert sts.metadata.generation == 2


# --- validation ---------------------------------------------------------------------------------

CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "missing selector: Required and no match",
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
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset"
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
        "invalid pod management policy",
        "spec.podManagementPolicy",
        "Random",
        [
            "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"
        ],
    ),
    (
        "unknown strategy type, printed as the internal struct",
        "spec.updateStrategy",
        {"type": "Sometimes"},
        [
            'spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Sometimes", '
            "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: "
            "must be 'RollingUpdate' or 'OnDelete'"
        ],
    ),
    (
        "rollingUpdate with OnDelete",
        "spec.updateStrategy",
        {"type": "OnDelete", "rollingUpdate": {"partition": 1}},
        [
            "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{"
            "Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: "
            "only allowed for updateStrategy 'RollingUpdate'"
        ],
    ),
    (
        "negative partition",
        "spec.updateStrategy",
        {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}},
        [
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"
        ],
    ),
    (
        "negative replicas",
        "spec.replicas",
        -1,
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "negative minReadySeconds",
        "spec.minReadySeconds",
        -1,
        ["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "negative ordinals.start",
        "spec.ordinals",
        {"start": -2},
        ["spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0"],
    ),
    (
        "bad retention policy",
        "spec.persistentVolumeClaimRetentionPolicy",
        {"whenDeleted": "Keep"},
        [
            'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": '
            'supported values: "Retain", "Delete"'
        ],
    ),
    (
        "restartPolicy OnFailure",
        "spec.template.spec.restartPolicy",
        "OnFailure",
        [
            'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'
        ],
    ),
    (
        "activeDeadlineSeconds",
        "spec.template.spec.activeDeadlineSeconds",
        10,
        [
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"
        ],
    ),
    (
        "a bad template label is reported under spec.template.labels",
        "spec.template.metadata.labels",
        {"app": "web", "bad": "-x-"},
        [
            'spec.template.labels: Invalid value: "-x-": a valid label must be an empty string '
            "or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
            "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ],
    ),
    (
        "name must be a DNS label (ValidateStatefulSetName): no dots",
        "metadata.name",
        "web.v1",
        ['metadata.name: Invalid value: "web.v1": must not contain dots'],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_validate_stateful_set(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    """ValidateStatefulSet: each bad field gives upstream's path and text."""
    doc = with_path(stateful_set_doc(), path, value)
    if value is None:
        del doc["spec"]["selector"]
    assert causes(rejected(api, doc)) == expected


def test_pod_spec_of_the_template_is_not_validated(api: ApiService) -> None:
    """ValidatePodTemplateSpecForStatefulSet leaves the pod spec alone (upstream's TODO):
    a template without containers is accepted; its pods then fail to be created."""
    doc = stateful_set_doc()
    doc["spec"]["template"]["spec"]["containers"] = []
    assert isinstance(create(api, doc), StatefulSet)


UPDATE_CASES: list[tuple[str, str, Any, bool]] = [
    ("replicas", "replicas", 5, True),
    ("template", "template.metadata.annotations", {"a": "b"}, True),
    ("updateStrategy", "updateStrategy", {"type": "OnDelete"}, True),
    ("minReadySeconds", "minReadySeconds", 5, True),
    ("ordinals", "ordinals", {"start": 3}, True),
    # v1.32: immutable (mutable from v1.33, kubernetes#130263).
    ("revisionHistoryLimit", "revisionHistoryLimit", 3, False),
    (
        "persistentVolumeClaimRetentionPolicy",
        "persistentVolumeClaimRetentionPolicy",
        {"whenDeleted": "Delete", "whenScaled": "Retain"},
        True,
    ),
    ("serviceName", "serviceName", "other", False),
    ("podManagementPolicy", "podManagementPolicy", "Parallel", False),
    ("volumeClaimTemplates", "volumeClaimTemplates", [{"metadata": {"name": "x"}}], False),
    ("selector", "selector", {"matchLabels": {"app": "web", "tier": "a"}}, False),
]


@pytest.mark.parametrize(
    ("path", "value", "allowed"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES]
)
def test_validate_stateful_set_update(
    api: ApiService, path: str, value: Any, allowed: bool
) -> None:
    """ValidateStatefulSetUpdate: only the listed fields may change."""
    create(api, stateful_set_doc())
    stored = to_dict(api.get(StatefulSet, "web", "default"))
    if path == "selector":
        stored["spec"]["template"]["metadata"]["labels"]["tier"] = "a"
    doc = with_path(stored, f"spec.{path}", value)
    from kubeprio.api import manifest

    new = manifest.decode_request(doc)
    if allowed:
        api.update_object(new)
        return
    with pytest.raises(errors.InvalidError) as caught:
        api.update_object(new)
    assert causes(caught.value) == [FORBIDDEN_UPDATE]
    assert str(caught.value.status.message).endswith(FORBIDDEN_UPDATE)


STATUS_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "negative replicas: the zero counts are then above it too, as upstream reports",
        {"replicas": -1},
        [
            "status.replicas: Invalid value: -1: must be greater than or equal to 0",
            "status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas",
            "status.currentReplicas: Invalid value: 0: cannot be greater than status.replicas",
            "status.updatedReplicas: Invalid value: 0: cannot be greater than status.replicas",
            "status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas",
        ],
    ),
    (
        "ready above replicas",
        {"replicas": 1, "readyReplicas": 2, "availableReplicas": 0},
        ["status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"],
    ),
    (
        "available above ready",
        {"replicas": 3, "readyReplicas": 1, "availableReplicas": 2},
        ["status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas"],
    ),
]


@pytest.mark.parametrize(
    ("status", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES]
)
def test_validate_stateful_set_status_update(
    api: ApiService, status: dict[str, Any], expected: list[str]
) -> None:
    """ValidateStatefulSetStatus via the status subresource."""
    from kubeprio.api.serialization import from_dict

    sts = create(api, stateful_set_doc())
    new = dataclasses.replace(sts, status=from_dict(StatefulSetStatus, status))
    with pytest.raises(errors.InvalidError) as caught:
        api.update_status(new)
    assert causes(caught.value) == expected


def test_collision_count_cannot_go_down(api: ApiService) -> None:
    sts = create(api, stateful_set_doc())
    sts = api.update_status(
        dataclasses.replace(sts, status=StatefulSetStatus(replicas=0, collision_count=2))
    )
    with pytest.raises(errors.InvalidError) as caught:
        api.update_status(
            dataclasses.replace(sts, status=StatefulSetStatus(replicas=0, collision_count=1))
        )
    assert causes(caught.value) == [
        "status.collisionCount: Invalid value: 1: cannot be decremented"
    ]
