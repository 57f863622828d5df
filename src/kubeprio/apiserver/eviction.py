"""The rules of the ``pods/eviction`` subresource that need no store access.

Mirrors the helpers of ``pkg/registry/core/pod/storage/eviction.go`` (``canIgnorePDB``'s
companion checks for unready pods, ``createTooManyRequestsError``, the 429 body of
``checkAndDecrement``) and ``UpdateDisruptionAllowedCondition``
(``k8s.io/component-helpers/apps/poddisruptionbudget``). ``ApiService.evict`` drives
them. Pure: no I/O.
"""

from __future__ import annotations

from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.api.meta import Condition, StatusCause, StatusDetails
from kubeprio.api.model import evolve
from kubeprio.api.policy import Eviction, PodDisruptionBudget, PodDisruptionBudgetStatus
from kubeprio.client.protocol import DeleteRequest

MAX_DISRUPTED_POD_SIZE = 2000
"""``MaxDisruptedPodSize``: evictions the disruption controller has not yet confirmed."""


def pod_is_ready(pod: Pod) -> bool:
    """``IsPodReady``: the Ready condition is True."""
    conditions = pod.status.conditions if pod.status else None
    return any(c.type == "Ready" and c.status == "True" for c in conditions or ())


def can_skip_budget(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """An unready pod does not count as healthy, so evicting it may not need the budget."""
    if pod_is_ready(pod):
        return False
    if pdb.spec and pdb.spec.unhealthy_pod_eviction_policy == "AlwaysAllow":
        return True
    status = pdb.status or PodDisruptionBudgetStatus()
    desired = status.desired_healthy or 0
    return (status.current_healthy or 0) >= desired and desired > 0


def disruption_allowed_condition(
    status: PodDisruptionBudgetStatus, now: str
) -> PodDisruptionBudgetStatus:
    """``UpdateDisruptionAllowedCondition`` for a budget that has no disruption left."""
    conditions = list(status.conditions or ())
    wanted = Condition(
        type="DisruptionAllowed",
        status="False",
        reason="InsufficientPods",
        message="",
        observed_generation=status.observed_generation,
        last_transition_time=now,
    )
    for position, condition in enumerate(conditions):
        if condition.type == "DisruptionAllowed":
            # SetStatusCondition keeps the transition time unless the status changes.
            if condition.status == "False":
                wanted = evolve(wanted, last_transition_time=condition.last_transition_time)
            conditions[position] = wanted
            break
    else:
        conditions.append(wanted)
    return evolve(status, conditions=tuple(conditions))


def delete_request(eviction: Eviction) -> DeleteRequest:
    options = eviction.delete_options
    if options is None:
        return DeleteRequest()
    return DeleteRequest(
        grace_period_seconds=options.grace_period_seconds,
        preconditions=options.preconditions,
        propagation_policy=options.propagation_policy,
        dry_run=bool(options.dry_run),
    )


def budget_error(cause: str, *, retry_after: int | None = None) -> errors.TooManyRequestsError:
    """``NewTooManyRequests`` with a ``DisruptionBudget`` cause, as the eviction REST answers."""
    error = errors.TooManyRequestsError.build(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        details=StatusDetails(
            causes=(StatusCause(reason="DisruptionBudget", message=cause),),
            retry_after_seconds=retry_after,
        ),
    )
    assert isinstance(error, errors.TooManyRequestsError)
    return error


def check_and_decrement(
    pdb: PodDisruptionBudget, pod_name: str, now: str, *, dry_run: bool
) -> PodDisruptionBudgetStatus | None:
    """``checkAndDecrement``: the budget's status after one more disruption, or an error.

    A budget not yet observed answers 429 with retryAfterSeconds 10; a negative
    ``disruptionsAllowed`` or a full ``disruptedPods`` map is Forbidden; none left is 429.
    Otherwise ``disruptionsAllowed`` goes down by one (with the DisruptionAllowed=False
    condition when it reaches 0) and the pod is recorded in ``disruptedPods``. A dry run
    checks only and returns ``None``: nothing to store.
    """
    status = pdb.status or PodDisruptionBudgetStatus()
    pdb_name = pdb.metadata.name or ""
    if (status.observed_generation or 0) < (pdb.metadata.generation or 0):
        raise budget_error(
            f"The disruption budget {pdb_name} is still being processed by the server.",
            retry_after=10,
        )
    allowed = status.disruptions_allowed or 0
    if allowed < 0:
        raise errors.forbidden_error(
            "poddisruptionbudget", "policy", pdb_name, "pdb disruptions allowed is negative"
        )
    if len(status.disrupted_pods or {}) > MAX_DISRUPTED_POD_SIZE:
        raise errors.forbidden_error(
            "poddisruptionbudget",
            "policy",
            pdb_name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        )
    if allowed == 0:
        raise budget_error(
            f"The disruption budget {pdb_name} needs {status.desired_healthy or 0} healthy pods "
            f"and has {status.current_healthy or 0} currently"
        )
    if dry_run:
        return None
    new_status = evolve(status, disruptions_allowed=allowed - 1)
    if allowed - 1 == 0:
        new_status = disruption_allowed_condition(new_status, now)
    disrupted = dict(status.disrupted_pods or {})
    disrupted[pod_name] = now
    return evolve(new_status, disrupted_pods=disrupted)
