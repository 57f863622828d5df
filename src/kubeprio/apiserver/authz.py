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
  work); events are read-only; ``pods/eviction`` and ``scale`` are allowed;
* outside those namespaces a tenant user may read PriorityClasses (to see which classes
  exist: kubeprio's choice, upstream grants no such default), get its own namespaces
  and its own Tenant, and nothing else — lists across all namespaces included;
* anybody else authenticated may only use discovery (``/version``, ``/api``, ``/apis``,
  ``/openapi``), as upstream's ``system:basic-user``/``system:discovery`` roles allow.

A refusal is 403 with upstream's text (``responsewriters.forbiddenMessage`` wrapped in
``NewForbidden``): ``pods is forbidden: User "alice" cannot create resource "pods" in
API group "" in the namespace "other"``.

Who drives it: ``apiserver.http`` asks it for every resource request when ``serve``
passes one. Reads Tenants and Namespaces through the admission ``Listers``; no writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final, Protocol

from kubeprio.admission.chain import Listers, UserInfo, is_admin
from kubeprio.admission.tenant import owning_tenant
from kubeprio.api import errors
from kubeprio.api.tenant import Tenant
from kubeprio.apiserver.negotiation import flag
from kubeprio.apiserver.routes import Target

READ_VERBS: Final = frozenset({"get", "list", "watch"})
TENANT_READ_ONLY: Final = frozenset({"events"})
"""Namespaced resources a tenant user may only read."""
TENANT_WRITABLE_SUBRESOURCES: Final = frozenset(
    {"pods/eviction", "deployments/scale", "replicasets/scale"}
)
"""Subresources a tenant user may write (others, like ``pods/binding``, are the system's)."""
TENANT_READABLE_CLUSTER: Final = frozenset({"priorityclasses"})
"""Cluster-scoped resources every tenant user may read."""


@dataclasses.dataclass(frozen=True, slots=True)
class Attributes:
    """What a resource request does (upstream ``authorizer.AttributesRecord``)."""

    user: UserInfo
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def resource_path(self) -> str:
        """``pods`` or ``pods/eviction``."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def request_verb(method: str, target: Target, query: Mapping[str, str]) -> str:
    """The verb of a resource request (``requestinfo.go``)."""
    if method == "GET":
        if target.is_collection:
            return "watch" if flag(query, "watch") else "list"
        return "get"
    if method == "DELETE":
        return "deletecollection" if target.is_collection else "delete"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


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


def forbidden(attrs: Attributes) -> errors.ForbiddenError:
    """Upstream's 403 for a refused request."""
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


def is_member(tenant: Tenant, user: UserInfo) -> bool:
    """Whether ``user`` acts as ``tenant`` (``spec.users`` or ``spec.groups``)."""
    spec = tenant.spec
    if spec is None:
        return False
    if user.name in (spec.users or ()):
        return True
    return any(group in (spec.groups or ()) for group in user.groups)


class TenantAuthorizer:
    """Admins anything; tenant users inside their tenant's namespaces (see module doc)."""

    def __init__(self, listers: Listers) -> None:
        self._listers = listers

    def authorize(self, attrs: Attributes) -> bool:
        """Apply the policy of the module docstring."""
        if is_admin(attrs.user):
            return True
        if attrs.namespace:
            tenant = owning_tenant(self._listers, attrs.namespace)
            if tenant is None or not is_member(tenant, attrs.user):
                return False
            if attrs.subresource:
                return attrs.verb in READ_VERBS or (
                    attrs.resource_path in TENANT_WRITABLE_SUBRESOURCES
                )
            return attrs.resource not in TENANT_READ_ONLY or attrs.verb in READ_VERBS
        if attrs.verb not in READ_VERBS:
            return False
        if attrs.resource in TENANT_READABLE_CLUSTER:
            return True
        if attrs.resource == "namespaces" and attrs.verb == "get" and attrs.name:
            tenant = owning_tenant(self._listers, attrs.name)
            return tenant is not None and is_member(tenant, attrs.user)
        if attrs.resource == "tenants" and attrs.verb == "get" and attrs.name:
            tenant = self._listers.tenants.get(attrs.name)
            return tenant is not None and is_member(tenant, attrs.user)
        return False
