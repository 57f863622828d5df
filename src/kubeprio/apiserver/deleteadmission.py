"""Admission of a delete: the attributes upstream builds for DELETE, and when it runs.

Mirrors v1.32's ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go`` (the
handler's static attributes: no object, the request's name, namespace, DeleteOptions,
``dryRun`` and user; a ``deletecollection`` names no object, ``""``) and
``pkg/registry/rest/delete.go`` (``AdmissionToValidateObjectDeleteFunc``: the plugins
that handle DELETE run, mutating then validating, with the stored object as the old
object) as ``registry/generic/registry/store.go`` calls it:

* every delete that writes (marks a deletion timestamp, or removes the object) is
  admitted first, dry runs too; a pod whose graceful deletion is already pending and is
  not shortened (``BeforeDelete``'s ``pendingGraceful``) is answered without admission;
* the options are the ones ``BeforeDelete`` has read: a negative grace period counts as
  1, and a pod not yet terminating carries the grace period ``CheckGracefulDelete`` chose
  (its own ``terminationGracePeriodSeconds``, 0 when unscheduled or finished);
* the API service's own deletes (garbage collector, namespace controller, the
  scheduler's preemption victims, kubelets) are admitted as any client's; a pod evicted
  through ``pods/eviction`` is not (``EvictionREST`` deletes with
  ``rest.ValidateAllObjectFunc``).

When no enabled plugin handles DELETE, or none of them could act on this resource
(``AdmissionChain.delete_interest``: no configured webhook's or policy's rules name it,
an index look-up), the request is not even built: the cost of a delete stays a length
check and that look-up. Who uses it: ``ServiceWrites.delete_object`` and the custom
resource deletes of ``apiserver.crrest``.
"""

from __future__ import annotations

from typing import Any

from kubeprio.admission.chain import (
    AdmissionChain,
    AdmissionOutcome,
    AdmissionRequest,
    Operation,
    UserInfo,
)
from kubeprio.api.core import Pod
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.model import evolve
from kubeprio.apiserver.deletion import DeletePlan, pod_grace_period
from kubeprio.client.protocol import DeleteRequest


def pending_graceful(plan: DeletePlan) -> bool:
    """``BeforeDelete``'s ``pendingGraceful``: nothing to write, a grace period running."""
    return plan.updated is None and not plan.remove and bool(plan.grace_period_seconds)


def registry_options(current: Any, options: DeleteRequest) -> DeleteRequest:
    """The options after ``BeforeDelete`` (and a pod's ``CheckGracefulDelete``) read them."""
    grace = options.grace_period_seconds
    if grace is not None and grace < 0:
        grace = 1
    if isinstance(current, Pod) and not current.metadata.deletion_timestamp:
        grace = pod_grace_period(current, grace)
    if grace == options.grace_period_seconds:
        return options
    return evolve(options, grace_period_seconds=grace)


def delete_request(
    info: ResourceInfo,
    current: Any,
    options: DeleteRequest,
    *,
    user: UserInfo | None,
    collection: bool = False,
) -> AdmissionRequest:
    """The DELETE attributes of deleting ``current`` (``collection``: one object of a
    ``deletecollection``, whose attributes name none)."""
    metadata = current.metadata
    return AdmissionRequest(
        Operation.DELETE,
        info,
        None,
        current,
        metadata.namespace or "",
        "" if collection else (metadata.name or ""),
        user=user,
        dry_run=options.dry_run,
        delete_options=registry_options(current, options),
    )


def admit(
    chain: AdmissionChain,
    info: ResourceInfo,
    current: Any,
    options: DeleteRequest,
    *,
    user: UserInfo | None,
    collection: bool = False,
) -> AdmissionOutcome | None:
    """Run the chain's DELETE plugins on deleting ``current``; raise their refusal.
    ``None`` when no plugin handles DELETE (nothing was built or run)."""
    if not chain.deleting and not chain.delete_validating:
        return None
    if chain.delete_interest is not None and not chain.delete_interest(info):
        # No configured webhook or policy names this resource: each plugin would return
        # at once, so neither the request nor the outcome is built.
        return None
    outcome = AdmissionOutcome()
    request = delete_request(info, current, options, user=user, collection=collection)
    chain.admit_delete(request, outcome)
    return outcome
