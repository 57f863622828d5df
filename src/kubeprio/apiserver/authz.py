"""Authorization: cluster admins do anything, tenant users act inside their tenant.

What it is: the request attributes upstream's authorizers see (``authorizer.Attributes``:
user, verb, API group, resource, subresource, namespace, name), how a request is turned
into them (``endpoints/request/requestinfo.go``: GET of a collection is ``list``, or
``watch`` with ``watch=true``; a named GET ``get``; POST ``create``; PUT ``update``; PATCH
``patch``; DELETE ``delete``, or ``deletecollection`` on a collection), and kubeprio's
authorizer, a fixed policy in place of RBAC:

* members of ``system:masters`` (and in-process callers, who have no user) may do
  anything, as upstream's ``AuthorizeClusterAdmins`` superuser check;
* a user listed in a Tenant's ``spec.users``, or in one of its ``spec.groups``, may work
  in the namespaces the Tenant owns (``admission.tenant.owning_tenant``) roughly as
  upstream's ``admin`` ClusterRole bound there allows: everything on the namespaced
  kinds except ``pods/binding`` and status writes (the scheduler's and controllers'
  work); events, ResourceQuotas and LimitRanges are read-only; ``pods/eviction``,
  ``pods/ephemeralcontainers`` (``kubectl debug``), ``scale`` and
  ``serviceaccounts/token`` (``kubectl create token``) are allowed, and so is
  impersonating the service accounts there (``kubectl --as=system:serviceaccount:...``);
  LocalSubjectAccessReviews, a namespaced kind, may be created there too, as ``admin``
  allows (SubjectAccessReviews, cluster-scoped, are refused like any cluster write);
* a service account's token authenticates as ``system:serviceaccount:<ns>:<name>`` with
  the groups ``system:serviceaccounts`` and ``system:serviceaccounts:<ns>``
  (``apiserver.serviceaccountauthn``): a user like any other, so it acts in a tenant's
  namespaces only when the Tenant names it in ``spec.users`` or one of its groups in
  ``spec.groups``;
* outside those namespaces a tenant user may read PriorityClasses (to see which classes
  exist: kubeprio's choice, upstream grants no such default), get its own namespaces
  and its own Tenant, and nothing else — lists across all namespaces included;
* members of ``system:monitoring`` may read ``/metrics`` and the health endpoints with
  their checks, as upstream's ``system:monitoring`` role bound to that group allows;
* anybody authenticated may use discovery (``/version``, ``/api``, ``/apis``,
  ``/openapi``, ``/healthz``...), as upstream's ``system:discovery`` role allows, and
  create the three self reviews (``kubectl auth can-i``, ``kubectl auth whoami``), as
  ``system:basic-user`` allows;
* tenant users get exactly the verbs each resource serves (its discovery verbs): an
  unknown resource, a wildcard or an unserved verb is refused, as upstream's ``admin``
  role lists its resources and verbs one by one.

``decide`` answers with a ``Decision`` whose reason explains the answer in kubeprio's
words (``kubectl auth can-i`` prints it after "no"); ``rules_for`` lists what a user may
do in a namespace (``kubectl auth can-i --list``), derived from ``decide`` itself over
every served resource and verb, so the two cannot disagree.

A refusal is 403 with upstream's text (``responsewriters.forbiddenMessage`` wrapped in
``NewForbidden``): ``pods is forbidden: User "alice" cannot create resource "pods" in
API group "" in the namespace "other"``.

Who drives it: ``apiserver.http`` asks it for every resource request when ``serve``
passes one, and ``apiserver.reviews`` for the self reviews. Reads Tenants and Namespaces
through the admission ``Listers``; no writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Final, Protocol

from kubeprio.admission.chain import MASTERS_GROUP, Listers, UserInfo, is_admin
from kubeprio.admission.tenant import owning_tenant
from kubeprio.api import errors, kinds
from kubeprio.api.reviews import NonResourceRule, ResourceRule, SubjectRulesReviewStatus
from kubeprio.api.tenant import Tenant
from kubeprio.apiserver.negotiation import flag
from kubeprio.apiserver.routes import Target

READ_VERBS: Final = frozenset({"get", "list", "watch"})
TENANT_READ_ONLY: Final = frozenset(
    {
        "events",
        "endpoints",
        "endpointslices",
        "resourcequotas",
        "limitranges",
        "controllerrevisions",
    }
)
"""Namespaced resources a tenant user may only read (upstream's ``admin`` and ``edit``
roles lost write access to endpoints and slices in 1.22, CVE-2021-25740, and only view
ResourceQuotas and LimitRanges, a tenant does not set its own limits, and ControllerRevisions, which the
DaemonSet controller writes; ``kubectl rollout history/undo`` only read them)."""
TENANT_WRITABLE_SUBRESOURCES: Final = frozenset(
    {
        "pods/eviction",
        "pods/ephemeralcontainers",
        "deployments/scale",
        "replicasets/scale",
        "statefulsets/scale",
        "replicationcontrollers/scale",
        "serviceaccounts/token",
    }
)
"""Subresources a tenant user may write (others, like ``pods/binding``, are the system's).
``serviceaccounts/token``: upstream's ``edit`` role, aggregated into ``admin``, grants
``create`` on it, so a tenant may mint tokens for the accounts of its namespaces.
``pods/ephemeralcontainers``: ``edit`` (and so ``admin``) grants ``patch`` and ``update``
on it, so a tenant may ``kubectl debug`` the pods of its namespaces; the subresource can
add containers only, never resources or a priority, so it gives no way around the
tenant's priority-class allowlist or its quotas."""
TENANT_EXTRA_VERBS: Final = frozenset({("", "serviceaccounts", "impersonate")})
"""Verbs outside a resource's discovery verbs that tenant users hold in their namespaces:
upstream's ``edit`` role (aggregated into ``admin``) grants ``impersonate`` on
``serviceaccounts``, so ``kubectl --as=system:serviceaccount:<ns>:<name>`` works for a
tenant inside its namespaces (``apiserver.impersonation`` asks for exactly this)."""
TENANT_READABLE_CLUSTER: Final = frozenset({"priorityclasses"})
"""Cluster-scoped resources every tenant user may read."""
SELF_REVIEWS: Final = frozenset(
    (info.group, info.plural) for info in kinds.REVIEWS if info.plural.startswith("self")
)
"""What upstream's ``system:basic-user`` lets every authenticated user create (the reviews
about someone else, and TokenReviews, are ``system:auth-delegator``'s, or in a namespace
``admin``'s)."""
DISCOVERY_PATHS: Final = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
)
"""Upstream's ``system:discovery`` and ``system:public-info-viewer`` paths (verb ``get``)."""
MONITORING_GROUP: Final = "system:monitoring"
MONITORING_PATHS: Final = (
    "/healthz",
    "/healthz/*",
    "/livez",
    "/livez/*",
    "/metrics",
    "/metrics/slis",
    "/readyz",
    "/readyz/*",
)
"""Upstream's ``system:monitoring`` role (verb ``get``), bound to the group of that name."""
WILDCARD: Final = "*"
ADMIN_REASON: Final = f'kubeprio: members of "{MASTERS_GROUP}" may do anything'


