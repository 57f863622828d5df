"""Tenant validation (kubeprio.io/v1alpha1, kubeprio's own kind).

There is no upstream for ``Tenant``; the rules follow upstream conventions (field
paths, error types, texts of the ``pkg/util/validation`` helpers) so errors read like
every other 422 Invalid:

* ``spec.namespaces[i]``: namespace names (DNS-1123 labels), no duplicates;
* ``spec.namespaceSelector``: a valid ``metav1.LabelSelector``;
* ``spec.enforcement``: ``Enforce`` (the default when unset) or ``Audit``;
* ``spec.priorityClasses.allowed[i]`` and ``default``: PriorityClass names (DNS-1123
  subdomains), no duplicates;
* ``spec.priorityClasses.allowedRegex``: compiles; it is matched against the whole
  class name (anchored);
* ``spec.priorityClasses.default``: must itself be allowed when an allowlist is set;
* ``spec.priorityClasses.maxValue``: an int32, as pod priorities are.

The admission rules that use a Tenant live in ``admission.tenant``. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from kubeprio.api import errors, selectors
from kubeprio.api.errors import FieldError
from kubeprio.api.model import INT32_MAX, INT32_MIN
from kubeprio.api.tenant import AUDIT, ENFORCE, Tenant, TenantPriorityClasses
from kubeprio.api.validation.meta import dns1123_label_errors, dns1123_subdomain_errors

ENFORCEMENT_MODES: Final = (ENFORCE, AUDIT)


def compile_allowed_regex(pattern: str) -> re.Pattern[str]:
    """Compile ``allowedRegex``; raise ``re.error`` when it is not a regular expression."""
    return re.compile(pattern)


def class_allowed(allowlist: TenantPriorityClasses, name: str) -> bool:
    """Whether ``name`` is in ``allowed`` or matches ``allowedRegex`` as a whole.

    Only meaningful when an allowlist is set (``allowlist_active``).
    """
    if name in (allowlist.allowed or ()):
        return True
    if allowlist.allowed_regex is not None:
        try:
            return compile_allowed_regex(allowlist.allowed_regex).fullmatch(name) is not None
        except re.error:
            return False
    return False


def allowlist_active(allowlist: TenantPriorityClasses | None) -> bool:
    """Whether the tenant restricts class names (``allowed`` or ``allowedRegex`` is set)."""
    return allowlist is not None and (
        allowlist.allowed is not None or allowlist.allowed_regex is not None
    )


def _validate_priority_classes(pcs: TenantPriorityClasses, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    seen: set[str] = set()
    for index, name in enumerate(pcs.allowed or ()):
        field = f"{path}.allowed[{index}]"
        found.extend(errors.invalid(field, name, msg) for msg in dns1123_subdomain_errors(name))
        if name in seen:
            found.append(errors.duplicate(field, name))
        seen.add(name)
    regex_ok = True
    if pcs.allowed_regex is not None:
        try:
            compile_allowed_regex(pcs.allowed_regex)
        except re.error as exc:
            regex_ok = False
            found.append(
                errors.invalid(
                    f"{path}.allowedRegex",
                    pcs.allowed_regex,
                    f"must be a valid regular expression: {exc}",
                )
            )
    if pcs.default is not None:
        field = f"{path}.default"
        name_errors = dns1123_subdomain_errors(pcs.default)
        found.extend(errors.invalid(field, pcs.default, msg) for msg in name_errors)
        if (
            not name_errors
            and regex_ok
            and allowlist_active(pcs)
            and not class_allowed(pcs, pcs.default)
        ):
            found.append(
                errors.invalid(
                    field, pcs.default, "must be listed in allowed or match allowedRegex"
                )
            )
    if pcs.max_value is not None and not INT32_MIN <= pcs.max_value <= INT32_MAX:
        found.append(
            errors.invalid(
                f"{path}.maxValue",
                pcs.max_value,
                f"must be between {INT32_MIN} and {INT32_MAX}, inclusive",
            )
        )
    return found


def validate_tenant(tenant: Tenant) -> list[FieldError]:
    """All field errors of a Tenant beyond object metadata."""
    spec = tenant.spec
    if spec is None:
        return []
    found: list[FieldError] = []
    seen: set[str] = set()
    for index, namespace in enumerate(spec.namespaces or ()):
        field = f"spec.namespaces[{index}]"
        found.extend(
            errors.invalid(field, namespace, msg) for msg in dns1123_label_errors(namespace)
        )
        if namespace in seen:
            found.append(errors.duplicate(field, namespace))
        seen.add(namespace)
    if spec.namespace_selector is not None:
        try:
            selectors.label_selector_as_selector(spec.namespace_selector)
        except selectors.SelectorError as exc:
            found.append(errors.invalid("spec.namespaceSelector", errors.OMIT, str(exc)))
    if spec.enforcement is not None and spec.enforcement not in ENFORCEMENT_MODES:
        found.append(errors.not_supported("spec.enforcement", spec.enforcement, ENFORCEMENT_MODES))
    if spec.priority_classes is not None:
        found.extend(_validate_priority_classes(spec.priority_classes, "spec.priorityClasses"))
    return found
