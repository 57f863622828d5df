"""PriorityClass validation (issue 2 section 3; semantics section 1.3/1.4).

Cases mirror upstream ``pkg/apis/scheduling/validation/validation_test.go``
(``TestValidatePriorityClass``, ``TestValidatePriorityClassUpdate``; the case names are
upstream's) and ``ValidatePreemptionPolicy`` in ``pkg/apis/core/validation``. Texts
are checked exactly as ``field.Error.Error()`` prints them.
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api import kinds, validation
from kubeprio.api.errors import FieldError
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.validation.scheduling import validate_preemption_policy

INFO = kinds.for_model(PriorityClass)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
RESERVED = "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: "


def pc(
    name: str,
    value: int | None = 100,
    *,
    namespace: str | None = None,
    global_default: bool | None = None,
    description: str | None = None,
    policy: str | None = None,
    resource_version: str | None = None,
) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name, namespace=namespace, resource_version=resource_version),
        value=value,
        global_default=global_default,
        description=description,
        preemption_policy=policy,
    )


def messages(found: list[FieldError]) -> list[str]:
    return [str(error) for error in found]


@pytest.mark.parametrize(
    "obj",
    [
        pc("tier1", 100),
        pc("tier1", 200, global_default=False, description="Used for the highest priority pods."),
        pc("system-node-critical", 2_000_001_000, description="system priority class 0"),
        pc("system-cluster-critical", 2_000_000_000, global_default=False),
        pc("tier1", 1_000_000_000),
        pc("negative", -100),
        pc("int32-floor", -(2**31)),
        pc("no-value", None),
        pc("never", 5, policy="Never"),
        pc("preempting", 5, policy="PreemptLowerPriority"),
    ],
    ids=[
        "no description",
        "with description",
        "system node critical",
        "system cluster critical",
        "user ceiling 1e9 is inclusive",
        "negative values are legal (no lower bound beyond int32)",
        "int32 minimum",
        "absent value means 0",
        "preemptionPolicy Never",
        "preemptionPolicy PreemptLowerPriority",
    ],
)
def test_valid_priority_classes(obj: PriorityClass) -> None:
    """Upstream TestValidatePriorityClass successCases (+ the range boundaries)."""
    assert messages(validation.validate_create(obj, INFO)) == []


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (pc("tier1", namespace="foo"), ["metadata.namespace: Forbidden: not allowed on this type"]),
        (pc("tier&1"), [f'metadata.name: Invalid value: "tier&1": {SUBDOMAIN}']),
        (
            pc("system-node-critical", 0),
            [RESERVED + "value of system-node-critical PriorityClass must be 2000001000"],
        ),
        (
            pc("system-something", 2_000_001_000),
            [RESERVED + "system-something is not a known system priority class"],
        ),
        (
            pc("system-cluster-critical", 2_000_000_000, global_default=True),
            [RESERVED + "globalDefault of system-cluster-critical PriorityClass must be false"],
        ),
        (
            pc("tier1", 1_000_000_001),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
        ),
        (pc("tier1", policy=""), ["preemptionPolicy: Required value"]),
        (
            pc("tier1", policy="Sometimes"),
            [
                'preemptionPolicy: Unsupported value: "Sometimes": supported values: '
                '"PreemptLowerPriority", "Never"'
            ],
        ),
        (
            pc("system-x", 2_000_000_001, policy="Always"),
            [
                RESERVED + "system-x is not a known system priority class",
                'preemptionPolicy: Unsupported value: "Always": supported values: '
                '"PreemptLowerPriority", "Never"',
            ],
        ),
    ],
    ids=[
        "with namespace",
        "invalid name",
        "incorrect system class name",
        "incorrect system class value",
        "system class must not be globalDefault",
        "user value above 1e9",
        "empty preemptionPolicy is Required",
        "unknown preemptionPolicy is NotSupported",
        "every error is collected",
    ],
)
def test_invalid_priority_classes(obj: PriorityClass, expected: list[str]) -> None:
    """Upstream TestValidatePriorityClass errorCases, with exact texts."""
    assert messages(validation.validate_create(obj, INFO)) == expected


OLD = pc("tier1", 100, policy="PreemptLowerPriority", resource_version="1")


@pytest.mark.parametrize(
    "new",
    [
        dataclasses.replace(OLD, description="Used for the highest priority pods."),
        dataclasses.replace(OLD, description="A different description."),
        OLD,
        dataclasses.replace(OLD, global_default=True),
        dataclasses.replace(OLD, metadata=dataclasses.replace(OLD.metadata, labels={"a": "b"})),
    ],
    ids=[
        "no change",
        "change description",
        "remove description",
        "change globalDefault",
        "change labels",
    ],
)
def test_valid_priority_class_updates(new: PriorityClass) -> None:
    """Upstream TestValidatePriorityClassUpdate successCases."""
    assert messages(validation.validate_update(new, OLD, INFO)) == []


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (
            dataclasses.replace(OLD, metadata=dataclasses.replace(OLD.metadata, namespace="foo")),
            'metadata.namespace: Invalid value: "foo": field is immutable',
        ),
        (
            dataclasses.replace(OLD, metadata=dataclasses.replace(OLD.metadata, name="tier2")),
            'metadata.name: Invalid value: "tier2": field is immutable',
        ),
        (
            dataclasses.replace(OLD, value=None),
            "value: Forbidden: may not be changed in an update.",
        ),
        (dataclasses.replace(OLD, value=101), "value: Forbidden: may not be changed in an update."),
        (
            dataclasses.replace(OLD, preemption_policy="Never"),
            'preemptionPolicy: Invalid value: "Never": field is immutable',
        ),
    ],
    ids=["add namespace", "change name", "remove value", "change value", "change preemptionPolicy"],
)
def test_invalid_priority_class_updates(new: PriorityClass, expected: str) -> None:
    """Upstream TestValidatePriorityClassUpdate errorCases: types and texts."""
    assert expected in messages(validation.validate_update(new, OLD, INFO))


def test_update_does_not_rerun_create_rules() -> None:
    """The range and `system-` rules run on create only (ValidatePriorityClassUpdate)."""
    old = pc("system-legacy", 2_000_000_500, policy="PreemptLowerPriority")
    new = dataclasses.replace(old, description="edited")
    assert messages(validation.validate_update(new, old, INFO)) == []


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("PreemptLowerPriority", []),
        ("Never", []),
        ("", ["spec.preemptionPolicy: Required value"]),
        (
            "never",
            [
                'spec.preemptionPolicy: Unsupported value: "never": supported values: '
                '"PreemptLowerPriority", "Never"'
            ],
        ),
    ],
    ids=["PreemptLowerPriority", "Never", "empty", "wrong case"],
)
def test_validate_preemption_policy(policy: str, expected: list[str]) -> None:
    """Upstream ValidatePreemptionPolicy (pkg/apis/core/validation/validation.go)."""
    assert messages(validate_preemption_policy(policy, "spec.preemptionPolicy")) == expected
