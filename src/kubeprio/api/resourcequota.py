"""core/v1 ResourceQuota: limits on what a namespace's objects may consume, by scope.

Mirrors ``k8s.io/api/core/v1/types.go``. A quota's ``spec.hard`` caps resources
(``pods``, ``requests.cpu``, ``count/pods``...); ``spec.scopes`` and
``spec.scopeSelector`` narrow which pods it tracks (``PriorityClass In [high]``: only
pods of that class). The quota controller fills ``status.hard`` and ``status.used``;
the ResourceQuota admission plugin charges each new pod against ``status.used``.
Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import ResourceList
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

SCOPE_TERMINATING: Final = "Terminating"
SCOPE_NOT_TERMINATING: Final = "NotTerminating"
SCOPE_BEST_EFFORT: Final = "BestEffort"
SCOPE_NOT_BEST_EFFORT: Final = "NotBestEffort"
SCOPE_PRIORITY_CLASS: Final = "PriorityClass"
SCOPE_CROSS_NAMESPACE_POD_AFFINITY: Final = "CrossNamespacePodAffinity"
SCOPE_VOLUME_ATTRIBUTES_CLASS: Final = "VolumeAttributesClass"

OPERATOR_IN: Final = "In"
OPERATOR_NOT_IN: Final = "NotIn"
OPERATOR_EXISTS: Final = "Exists"
OPERATOR_DOES_NOT_EXIST: Final = "DoesNotExist"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ScopedResourceSelectorRequirement:
    """One scope test: ``{scopeName: PriorityClass, operator: In, values: [high]}``."""

    scope_name: str | None = None
    operator: str | None = None
    values: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeSelector:
    """Scope tests that must all hold for the quota to track an object."""

    match_expressions: tuple[ScopedResourceSelectorRequirement, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceQuotaSpec:
    """The limits and the scopes they apply to."""

    hard: ResourceList | None = None
    scopes: tuple[str, ...] | None = None
    scope_selector: ScopeSelector | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceQuotaStatus:
    """The enforced limits and the usage observed against them."""

    hard: ResourceList | None = None
    used: ResourceList | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceQuota:
    """A core/v1 ResourceQuota."""

    api_version: str | None = "v1"
    kind: str | None = "ResourceQuota"
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceQuotaSpec | None = None
    status: ResourceQuotaStatus | None = None
    extra: JsonDict = extra_field()
