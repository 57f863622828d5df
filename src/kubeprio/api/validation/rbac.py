"""RBAC validation (rbac.authorization.k8s.io/v1): roles, cluster roles and their bindings.

Mirrors ``pkg/apis/rbac/validation/validation.go``:

* names (of the objects and of ``roleRef.name``) are path segments
  (``ValidateRBACName`` = ``IsValidPathSegmentName``: not ``.``/``..``, no ``/`` or ``%``);
* each rule (``ValidatePolicyRule``): ``verbs must contain at least one value``; a
  non-resource rule may not be in a Role (``namespaced rules cannot apply to
  non-resource URLs``) nor name groups, resources or names (``rules cannot apply to both
  regular resources and non-resource URLs``); a resource rule needs an API group and a
  resource;
* a ClusterRole's ``aggregationRule`` needs at least one selector, each a valid label
  selector;
* a binding's ``roleRef``: group ``rbac.authorization.k8s.io``, kind ``Role`` or
  ``ClusterRole`` (only ``ClusterRole`` for a ClusterRoleBinding), a name; its subjects
  (``ValidateRoleBindingSubject``): a name; a ServiceAccount's a DNS subdomain, its
  ``apiGroup`` empty and, in a ClusterRoleBinding, its namespace set; a User's or Group's
  ``apiGroup`` the RBAC group; no other kind;
* an update may not change a binding's ``roleRef`` (``cannot change roleRef``).

Invalid values that are Go slices or structs print with ``%#v`` as v1.32's
``ErrorBody`` does (``[]string{"/healthz"}``, ``rbac.RoleRef{...}``). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gotext import go_quote
from kubeprio.api.rbac import (
    GROUP,
    GROUP_KIND,
    SERVICE_ACCOUNT_KIND,
    USER_KIND,
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    Role,
    RoleBinding,
    RoleRef,
    Subject,
    role_ref_of,
)
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    index,
    name_is_dns_subdomain,
    path_segment_errors,
    validate_label_selector,
)

ROLE_REF_KINDS: Final = ("Role", "ClusterRole")
SUBJECT_KINDS: Final = (SERVICE_ACCOUNT_KIND, USER_KIND, GROUP_KIND)


def rbac_name_errors(name: str, prefix: bool = False) -> list[str]:
    """``ValidateRBACName``: a path segment."""
    return path_segment_errors(name)


def go_strings(values: tuple[str, ...]) -> GoValue:
    """A ``[]string`` as ``%#v`` prints it."""
    return GoValue("[]string{" + ", ".join(go_quote(v) for v in values) + "}")


def role_ref_value(ref: RoleRef) -> GoValue:
    """An internal ``rbac.RoleRef`` as ``%#v`` prints it."""
    return GoValue(
        f"rbac.RoleRef{{APIGroup:{go_quote(ref.api_group or '')}, "
        f"Kind:{go_quote(ref.kind or '')}, Name:{go_quote(ref.name or '')}}}"
    )


