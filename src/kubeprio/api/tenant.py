"""kubeprio.io/v1alpha1 Tenant: which PriorityClasses a group of namespaces may use.

A cluster-scoped Tenant owns namespaces (listed by name and/or selected by labels) and
restricts the priority classes of their pods (the model of seed 004, in the spirit of
Capsule's ``priorityClasses`` allowlist)::

    apiVersion: kubeprio.io/v1alpha1
    kind: Tenant
    metadata: {name: kestrel}
    spec:
      namespaces: [team-a]
      namespaceSelector: {matchLabels: {tenant: kestrel}}
      enforcement: Enforce            # or Audit: admit, but warn and record an event
      users: [alice]                  # who acts as this tenant in `kubeprio serve`
      priorityClasses:
        allowed: [uber-user-significant, uber-user-preempt-medium]
        allowedRegex: "uber-user-.*"  # anchored: must match the whole name
        default: uber-user-significant
        maxValue: 2000

Pure data: no I/O. The rules live in ``admission.tenant``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

ENFORCE: Final = "Enforce"
AUDIT: Final = "Audit"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TenantPriorityClasses:
    """The allowlist: names, an anchored regex, a default class and a value ceiling."""

    allowed: tuple[str, ...] | None = None
    allowed_regex: str | None = None
    default: str | None = None
    max_value: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TenantSpec:
    """``spec`` of a Tenant."""

    namespaces: tuple[str, ...] | None = None
    namespace_selector: LabelSelector | None = None
    priority_classes: TenantPriorityClasses | None = None
    enforcement: str | None = None
    users: tuple[str, ...] | None = None
    groups: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Tenant:
    """A kubeprio.io/v1alpha1 Tenant."""

    api_version: str | None = "kubeprio.io/v1alpha1"
    kind: str | None = "Tenant"
    metadata: ObjectMeta = ObjectMeta()
    spec: TenantSpec | None = None
    status: JsonDict | None = None
    extra: JsonDict = extra_field()
