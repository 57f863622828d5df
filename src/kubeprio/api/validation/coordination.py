"""Lease validation (coordination.k8s.io/v1).

Mirrors ``ValidateLeaseSpec`` of upstream ``pkg/apis/coordination/validation/validation.go``,
run on create and on every update (a Lease has no immutable spec field):

* ``leaseDurationSeconds``, when set, is greater than 0;
* ``leaseTransitions``, when set, is at least 0;
* ``strategy``, when set, is a Kubernetes-defined strategy (``OldestEmulationVersion``)
  or, when it has a ``/``, a qualified name;
* ``preferredHolder`` may only be set together with ``strategy``.

Renew and acquire times are MicroTimes the decoder already checked. Metadata rules
(a DNS-subdomain name, the namespace) come from ``validation.meta``. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.coordination import Lease, LeaseSpec
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.meta import KindValidator, qualified_name_errors, validate_nonnegative

LEASE_STRATEGIES: Final = ("OldestEmulationVersion",)
"""The Kubernetes-defined coordinated leader-election strategies."""


def validate_strategy(strategy: str, path: str) -> list[FieldError]:
    """``ValidateCoordinatedLeaseStrategy``: a known name, or a qualified name with a prefix."""
    if "/" not in strategy:
        if strategy in LEASE_STRATEGIES:
            return []
        return [errors.not_supported(path, strategy, LEASE_STRATEGIES)]
    return qualified_name_errors(strategy, path)


def validate_lease_spec(spec: LeaseSpec, path: str = "spec") -> list[FieldError]:
    """``ValidateLeaseSpec``: every field error of a Lease's spec."""
    found: list[FieldError] = []
    if spec.lease_duration_seconds is not None and spec.lease_duration_seconds <= 0:
        found.append(
            errors.invalid(
                f"{path}.leaseDurationSeconds",
                spec.lease_duration_seconds,
                "must be greater than 0",
            )
        )
    if spec.lease_transitions is not None:
        found.extend(validate_nonnegative(spec.lease_transitions, f"{path}.leaseTransitions"))
    if spec.strategy is not None:
        found.extend(validate_strategy(spec.strategy, f"{path}.strategy"))
    if spec.preferred_holder and not spec.strategy:
        found.append(
            errors.forbidden(
                f"{path}.preferredHolder", "may only be specified if `strategy` is defined"
            )
        )
    return found


def validate_lease(lease: Lease) -> list[FieldError]:
    """``ValidateLease`` beyond object metadata; also its update rules (the same spec rules)."""
    return validate_lease_spec(lease.spec or LeaseSpec())


CREATE: Final[dict[type[Any], KindValidator]] = {Lease: validate_lease}
"""Model class -> create validator, for ``validation``'s table."""
