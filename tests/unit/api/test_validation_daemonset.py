"""DaemonSet and ControllerRevision defaulting and validation, with upstream's texts.

Rules and texts: ``pkg/apis/apps/v1/defaults.go`` (``SetDefaults_DaemonSet``),
``pkg/apis/apps/validation/validation.go`` (``ValidateDaemonSetSpec``,
``ValidateDaemonSetUpdateStrategy``, ``ValidateRollingUpdateDaemonSet``,
``ValidateDaemonSetStatusUpdate``, ``ValidateControllerRevision``,
``ValidateControllerRevisionUpdate``) and ``pkg/registry/apps/daemonset/strategy.go``
(generation and template generation, immutable selector in apps/v1, status reset on
create). Case names follow ``TestValidateDaemonSet`` where they match.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.daemonset import (
    TEMPLATE_GENERATION_ANNOTATION,
    DaemonSet,
    DaemonSetStatus,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.service import ApiService
from tests.manifests import causes, create, rejected, template_doc, with_path

MISMATCH = "`selector` does not match template `labels`"
PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def daemon_set_doc(name: str = "agent") -> dict[str, Any]:
    """A minimal valid DaemonSet selecting ``app=web``."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template_doc()},
    }


# --- defaulting -------------------------------------------------------------------------------

DEFAULT_CASES: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "no strategy: RollingUpdate, maxUnavailable 1, maxSurge 0",
        None,
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
    ),
    (
        "RollingUpdate without bounds gets both",
        {"type": "RollingUpdate"},
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
    ),
    (
        "a percentage is kept, the other bound defaulted",
        {"rollingUpdate": {"maxUnavailable": "20%"}},
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "20%", "maxSurge": 0}},
    ),
    (
        "maxSurge set keeps maxUnavailable's default (validation then refuses both non-zero)",
        {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
    ),
    ("OnDelete is left alone", {"type": "OnDelete"}, {"type": "OnDelete"}),
]


