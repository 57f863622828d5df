"""Validation of admission match rules: ``MatchResources`` and its resource rules.

Mirrors upstream v1.32 ``pkg/apis/admissionregistration/validation/validation.go``:
``validateMatchResources`` (matchPolicy and both selectors required once defaulted,
selectors validated strictly), ``validateNamedRuleWithOperations`` (resource names are
path segments, no duplicates), ``validateRuleWithOperations`` and ``validateRule``
(operations, groups, versions, resources with their wildcard and subresource rules,
scope), as used by ValidatingAdmissionPolicies and their Bindings
(``api.validation.admissionpolicy``). Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import errors
from kubeprio.api.admissionpolicy import MatchResources, NamedRuleWithOperations
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.meta import (
    child,
    index,
    path_segment_errors,
    validate_label_selector,
)
from kubeprio.api.validation.webhookrules import validate_rule

SUPPORTED_MATCH_POLICIES: Final = ("Equivalent", "Exact")


def validate_named_rule(rule: NamedRuleWithOperations, path: str) -> list[FieldError]:
    """``validateNamedRuleWithOperations``."""
    found: list[FieldError] = []
    seen: set[str] = set()
    for position, name in enumerate(rule.resource_names or ()):
        name_path = index(child(path, "resourceNames"), position)
        found.extend(
            errors.invalid(name_path, name, message) for message in path_segment_errors(name)
        )
        if name in seen:
            found.append(errors.duplicate(name_path, name))
        seen.add(name)
    found.extend(validate_rule(rule, path))
    return found


def validate_match_resources(match: MatchResources | None, path: str) -> list[FieldError]:
    """``validateMatchResources``: nothing when absent."""
    if match is None:
        return []
    found: list[FieldError] = []
    if match.match_policy is None:
        found.append(errors.required(child(path, "matchPolicy")))
    elif match.match_policy not in SUPPORTED_MATCH_POLICIES:
        found.append(
            errors.not_supported(
                child(path, "matchPolicy"), match.match_policy, SUPPORTED_MATCH_POLICIES
            )
        )
    for selector, name in (
        (match.namespace_selector, "namespaceSelector"),
        (match.object_selector, "objectSelector"),
    ):
        if selector is None:
            found.append(errors.required(child(path, name)))
        else:
            found.extend(validate_label_selector(selector, child(path, name)))
    for rules, name in (
        (match.resource_rules, "resourceRules"),
        (match.exclude_resource_rules, "excludeResourceRules"),
    ):
        for position, rule in enumerate(rules or ()):
            found.extend(validate_named_rule(rule, index(child(path, name), position)))
    return found
