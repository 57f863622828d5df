"""What a delete request does to a stored object: remove it now, mark it, or nothing.

Mirrors ``rest.BeforeDelete`` (``staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go``),
the pod strategy's ``CheckGracefulDelete`` (``pkg/registry/core/pod/strategy.go``) and
the decisions of ``Store.Delete``/``updateForGracefulDeletionAndFinalizers``
(``registry/generic/registry/store.go``). ``ApiService.delete_object`` carries out the
plan against the store; this module is a pure function of the object, the options and
the time, so its rules can be tested on their own. The request's checks come first:
``validate_delete_options`` (``ValidateDeleteOptions``) and ``check_preconditions``
(``BeforeDelete``'s uid and resourceVersion preconditions).

Graceful deletion exists for pods only::

    bound, running pod --delete(grace g)--> deletionTimestamp = now+g, grace g (stays)
        --delete(grace g' < g)--> deletionTimestamp moved back by g-g' (never before now)
        --delete(grace 0)--> removed (the kubelet's final delete, or a force delete)
    unscheduled or terminal pod --delete--> removed at once

Any object with finalizers is only marked (``deletionTimestamp`` = now, grace 0 for
kinds without graceful deletion) and stays until its finalizers are gone. Negative
grace periods count as 1 second. No I/O, no clock: ``now`` is passed in.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubeprio.api import errors, gcpolicy
from kubeprio.api.core import PHASE_FAILED, PHASE_SUCCEEDED, Pod
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.client.protocol import DeleteRequest
from kubeprio.clock import parse_rfc3339, rfc3339

PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")


def validate_delete_options(options: DeleteRequest) -> None:
    """``ValidateDeleteOptions`` for the options kubeprio supports (propagationPolicy)."""
    policy = options.propagation_policy
    if policy is not None and policy not in PROPAGATION_POLICIES:
        found = [errors.not_supported("propagationPolicy", policy, (*PROPAGATION_POLICIES, "nil"))]
        raise errors.invalid_error("DeleteOptions", "meta.k8s.io", "", found)


def with_gc_finalizers(info: ResourceInfo, current: Any, options: DeleteRequest) -> Any:
    """``current`` with the garbage-collection finalizers the request's propagation policy
    asks for (``api.gcpolicy``); unchanged for kinds the collector does not watch."""
    if info.kind not in gcpolicy.COLLECTED_OWNER_KINDS:
        return current
    meta: ObjectMeta = current.metadata
    finalizers = meta.finalizers or ()
    policy = gcpolicy.effective_policy(
        options.propagation_policy,
        finalizers,
        gcpolicy.default_policy(info.group, info.version, info.kind),
    )
    changed = gcpolicy.finalizers_after_delete(finalizers, policy)
    if changed is None:
        return current
    return evolve(current, metadata=evolve(meta, finalizers=changed or None))


def delete_warnings(info: ResourceInfo, options: DeleteRequest) -> list[str]:
    """The Job REST's warning when a batch/v1 Job is deleted without a policy (its pods are
    orphaned by default)."""
    if options.propagation_policy is None and (
        gcpolicy.default_policy(info.group, info.version, info.kind) == gcpolicy.ORPHAN
        and info.kind == "Job"
    ):
        return [gcpolicy.JOB_ORPHAN_WARNING]
    return []


def check_preconditions(info: ResourceInfo, current: Any, options: DeleteRequest) -> None:
    """``BeforeDelete``'s early precondition check (the conflict names the kind)."""
    pre = options.preconditions
    if pre is None:
        return
    name = current.metadata.name or ""
    if pre.uid is not None and pre.uid != current.metadata.uid:
        raise errors.conflict(
            info.kind,
            info.group,
            name,
            f"the UID in the precondition ({pre.uid}) does not match the UID in record "
            f"({current.metadata.uid or ''}). The object might have been deleted and then recreated",
        )
    if (
        pre.resource_version is not None
        and pre.resource_version != current.metadata.resource_version
    ):
        raise errors.conflict(
            info.kind,
            info.group,
            name,
            f"the ResourceVersion in the precondition ({pre.resource_version}) does not match "
            f"the ResourceVersion in record ({current.metadata.resource_version or ''}). "
            "The object might have been modified",
        )


