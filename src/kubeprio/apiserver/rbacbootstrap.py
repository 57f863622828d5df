"""The bootstrap RBAC policy: the user-facing ClusterRoles and their bindings.

Mirrors upstream's ``rbac/bootstrap-roles`` post-start hook (``pkg/registry/rbac/rest/
storage_rbac.go``, ``ensureRBACPolicy``) over the facts of
``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go``, restricted to the resources
kubeprio serves (rules about kinds it does not serve are left out):

* ``cluster-admin`` (everything), bound to the group ``system:masters``;
* ``admin``, ``edit`` and ``view``, aggregated (``aggregationRule`` on the
  ``rbac.authorization.k8s.io/aggregate-to-*`` labels) from ``system:aggregate-to-admin``,
  ``-edit`` and ``-view``; ``edit`` is itself aggregated into ``admin`` and ``view`` into
  ``edit``; bound to nobody (users bind them);
* ``system:discovery`` and ``system:basic-user`` bound to ``system:authenticated``;
  ``system:public-info-viewer`` bound to it and ``system:unauthenticated``;
  ``system:monitoring`` bound to the group of that name;
* ``system:auth-delegator`` (create ``tokenreviews`` and ``subjectaccessreviews``), bound
  to nobody: servers that delegate authentication get it bound to their account;
* ``system:service-account-issuer-discovery`` (get the OIDC configuration and JWKS paths),
  bound to ``system:serviceaccounts``: every service account may read the issuer's keys.
  Upstream suggests binding it to ``system:unauthenticated`` for relying parties outside
  the cluster; kubeprio serves no anonymous requests (every request without a token is a
  401, as kube-apiserver with ``--anonymous-auth=false``), so such a binding grants nothing.

Each object carries the label ``kubernetes.io/bootstrapping: rbac-defaults`` and the
annotation ``rbac.authorization.kubernetes.io/autoupdate: "true"``. At every start a
missing one is created; an existing one with the annotation not ``"false"`` is reconciled
as upstream's ``ReconcileRoleRequest``/``ReconcileRoleBindingRequest`` with
``RemoveExtra*`` off: missing rules, selectors, labels, annotations and subjects are
added, nothing is taken away. The ``system:controller:*`` roles are not created:
kubeprio's components run in-process, without users.

Who drives it: ``serve.server`` at start. Writes through the API service as the system.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors, kinds
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.rbac import (
    ALL,
    AUTOUPDATE_ANNOTATION,
    GROUP,
    GROUP_KIND,
    AggregationRule,
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    RoleRef,
    Subject,
)
from kubeprio.api.reviews import AUTHENTICATION_GROUP, AUTHORIZATION_GROUP
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.tokenclaims import ALL_SERVICE_ACCOUNTS_GROUP

READ: Final = ("get", "list", "watch")
WRITE: Final = ("create", "delete", "deletecollection", "patch", "update")
READ_WRITE: Final = (
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
)
BOOTSTRAP_LABELS: Final = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AGGREGATE_TO: Final = "rbac.authorization.k8s.io/aggregate-to-"
AUTHENTICATED: Final = "system:authenticated"
UNAUTHENTICATED: Final = "system:unauthenticated"


def _rule(verbs: tuple[str, ...], group: str, *resources: str) -> PolicyRule:
    return PolicyRule(verbs=verbs, api_groups=(group,), resources=resources)


def _urls(*urls: str) -> PolicyRule:
    return PolicyRule(verbs=("get",), non_resource_urls=urls)


VIEW_RULES: Final = (
    _rule(READ, "", "pods", "replicationcontrollers", "replicationcontrollers/scale",
          "serviceaccounts", "services", "services/status", "endpoints",
          "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"),
    _rule(READ, "", "limitranges", "resourcequotas", "events", "pods/status",
          "resourcequotas/status", "namespaces/status", "replicationcontrollers/status",
          "pods/log"),
    _rule(READ, "", "namespaces"),
    _rule(READ, "discovery.k8s.io", "endpointslices"),
    _rule(READ, "apps", "controllerrevisions", "statefulsets", "statefulsets/status",
          "statefulsets/scale", "daemonsets", "daemonsets/status", "deployments",
          "deployments/status", "deployments/scale", "replicasets", "replicasets/status",
          "replicasets/scale"),
    _rule(READ, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
    _rule(READ, "batch", "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
    _rule(READ, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
    _rule(READ, "networking.k8s.io", "networkpolicies", "ingresses", "ingresses/status"),
)  # fmt: skip
"""``system:aggregate-to-view`` (no Secrets: reading them would escalate)."""

EDIT_RULES: Final = (
    _rule(READ, "", "pods/attach", "pods/exec", "pods/portforward", "secrets"),
    _rule(("impersonate",), "", "serviceaccounts"),
    _rule(WRITE, "", "pods", "pods/attach", "pods/exec", "pods/portforward"),
    _rule(("create",), "", "pods/eviction"),
    _rule(WRITE, "", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
          "services", "persistentvolumeclaims", "configmaps", "secrets", "events"),
    _rule(("create",), "", "serviceaccounts/token"),
    _rule(WRITE, "apps", "statefulsets", "statefulsets/scale", "daemonsets", "deployments",
          "deployments/scale", "replicasets", "replicasets/scale"),
    _rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
    _rule(WRITE, "batch", "jobs", "cronjobs"),
    _rule(WRITE, "policy", "poddisruptionbudgets"),
    _rule(WRITE, "networking.k8s.io", "networkpolicies", "ingresses"),
    _rule(("patch", "update"), "", "pods/ephemeralcontainers"),
)  # fmt: skip
"""``system:aggregate-to-edit`` (no write on endpoints and slices since 1.22, CVE-2021-25740)."""

ADMIN_RULES: Final = (
    _rule(("create",), AUTHORIZATION_GROUP, "localsubjectaccessreviews"),
    _rule(READ_WRITE, GROUP, "roles", "rolebindings"),
)
"""``system:aggregate-to-admin``: what ``admin`` adds to ``edit``."""

DISCOVERY_URLS: Final = (
    "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
    "/readyz", "/version", "/version/",
)  # fmt: skip
PUBLIC_INFO_URLS: Final = ("/healthz", "/livez", "/readyz", "/version", "/version/")
ISSUER_DISCOVERY_URLS: Final = (
    "/.well-known/openid-configuration", "/.well-known/openid-configuration/",
    "/openid/v1/jwks", "/openid/v1/jwks/",
)  # fmt: skip
MONITORING_URLS: Final = (
    "/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz",
    "/readyz/*",
)  # fmt: skip


def _aggregated(name: str, extra_labels: dict[str, str]) -> ClusterRole:
    selector = LabelSelector(match_labels={f"{AGGREGATE_TO}{name}": "true"})
    return _role(name, (), extra_labels, AggregationRule(cluster_role_selectors=(selector,)))


def _role(
    name: str,
    rules: tuple[PolicyRule, ...],
    extra_labels: dict[str, str] | None = None,
    aggregation: AggregationRule | None = None,
) -> ClusterRole:
    return ClusterRole(
        metadata=ObjectMeta(
            name=name,
            labels={**BOOTSTRAP_LABELS, **(extra_labels or {})},
            annotations={AUTOUPDATE_ANNOTATION: "true"},
        ),
        rules=rules,
        aggregation_rule=aggregation,
    )


CLUSTER_ROLES: Final = (
    _role(
        "cluster-admin",
        (
            PolicyRule(verbs=(ALL,), api_groups=(ALL,), resources=(ALL,)),
            PolicyRule(verbs=(ALL,), non_resource_urls=(ALL,)),
        ),
    ),
    _aggregated("admin", {}),
    _aggregated("edit", {f"{AGGREGATE_TO}admin": "true"}),
    _aggregated("view", {f"{AGGREGATE_TO}edit": "true"}),
    _role("system:aggregate-to-admin", ADMIN_RULES, {f"{AGGREGATE_TO}admin": "true"}),
    _role("system:aggregate-to-edit", EDIT_RULES, {f"{AGGREGATE_TO}edit": "true"}),
    _role("system:aggregate-to-view", VIEW_RULES, {f"{AGGREGATE_TO}view": "true"}),
    _role("system:discovery", (_urls(*DISCOVERY_URLS),)),
    _role("system:public-info-viewer", (_urls(*PUBLIC_INFO_URLS),)),
    _role("system:monitoring", (_urls(*MONITORING_URLS),)),
    _role(
        "system:basic-user",
        (
            _rule(("create",), AUTHORIZATION_GROUP, "selfsubjectaccessreviews",
                  "selfsubjectrulesreviews"),
            _rule(("create",), AUTHENTICATION_GROUP, "selfsubjectreviews"),
        ),
    ),
    _role(
        "system:auth-delegator",
        (
            _rule(("create",), AUTHENTICATION_GROUP, "tokenreviews"),
            _rule(("create",), AUTHORIZATION_GROUP, "subjectaccessreviews"),
        ),
    ),
    _role("system:service-account-issuer-discovery", (_urls(*ISSUER_DISCOVERY_URLS),)),
)  # fmt: skip
"""``ClusterRoles()`` of upstream's bootstrap policy, as far as kubeprio serves them."""


