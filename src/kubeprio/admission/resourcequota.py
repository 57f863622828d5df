"""The ``ResourceQuota`` admission plugin: charge each new object to its namespace's quotas.

Mirrors ``staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota`` (``checkRequest``
in ``controller.go``) with the pod evaluator of ``api.quota`` and, for every other
namespaced kind, the evaluators of ``api.quotausage`` (Services: ``services``,
``services.nodeports``, ``services.loadbalancers``; PersistentVolumeClaims:
``persistentvolumeclaims``, ``requests.storage`` and both per storage class; ConfigMaps, Secrets and ResourceQuotas
with their legacy names; ``count/<resource>[.<group>]`` for all; Events ignored):

1. **validating, CREATE**, a Service UPDATE (its type or ports may cost more), a claim
   UPDATE (a resize or a new class may cost more), and a pod
   UPDATE that gains or loses its active deadline (it moves between the Terminating and
   NotTerminating scopes), as upstream's evaluators ``Handles``; an update is charged only
   its growth over the old object. Subresources and other operations pass.
2. For each quota of the namespace, in name order: its scope selectors that match the
   object are remembered (they may *cover* a limited scope, even when the quota limits
   nothing the object uses); a quota whose ``status.hard`` covers a resource the object
   uses and whose every scope matches is *pertinent*. For a pertinent quota, a pod must
   declare what it limits (``failed quota: <quota>: must specify requests.cpu for: app``)
   and the quota must have been observed (``status unknown for quota: <quota>,
   resources: <names>``).
3. The object's usage (zeros dropped) is checked against ``limitedResources``
   (``ResourceQuotaConfiguration`` of the admission configuration file): a consumed
   resource whose name contains a ``matchContains`` string needs a pertinent quota that
   tracks it (``insufficient quota to consume: <names>``); a ``matchScopes`` selector
   that matches the object needs a quota in the namespace with a matching scope
   selector of the same scope name (``insufficient quota to match these scopes:
   [{PriorityClass In [a b]}]``). This is how operators keep the system classes, or
   any class, to the namespaces that hold a quota for them. (Upstream returns the scope
   refusal as a plain error: a 500 with the bare message, no ``is forbidden`` prefix.)
4. Each pertinent quota's ``status.used`` plus the object's usage must stay within
   ``status.hard``, else ``exceeded quota: <quota>, requested: requests.cpu=2, used:
   requests.cpu=1, limited: requests.cpu=2``.

Every other refusal is upstream's 403 (``admission.NewForbidden``): ``pods "p" is forbidden:
...``. An admitted object's new usage is reported in ``AdmissionOutcome.quota_status``;
``apiserver.service.ApiService`` writes those quota statuses once the object is stored,
so the next request is charged against it (upstream writes them in the admission path,
before the object; a single-threaded server needs no compare-and-swap loop between the
two). Dry runs are checked, never charged. Reads quotas through the admission listers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.api import errors, quotausage
from kubeprio.api.core import Pod, PodSpec
from kubeprio.api.model import evolve
from kubeprio.api.quota import (
    ZERO,
    Usage,
    add,
    counts_for_quota,
    is_pod_resource,
    is_terminating,
    mask,
    pod_constraint_error,
    pod_matches_scope,
    pod_usage,
    pretty,
    scope_selectors,
    scope_text,
)
from kubeprio.api.resourcequota import ResourceQuota, ScopedResourceSelectorRequirement
from kubeprio.api.serialization import from_dict

PLUGIN_NAME: Final = "ResourceQuota"
CONFIGURATION_KIND: Final = "ResourceQuotaConfiguration"
CONFIGURATION_API_VERSIONS: Final = (
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1alpha1",
    "resourcequota.admission.k8s.io/v1beta1",
    "resourcequota.admission.k8s.io/v1alpha1",
)
LEGACY_CONFIGURATION_KIND: Final = "Configuration"
"""The kind under ``resourcequota.admission.k8s.io/v1beta1``."""


@dataclasses.dataclass(frozen=True, slots=True)
class LimitedResource:
    """One ``limitedResources`` entry: a resource whose use needs a covering quota."""

    resource: str
    api_group: str = ""
    match_contains: tuple[str, ...] = ()
    match_scopes: tuple[ScopedResourceSelectorRequirement, ...] = ()


def limited_resources(configuration: Mapping[str, Any]) -> tuple[LimitedResource, ...]:
    """The entries of a ``ResourceQuotaConfiguration`` document (camelCase, as in the file)."""
    kind = configuration.get("kind")
    if kind not in (CONFIGURATION_KIND, LEGACY_CONFIGURATION_KIND):
        raise ValueError(f'expected kind "{CONFIGURATION_KIND}", got "{kind}"')
    found: list[LimitedResource] = []
    for position, entry in enumerate(configuration.get("limitedResources") or ()):
        if not entry.get("resource"):
            raise ValueError(f"limitedResources[{position}].resource: Required value")
        scopes = tuple(
            from_dict(ScopedResourceSelectorRequirement, scope)
            for scope in entry.get("matchScopes") or ()
        )
        found.append(
            LimitedResource(
                resource=str(entry.get("resource", "")),
                api_group=str(entry.get("apiGroup", "")),
                match_contains=tuple(str(s) for s in entry.get("matchContains") or ()),
                match_scopes=scopes,
            )
        )
    return tuple(found)


def _flips_terminating(old: object, new: object) -> bool:
    """The pod evaluator also handles a pod update that gains or loses its active deadline
    (``Handles``): the quotas of its new Terminating/NotTerminating scope must admit it."""
    if not isinstance(old, Pod) or not isinstance(new, Pod):
        return False
    return is_terminating(old.spec or PodSpec()) != is_terminating(new.spec or PodSpec())


def _handles(request: AdmissionRequest) -> bool:
    """``Evaluator.Handles``: creates; updates of Services and claims, and of pods that
    change scope."""
    if request.operation is Operation.CREATE:
        return True
    if request.operation is not Operation.UPDATE:
        return False
    if quotausage.charged_on_update(request.resource):
        return True
    return _flips_terminating(request.old_obj, request.obj)


class _Evaluator:
    """What one object charges and which quota scopes it matches."""

    def __init__(self, request: AdmissionRequest) -> None:
        obj = request.obj
        self.pod = obj if isinstance(obj, Pod) else None
        self.info = request.resource

    def covers(self, name: str) -> bool:
        if self.pod is not None:
            return is_pod_resource(name)
        return quotausage.covers(self.info, name)

    def matches(self, selector: ScopedResourceSelectorRequirement) -> bool:
        # The other evaluators know no scopes (``MatchesNoScopeFunc``).
        return self.pod is not None and pod_matches_scope(self.pod, selector)

    def usage(self, obj: Any) -> Usage:
        if isinstance(obj, Pod):
            return pod_usage(obj, counts=counts_for_quota(obj))
        return quotausage.object_usage(self.info, obj)


class ResourceQuotaPlugin:
    """Refuses objects that would exceed, or are not covered by, their namespace's quotas."""

    # Upstream's QuotaAdmission.Validate: "ignore all operations that correspond to
    # sub-resource actions".
    ignores_subresources = True

    def __init__(self, listers: Listers, limited: Sequence[LimitedResource] = ()) -> None:
        self._listers = listers
        self._limited = tuple(limited)

    @property
    def name(self) -> str:
        """``ResourceQuota``."""
        return PLUGIN_NAME

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Raise 403 when a quota refuses the object; report the quotas' new usage."""
        if request.subresource or not request.resource.namespaced or request.obj is None:
            return
        if quotausage.is_ignored(request.resource) or not _handles(request):
            return
        limited = [
            entry
            for entry in self._limited
            if entry.resource == request.resource.plural
            and entry.api_group == request.resource.group
        ]
        quotas = self._listers.resource_quotas.list(request.namespace)
        if not quotas and not self._limited:
            return
        evaluator = _Evaluator(request)
        pertinent: list[tuple[ResourceQuota, list[str], Usage, Usage]] = []
        restricted_names: set[str] = set()
        restricted_scopes: list[ScopedResourceSelectorRequirement] = []
        for quota in quotas:
            selectors = scope_selectors(quota)
            restricted_scopes.extend(s for s in selectors if evaluator.matches(s))
            hard = (quota.status.hard if quota.status is not None else None) or {}
            names = sorted(name for name in hard if evaluator.covers(name))
            if not names or not all(evaluator.matches(s) for s in selectors):
                continue
            if evaluator.pod is not None:
                problem = pod_constraint_error(evaluator.pod, names)
                if problem is not None:
                    raise self._forbidden(
                        request, f"failed quota: {quota.metadata.name}: {problem}"
                    )
            used = (quota.status.used if quota.status is not None else None) or {}
            if any(name not in used for name in names):
                raise self._forbidden(
                    request,
                    f"status unknown for quota: {quota.metadata.name}, "
                    f"resources: {','.join(names)}",
                )
            pertinent.append((quota, names, dict(hard), dict(used)))
            restricted_names.update(names)
        delta = evaluator.usage(request.obj)
        if request.operation is Operation.UPDATE and request.old_obj is not None:
            # Charge only growth (``SubtractWithNonNegativeResult``).
            before = evaluator.usage(request.old_obj)
            delta = {name: amount - before.get(name, ZERO) for name, amount in delta.items()}
        delta = {name: amount for name, amount in delta.items() if amount.sign() > 0}
        if not delta:
            return
        self._check_limited(request, limited, evaluator, delta, restricted_names, restricted_scopes)
        for quota, names, hard, used in pertinent:
            requested = mask(delta, names)
            new_used = add(used, requested)
            exceeded = sorted(name for name in requested if new_used[name] > hard[name])
            if exceeded:
                raise self._forbidden(
                    request,
                    f"exceeded quota: {quota.metadata.name}, "
                    f"requested: {pretty(mask(requested, exceeded))}, "
                    f"used: {pretty(mask(used, exceeded))}, "
                    f"limited: {pretty(mask(hard, exceeded))}",
                )
            if not request.dry_run:
                status = evolve(quota.status, used=new_used)
                outcome.quota_status.append(evolve(quota, status=status))

    def _check_limited(
        self,
        request: AdmissionRequest,
        limited: Sequence[LimitedResource],
        evaluator: _Evaluator,
        delta: Usage,
        restricted_names: set[str],
        restricted_scopes: Sequence[ScopedResourceSelectorRequirement],
    ) -> None:
        consumed = {
            name
            for entry in limited
            for name in delta
            if any(part in name for part in entry.match_contains)
        }
        uncovered_names = sorted(consumed - restricted_names)
        if uncovered_names:
            raise self._forbidden(
                request, f"insufficient quota to consume: {','.join(uncovered_names)}"
            )
        covered = {selector.scope_name for selector in restricted_scopes}
        # Every configured scope counts, whatever resource its entry names (upstream).
        uncovered = [
            selector
            for entry in self._limited
            for selector in entry.match_scopes
            if evaluator.matches(selector) and selector.scope_name not in covered
        ]
        if uncovered:
            scopes = " ".join(scope_text(selector) for selector in uncovered)
            # Upstream returns this one as a plain error, not NewForbidden: a 500 with the
            # bare message (no 'pods "x" is forbidden:' prefix).
            raise errors.plain_error(f"insufficient quota to match these scopes: [{scopes}]")

    @staticmethod
    def _forbidden(request: AdmissionRequest, message: str) -> errors.StatusError:
        return errors.forbidden_error(
            request.resource.plural, request.resource.group, request.name, message
        )
