"""The APF configuration loop: the bootstrap ensurer and the Dangling condition.

Upstream rules checked here (v1.32): ``pkg/registry/flowcontrol/ensurer`` (missing
bootstrap objects created; mandatory ones always put back, with
``apf.kubernetes.io/autoupdate-spec: "true"``; suggested ones revised only while the
annotation says ``true``, or, without a boolean annotation, while ``generation`` is 1,
and the annotation then written to say what was decided; ``removeUnwantedObjects``
deletes non-bootstrap objects annotated ``true``) and ``apf_controller.go``
``presyncFlowSchemaStatus`` (the ``Dangling`` condition's status, reason and message).
"""

from __future__ import annotations

from kubeprio.api import serialization
from kubeprio.api.flowcontrol import AUTOUPDATE_ANNOTATION, FlowSchema, PriorityLevelConfiguration
from kubeprio.api.model import evolve
from kubeprio.apiserver.flowclassifier import FlowClassifier
from kubeprio.apiserver.flowcontrolconfig import FlowControlConfiguration
from kubeprio.apiserver.flowcontrolensure import parse_bool
from kubeprio.apiserver.service import ApiService


def started(api: ApiService) -> tuple[FlowControlConfiguration, list[FlowClassifier]]:
    seen: list[FlowClassifier] = []
    config = FlowControlConfiguration(api, clock=api.clock, on_classifier=seen.append)
    config.start()
    return config, seen


def settle(config: FlowControlConfiguration) -> None:
    """Pump and run until the loop has nothing left (its own writes come back once)."""
    for _ in range(5):
        config.pump()
        if not config.run_once():
            return
    raise AssertionError("the configuration loop did not settle")


def names(api: ApiService, kind: type) -> list[str]:
    return [o.metadata.name for o in api.list(kind).items]


def dangling(api: ApiService, name: str) -> tuple[str | None, str | None, str | None]:
    [condition] = api.get(FlowSchema, name).status.conditions
    assert condition.type == "Dangling"
    return condition.status, condition.reason, condition.message


def test_start_creates_the_bootstrap_configuration(api: ApiService) -> None:
    config, seen = started(api)
    settle(config)
    assert names(api, PriorityLevelConfiguration) == [
        "catch-all", "exempt", "global-default", "leader-election", "node-high", "system",
        "workload-high", "workload-low",
    ]  # fmt: skip
    assert len(names(api, FlowSchema)) == 13
    assert dangling(api, "probes") == (
        "False",
        "Found",
        'This FlowSchema references the PriorityLevelConfiguration object named "exempt" and it exists',
    )
    assert seen
    assert seen[-1].schemas[0].metadata.name == "exempt"
    assert (
        seen[-1].level_uids["exempt"] == api.get(PriorityLevelConfiguration, "exempt").metadata.uid
    )


def test_deleted_mandatory_and_suggested_objects_come_back(api: ApiService) -> None:
    config, _ = started(api)
    settle(config)
    api.delete_object(FlowSchema, "catch-all")
    api.delete_object(PriorityLevelConfiguration, "workload-low")
    settle(config)
    assert "catch-all" in names(api, FlowSchema)
    assert "workload-low" in names(api, PriorityLevelConfiguration)


def _retune(api: ApiService, name: str, annotation: str | None) -> PriorityLevelConfiguration:
    current = api.get(PriorityLevelConfiguration, name)
    annotations = dict(current.metadata.annotations or {})
    if annotation is None:
        annotations.pop(AUTOUPDATE_ANNOTATION, None)
    else:
        annotations[AUTOUPDATE_ANNOTATION] = annotation
    limited = evolve(current.spec.limited, nominal_concurrency_shares=77)
    changed = evolve(
        current,
        metadata=evolve(current.metadata, annotations=annotations),
        spec=evolve(current.spec, limited=limited),
    )
    return api.update_object(changed).obj


def test_a_suggested_level_is_restored_only_while_it_auto_updates(api: ApiService) -> None:
    config, _ = started(api)
    settle(config)
    _retune(api, "workload-low", "true")
    _retune(api, "workload-high", "false")
    # No annotation and a changed spec (generation 2): the admin's now, marked "false".
    _retune(api, "global-default", None)
    settle(config)
    assert (
        api.get(PriorityLevelConfiguration, "workload-low").spec.limited.nominal_concurrency_shares
        == 100
    )
    kept = api.get(PriorityLevelConfiguration, "workload-high")
    assert kept.spec.limited.nominal_concurrency_shares == 77
    assert kept.metadata.annotations[AUTOUPDATE_ANNOTATION] == "false"
    adopted = api.get(PriorityLevelConfiguration, "global-default")
    assert adopted.spec.limited.nominal_concurrency_shares == 77
    assert adopted.metadata.annotations[AUTOUPDATE_ANNOTATION] == "false"


def test_a_mandatory_object_always_auto_updates(api: ApiService) -> None:
    config, _ = started(api)
    settle(config)
    current = api.get(FlowSchema, "exempt")
    api.update_object(
        evolve(
            current,
            metadata=evolve(current.metadata, annotations={AUTOUPDATE_ANNOTATION: "false"}),
        )
    )
    settle(config)
    restored = api.get(FlowSchema, "exempt")
    assert restored.metadata.annotations == {AUTOUPDATE_ANNOTATION: "true"}


def _schema(name: str, level: str, annotations: dict[str, str] | None = None) -> FlowSchema:
    return serialization.from_dict(
        FlowSchema,
        {
            "metadata": {"name": name, "annotations": annotations or {}},
            "spec": {
                "priorityLevelConfiguration": {"name": level},
                "rules": [
                    {
                        "subjects": [{"kind": "User", "user": {"name": "bob"}}],
                        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/version"]}],
                    }
                ],
            },
        },
    )


def test_unwanted_auto_updated_objects_are_removed_the_admins_kept(api: ApiService) -> None:
    config, _ = started(api)
    settle(config)
    api.create(_schema("leftover", "exempt", {AUTOUPDATE_ANNOTATION: "true"}))
    api.create(_schema("mine", "exempt"))
    settle(config)
    assert "leftover" not in names(api, FlowSchema)
    assert "mine" in names(api, FlowSchema)


def test_a_schema_naming_a_missing_level_is_dangling_until_it_exists(api: ApiService) -> None:
    config, seen = started(api)
    settle(config)
    api.create(_schema("orphan", "later"))
    settle(config)
    assert dangling(api, "orphan") == (
        "True",
        "NotFound",
        'This FlowSchema references the PriorityLevelConfiguration object named "later" but '
        "there is no such object",
    )
    assert "orphan" not in [s.metadata.name for s in seen[-1].schemas]
    api.create(
        serialization.from_dict(
            PriorityLevelConfiguration,
            {
                "metadata": {"name": "later"},
                "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}},
            },
        )
    )
    settle(config)
    assert dangling(api, "orphan")[:2] == ("False", "Found")
    assert "orphan" in [s.metadata.name for s in seen[-1].schemas]


def test_parse_bool_is_gos() -> None:
    """``strconv.ParseBool``."""
    assert [parse_bool(v) for v in ("1", "t", "TRUE", "True", "0", "F", "false", "yes", None)] == [
        True, True, True, True, False, False, False, None, None,
    ]  # fmt: skip
