"""Impersonation: ``kubectl --as alice --as-group devs`` acts as another user.

What it is: upstream's ``WithImpersonation`` filter
(``staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go``) over the
request headers ``Impersonate-User``, ``Impersonate-Group`` (repeatable),
``Impersonate-Uid`` and ``Impersonate-Extra-<key>``:

* each requested identity is an authorization check for the caller with the verb
  ``impersonate``: ``users``, ``groups`` and ``serviceaccounts`` (namespaced) in the core
  group, ``uids`` and ``userextras/<key>`` in ``authentication.k8s.io``; the first refusal
  is upstream's 403 (``users "alice" is forbidden: User "bob" cannot impersonate resource
  "users" in API group "" at the cluster scope``);
* a user name ``system:serviceaccount:<ns>:<name>`` is a service account, whose groups
  default to ``system:serviceaccounts`` and ``system:serviceaccounts:<ns>``;
* groups, a uid or extras without a user are a 400 naming the requests;
* the impersonated user gets ``system:authenticated`` (``system:unauthenticated`` for
  ``system:anonymous``) unless a group already says which.

Under kubeprio's ``TenantAuthorizer`` cluster admins may impersonate anyone, and tenant
users the service accounts of their tenant's namespaces (upstream's ``edit`` role grants
``impersonate`` on ``serviceaccounts``); users, groups, uids and extras stay admin-only,
as with upstream's default roles. Who drives it: ``apiserver.http`` after authentication, before
the request's own authorization. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final
from urllib.parse import unquote

from kubeprio.admission.chain import UserInfo
from kubeprio.api import errors
from kubeprio.api.reviews import AUTHENTICATION_GROUP, AUTHENTICATION_V1
from kubeprio.apiserver import tokenclaims
from kubeprio.apiserver.authn import AUTHENTICATED_GROUP
from kubeprio.apiserver.authz import Attributes, Authorizer, forbidden

HEADER_PREFIX: Final = "impersonate-"
"""Every impersonation header starts so (lower case, as ASGI servers hand headers over)."""
USER_HEADER: Final = HEADER_PREFIX + "user"
GROUP_HEADER: Final = HEADER_PREFIX + "group"
UID_HEADER: Final = HEADER_PREFIX + "uid"
EXTRA_PREFIX: Final = HEADER_PREFIX + "extra-"
SERVICE_ACCOUNT_PREFIX: Final = tokenclaims.SERVICE_ACCOUNT_USERNAME_PREFIX
ANONYMOUS: Final = "system:anonymous"
UNAUTHENTICATED: Final = "system:unauthenticated"


@dataclasses.dataclass(frozen=True, slots=True)
class _Request:
    """One requested identity (upstream builds a ``v1.ObjectReference`` per request)."""

    kind: str
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""

    def go_text(self) -> str:
        """Go's ``%v`` of the ObjectReference (Kind Namespace Name UID APIVersion
        ResourceVersion FieldPath)."""
        parts = (self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)
        return "{" + " ".join(parts) + "}"


def _requests(headers: Sequence[tuple[str, str]]) -> list[_Request]:
    """The requested identities in upstream's order: user, groups, extras, uid."""
    user = next((value for name, value in headers if name == USER_HEADER and value), "")
    out: list[_Request] = []
    if user:
        namespace, _, account = user.removeprefix(SERVICE_ACCOUNT_PREFIX).partition(":")
        if user.startswith(SERVICE_ACCOUNT_PREFIX) and namespace and account and ":" not in account:
            out.append(_Request("ServiceAccount", account, namespace))
        else:
            out.append(_Request("User", user))
    out.extend(_Request("Group", value) for name, value in headers if name == GROUP_HEADER)
    for name, value in headers:
        if name.startswith(EXTRA_PREFIX):
            key = unquote(name[len(EXTRA_PREFIX) :].lower())
            out.append(_Request("UserExtra", value, api_version=AUTHENTICATION_V1, field_path=key))
    uid = next((value for name, value in headers if name == UID_HEADER and value), "")
    if uid:
        out.append(_Request("UID", uid, api_version=AUTHENTICATION_V1))
    if out and not user:
        listed = " ".join(request.go_text() for request in out)
        raise errors.bad_request(f"requested [{listed}] without impersonating a user")
    return out


def _check(requester: UserInfo, request: _Request) -> Attributes:
    """The ``impersonate`` request the caller must be allowed."""
    if request.kind == "ServiceAccount":
        return Attributes(
            requester, "impersonate", "", "serviceaccounts", "", request.namespace, request.name
        )
    if request.kind == "User":
        return Attributes(requester, "impersonate", "", "users", name=request.name)
    if request.kind == "Group":
        return Attributes(requester, "impersonate", "", "groups", name=request.name)
    if request.kind == "UserExtra":
        return Attributes(
            requester,
            "impersonate",
            AUTHENTICATION_GROUP,
            "userextras",
            request.field_path,
            name=request.name,
        )
    return Attributes(requester, "impersonate", AUTHENTICATION_GROUP, "uids", name=request.name)


def impersonate(
    requester: UserInfo | None,
    headers: Sequence[tuple[str, str]],
    authorizer: Authorizer,
) -> UserInfo | None:
    """The user the request acts as: ``requester`` unless it asks to impersonate.

    ``headers`` are (lower-case name, value) pairs, repeated names kept. Without a
    requester (no authentication), every impersonation is allowed.
    """
    requests = _requests(headers)
    if not requests:
        return requester
    groups_given = any(request.kind == "Group" for request in requests)
    username = ""
    uid = ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for request in requests:
        if requester is not None:
            attrs = _check(requester, request)
            if not authorizer.authorize(attrs):
                raise forbidden(attrs)
        if request.kind == "ServiceAccount":
            username = tokenclaims.make_username(request.namespace, request.name)
            if not groups_given:
                groups = list(tokenclaims.make_group_names(request.namespace))
        elif request.kind == "User":
            username = request.name
        elif request.kind == "Group":
            groups.append(request.name)
        elif request.kind == "UserExtra":
            extra.setdefault(request.field_path, []).append(request.name)
        else:
            uid = request.name
    if username != ANONYMOUS:
        if AUTHENTICATED_GROUP not in groups and UNAUTHENTICATED not in groups:
            groups.append(AUTHENTICATED_GROUP)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return UserInfo(
        username,
        tuple(groups),
        uid,
        tuple(sorted((key, tuple(values)) for key, values in extra.items())),
    )
