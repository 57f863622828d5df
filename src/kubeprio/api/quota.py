"""What a pod charges to a ResourceQuota, and which quotas track it (upstream's pod evaluator).

Mirrors ``pkg/quota/v1/evaluator/core/pods.go`` and the generic helpers it uses
(``pkg/quota/v1/resources.go``, ``generic/evaluator.go``):

* **Usage** (``PodUsageFunc``): ``count/pods`` always (object count quotas track every
  stored pod); while the pod still counts (``QuotaV1Pod``: not Succeeded/Failed, and not
  past its deletion time plus grace period) also ``pods`` 1 and, from the pod's effective
  requests and limits, ``cpu``/``requests.cpu``, ``limits.cpu``, the same for memory and
  ephemeral storage, ``requests.<name>`` for extended resources, and hugepages both
  plain and ``requests.``-prefixed.
* **Scopes** (``podMatchesScopeFunc``): Terminating (``activeDeadlineSeconds`` set),
  NotTerminating, BestEffort (QoS), NotBestEffort, CrossNamespacePodAffinity, and
  PriorityClass, matched on the pod's ``priorityClassName`` string, never its number:
  ``Exists`` means a non-empty name; the other operators test the label set
  ``{PriorityClass: name}`` (empty when the pod has no class name, so ``NotIn`` and
  ``DoesNotExist`` match such a pod).
* **Matching** (``generic.Matches``): a quota tracks a pod when the pod's evaluator covers
  one of the quota's ``status.hard`` resources and every scope selector of the quota
  (``spec.scopes`` as ``Exists`` tests, then ``spec.scopeSelector``) matches.
* **Constraints** (``podConstraintsFunc``): a quota that limits ``requests.cpu`` or
  ``limits.memory`` needs every container to say so: ``must specify requests.cpu``.

Amounts are ``Quantity`` values added as upstream adds them (the first non-zero
operand's format wins), so messages print quantities as upstream does. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from kubeprio.api.core import Container, Pod, PodSpec
from kubeprio.api.quantity import Quantity
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
    ScopedResourceSelectorRequirement,
)
from kubeprio.api.resources import (
    CONTAINER_RESTART_POLICY_ALWAYS,
    CPU,
    EPHEMERAL_STORAGE,
    HUGEPAGES_PREFIX,
    MEMORY,
    PODS,
    QOS_BEST_EFFORT,
    is_extended_resource_name,
    qos_class,
)
from kubeprio.clock import parse_rfc3339

Usage = dict[str, Quantity]
"""Resource name -> amount, as ``corev1.ResourceList``."""

COUNT_PODS: Final = "count/pods"
REQUESTS_PREFIX: Final = "requests."
LIMITS_PREFIX: Final = "limits."
ONE: Final = Quantity.from_int(1)
ZERO: Final = Quantity.from_int(0)
_COMPUTE: Final = (CPU, MEMORY, EPHEMERAL_STORAGE)
POD_RESOURCES: Final = frozenset(
    {
        COUNT_PODS,
        PODS,
        *_COMPUTE,
        *(REQUESTS_PREFIX + name for name in _COMPUTE),
        *(LIMITS_PREFIX + name for name in _COMPUTE),
    }
)
"""The names the pod evaluator tracks (``podResources``), prefixed families aside."""
_CONSTRAINED: Final = frozenset(
    {CPU, MEMORY, REQUESTS_PREFIX + CPU, REQUESTS_PREFIX + MEMORY}
    | {LIMITS_PREFIX + CPU, LIMITS_PREFIX + MEMORY}
)
"""Upstream's ``validationSet``: resources every container must declare when quota'd."""
_POD_RESOURCE_PREFIXES: Final = (HUGEPAGES_PREFIX, REQUESTS_PREFIX + HUGEPAGES_PREFIX)
_TERMINAL_PHASES: Final = frozenset({"Succeeded", "Failed"})


def add(total: Mapping[str, Quantity], more: Mapping[str, Quantity]) -> Usage:
    """``quota.Add``: the sum per resource (a resource in only one side is copied)."""
    result = dict(total)
    for name, amount in more.items():
        result[name] = result[name] + amount if name in result else amount
    return result


def mask(usage: Mapping[str, Quantity], names: Iterable[str]) -> Usage:
    """``quota.Mask``: only the resources in ``names``."""
    return {name: usage[name] for name in names if name in usage}


def pretty(usage: Mapping[str, Quantity]) -> str:
    """``prettyPrint``: ``name=quantity`` pairs sorted by name, comma-joined."""
    return ",".join(f"{name}={usage[name]}" for name in sorted(usage))


# --- pod usage ----------------------------------------------------------------------------------


def _container_amounts(containers: Sequence[Container] | None, limits: bool) -> list[Usage]:
    found: list[Usage] = []
    for container in containers or ():
        resources = container.resources
        chosen = None if resources is None else (resources.limits if limits else resources.requests)
        found.append(dict(chosen or {}))
    return found


def pod_amounts(spec: PodSpec, *, limits: bool, overhead: bool = True) -> Usage:
    """Upstream ``PodRequests``/``PodLimits``: app containers summed, then the maximum with
    each init container (restartable "sidecar" init containers run alongside and
    accumulate), plus ``spec.overhead``: every overhead resource is added to the requests,
    but only to the limits the containers set to a non-zero amount (``PodLimits``: a pod
    with no cpu limit has none after its overhead either). Without ``overhead`` it is
    LimitRanger's own ``podRequests``/``podLimits`` (``plugin/pkg/admission/limitranger``),
    which leave the overhead out."""
    total: Usage = {}
    for amounts in _container_amounts(spec.containers, limits):
        total = add(total, amounts)
    sidecars: Usage = {}
    init_max: Usage = {}
    inits = spec.init_containers or ()
    for container, amounts in zip(inits, _container_amounts(inits, limits), strict=True):
        if container.restart_policy == CONTAINER_RESTART_POLICY_ALWAYS:
            total = add(total, amounts)
            sidecars = add(sidecars, amounts)
            effective = dict(sidecars)
        else:
            effective = add(amounts, sidecars)
        for name, amount in effective.items():
            if name not in init_max or amount > init_max[name]:
                init_max[name] = amount
    for name, amount in init_max.items():
        if name not in total or amount > total[name]:
            total[name] = amount
    if not overhead or not spec.overhead:
        return total
    if not limits:
        return add(total, spec.overhead)
    return {
        name: amount + spec.overhead[name]
        if name in spec.overhead and not amount.is_zero()
        else amount
        for name, amount in total.items()
    }


def counts_for_quota(pod: Pod, now: float | None = None) -> bool:
    """``QuotaV1Pod``: a terminal pod, or one past its deletion time plus its grace period
    (stuck terminating, say on a lost node), no longer charges compute resources.
    ``now`` is in epoch seconds (None: a pod being created, which is not being deleted)."""
    phase = pod.status.phase if pod.status is not None else None
    if phase in _TERMINAL_PHASES:
        return False
    meta = pod.metadata
    if (
        now is not None
        and meta.deletion_timestamp is not None
        and meta.deletion_grace_period_seconds is not None
    ):
        deadline = parse_rfc3339(meta.deletion_timestamp) + meta.deletion_grace_period_seconds
        if now > deadline:
            return False
    return True


def _compute_usage(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity]) -> Usage:
    """``podComputeUsageHelper``: ``pods`` 1 and the compute names a request or limit
    charges."""
    usage: Usage = {PODS: ONE}
    for name in _COMPUTE:
        if name in requests:
            usage[name] = requests[name]
            usage[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            usage[LIMITS_PREFIX + name] = limits[name]
    for name, amount in requests.items():
        if name.startswith(HUGEPAGES_PREFIX):
            usage[name] = amount
            usage[REQUESTS_PREFIX + name] = amount
        if is_extended_resource_name(name):
            # Extended resources are quota'd only as "requests.<name>".
            usage[REQUESTS_PREFIX + name] = amount
    return usage


def pod_usage(pod: Pod, *, counts: bool = True) -> Usage:
    """``PodUsageFunc``: what ``pod`` charges (``counts`` is ``counts_for_quota``)."""
    usage: Usage = {COUNT_PODS: ONE}
    if not counts or pod.spec is None:
        return usage
    usage.update(
        _compute_usage(pod_amounts(pod.spec, limits=False), pod_amounts(pod.spec, limits=True))
    )
    return usage


def is_pod_resource(name: str) -> bool:
    """Whether the pod evaluator tracks ``name`` (``MatchingResources``)."""
    return (
        name in POD_RESOURCES
        or name.startswith(_POD_RESOURCE_PREFIXES)
        or (name.startswith(REQUESTS_PREFIX) and is_extended_resource_name(name[9:]))
    )


def pod_constraint_error(pod: Pod, limited: Iterable[str]) -> str | None:
    """``podConstraintsFunc``: when a quota limits cpu or memory (plain, ``requests.`` or
    ``limits.``), every container must declare it; the message names each missing
    resource and its containers: ``must specify limits.cpu for: a,b; requests.cpu for: a``.
    (Upstream calls this coupling of validation and counting a mistake it keeps for
    compatibility, and does not extend it to other resources.)"""
    required = _CONSTRAINED & set(limited)
    if not required:
        return None
    spec = pod.spec or PodSpec()
    missing: dict[str, set[str]] = {}
    for container in (*(spec.containers or ()), *(spec.init_containers or ())):
        resources = container.resources
        declared = _compute_usage(
            (resources.requests if resources is not None else None) or {},
            (resources.limits if resources is not None else None) or {},
        )
        for name in required.difference(declared):
            missing.setdefault(name, set()).add(container.name or "")
    if not missing:
        return None
    parts = (f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))
    return f"must specify {'; '.join(parts)}"


# --- scopes -------------------------------------------------------------------------------------


def scope_selectors(quota: ResourceQuota) -> list[ScopedResourceSelectorRequirement]:
    """``GetScopeSelectorsFromQuota``: ``spec.scopes`` as ``Exists`` tests, then the selector."""
    spec = quota.spec
    if spec is None:
        return []
    found = [
        ScopedResourceSelectorRequirement(scope_name=scope, operator=OPERATOR_EXISTS)
        for scope in spec.scopes or ()
    ]
    if spec.scope_selector is not None:
        found.extend(spec.scope_selector.match_expressions or ())
    return found


def is_terminating(spec: PodSpec) -> bool:
    """``IsTerminating``: the pod has an active deadline."""
    deadline = spec.active_deadline_seconds
    return deadline is not None and deadline >= 0


def _uses_cross_namespace_affinity(spec: PodSpec) -> bool:
    affinity = spec.affinity
    if affinity is None:
        return False
    for group in (affinity.pod_affinity, affinity.pod_anti_affinity):
        if group is None:
            continue
        terms = [*(group.required_during_scheduling_ignored_during_execution or ())]
        terms.extend(
            weighted.pod_affinity_term
            for weighted in group.preferred_during_scheduling_ignored_during_execution or ()
            if weighted.pod_affinity_term is not None
        )
        if any(term.namespaces or term.namespace_selector is not None for term in terms):
            return True
    return False


def _class_matches(class_name: str, selector: ScopedResourceSelectorRequirement) -> bool:
    operator = selector.operator
    values = selector.values or ()
    if operator == OPERATOR_EXISTS:
        return bool(class_name)
    # The pod is the label set {PriorityClass: name}, empty when it has no class name.
    if operator == OPERATOR_IN:
        return bool(class_name) and class_name in values
    if operator == OPERATOR_NOT_IN:
        return not class_name or class_name not in values
    if operator == OPERATOR_DOES_NOT_EXIST:
        return not class_name
    return False


def pod_matches_scope(pod: Pod, selector: ScopedResourceSelectorRequirement) -> bool:
    """``podMatchesScopeFunc`` for one scope test."""
    spec = pod.spec or PodSpec()
    scope = selector.scope_name
    if scope == SCOPE_TERMINATING:
        return is_terminating(spec)
    if scope == SCOPE_NOT_TERMINATING:
        return not is_terminating(spec)
    if scope == SCOPE_BEST_EFFORT:
        return qos_class(spec) == QOS_BEST_EFFORT
    if scope == SCOPE_NOT_BEST_EFFORT:
        return qos_class(spec) != QOS_BEST_EFFORT
    if scope == SCOPE_PRIORITY_CLASS:
        return _class_matches(spec.priority_class_name or "", selector)
    if scope == SCOPE_CROSS_NAMESPACE_POD_AFFINITY:
        return _uses_cross_namespace_affinity(spec)
    return False


def tracked_resources(quota: ResourceQuota) -> list[str]:
    """The quota's enforced (``status.hard``) resources the pod evaluator covers, sorted."""
    hard = quota.status.hard if quota.status is not None else None
    return sorted(name for name in hard or {} if is_pod_resource(name))


def quota_scope_matches(quota: ResourceQuota, pod: Pod) -> bool:
    """Whether every scope test of ``quota`` holds for ``pod``."""
    return all(pod_matches_scope(pod, selector) for selector in scope_selectors(quota))


def quota_tracks_pod(quota: ResourceQuota, pod: Pod) -> bool:
    """``generic.Matches``: the quota covers a pod resource and every scope test holds."""
    return bool(tracked_resources(quota)) and quota_scope_matches(quota, pod)


def scope_text(selector: ScopedResourceSelectorRequirement) -> str:
    """A scope test as Go's ``%v`` prints the struct: ``{PriorityClass In [a b]}``."""
    return f"{{{selector.scope_name} {selector.operator} [{' '.join(selector.values or ())}]}}"
