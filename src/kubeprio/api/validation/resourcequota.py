"""ResourceQuota validation (core/v1).

Mirrors ``ValidateResourceQuota``, ``ValidateResourceQuotaUpdate`` and
``ValidateResourceQuotaStatusUpdate`` of upstream ``pkg/apis/core/validation/validation.go``
with the quota helpers of ``pkg/apis/core/helper/helpers.go``:

* every ``spec.hard`` name is a qualified name and, without a ``/``, a standard resource
  and a standard quota resource (``must be a standard resource for quota``); every value
  is at least 0, and whole for object counts and extended resources;
* ``spec.scopes`` holds known scopes (``unsupported scope``), each valid for every
  standard hard resource (``unsupported scope applied to resource``: a PriorityClass
  quota may cap pods, cpu and memory, not ephemeral storage), and no opposite pair
  (``conflicting scopes``); the whole scope list is the bad value, as upstream reports it;
* each ``spec.scopeSelector`` requirement names a known scope; the boolean scopes take
  only ``Exists``; ``In``/``NotIn`` need values, ``Exists``/``DoesNotExist`` forbid them
  (upstream's text says ``'Exist'``); paths carry no list index, as upstream's;
* on update ``spec.scopes`` may not change (as a set); the selector and limits may;
* a status update checks the names and values of ``status.hard`` and ``status.used``.

Go iterates maps in random order; names are reported sorted. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.core import ResourceList
from kubeprio.api.errors import FieldError
from kubeprio.api.gosyntax import GoSlice, GoStruct, string_slice
from kubeprio.api.resourcequota import (
    OPERATOR_DOES_NOT_EXIST,
    OPERATOR_EXISTS,
    OPERATOR_IN,
    OPERATOR_NOT_IN,
    SCOPE_BEST_EFFORT,
    SCOPE_CROSS_NAMESPACE_POD_AFFINITY,
    SCOPE_NOT_BEST_EFFORT,
    SCOPE_NOT_TERMINATING,
    SCOPE_PRIORITY_CLASS,
    SCOPE_TERMINATING,
    ResourceQuota,
    ScopeSelector,
)
from kubeprio.api.validation.meta import KindUpdateValidator, KindValidator, child, key
from kubeprio.api.validation.resources import (
    is_standard_quota_resource,
    validate_resource_name,
    validate_resource_quantity,
)

STANDARD_SCOPES: Final = (
    SCOPE_TERMINATING,
    SCOPE_NOT_TERMINATING,
    SCOPE_BEST_EFFORT,
    SCOPE_NOT_BEST_EFFORT,
    SCOPE_PRIORITY_CLASS,
    SCOPE_CROSS_NAMESPACE_POD_AFFINITY,
)
_POD_COMPUTE: Final = frozenset(
    {"pods", "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
)
_RESOURCES_FOR_SCOPE: Final = {
    SCOPE_TERMINATING: _POD_COMPUTE,
    SCOPE_NOT_TERMINATING: _POD_COMPUTE,
    SCOPE_NOT_BEST_EFFORT: _POD_COMPUTE,
    SCOPE_PRIORITY_CLASS: _POD_COMPUTE,
    SCOPE_CROSS_NAMESPACE_POD_AFFINITY: _POD_COMPUTE,
    SCOPE_BEST_EFFORT: frozenset({"pods"}),
}
"""``IsResourceQuotaScopeValidForResource``: the standard resources each scope may cap."""
_EXISTS_ONLY: Final = frozenset(
    {
        SCOPE_TERMINATING,
        SCOPE_NOT_TERMINATING,
        SCOPE_BEST_EFFORT,
        SCOPE_NOT_BEST_EFFORT,
        SCOPE_CROSS_NAMESPACE_POD_AFFINITY,
    }
)
_CONFLICTS: Final = (
    (SCOPE_BEST_EFFORT, SCOPE_NOT_BEST_EFFORT),
    (SCOPE_TERMINATING, SCOPE_NOT_TERMINATING),
)


def validate_quota_resource_name(name: str, path: str) -> list[FieldError]:
    """``ValidateResourceQuotaResourceName``: ``validateResourceName``, then the quota list."""
    found = validate_resource_name(name, path)
    if "/" not in name and not is_standard_quota_resource(name):
        found.append(errors.invalid(path, name, "must be a standard resource for quota"))
    return found


def validate_quota_resources(resources: ResourceList | None, path: str) -> list[FieldError]:
    """Names and values of a quota's ``hard`` or ``used`` list."""
    found: list[FieldError] = []
    for name in sorted(resources or {}):
        item = key(path, name)
        found.extend(validate_quota_resource_name(name, item))
        found.extend(validate_resource_quantity(name, (resources or {})[name], item))
    return found


def _scope_valid_for(scope: str, resource: str) -> bool:
    return resource in _RESOURCES_FOR_SCOPE.get(scope, frozenset())


def _conflicting(scopes: Iterable[str]) -> bool:
    present = set(scopes)
    return any(a in present and b in present for a, b in _CONFLICTS)


def _standard_hard(quota: ResourceQuota) -> list[str]:
    hard = quota.spec.hard if quota.spec is not None else None
    return sorted(name for name in hard or {} if is_standard_quota_resource(name))