def validate_policy_rule(rule: PolicyRule, namespaced: bool, path: str) -> list[FieldError]:
    """``ValidatePolicyRule``."""
    found: list[FieldError] = []
    if not rule.verbs:
        found.append(errors.required(child(path, "verbs"), "verbs must contain at least one value"))
    if rule.non_resource_urls:
        urls = go_strings(rule.non_resource_urls)
        if namespaced:
            found.append(
                errors.invalid(
                    child(path, "nonResourceURLs"),
                    urls,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if rule.api_groups or rule.resources or rule.resource_names:
            found.append(
                errors.invalid(
                    child(path, "nonResourceURLs"),
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return found
    if not rule.api_groups:
        found.append(
            errors.required(
                child(path, "apiGroups"), "resource rules must supply at least one api group"
            )
        )
    if not rule.resources:
        found.append(
            errors.required(
                child(path, "resources"), "resource rules must supply at least one resource"
            )
        )
    return found


def _rules(rules: tuple[PolicyRule, ...] | None, namespaced: bool) -> list[FieldError]:
    found: list[FieldError] = []
    for position, rule in enumerate(rules or ()):
        found.extend(validate_policy_rule(rule, namespaced, index("rules", position)))
    return found


def validate_role(role: Role) -> list[FieldError]:
    """``ValidateRole`` (beyond metadata)."""
    return _rules(role.rules, True)


def validate_cluster_role(role: ClusterRole) -> list[FieldError]:
    """``ValidateClusterRole`` (beyond metadata)."""
    found = _rules(role.rules, False)
    rule = role.aggregation_rule
    if rule is not None:
        selectors = rule.cluster_role_selectors or ()
        if not selectors:
            found.append(
                errors.required(
                    "aggregationRule.clusterRoleSelectors",
                    "at least one clusterRoleSelector required if aggregationRule is non-nil",
                )
            )
        for position, selector in enumerate(selectors):
            path = index("aggregationRule.clusterRoleSelectors", position)
            selector_errors = validate_label_selector(selector, path)
            found.extend(selector_errors)
            if selector_errors:
                # LabelSelectorAsSelector fails too; its nil selector prints as null.
                found.append(errors.invalid(path, None, "invalid label selector."))
    return found


def validate_subject(subject: Subject, namespaced: bool, path: str) -> list[FieldError]:
    """``ValidateRoleBindingSubject``."""
    found: list[FieldError] = []
    name = subject.name or ""
    if not name:
        found.append(errors.required(child(path, "name")))
    api_group = subject.api_group or ""
    if subject.kind == SERVICE_ACCOUNT_KIND:
        if name:
            found.extend(
                errors.invalid(child(path, "name"), name, message)
                for message in name_is_dns_subdomain(name, False)
            )
        if api_group:
            found.append(errors.not_supported(child(path, "apiGroup"), api_group, [""]))
        if not namespaced and not subject.namespace:
            found.append(errors.required(child(path, "namespace")))
    elif subject.kind in (USER_KIND, GROUP_KIND):
        if api_group != GROUP:
            found.append(errors.not_supported(child(path, "apiGroup"), api_group, [GROUP]))
    else:
        found.append(errors.not_supported(child(path, "kind"), subject.kind or "", SUBJECT_KINDS))
    return found


def _validate_binding(binding: Any, namespaced: bool) -> list[FieldError]:
    found: list[FieldError] = []
    ref = role_ref_of(binding)
    if (ref.api_group or "") != GROUP:
        found.append(errors.not_supported("roleRef.apiGroup", ref.api_group or "", [GROUP]))
    kinds = ROLE_REF_KINDS if namespaced else ("ClusterRole",)
    if ref.kind not in kinds:
        found.append(errors.not_supported("roleRef.kind", ref.kind or "", kinds))
    if not ref.name:
        found.append(errors.required("roleRef.name"))
    else:
        found.extend(
            errors.invalid("roleRef.name", ref.name, message)
            for message in rbac_name_errors(ref.name)
        )
    for position, subject in enumerate(binding.subjects or ()):
        found.extend(validate_subject(subject, namespaced, index("subjects", position)))
    return found


def validate_role_binding(binding: RoleBinding) -> list[FieldError]:
    """``ValidateRoleBinding`` (beyond metadata)."""
    return _validate_binding(binding, True)


def validate_cluster_role_binding(binding: ClusterRoleBinding) -> list[FieldError]:
    """``ValidateClusterRoleBinding`` (beyond metadata)."""
    return _validate_binding(binding, False)


def _role_ref_unchanged(new: Any, old: Any) -> list[FieldError]:
    """``ValidateRoleBindingUpdate``'s immutable ``roleRef``."""
    if role_ref_of(new) == role_ref_of(old):
        return []
    return [errors.invalid("roleRef", role_ref_value(role_ref_of(new)), "cannot change roleRef")]


def validate_role_binding_update(new: RoleBinding, old: RoleBinding) -> list[FieldError]:
    """``ValidateRoleBindingUpdate`` (beyond metadata)."""
    return validate_role_binding(new) + _role_ref_unchanged(new, old)


def validate_cluster_role_binding_update(
    new: ClusterRoleBinding, old: ClusterRoleBinding
) -> list[FieldError]:
    """``ValidateClusterRoleBindingUpdate`` (beyond metadata)."""
    return validate_cluster_role_binding(new) + _role_ref_unchanged(new, old)


CREATE: Final[dict[type[Any], KindValidator]] = {
    Role: validate_role,
    ClusterRole: validate_cluster_role,
    RoleBinding: validate_role_binding,
    ClusterRoleBinding: validate_cluster_role_binding,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Role: lambda new, old: validate_role(new),
    ClusterRole: lambda new, old: validate_cluster_role(new),
    RoleBinding: validate_role_binding_update,
    ClusterRoleBinding: validate_cluster_role_binding_update,
}
