"""Tenant validation (issue 2 section 5: kubeprio's own kind, upstream conventions).

No upstream counterpart exists; the texts follow the ``pkg/util/validation`` helpers
(DNS-1123 names, ``field.Duplicate``, ``field.NotSupported``, ``InclusiveRangeError``).
"""

from __future__ import annotations

import pytest

from kubeprio.api import kinds, validation
from kubeprio.api.meta import LabelSelector, LabelSelectorRequirement, ObjectMeta
from kubeprio.api.tenant import Tenant, TenantPriorityClasses, TenantSpec

INFO = kinds.for_model(Tenant)


def tenant(
    *,
    namespaces: tuple[str, ...] | None = ("team-a",),
    selector: LabelSelector | None = None,
    enforcement: str | None = None,
    allowed: tuple[str, ...] | None = ("gold", "silver"),
    regex: str | None = None,
    default: str | None = None,
    max_value: int | None = None,
) -> Tenant:
    return Tenant(
        metadata=ObjectMeta(name="kestrel"),
        spec=TenantSpec(
            namespaces=namespaces,
            namespace_selector=selector,
            enforcement=enforcement,
            priority_classes=TenantPriorityClasses(
                allowed=allowed, allowed_regex=regex, default=default, max_value=max_value
            ),
        ),
    )


def messages(obj: Tenant) -> list[str]:
    return [str(error) for error in validation.validate_create(obj, INFO)]


@pytest.mark.parametrize(
    "obj",
    [
        tenant(),
        tenant(enforcement="Enforce", default="gold", max_value=2000),
        tenant(enforcement="Audit"),
        tenant(allowed=None, regex="uber-user-.*", default="uber-user-x"),
        tenant(allowed=None, regex=None, default="anything", max_value=-5),
        tenant(namespaces=None, selector=LabelSelector(match_labels={"tenant": "kestrel"})),
        Tenant(metadata=ObjectMeta(name="empty")),
    ],
    ids=[
        "names only",
        "enforce with default and ceiling",
        "audit",
        "regex allowlist with matching default",
        "no allowlist: any default, negative ceiling",
        "selector",
        "no spec",
    ],
)
def test_valid_tenants(obj: Tenant) -> None:
    assert messages(obj) == []


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            tenant(enforcement="Warn"),
            'spec.enforcement: Unsupported value: "Warn": supported values: "Enforce", "Audit"',
        ),
        (
            tenant(regex="uber-(user"),
            'spec.priorityClasses.allowedRegex: Invalid value: "uber-(user": '
            "must be a valid regular expression: missing ), unterminated subpattern at position 5",
        ),
        (
            tenant(default="bronze"),
            'spec.priorityClasses.default: Invalid value: "bronze": '
            "must be listed in allowed or match allowedRegex",
        ),
        (
            tenant(max_value=2**31),
            "spec.priorityClasses.maxValue: Invalid value: 2147483648: "
            "must be between -2147483648 and 2147483647, inclusive",
        ),
        (
            tenant(allowed=("gold", "gold")),
            'spec.priorityClasses.allowed[1]: Duplicate value: "gold"',
        ),
        (
            tenant(allowed=("Gold",)),
            'spec.priorityClasses.allowed[0]: Invalid value: "Gold": a lowercase RFC 1123 subdomain',
        ),
        (
            tenant(namespaces=("team_a",)),
            'spec.namespaces[0]: Invalid value: "team_a": a lowercase RFC 1123 label',
        ),
        (tenant(namespaces=("a", "a")), 'spec.namespaces[1]: Duplicate value: "a"'),
        (
            tenant(
                selector=LabelSelector(
                    match_expressions=(LabelSelectorRequirement(key="k", operator="Near"),)
                )
            ),
            'spec.namespaceSelector: Invalid value: "Near" is not a valid label selector operator',
        ),
    ],
    ids=[
        "unknown enforcement",
        "regex does not compile",
        "default outside the allowlist",
        "ceiling outside int32",
        "duplicate allowed class",
        "allowed class is not a name",
        "namespace is not a name",
        "duplicate namespace",
        "bad selector operator",
    ],
)
def test_invalid_tenants(obj: Tenant, expected: str) -> None:
    assert any(message.startswith(expected) for message in messages(obj)), messages(obj)
