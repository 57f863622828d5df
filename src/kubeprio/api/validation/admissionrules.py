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

from collections.abc import Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.admissionpolicy import MatchResources, NamedRuleWithOperations
from kubeprio.api.errors import FieldError
from kubeprio.api.gosyntax import GoSlice
from kubeprio.api.validation.meta import (
    child,
    index,
    path_segment_errors,
    validate_label_selector,
)

SUPPORTED_MATCH_POLICIES: Final = ("Equivalent", "Exact")
SUPPORTED_OPERATIONS: Final = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SUPPORTED_SCOPES: Final = ("*", "Cluster", "Namespaced")


def _has_wildcard(items: Sequence[str]) -> bool:
    return "*" in items


def _validate_resources(resources: Sequence[str], path: str) -> list[FieldError]:
    """``validateResources`` (subresources allowed): ``x/*`` and ``*/x`` exclude the
    entries they cover, ``*/*`` stands alone, ``*`` excludes plain resources."""
    found: list[FieldError] = []
    if not resources:
        found.append(errors.required(path))
    wildcard_subresources: set[str] = set()
    wildcard_resources: set[str] = set()
    double_wildcard = False
    single_wildcard = False
    plain_resource = False
    for position, entry in enumerate(resources):
        if entry == "":
            found.append(errors.required(index(path, position)))
            continue
        double_wildcard = double_wildcard or entry == "*/*"
        single_wildcard = single_wildcard or entry == "*"
        resource, slash, subresource = entry.partition("/")
        if not slash:
            # Upstream assigns (not ORs) here: the last plain entry decides.
            plain_resource = entry != "*"
            continue
        if resource in wildcard_subresources:
            found.append(
                errors.invalid(
                    index(path, position),
                    entry,
                    f"if '{resource}/*' is present, must not specify {entry}",
                )
            )
        if subresource in wildcard_resources:
            found.append(
                errors.invalid(
                    index(path, position),
                    entry,
                    f"if '*/{subresource}' is present, must not specify {entry}",
                )
            )
        if subresource == "*":
            wildcard_subresources.add(resource)
        if resource == "*":
            wildcard_resources.add(subresource)
    if len(resources) > 1 and double_wildcard:
        found.append(
            errors.invalid(
                path, tuple(resources), "if '*/*' is present, must not specify other resources"
            )
        )
    if single_wildcard and plain_resource:
        found.append(
            errors.invalid(
                path,
                tuple(resources),
                "if '*' is present, must not specify other resources without subresources",
            )
        )
    return found


def _validate_rule(rule: NamedRuleWithOperations, path: str) -> list[FieldError]:
    """``validateRuleWithOperations`` then ``validateRule`` (subresources allowed)."""
    found: list[FieldError] = []
    operations = rule.operations or ()
    if not operations:
        found.append(errors.required(child(path, "operations")))
    if len(operations) > 1 and _has_wildcard(operations):
        found.append(
            errors.invalid(
                child(path, "operations"),
                GoSlice("[]admissionregistration.OperationType", operations),
                "if '*' is present, must not specify other operations",
            )
        )
    for position, operation in enumerate(operations):
        if operation not in SUPPORTED_OPERATIONS:
            found.append(
                errors.not_supported(
                    index(child(path, "operations"), position), operation, SUPPORTED_OPERATIONS
                )
            )
    groups = rule.api_groups or ()
    if not groups:
        found.append(errors.required(child(path, "apiGroups")))
    if len(groups) > 1 and _has_wildcard(groups):
        found.append(
            errors.invalid(
                child(path, "apiGroups"),
                groups,
                "if '*' is present, must not specify other API groups",
            )
        )
    versions = rule.api_versions or ()
    if not versions:
        found.append(errors.required(child(path, "apiVersions")))
    if len(versions) > 1 and _has_wildcard(versions):
        found.append(
            errors.invalid(
                child(path, "apiVersions"),
                versions,
                "if '*' is present, must not specify other API versions",
            )
        )
    for position, version in enumerate(versions):
        if version == "":
            found.append(errors.required(index(child(path, "apiVersions"), position)))
    found.extend(_validate_resources(rule.resources or (), child(path, "resources")))
    if rule.scope is not None and rule.scope not in SUPPORTED_SCOPES:
        found.append(errors.not_supported(child(path, "scope"), rule.scope, SUPPORTED_SCOPES))
    return found


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
    found.extend(_validate_rule(rule, path))
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
