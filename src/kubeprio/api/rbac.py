"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding.

Mirrors ``k8s.io/api/rbac/v1/types.go``. A role lists ``PolicyRule``s (verbs on API
groups' resources, optionally by name, or verbs on non-resource URLs); a binding grants
the rules of the role its ``roleRef`` names to its ``subjects`` (users, groups, service
accounts), in its namespace (RoleBinding) or everywhere (ClusterRoleBinding). A
ClusterRole with an ``aggregationRule`` gets its rules from the ClusterRoles its label
selectors match (``controllers.clusterroleaggregation``).

Defaulting (``SetDefaults_RoleBinding``, ``SetDefaults_Subject``) is ``default_binding``
here; validation is ``api.validation.rbac``; the rule matching is ``api.rbacrules``; the
authorizer ``apiserver.rbac``. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import JsonDict, evolve, extra_field, fast_init, json_name

GROUP: Final = "rbac.authorization.k8s.io"
API_VERSION: Final = f"{GROUP}/v1"
USER_KIND: Final = "User"
GROUP_KIND: Final = "Group"
SERVICE_ACCOUNT_KIND: Final = "ServiceAccount"
ALL: Final = "*"
"""``VerbAll``, ``APIGroupAll``, ``ResourceAll``, ``NonResourceAll``."""
AUTOUPDATE_ANNOTATION: Final = "rbac.authorization.kubernetes.io/autoupdate"
"""Bootstrap roles and bindings carrying ``"true"`` are reconciled at every start."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyRule:
    """Verbs on resources (``apiGroups``/``resources``/``resourceNames``) or on
    ``nonResourceURLs``."""

    verbs: tuple[str, ...] | None = None
    api_groups: tuple[str, ...] | None = json_name("apiGroups")
    resources: tuple[str, ...] | None = None
    resource_names: tuple[str, ...] | None = None
    non_resource_urls: tuple[str, ...] | None = json_name("nonResourceURLs")
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Subject:
    """Who a binding grants to: a ``User``, a ``Group`` or a ``ServiceAccount``."""

    kind: str | None = None
    api_group: str | None = json_name("apiGroup")
    name: str | None = None
    namespace: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RoleRef:
    """The role a binding grants: ``Role`` (same namespace) or ``ClusterRole``."""

    api_group: str | None = json_name("apiGroup")
    kind: str | None = None
    name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class AggregationRule:
    """The label selectors whose matching ClusterRoles' rules a ClusterRole gathers."""

    cluster_role_selectors: tuple[LabelSelector, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Role:
    """A namespaced set of rules."""

    api_version: str | None = API_VERSION
    kind: str | None = "Role"
    metadata: ObjectMeta = ObjectMeta()
    rules: tuple[PolicyRule, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterRole:
    """A cluster-wide set of rules, possibly aggregated from other ClusterRoles."""

    api_version: str | None = API_VERSION
    kind: str | None = "ClusterRole"
    metadata: ObjectMeta = ObjectMeta()
    rules: tuple[PolicyRule, ...] | None = None
    aggregation_rule: AggregationRule | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RoleBinding:
    """Grants a Role or ClusterRole's rules to subjects in the binding's namespace."""

    api_version: str | None = API_VERSION
    kind: str | None = "RoleBinding"
    metadata: ObjectMeta = ObjectMeta()
    subjects: tuple[Subject, ...] | None = None
    role_ref: RoleRef | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterRoleBinding:
    """Grants a ClusterRole's rules to subjects in every namespace and at cluster scope."""

    api_version: str | None = API_VERSION
    kind: str | None = "ClusterRoleBinding"
    metadata: ObjectMeta = ObjectMeta()
    subjects: tuple[Subject, ...] | None = None
    role_ref: RoleRef | None = None
    extra: JsonDict = extra_field()


Binding = RoleBinding | ClusterRoleBinding
AnyRole = Role | ClusterRole


def role_ref_of(binding: Any) -> RoleRef:
    """A binding's ``roleRef`` (a Go struct, never nil: absent reads as empty)."""
    ref: RoleRef | None = binding.role_ref
    return ref if ref is not None else RoleRef()


def default_subject(subject: Subject) -> Subject:
    """``SetDefaults_Subject``: a User or Group without ``apiGroup`` gets the RBAC group
    (a ServiceAccount keeps ``""``)."""
    if subject.api_group or subject.kind not in (USER_KIND, GROUP_KIND):
        return subject
    return evolve(subject, api_group=GROUP)


def default_binding(binding: Any) -> Any:
    """``SetDefaults_RoleBinding``/``SetDefaults_ClusterRoleBinding`` and their subjects:
    an empty ``roleRef.apiGroup`` is the RBAC group."""
    changes: dict[str, Any] = {}
    ref = role_ref_of(binding)
    if not ref.api_group:
        changes["role_ref"] = evolve(ref, api_group=GROUP)
    if binding.subjects:
        subjects = tuple(default_subject(s) for s in binding.subjects)
        if subjects != binding.subjects:
            changes["subjects"] = subjects
    return evolve(binding, **changes) if changes else binding