def _validate_scopes(quota: ResourceQuota) -> list[FieldError]:
    scopes = list((quota.spec.scopes if quota.spec is not None else None) or ())
    if not scopes:
        return []
    found: list[FieldError] = []
    path = "spec.scopes"
    for scope in scopes:
        if scope not in STANDARD_SCOPES:
            found.append(errors.invalid(path, _scopes_value(scopes), "unsupported scope"))
        for resource in _standard_hard(quota):
            if not _scope_valid_for(scope, resource):
                found.append(
                    errors.invalid(
                        path, _scopes_value(scopes), "unsupported scope applied to resource"
                    )
                )
    if _conflicting(scopes):
        found.append(errors.invalid(path, _scopes_value(scopes), "conflicting scopes"))
    return found


def _scopes_value(scopes: Sequence[str] | None) -> GoSlice:
    """``spec.scopes`` as a bad value: a ``[]core.ResourceQuotaScope``, nil when unset."""
    return GoSlice("[]core.ResourceQuotaScope", scopes)


def _selector_value(selector: ScopeSelector) -> GoStruct:
    """The internal ``core.ScopeSelector`` for ``%#v``."""
    requirements = selector.match_expressions
    expressions = None
    if requirements is not None:
        expressions = [
            GoStruct(
                "core.ScopedResourceSelectorRequirement",
                (
                    ("ScopeName", requirement.scope_name or ""),
                    ("Operator", requirement.operator or ""),
                    ("Values", string_slice(requirement.values)),
                ),
            )
            for requirement in requirements
        ]
    return GoStruct(
        "core.ScopeSelector",
        (("MatchExpressions", GoSlice("[]core.ScopedResourceSelectorRequirement", expressions)),),
    )


def _validate_scope_selector(quota: ResourceQuota) -> list[FieldError]:
    selector = quota.spec.scope_selector if quota.spec is not None else None
    if selector is None:
        return []
    found: list[FieldError] = []
    path = "spec.scopeSelector.matchExpressions"
    names: list[str] = []
    for requirement in selector.match_expressions or ():
        scope = requirement.scope_name or ""
        operator = requirement.operator or ""
        values = list(requirement.values or ())
        names.append(scope)
        if scope not in STANDARD_SCOPES:
            found.append(errors.invalid(child(path, "scopeName"), scope, "unsupported scope"))
        for resource in _standard_hard(quota):
            if not _scope_valid_for(scope, resource):
                found.append(
                    errors.invalid(
                        path, _selector_value(selector), "unsupported scope applied to resource"
                    )
                )
        if scope in _EXISTS_ONLY and operator != OPERATOR_EXISTS:
            found.append(
                errors.invalid(
                    child(path, "operator"),
                    operator,
                    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
                    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                    "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
                )
            )
        if operator in (OPERATOR_IN, OPERATOR_NOT_IN):
            if not values:
                found.append(
                    errors.required(
                        child(path, "values"),
                        "must be at least one value when `operator` is 'In' or 'NotIn' for "
                        "scope selector",
                    )
                )
        elif operator in (OPERATOR_EXISTS, OPERATOR_DOES_NOT_EXIST):
            if values:
                found.append(
                    errors.invalid(
                        child(path, "values"),
                        values,
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' for "
                        "scope selector",
                    )
                )
        else:
            found.append(
                errors.invalid(child(path, "operator"), operator, "not a valid selector operator")
            )
    if _conflicting(names):
        # Upstream reports spec.scopes as the bad value here, whatever the selector holds.
        scopes = quota.spec.scopes if quota.spec is not None else None
        found.append(errors.invalid(path, _scopes_value(scopes), "conflicting scopes"))
    return found


def validate_resource_quota(quota: ResourceQuota) -> list[FieldError]:
    """``ValidateResourceQuota`` beyond metadata: spec, then status."""
    spec_hard = quota.spec.hard if quota.spec is not None else None
    found = validate_quota_resources(spec_hard, "spec.hard")
    found.extend(_validate_scopes(quota))
    found.extend(_validate_scope_selector(quota))
    found.extend(_validate_status(quota))
    return found


def _validate_status(quota: ResourceQuota) -> list[FieldError]:
    status = quota.status
    if status is None:
        return []
    found = validate_quota_resources(status.hard, "status.hard")
    found.extend(validate_quota_resources(status.used, "status.used"))
    return found


def validate_resource_quota_update(new: ResourceQuota, old: ResourceQuota) -> list[FieldError]:
    """``ValidateResourceQuotaUpdate``: the spec rules, and ``spec.scopes`` is immutable."""
    spec_hard = new.spec.hard if new.spec is not None else None
    found = validate_quota_resources(spec_hard, "spec.hard")
    found.extend(_validate_scopes(new))
    found.extend(_validate_scope_selector(new))
    new_scopes = set((new.spec.scopes if new.spec is not None else None) or ())
    old_scopes = set((old.spec.scopes if old.spec is not None else None) or ())
    if new_scopes != old_scopes:
        scopes = new.spec.scopes if new.spec is not None else None
        found.append(errors.invalid("spec.scopes", _scopes_value(scopes), "field is immutable"))
    return found


def validate_resource_quota_status_update(
    new: ResourceQuota, old: ResourceQuota
) -> list[FieldError]:
    """``ValidateResourceQuotaStatusUpdate``: names and values of ``hard`` and ``used``."""
    return _validate_status(new)


CREATE: Final[dict[type[Any], KindValidator]] = {ResourceQuota: validate_resource_quota}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    ResourceQuota: validate_resource_quota_update
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    ResourceQuota: validate_resource_quota_status_update
}