@dataclasses.dataclass(frozen=True, slots=True)
class Attributes:
    """What a request does (upstream ``authorizer.AttributesRecord``).

    A resource request names a group, resource and so on; a non-resource request
    (``resource_request`` false) names only a ``path``.
    """

    user: UserInfo
    verb: str
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    resource_request: bool = True
    path: str = ""

    @property
    def resource_path(self) -> str:
        """``pods`` or ``pods/eviction``."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """An authorizer's answer and, in kubeprio's words, why."""

    allowed: bool
    reason: str = ""


WRITE_VERBS: Final = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
"""The verb of each writing HTTP method (``requestinfo.go``); other methods are lower-cased."""


def request_verb(method: str, target: Target, query: Mapping[str, str]) -> str:
    """The verb of a resource request (``requestinfo.go``)."""
    if method == "GET":
        if target.is_collection:
            return "watch" if flag(query, "watch") else "list"
        return "get"
    if method == "DELETE":
        return "deletecollection" if target.is_collection else "delete"
    return WRITE_VERBS.get(method, method.lower())


def attributes(user: UserInfo, method: str, target: Target, query: Mapping[str, str]) -> Attributes:
    """The attributes of a resource request."""
    return Attributes(
        user=user,
        verb=request_verb(method, target, query),
        group=target.info.group,
        resource=target.info.plural,
        subresource=target.subresource,
        namespace=target.namespace or "",
        name=target.name,
    )


NAMESPACE_SUBRESOURCES: Final = frozenset({"status", "finalize"})
"""What may follow ``namespaces/<name>`` as the Namespace's own subresource."""


