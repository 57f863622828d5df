"""RBAC escalation prevention: nobody grants, by a role or a binding, what they do not hold.

Mirrors upstream's policy-based storage (``pkg/registry/rbac/role/policybased``,
``clusterrole/policybased``, ``rolebinding/policybased``, ``clusterrolebinding/
policybased``), ``pkg/registry/rbac/escalation_check.go`` and ``ConfirmNoEscalation`` of
``pkg/registry/rbac/validation/rule.go``:

* ``system:masters`` and in-process callers pass (``EscalationAllowed``);
* a Role or ClusterRole write passes when the caller may ``escalate`` roles (asked of the
  authorizer for the role's resource, name and namespace, ``RoleEscalationAuthorized``),
  or when the caller's rules in the role's namespace (cluster-wide ones for a ClusterRole)
  cover every rule it lists; setting or dropping a ClusterRole's ``aggregationRule`` needs
  ``*`` on everything (``must have cluster-admin privileges to use the aggregationRule``);
* a binding write passes when the caller may ``bind`` the referenced role
  (``BindingAuthorized``), or holds every rule of it; a missing role is its NotFound;
* an update that changes only owner references and finalizers passes
  (``IsOnlyMutatingGCFields``).

A refusal is 403 with upstream's text: ``clusterroles.rbac.authorization.k8s.io "x" is
forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC
permissions not currently held:`` and the missing rules, one per line, compacted and
sorted (``CompactString``).

The caller's rules are the whole authorizer's (``rules_for``): kubeprio's tenant policy
grants tenant users their namespaces as a bound ``admin`` role would upstream, so what a
tenant holds there counts as held. Who drives it: ``ApiService`` calls ``check`` on every
write of the four kinds that carries a user, on the object the mutating phase returned and
before the strategy (upstream's policy-based ``Update`` wraps the registry's
``UpdatedObjectInfo``; its ``Create`` checks before ``BeforeCreate``). No writes.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.admission.chain import UserInfo, is_admin
from kubeprio.api import errors, kinds
from kubeprio.api.gotext import go_quote
from kubeprio.api.model import evolve
from kubeprio.api.rbac import (
    ALL,
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    Role,
    RoleBinding,
    role_ref_of,
)
from kubeprio.api.rbacrules import compact_rules, compact_string, covers
from kubeprio.apiserver.authz import Attributes, ReviewingAuthorizer
from kubeprio.apiserver.rbac import RbacIndex, from_review_rules

FULL_AUTHORITY: Final = (
    PolicyRule(verbs=(ALL,), api_groups=(ALL,), resources=(ALL,)),
    PolicyRule(verbs=(ALL,), non_resource_urls=(ALL,)),
)
"""``fullAuthority``: what a cluster admin holds."""
AGGREGATION_NEEDS_ADMIN: Final = "must have cluster-admin privileges to use the aggregationRule"


def _groups_text(groups: tuple[str, ...]) -> str:
    """Go's ``%q`` of a ``[]string``."""
    return "[" + " ".join(go_quote(g) for g in groups) + "]"


def _only_gc_fields(new: Any, old: Any) -> bool:
    """``IsOnlyMutatingGCFields``: equal once owner references and finalizers are reset."""
    if old is None:
        return False
    meta = evolve(
        new.metadata,
        owner_references=old.metadata.owner_references,
        finalizers=old.metadata.finalizers,
        resource_version=old.metadata.resource_version,
    )
    return bool(evolve(new, metadata=meta) == old)


class EscalationGuard:
    """The policy-based storage checks, over an authorizer and the RBAC index."""

    def __init__(self, authorizer: ReviewingAuthorizer, index: RbacIndex) -> None:
        self._authorizer = authorizer
        self._index = index

    def check(self, obj: Any, old: Any, user: UserInfo | None) -> None:
        """Raise 403 (or the role's NotFound) if writing ``obj`` would escalate."""
        if not isinstance(obj, Role | ClusterRole | RoleBinding | ClusterRoleBinding):
            return
        if is_admin(user) or _only_gc_fields(obj, old):
            return
        assert user is not None
        info = kinds.for_object(obj)
        namespace = obj.metadata.namespace or "" if info.namespaced else ""
        name = obj.metadata.name or ""
        if isinstance(obj, Role | ClusterRole):
            if self._authorizer.authorize(
                Attributes(user, "escalate", info.group, info.plural, "", namespace, name)
            ):
                return
            self._confirm(user, namespace, info, name, obj.rules or ())
            aggregated = _aggregates(obj) or _aggregates(old)
            # Aggregation can gather anything: it needs * on everything.
            if aggregated and covers(self._held(user, namespace), FULL_AUTHORITY):
                raise errors.forbidden_error(info.plural, info.group, name, AGGREGATION_NEEDS_ADMIN)
            return
        ref = role_ref_of(obj)
        ref_resource = "clusterroles" if ref.kind == "ClusterRole" else "roles"
        if self._authorizer.authorize(
            Attributes(
                user, "bind", ref.api_group or "", ref_resource, "", namespace, ref.name or ""
            )
        ):
            return
        rules = self._index.role_ref_rules(ref, namespace)
        if rules is None:
            raise errors.not_found(ref_resource, ref.api_group or "", ref.name or "")
        self._confirm(user, namespace, info, name, rules)

    def _held(self, user: UserInfo, namespace: str) -> list[PolicyRule]:
        return from_review_rules(self._authorizer.rules_for(user, namespace))

    def _confirm(
        self,
        user: UserInfo,
        namespace: str,
        info: kinds.ResourceInfo,
        name: str,
        rules: tuple[PolicyRule, ...],
    ) -> None:
        """``ConfirmNoEscalation``."""
        missing = covers(self._held(user, namespace), rules)
        if not missing:
            return
        lines = sorted({compact_string(rule) for rule in compact_rules(missing)})
        message = (
            f"user {go_quote(user.name)} (groups={_groups_text(user.groups)}) is attempting to "
            "grant RBAC permissions not currently held:\n" + "\n".join(lines)
        )
        raise errors.forbidden_error(info.plural, info.group, name, message)


def _aggregates(role: Any) -> bool:
    """``hasAggregationRule``."""
    rule = getattr(role, "aggregation_rule", None)
    return rule is not None and bool(rule.cluster_role_selectors)
