"""The CertificateSigningRequest strategies: who asked, and what each path may change.

Mirrors v1.32's ``pkg/registry/certificates/certificates/strategy.go``:

* ``PrepareForCreate``: ``spec.username``/``uid``/``groups``/``extra`` are the request's
  user, whatever the body said (empty for in-process callers); the status starts empty,
  so nobody creates a pre-approved request.
* ``PrepareForUpdate`` (main resource): spec and status are the stored ones, only
  metadata changes.
* the ``status`` strategy: the spec is the stored one and stored Approved/Denied
  conditions are kept as they were (adding or removing them is left for validation to
  refuse); condition timestamps are filled in.
* the ``approval`` strategy: only ``status.conditions`` changes, timestamps filled in.

``populateConditionTimestamps``: a condition without ``lastUpdateTime`` gets now; one
without ``lastTransitionTime`` gets the stored time of a condition of the same type and
status, else now. Who drives it: ``apiserver.strategy``. Pure; ``now`` is the caller's.
"""

from __future__ import annotations

from kubeprio.admission.chain import UserInfo
from kubeprio.api.certificates import (
    APPROVED,
    DENIED,
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestStatus,
    conditions_of,
    spec_of,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve


def prepare_for_create(
    csr: CertificateSigningRequest, metadata: ObjectMeta, user: UserInfo | None
) -> CertificateSigningRequest:
    """The request as stored: the requester from ``user`` and an empty status."""
    spec = evolve(spec_of(csr), username=None, uid=None, groups=None, user_extra=None)
    if user is not None:
        spec = evolve(
            spec,
            username=user.name or None,
            uid=user.uid or None,
            groups=user.groups or None,
            user_extra=dict(user.extra) or None,
        )
    return evolve(csr, metadata=metadata, spec=spec, status=CertificateSigningRequestStatus())


def _stamp(
    conditions: tuple[CertificateSigningRequestCondition, ...],
    old: CertificateSigningRequest,
    now: str,
) -> tuple[CertificateSigningRequestCondition, ...]:
    """``populateConditionTimestamps``."""
    stamped: list[CertificateSigningRequestCondition] = []
    for condition in conditions:
        if not condition.last_update_time:
            condition = evolve(condition, last_update_time=now)
        if not condition.last_transition_time:
            transition = next(
                (
                    previous.last_transition_time
                    for previous in conditions_of(old)
                    if previous.type == condition.type
                    and previous.status == condition.status
                    and previous.last_transition_time
                ),
                now,
            )
            condition = evolve(condition, last_transition_time=transition)
        stamped.append(condition)
    return tuple(stamped)


def _preserve(
    conditions: list[CertificateSigningRequestCondition],
    old: CertificateSigningRequest,
    condition_type: str,
) -> None:
    """``preserveConditionInstances``: the stored instances of ``condition_type`` replace
    the new ones, when there are as many of them."""
    old_ones = [c for c in conditions_of(old) if c.type == condition_type]
    new_indices = [i for i, c in enumerate(conditions) if c.type == condition_type]
    if len(old_ones) != len(new_indices):
        return
    for position, stored in zip(new_indices, old_ones, strict=True):
        conditions[position] = stored


def prepare_for_update(
    new: CertificateSigningRequest,
    old: CertificateSigningRequest,
    *,
    subresource: str,
    now: str,
) -> CertificateSigningRequest:
    """What an update of the main resource, ``status`` or ``approval`` may change."""
    if subresource == "status":
        conditions = list(conditions_of(new))
        _preserve(conditions, old, APPROVED)
        _preserve(conditions, old, DENIED)
        status = evolve(
            new.status or CertificateSigningRequestStatus(),
            conditions=_stamp(tuple(conditions), old, now) or None,
        )
        return evolve(old, status=status)
    if subresource == "approval":
        approval = _stamp(conditions_of(new), old, now)
        status = evolve(
            old.status or CertificateSigningRequestStatus(), conditions=approval or None
        )
        return evolve(old, status=status)
    return evolve(new, spec=old.spec, status=old.status)