def path_attributes(
    user: UserInfo, method: str, group_version: str, segments: list[str], query: Mapping[str, str]
) -> Attributes:
    """The attributes of a resource request read from its path alone, as upstream's
    ``RequestInfoFactory`` reads them before any routing: for a resource kubeprio does
    not serve, so a refused user gets 403 (not 404) exactly as upstream authorizes first.

    ``segments`` follow ``/api/v1`` or ``/apis/<group>/<version>``: ``[watch/]
    [namespaces/<ns>/]<resource>[/<name>[/<subresource>]]``.
    """
    verb = WRITE_VERBS.get(method, method.lower())
    parts = segments
    if method == "GET":
        verb = "get"
        if len(parts) >= 2 and parts[0] == "watch":
            verb, parts = "watch", parts[1:]
    namespace = ""
    if parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
            parts = parts[2:]
    name = parts[1] if len(parts) >= 2 else ""
    if not name and verb == "get":
        verb = "list"
    if verb == "list" and flag(query, "watch"):
        verb = "watch"
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        user=user,
        verb=verb,
        group=group_version.rpartition("/")[0],
        resource=parts[0],
        subresource=parts[2] if len(parts) >= 3 else "",
        namespace=namespace,
        name=name,
    )


def non_resource_attributes(user: UserInfo, method: str, path: str) -> Attributes:
    """The attributes of a request for a path outside the resource tree (``/readyz``,
    ``/version``, an unknown path): upstream's verb is the lower-case HTTP method."""
    return Attributes(user=user, verb=method.lower(), resource_request=False, path=path)


def forbidden(attrs: Attributes) -> errors.ForbiddenError:
    """Upstream's 403 for a refused request (``responsewriters.Forbidden``)."""
    if not attrs.resource_request:
        detail = f'User "{attrs.user.name}" cannot {attrs.verb} path "{attrs.path}"'
        return errors.forbidden_error("", "", "", detail)
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    detail = (
        f'User "{attrs.user.name}" cannot {attrs.verb} resource "{attrs.resource_path}" '
        f'in API group "{attrs.group}" {where}'
    )
    return errors.forbidden_error(attrs.resource, attrs.group, attrs.name, detail)


class Authorizer(Protocol):
    """Decides whether a request may proceed."""

    def authorize(self, attrs: Attributes) -> bool:
        """True to allow."""
        ...


class ReviewingAuthorizer(Authorizer, Protocol):
    """An authorizer that can also explain itself and list a user's rules."""

    def decide(self, attrs: Attributes) -> Decision:
        """The answer and its reason."""
        ...

    def rules_for(self, user: UserInfo, namespace: str) -> SubjectRulesReviewStatus:
        """Everything ``user`` may do in ``namespace`` (cluster-wide rules included)."""
        ...


ADMIN_RULES: Final = SubjectRulesReviewStatus(
    resource_rules=(
        ResourceRule(verbs=(WILDCARD,), api_groups=(WILDCARD,), resources=(WILDCARD,)),
    ),
    non_resource_rules=(NonResourceRule(verbs=(WILDCARD,), non_resource_urls=(WILDCARD,)),),
)
"""What upstream's ``cluster-admin`` role lists."""


class AllowAll:
    """The answer when no authorizer is configured: everything is allowed."""

    def authorize(self, attrs: Attributes) -> bool:
        """Always True."""
        return True

    def decide(self, attrs: Attributes) -> Decision:
        """Always allowed."""
        return Decision(True)

    def rules_for(self, user: UserInfo, namespace: str) -> SubjectRulesReviewStatus:
        """Everything."""
        return ADMIN_RULES


