"""The ``authorizer`` of a ValidatingAdmissionPolicy's CEL expressions, for one request.

What it is: upstream's policy validator (``admission/plugin/policy/validating``) hands
each evaluation ``authorizer`` and ``authorizer.requestResource``
(``library.NewAuthorizerVal`` / ``NewResourceAuthorizerVal``) for the request's user and
kube-apiserver's authorizer. The authorizer lives above this layer, so the composition
root passes a ``PolicyAuthorizer`` (``kubeprio serve`` asks its authorization chain);
this module binds it to the request: the user (or the service account an expression
names with ``authorizer.serviceAccount(ns, name)``, upstream's
``serviceaccount.ServiceAccountInfo.UserInfo``: ``system:serviceaccount:<ns>:<name>``
in ``system:serviceaccounts`` and ``system:serviceaccounts:<ns>``), and the
activation values.

Without a ``PolicyAuthorizer`` (``kubeprio simulate``, which has no users) every check
is allowed with no reason, as for the in-process callers upstream's loopback client
stands for (``system:masters``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kubeprio.admission.chain import AdmissionRequest, UserInfo
from kubeprio.api import celauthz
from kubeprio.api.celauthz import AuthorizationAnswer, AuthorizationRequest

PolicyAuthorizer = Callable[[UserInfo | None, AuthorizationRequest], AuthorizationAnswer]
"""The authorizer's answer for a user (``None``: an in-process caller) and a check."""

SERVICE_ACCOUNTS_GROUP: Final = "system:serviceaccounts"


def service_account_user(namespace: str, name: str) -> UserInfo:
    """Upstream ``ServiceAccountInfo.UserInfo()`` (no pod or node in ``extra``)."""
    return UserInfo(
        name=f"system:serviceaccount:{namespace}:{name}",
        groups=(SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}"),
    )


def allow_all(user: UserInfo | None, check: AuthorizationRequest) -> AuthorizationAnswer:
    """The answer without an authorizer: allowed."""
    return AuthorizationAnswer(allowed=True)


def activation_values(request: AdmissionRequest, name: str) -> dict[str, object]:
    """``authorizer`` and ``authorizer.requestResource`` for ``request``, whose object
    is called ``name`` (a create's, from the object)."""
    return {
        celauthz.AUTHORIZER: celauthz.authorizer_value(),
        celauthz.REQUEST_RESOURCE: celauthz.request_resource_value(
            request.resource.group,
            request.resource.plural,
            request.subresource,
            request.namespace,
            name,
        ),
    }


def check_functions(authorize: PolicyAuthorizer, request: AdmissionRequest) -> list[Any]:
    """The per-evaluation ``check`` bound to ``request``'s user."""

    def answer(check: AuthorizationRequest) -> AuthorizationAnswer:
        user = request.user
        if check.service_account is not None:
            user = service_account_user(*check.service_account)
        return authorize(user, check)

    return [celauthz.check_function(answer)]