@dataclasses.dataclass(frozen=True, slots=True)
class DeletePlan:
    """The outcome of a delete request.

    ``updated`` is the object to write first (with its deletion timestamp), if any;
    ``remove`` says whether the object then leaves the store. Neither means the
    request changes nothing (a graceful deletion is already pending).
    """

    updated: Any | None
    remove: bool
    grace_period_seconds: int | None = None


def pod_grace_period(pod: Pod, requested: int | None) -> int:
    """``CheckGracefulDelete`` for pods: the requested or the pod's own grace period.

    An unscheduled or finished pod has nothing to stop and is deleted at once; a
    negative period counts as 1 second.
    """
    spec = pod.spec
    if requested is not None:
        period = requested
    else:
        period = (spec.termination_grace_period_seconds if spec else None) or 0
    if not (spec and spec.node_name):
        period = 0
    phase = pod.status.phase if pod.status else None
    if phase in (PHASE_FAILED, PHASE_SUCCEEDED):
        period = 0
    return 1 if period < 0 else period


def _mark(meta: ObjectMeta, timestamp: float, grace: int, *, bump_generation: bool) -> ObjectMeta:
    generation = meta.generation
    if bump_generation and generation:
        generation += 1
    return evolve(
        meta,
        deletion_timestamp=rfc3339(timestamp),
        deletion_grace_period_seconds=grace,
        generation=generation,
    )


def plan_delete(current: Any, requested_grace: int | None, now: float) -> DeletePlan:
    """Decide what deleting ``current`` with ``requested_grace`` does at time ``now``."""
    if requested_grace is not None and requested_grace < 0:
        requested_grace = 1
    meta: ObjectMeta = current.metadata
    has_finalizers = bool(meta.finalizers)
    graceful_kind = isinstance(current, Pod)
    if graceful_kind and meta.deletion_timestamp:
        existing = meta.deletion_grace_period_seconds
        if existing is not None and existing < 0:
            existing = 1
        if not existing:
            # Marked with no (or zero) grace: finish the deletion now.
            return _without_grace(current, now, has_finalizers)
        if requested_grace is None or requested_grace >= existing:
            return DeletePlan(None, False, existing)
        # Only a shorter grace period may be given: move the deadline back, not past now.
        deadline = parse_rfc3339(meta.deletion_timestamp) - existing + requested_grace
        period = requested_grace
        if deadline < now:
            deadline = now
            if period != 0:
                period = 1
        updated = evolve(current, metadata=_mark(meta, deadline, period, bump_generation=False))
        return DeletePlan(updated, period == 0 and not has_finalizers, period)
    if graceful_kind:
        period = pod_grace_period(current, requested_grace)
        updated = evolve(current, metadata=_mark(meta, now + period, period, bump_generation=True))
        return DeletePlan(updated, period == 0 and not has_finalizers, period)
    return _without_grace(current, now, has_finalizers)


def _without_grace(current: Any, now: float, has_finalizers: bool) -> DeletePlan:
    """``markAsDeleting`` when finalizers remain, else remove at once."""
    if not has_finalizers:
        return DeletePlan(None, True, 0)
    meta: ObjectMeta = current.metadata
    timestamp = now
    if meta.deletion_timestamp and parse_rfc3339(meta.deletion_timestamp) <= now:
        timestamp = parse_rfc3339(meta.deletion_timestamp)
    marked = _mark(meta, timestamp, 0, bump_generation=not meta.deletion_timestamp)
    if marked == meta:
        return DeletePlan(None, False, 0)
    return DeletePlan(evolve(current, metadata=marked), False, 0)