def is_member(tenant: Tenant, user: UserInfo) -> bool:
    """Whether ``user`` acts as ``tenant`` (``spec.users`` or ``spec.groups``)."""
    spec = tenant.spec
    if spec is None:
        return False
    if user.name in (spec.users or ()):
        return True
    return any(group in (spec.groups or ()) for group in user.groups)


def path_matches(pattern: str, path: str) -> bool:
    """RBAC's non-resource URL match: exact, or a prefix before a trailing ``*``."""
    if pattern.endswith(WILDCARD):
        return path.startswith(pattern[:-1])
    return path == pattern


def _member_reason(tenant_name: str | None, namespace: str) -> str:
    return (
        f'kubeprio: allowed to members of Tenant "{tenant_name}", which owns namespace '
        f'"{namespace}"'
    )


class TenantAuthorizer:
    """Admins anything; tenant users inside their tenant's namespaces (see module doc)."""

    def __init__(self, listers: Listers) -> None:
        self._listers = listers
        # Each kind with the verbs of each of its paths, worked out once (asked per request).
        self._served = {
            (info.group, info.plural): (info, info.verbs_by_subresource) for info in kinds.SERVED
        }

    def authorize(self, attrs: Attributes) -> bool:
        """Apply the policy of the module docstring."""
        return self.decide(attrs).allowed

    def decide(self, attrs: Attributes) -> Decision:
        """The policy of the module docstring, with its reason."""
        if is_admin(attrs.user):
            return Decision(True, ADMIN_REASON)
        if not attrs.resource_request:
            if attrs.verb == "get" and any(path_matches(p, attrs.path) for p in DISCOVERY_PATHS):
                return Decision(True, "kubeprio: every authenticated user may use discovery")
            if (
                attrs.verb == "get"
                and MONITORING_GROUP in attrs.user.groups
                and any(path_matches(p, attrs.path) for p in MONITORING_PATHS)
            ):
                return Decision(True, f'kubeprio: members of "{MONITORING_GROUP}" may read metrics')
            return Decision(
                False, "kubeprio: outside discovery, only cluster admins may use non-resource paths"
            )
        if (attrs.group, attrs.resource) in SELF_REVIEWS:
            allowed = attrs.verb == "create" and not attrs.subresource
            return Decision(
                allowed,
                "kubeprio: every authenticated user may create self reviews"
                if allowed
                else "kubeprio: self reviews may only be created",
            )
        served = self._served.get((attrs.group, attrs.resource))
        if served is None:
            return Decision(
                False,
                f'kubeprio: tenant users get no access to "{attrs.resource}" in API group '
                f'"{attrs.group}" (not a resource this server lists for them)',
            )
        info, verbs_by_subresource = served
        verbs = verbs_by_subresource.get(attrs.subresource) or ()
        extra = (attrs.group, attrs.resource_path, attrs.verb) in TENANT_EXTRA_VERBS
        if attrs.verb not in verbs and not extra:
            return Decision(
                False, f'kubeprio: "{attrs.resource_path}" does not serve the verb "{attrs.verb}"'
            )
        if info.namespaced and attrs.namespace:
            return self._in_namespace(attrs)
        return self._at_cluster_scope(attrs)

    def _in_namespace(self, attrs: Attributes) -> Decision:
        tenant = owning_tenant(self._listers, attrs.namespace)
        if tenant is None:
            return Decision(False, f'kubeprio: namespace "{attrs.namespace}" belongs to no Tenant')
        tenant_name = tenant.metadata.name
        if not is_member(tenant, attrs.user):
            return Decision(
                False,
                f'kubeprio: User "{attrs.user.name}" is not a member of Tenant "{tenant_name}", '
                f'which owns namespace "{attrs.namespace}"',
            )
        writable = (
            attrs.resource_path in TENANT_WRITABLE_SUBRESOURCES
            if attrs.subresource
            else attrs.resource not in TENANT_READ_ONLY
        )
        if not writable and attrs.verb not in READ_VERBS:
            return Decision(False, f'kubeprio: tenant users may only read "{attrs.resource_path}"')
        return Decision(True, _member_reason(tenant_name, attrs.namespace))

    def _at_cluster_scope(self, attrs: Attributes) -> Decision:
        if attrs.verb in READ_VERBS and not attrs.subresource:
            if attrs.resource in TENANT_READABLE_CLUSTER:
                return Decision(True, f"kubeprio: every tenant user may read {attrs.resource}")
            if attrs.resource == "namespaces" and attrs.verb == "get" and attrs.name:
                tenant = owning_tenant(self._listers, attrs.name)
                if tenant is not None and is_member(tenant, attrs.user):
                    return Decision(True, _member_reason(tenant.metadata.name, attrs.name))
            if attrs.resource == "tenants" and attrs.verb == "get" and attrs.name:
                tenant = self._listers.tenants.get(attrs.name)
                if tenant is not None and is_member(tenant, attrs.user):
                    return Decision(True, f'kubeprio: allowed to members of Tenant "{attrs.name}"')
        return Decision(
            False,
            "kubeprio: at the cluster scope tenant users may only read priorityclasses, "
            "get their namespaces and get their Tenant",
        )

    def rules_for(self, user: UserInfo, namespace: str) -> SubjectRulesReviewStatus:
        """Every served (sub)resource and verb ``decide`` allows, grouped into rules."""
        if is_admin(user):
            return ADMIN_RULES
        verbs_of: dict[tuple[str, str], list[str]] = {}
        names_of: dict[tuple[str, str, str], list[str]] = {}
        for attrs in self._candidates(user, namespace):
            if not self.decide(attrs).allowed:
                continue
            if attrs.name:
                names_of.setdefault((attrs.group, attrs.resource_path, attrs.verb), []).append(
                    attrs.name
                )
            else:
                verbs_of.setdefault((attrs.group, attrs.resource_path), []).append(attrs.verb)
        # One rule per group and verb set, as a role would list them.
        merged: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for (group, path), verbs in verbs_of.items():
            merged.setdefault((group, tuple(verbs)), []).append(path)
        resource_rules = tuple(
            ResourceRule(verbs=verbs, api_groups=(group,), resources=tuple(paths))
            for (group, verbs), paths in merged.items()
        ) + tuple(
            ResourceRule(
                verbs=(verb,), api_groups=(group,), resources=(path,), resource_names=tuple(names)
            )
            for (group, path, verb), names in names_of.items()
        )
        non_resource_rules = [NonResourceRule(verbs=("get",), non_resource_urls=DISCOVERY_PATHS)]
        if MONITORING_GROUP in user.groups:
            non_resource_rules.append(
                NonResourceRule(verbs=("get",), non_resource_urls=MONITORING_PATHS)
            )
        return SubjectRulesReviewStatus(
            resource_rules=resource_rules, non_resource_rules=tuple(non_resource_rules)
        )

    def _candidates(self, user: UserInfo, namespace: str) -> Iterator[Attributes]:
        """Every request worth asking about: each served (sub)resource and verb, and the
        named gets of the namespaces and Tenants the user may belong to."""
        for info, verbs_by_subresource in self._served.values():
            scope = namespace if info.namespaced else ""
            for subresource, verbs in verbs_by_subresource.items():
                for verb in verbs:
                    yield Attributes(user, verb, info.group, info.plural, subresource, scope)
        for group, resource, verb in TENANT_EXTRA_VERBS:
            yield Attributes(user, verb, group, resource, "", namespace)
        tenants = [t for t in self._listers.tenants.list() if is_member(t, user)]
        for tenant in tenants:
            yield Attributes(user, "get", "kubeprio.io", "tenants", name=tenant.metadata.name or "")
        names = {ns.metadata.name or "" for ns in self._listers.namespaces.list()}
        for tenant in tenants:
            names.update(tenant.spec.namespaces or () if tenant.spec else ())
        for name in sorted(names - {""}):
            yield Attributes(user, "get", "", "namespaces", name=name)
