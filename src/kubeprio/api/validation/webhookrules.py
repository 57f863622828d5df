"""Validation of admission rules: which operations on which resources a webhook sees.

Mirrors v1.32's ``pkg/apis/admissionregistration/validation/validation.go``
(``validateRuleWithOperations``, ``validateRule`` with subresources allowed,
``validateResources``): operations required, ``*`` alone, each a known operation; API
groups and versions required, ``*`` alone; resources required, with the wildcard rules
(``*`` with no plain resource, ``*/*`` alone, no ``x/y`` beside ``x/*`` or ``*/y``); a
known scope. Who uses it: ``api.validation.webhookconfiguration``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.admissionpolicy import NamedRuleWithOperations
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gotext import go_quote
from kubeprio.api.validation.meta import child, index
from kubeprio.api.webhookconfiguration import RuleWithOperations

OPERATIONS: Final = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES: Final = ("*", "Cluster", "Namespaced")


def strings_value(values: Sequence[str], go_type: str = "string") -> GoValue:
    """A slice as ``%#v`` prints it (``[]string{"a", "b"}``)."""
    return GoValue(f"[]{go_type}{{" + ", ".join(go_quote(v) for v in values) + "}")


def _validate_resources(resources: Sequence[str], path: str) -> list[FieldError]:
    """``validateResources``: resources with subresources and the wildcard rules."""
    found: list[FieldError] = []
    if not resources:
        found.append(errors.required(path))
    with_wildcard_sub: set[str] = set()
    sub_with_wildcard_res: set[str] = set()
    double_wildcard = single_wildcard = plain_resource = False
    for position, resource_sub in enumerate(resources):
        if resource_sub == "":
            found.append(errors.required(index(path, position)))
            continue
        if resource_sub == "*/*":
            double_wildcard = True
        if resource_sub == "*":
            single_wildcard = True
        resource, slash, sub = resource_sub.partition("/")
        if not slash:
            plain_resource = resource_sub != "*"
            continue
        if resource in with_wildcard_sub:
            found.append(
                errors.invalid(
                    index(path, position),
                    resource_sub,
                    f"if '{resource}/*' is present, must not specify {resource_sub}",
                )
            )
        if sub in sub_with_wildcard_res:
            found.append(
                errors.invalid(
                    index(path, position),
                    resource_sub,
                    f"if '*/{sub}' is present, must not specify {resource_sub}",
                )
            )
        if sub == "*":
            with_wildcard_sub.add(resource)
        if resource == "*":
            sub_with_wildcard_res.add(sub)
    if len(resources) > 1 and double_wildcard:
        found.append(
            errors.invalid(
                path,
                strings_value(resources),
                "if '*/*' is present, must not specify other resources",
            )
        )
    if single_wildcard and plain_resource:
        found.append(
            errors.invalid(
                path,
                strings_value(resources),
                "if '*' is present, must not specify other resources without subresources",
            )
        )
    return found


def validate_rule(
    rule: RuleWithOperations | NamedRuleWithOperations, path: str
) -> list[FieldError]:
    """``validateRuleWithOperations`` then ``validateRule`` (subresources allowed): a
    webhook's rule, or the rule part of a policy's named rule."""
    found: list[FieldError] = []
    operations = rule.operations or ()
    operations_path = child(path, "operations")
    if not operations:
        found.append(errors.required(operations_path))
    if len(operations) > 1 and "*" in operations:
        found.append(
            errors.invalid(
                operations_path,
                strings_value(operations, "admissionregistration.OperationType"),
                "if '*' is present, must not specify other operations",
            )
        )
    for position, operation in enumerate(operations):
        if operation not in OPERATIONS:
            found.append(
                errors.not_supported(index(operations_path, position), operation, OPERATIONS)
            )
    groups = rule.api_groups or ()
    if not groups:
        found.append(errors.required(child(path, "apiGroups")))
    if len(groups) > 1 and "*" in groups:
        found.append(
            errors.invalid(
                child(path, "apiGroups"),
                strings_value(groups),
                "if '*' is present, must not specify other API groups",
            )
        )
    versions = rule.api_versions or ()
    if not versions:
        found.append(errors.required(child(path, "apiVersions")))
    if len(versions) > 1 and "*" in versions:
        found.append(
            errors.invalid(
                child(path, "apiVersions"),
                strings_value(versions),
                "if '*' is present, must not specify other API versions",
            )
        )
    for position, version in enumerate(versions):
        if version == "":
            found.append(errors.required(index(child(path, "apiVersions"), position)))
    found.extend(_validate_resources(rule.resources or (), child(path, "resources")))
    if rule.scope is not None and rule.scope not in SCOPES:
        found.append(errors.not_supported(child(path, "scope"), rule.scope, SCOPES))
    return found