@pytest.mark.parametrize(
    ("strategy", "expected"), [c[1:] for c in DEFAULT_CASES], ids=[c[0] for c in DEFAULT_CASES]
)
def test_set_defaults_daemon_set_update_strategy(
    api: ApiService, strategy: Any, expected: dict[str, Any]
) -> None:
    """SetDefaults_DaemonSet: the strategy defaults, revisionHistoryLimit 10, pod defaults."""
    doc = daemon_set_doc()
    if strategy is not None:
        doc["spec"]["updateStrategy"] = strategy
    created = to_dict(create(api, doc))
    assert created["spec"]["updateStrategy"] == expected
    assert created["spec"]["revisionHistoryLimit"] == 10
    pod_spec = created["spec"]["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always"
    assert pod_spec["schedulerName"] == "default-scheduler"
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    assert "enableServiceLinks" not in pod_spec  # SetDefaults_Pod is for pods only
    assert "labels" not in created["metadata"]  # apps/v1 copies no template labels


def test_create_resets_status_and_sets_generations(api: ApiService) -> None:
    """daemonSetStrategy.PrepareForCreate: status {} (Go sends its four plain counts),
    generation 1, template generation 1 (kept when the client sends 1 or more)."""
    doc = daemon_set_doc()
    doc["status"] = {"numberReady": 7, "desiredNumberScheduled": 9}
    created = to_dict(create(api, doc))
    assert created["status"] == {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    }
    assert created["metadata"]["generation"] == 1
    assert created["metadata"]["annotations"] == {TEMPLATE_GENERATION_ANNOTATION: "1"}
    doc = daemon_set_doc("other")
    doc["metadata"]["annotations"] = {TEMPLATE_GENERATION_ANNOTATION: "4"}
    kept = to_dict(create(api, doc))["metadata"]["annotations"]
    assert kept == {TEMPLATE_GENERATION_ANNOTATION: "4"}


def _update(api: ApiService, ds: DaemonSet, **spec_changes: Any) -> DaemonSet:
    assert ds.spec is not None
    return api.update(dataclasses.replace(ds, spec=dataclasses.replace(ds.spec, **spec_changes)))


def test_update_bumps_template_generation_only_on_template_changes(api: ApiService) -> None:
    """PrepareForUpdate: a template change moves generation and templateGeneration; another
    spec change moves generation only; a client-sent template generation is ignored."""
    ds = create(api, daemon_set_doc())
    assert isinstance(ds, DaemonSet)
    assert ds.spec is not None
    assert ds.spec.template is not None
    template = ds.spec.template
    assert template.metadata is not None
    changed = dataclasses.replace(
        template, metadata=dataclasses.replace(template.metadata, annotations={"v": "2"})
    )
    ds = _update(api, ds, template=changed)
    assert ds.metadata.generation == 2
    assert ds.metadata.annotation(TEMPLATE_GENERATION_ANNOTATION) == "2"
    ds = _update(api, ds, min_ready_seconds=5)
    assert ds.metadata.generation == 3
    assert ds.metadata.annotation(TEMPLATE_GENERATION_ANNOTATION) == "2"
    forged = dataclasses.replace(
        ds,
        metadata=dataclasses.replace(
            ds.metadata, annotations={TEMPLATE_GENERATION_ANNOTATION: "99"}
        ),
    )
    assert api.update(forged).metadata.annotation(TEMPLATE_GENERATION_ANNOTATION) == "2"


# --- validation ---------------------------------------------------------------------------------

DAEMON_SET_CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "missing selector: a nil selector matches nothing, and nothing is Required",
        "spec.selector",
        None,
        [
            f'spec.template.metadata.labels: Invalid value: map[string]string{{"app":"web"}}: {MISMATCH}'
        ],
    ),
    (
        "empty selector selects everything",
        "spec.selector",
        {},
        [
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset"
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
        "invalid selector operator: no match check",
        "spec.selector",
        {"matchExpressions": [{"key": "app", "operator": "Like", "values": ["web"]}]},
        [
            'spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator'
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
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"
        ],
    ),
    (
        "negative minReadySeconds",
        "spec.minReadySeconds",
        -1,
        ["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "negative revisionHistoryLimit",
        "spec.revisionHistoryLimit",
        -1,
        ["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "unknown strategy type, printed as the internal struct",
        "spec.updateStrategy",
        {"type": "Sometimes"},
        [
            'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sometimes", '
            "RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: "
            'supported values: "RollingUpdate", "OnDelete"'
        ],
    ),
    (
        "both maxUnavailable and maxSurge non-zero",
        "spec.updateStrategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}},
        [
            'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"10%"}: may not be set '
            "when maxUnavailable is non-zero"
        ],
    ),
    (
        "both zero",
        "spec.updateStrategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "0%", "maxSurge": 0}},
        [
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"
        ],
    ),
    (
        "maxUnavailable above 100%",
        "spec.updateStrategy.rollingUpdate.maxUnavailable",
        "101%",
        [
            'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"101%"}: must not be greater than 100%'
        ],
    ),
    (
        "maxSurge not a percentage (counts as 0, so the bounds are not both set)",
        "spec.updateStrategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "x"}},
        [
            f'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"x"}}: {PERCENT}'
        ],
    ),
    (
        "negative maxUnavailable",
        "spec.updateStrategy.rollingUpdate",
        {"maxUnavailable": -1},
        [
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"
        ],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [c[1:] for c in DAEMON_SET_CASES],
    ids=[c[0] for c in DAEMON_SET_CASES],
)
def test_invalid_daemon_set(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    """ValidateDaemonSetSpec: each bad field alone, with upstream's path, type and text."""
    assert causes(rejected(api, with_path(daemon_set_doc(), path, value))) == expected


def test_invalid_daemon_set_message_names_the_kind(api: ApiService) -> None:
    """NewInvalid: ``DaemonSet.apps "agent" is invalid: ...``."""
    error = rejected(api, with_path(daemon_set_doc(), "spec.minReadySeconds", -1))
    assert error.message == (
        'DaemonSet.apps "agent" is invalid: spec.minReadySeconds: Invalid value: -1: '
        "must be greater than or equal to 0"
    )


def test_maxsurge_alone_and_ondelete_are_valid(api: ApiService) -> None:
    """ValidateRollingUpdateDaemonSet: exactly one bound non-zero; OnDelete needs none."""
    surge = daemon_set_doc("surge")
    surge["spec"]["updateStrategy"] = {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}}
    assert isinstance(create(api, surge), DaemonSet)
    on_delete = daemon_set_doc("ondelete")
    on_delete["spec"]["updateStrategy"] = {"type": "OnDelete"}
    assert isinstance(create(api, on_delete), DaemonSet)


def test_update_selector_is_immutable_and_spec_rules_run_twice(api: ApiService) -> None:
    """apps/v1 strategy: ``spec.selector`` immutable; ValidateDaemonSet and
    ValidateDaemonSetUpdate both validate the spec, so a cause comes twice (once in the
    message, which upstream's aggregate deduplicates)."""
    ds = create(api, daemon_set_doc())
    doc = to_dict(ds)
    doc["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
    doc["spec"]["template"]["metadata"]["labels"] = {"app": "web", "tier": "x"}
    doc["spec"]["minReadySeconds"] = -1
    with pytest.raises(errors.InvalidError) as raised:
        api.update(_decode(doc))
    negative = "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"
    immutable = (
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", '
        '"tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'
    )
    assert causes(raised.value) == [negative, negative, immutable]
    assert raised.value.message.count("minReadySeconds") == 1


def _decode(doc: dict[str, Any]) -> Any:
    from kubeprio.api import manifest

    return manifest.decode_request(doc)


STATUS_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    (
        "negative count",
        {"numberReady": -1},
        ["status.numberReady: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "negative observedGeneration",
        {"observedGeneration": -2},
        ["status.observedGeneration: Invalid value: -2: must be greater than or equal to 0"],
    ),
    (
        "collisionCount decremented",
        {"collisionCount": 1},
        ["status.collisionCount: Invalid value: 1: cannot be decremented"],
    ),
]


@pytest.mark.parametrize(
    ("status", "expected"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES]
)
def test_invalid_status_update(
    api: ApiService, status: dict[str, Any], expected: list[str]
) -> None:
    """ValidateDaemonSetStatusUpdate (collisionCount starts at 2 here)."""
    ds = create(api, daemon_set_doc())
    ds = api.update_status(dataclasses.replace(ds, status=DaemonSetStatus(collision_count=2)))
    doc = to_dict(ds)
    doc["status"] = {**doc["status"], **status}
    with pytest.raises(errors.InvalidError) as raised:
        api.update_status(_decode(doc))
    assert causes(raised.value) == expected


# --- controller revisions ----------------------------------------------------------------------


def revision_doc(data: Any = "default") -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "agent-1", "namespace": "default"},
        "revision": 1,
    }
    if data is not None:
        doc["data"] = {"spec": {"template": {"$patch": "replace"}}} if data == "default" else data
    return doc


def test_controller_revision_needs_data_and_a_nonnegative_revision(api: ApiService) -> None:
    """ValidateControllerRevision: ``data: Required value: data is mandatory``."""
    assert causes(rejected(api, revision_doc(data=None))) == [
        "data: Required value: data is mandatory"
    ]
    assert causes(rejected(api, with_path(revision_doc(), "revision", -1))) == [
        "revision: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_controller_revision_data_is_immutable_but_revision_moves(api: ApiService) -> None:
    """ValidateControllerRevisionUpdate: data immutable; the revision number may change
    (the DaemonSet controller moves a rolled-back template to the next revision)."""
    created = create(api, revision_doc())
    assert isinstance(created, ControllerRevision)
    moved = api.update(dataclasses.replace(created, revision=5))
    assert moved.revision == 5
    changed = copy.deepcopy(moved.data) or {}
    changed["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    with pytest.raises(errors.InvalidError) as raised:
        api.update(dataclasses.replace(moved, data=changed))
    assert causes(raised.value) == [
        'data: Invalid value: {"spec":{"template":{"$patch":"replace","metadata":{"labels":'
        '{"a":"b"}}}}}: field is immutable'
    ]
    assert isinstance(moved.metadata, ObjectMeta)
