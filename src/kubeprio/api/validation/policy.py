"""Validation of policy/v1 PodDisruptionBudget.

Mirrors ``pkg/apis/policy/validation/validation.go``: ``ValidatePodDisruptionBudgetSpec``
(minAvailable and maxUnavailable exclusive, each a non-negative int or a percent of at
most 100%, a valid selector, a known unhealthyPodEvictionPolicy) on create and update
(the spec has been mutable since policy/v1beta1 in 1.15), and
``ValidatePodDisruptionBudgetStatusUpdate`` (non-negative counters).

When both bounds are set, upstream's bad value is the whole internal spec struct, which
v1.32's ``%#v`` prints with the bounds' memory addresses; it is printed as
``json.Marshal`` prints it instead (Go field names, declaration order).
Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec
from kubeprio.api.validation.apps import (
    is_not_more_than_100_percent,
    validate_positive_int_or_percent,
)
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    label_selector_json,
    validate_label_selector,
    validate_nonnegative,
)

UNHEALTHY_POD_EVICTION_POLICIES: Final = ("AlwaysAllow", "IfHealthyBudget")


def _spec_json(spec: PodDisruptionBudgetSpec) -> GoValue:
    """The spec as ``json.Marshal`` prints it. v1.32 prints ``%#v``, where the two bounds
    (pointers, both set here) show as memory addresses, which cannot be reproduced."""
    shown: dict[str, Any] = {
        "MinAvailable": spec.min_available,
        "Selector": None if spec.selector is None else label_selector_json(spec.selector),
        "MaxUnavailable": spec.max_unavailable,
        "UnhealthyPodEvictionPolicy": spec.unhealthy_pod_eviction_policy,
    }
    return GoValue(errors.go_json(shown, sort_keys=False))


def validate_pdb_spec(spec: PodDisruptionBudgetSpec, path: str) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec``."""
    found: list[FieldError] = []
    if spec.min_available is not None and spec.max_unavailable is not None:
        found.append(
            errors.invalid(
                path, _spec_json(spec), "minAvailable and maxUnavailable cannot be both set"
            )
        )
    for value, name in (
        (spec.min_available, "minAvailable"),
        (spec.max_unavailable, "maxUnavailable"),
    ):
        if value is not None:
            found.extend(validate_positive_int_or_percent(value, child(path, name)))
            found.extend(is_not_more_than_100_percent(value, child(path, name)))
    found.extend(validate_label_selector(spec.selector, child(path, "selector")))
    policy = spec.unhealthy_pod_eviction_policy
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        found.append(
            errors.not_supported(
                child(path, "unhealthyPodEvictionPolicy"), policy, UNHEALTHY_POD_EVICTION_POLICIES
            )
        )
    return found


def validate_pdb(pdb: PodDisruptionBudget) -> list[FieldError]:
    """``ValidatePodDisruptionBudget`` (metadata is checked by the caller)."""
    return validate_pdb_spec(pdb.spec or PodDisruptionBudgetSpec(), "spec")


def validate_pdb_update(new: PodDisruptionBudget, old: PodDisruptionBudget) -> list[FieldError]:
    """Updates are validated like creates."""
    return validate_pdb(new)


def validate_pdb_status_update(
    new: PodDisruptionBudget, old: PodDisruptionBudget
) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetStatusUpdate`` for policy/v1: counters non-negative."""
    status = new.status
    if status is None:
        return []
    found: list[FieldError] = []
    for attr, json_key in (
        ("disruptions_allowed", "disruptionsAllowed"),
        ("current_healthy", "currentHealthy"),
        ("desired_healthy", "desiredHealthy"),
        ("expected_pods", "expectedPods"),
    ):
        found.extend(validate_nonnegative(getattr(status, attr) or 0, child("status", json_key)))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {PodDisruptionBudget: validate_pdb}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {PodDisruptionBudget: validate_pdb_update}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    PodDisruptionBudget: validate_pdb_status_update
}