def _binding(name: str, *groups: str) -> ClusterRoleBinding:
    return ClusterRoleBinding(
        metadata=ObjectMeta(
            name=name, labels=dict(BOOTSTRAP_LABELS), annotations={AUTOUPDATE_ANNOTATION: "true"}
        ),
        role_ref=RoleRef(api_group=GROUP, kind="ClusterRole", name=name),
        subjects=tuple(Subject(kind=GROUP_KIND, api_group=GROUP, name=g) for g in groups),
    )


CLUSTER_ROLE_BINDINGS: Final = (
    _binding("cluster-admin", "system:masters"),
    _binding("system:discovery", AUTHENTICATED),
    _binding("system:basic-user", AUTHENTICATED),
    _binding("system:public-info-viewer", AUTHENTICATED, UNAUTHENTICATED),
    _binding("system:monitoring", "system:monitoring"),
    _binding("system:service-account-issuer-discovery", ALL_SERVICE_ACCOUNTS_GROUP),
)
"""``ClusterRoleBindings()`` of upstream's bootstrap policy, for the roles above."""


def _merged(current: Any, desired: Any) -> Any:
    """``computeReconciledRole``/``computeReconciledRoleBinding`` without removals."""
    meta = current.metadata
    labels = {**(desired.metadata.labels or {}), **(meta.labels or {})}
    annotations = {**(desired.metadata.annotations or {}), **(meta.annotations or {})}
    changes: dict[str, Any] = {
        "metadata": evolve(meta, labels=labels, annotations=annotations),
    }
    if isinstance(desired, ClusterRole):
        rules = list(current.rules or ())
        if desired.aggregation_rule is None:
            # An aggregated role's rules are the controller's; others get what they miss.
            rules.extend(r for r in desired.rules or () if r not in rules)
        changes["rules"] = tuple(rules)
        if desired.aggregation_rule is not None:
            have = current.aggregation_rule or AggregationRule()
            selectors = list(have.cluster_role_selectors or ())
            selectors.extend(
                s
                for s in desired.aggregation_rule.cluster_role_selectors or ()
                if s not in selectors
            )
            changes["aggregation_rule"] = evolve(have, cluster_role_selectors=tuple(selectors))
    else:
        subjects = list(current.subjects or ())
        subjects.extend(s for s in desired.subjects or () if s not in subjects)
        changes["subjects"] = tuple(subjects)
    return evolve(current, **changes)


def ensure(api: ApiService) -> None:
    """Create the missing bootstrap roles and bindings; reconcile the auto-updated ones."""
    for desired in (*CLUSTER_ROLES, *CLUSTER_ROLE_BINDINGS):
        info = kinds.for_object(desired)
        name = desired.metadata.name or ""
        try:
            current = api.get(info.model, name)
        except errors.NotFoundError:
            api.create_object(desired)
            continue
        if (current.metadata.annotations or {}).get(AUTOUPDATE_ANNOTATION) == "false":
            continue
        merged = _merged(current, desired)
        if merged != current:
            api.update_object(merged)
