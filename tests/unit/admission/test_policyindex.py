"""The ValidatingAdmissionPolicy pre-filter (``admission.policyindex``): it rules out
only the requests no policy rule names; upstream matches every policy in full
(``policy/matching``), so the index must never drop a policy a rule could match."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.admission.policyindex import PolicyIndex, PolicyIndexSource
from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy
from kubeprio.api.serialization import from_dict


def policy(name: str, *rules: dict[str, Any], version: str = "1") -> ValidatingAdmissionPolicy:
    spec: dict[str, Any] = {"validations": [{"expression": "true"}]}
    if rules:
        spec["matchConstraints"] = {"resourceRules": list(rules)}
    return from_dict(
        ValidatingAdmissionPolicy,
        {"metadata": {"name": name, "resourceVersion": version}, "spec": spec},
    )


def rule(operations: list[str], groups: list[str], resources: list[str]) -> dict[str, Any]:
    return {
        "operations": operations,
        "apiGroups": groups,
        "apiVersions": ["*"],
        "resources": resources,
    }


POLICIES = [
    policy("cm-delete", rule(["DELETE"], [""], ["configmaps"])),
    policy("pods-any", rule(["*"], [""], ["pods/status"])),
    policy("widgets", rule(["CREATE", "UPDATE"], ["example.com"], ["widgets"])),
    policy("everything", rule(["CREATE"], ["*"], ["*"])),
    policy("no-rules"),
]


@pytest.mark.parametrize(
    ("operation", "group", "resource", "expected"),
    [
        ("DELETE", "", "configmaps", {"cm-delete", "no-rules"}),
        ("DELETE", "", "pods", {"pods-any", "no-rules"}),
        ("DELETE", "apps", "deployments", {"no-rules"}),
        ("CREATE", "example.com", "widgets", {"widgets", "everything", "no-rules"}),
        ("CREATE", "", "configmaps", {"everything", "no-rules"}),
    ],
)
def test_candidates(operation: str, group: str, resource: str, expected: set[str]) -> None:
    index = PolicyIndex(POLICIES)
    assert index.candidates(operation, group, resource) == expected
    assert index.candidates(operation, group, resource) == expected  # cached


def test_without_rule_free_policies_an_unnamed_request_has_no_candidate() -> None:
    index = PolicyIndex(POLICIES[:3])
    assert index.candidates("DELETE", "", "pods") == {"pods-any"}
    assert index.candidates("DELETE", "", "secrets") == frozenset()


def test_the_source_rebuilds_when_a_policy_changes() -> None:
    source = PolicyIndexSource()
    first = source.index(POLICIES[:1])
    assert source.index(POLICIES[:1]) is first
    changed = policy("cm-delete", rule(["CREATE"], [""], ["configmaps"]), version="2")
    assert source.index([changed]).candidates("DELETE", "", "configmaps") == frozenset()


WORDS = st.sampled_from(["*", "", "apps", "configmaps", "pods", "CREATE", "DELETE"])


@given(
    st.lists(st.tuples(WORDS, WORDS, WORDS), min_size=1, max_size=4),
    st.tuples(st.sampled_from(["CREATE", "DELETE"]), WORDS, WORDS),
)
def test_a_policy_whose_rule_names_the_request_is_always_a_candidate(
    rules: list[tuple[str, str, str]], request: tuple[str, str, str]
) -> None:
    operation, group, resource = request
    built = policy("p", *(rule([o], [g], [r]) for o, g, r in rules))
    named = any(
        o in ("*", operation) and g in ("*", group) and r in ("*", resource) for o, g, r in rules
    )
    candidates = PolicyIndex([built]).candidates(operation, group, resource)
    assert ("p" in candidates) == named
