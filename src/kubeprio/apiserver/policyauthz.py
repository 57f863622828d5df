"""The authorizer's answers to a ValidatingAdmissionPolicy's ``authorizer`` checks.

What it is: the ``admission.policyauthorizer.PolicyAuthorizer`` that ``kubeprio serve``
hands the admission chain. Each CEL ``check`` becomes the request attributes upstream's
``authz.go`` builds (a path and the HTTP verb; or group, resource, subresource,
namespace, name and the API verb, with API version ``*``), asked of serve's
authorization chain (``apiserver.authz``: admins, the tenant policy, then RBAC) for the
request's user. The reason is what upstream's chain would give: ``""`` for a member of
``system:masters`` (the privileged-groups authorizer gives none) and for a refusal
(RBAC's "no opinion" has no reason), RBAC's ``RBAC: allowed by ...`` when a binding
allows, and the tenant policy's own words when it allows. In-process callers (no user)
are allowed, as the loopback client is. Pure apart from the authorizer's reads.
"""

from __future__ import annotations

from kubeprio.admission.chain import UserInfo, is_admin
from kubeprio.api.celauthz import AuthorizationAnswer, AuthorizationRequest
from kubeprio.apiserver.authz import Attributes, ReviewingAuthorizer


def attributes_of(user: UserInfo, check: AuthorizationRequest) -> Attributes:
    """The request attributes of one ``check`` (upstream ``pathCheckVal.Authorize`` and
    ``resourceCheckVal.Authorize``)."""
    if not check.resource_request:
        return Attributes(user, check.verb, resource_request=False, path=check.path)
    return Attributes(
        user,
        check.verb,
        group=check.group,
        resource=check.resource,
        subresource=check.subresource,
        namespace=check.namespace,
        name=check.name,
    )


def answer(
    authorizer: ReviewingAuthorizer, user: UserInfo | None, check: AuthorizationRequest
) -> AuthorizationAnswer:
    """The chain's decision on ``check`` for ``user``, with upstream's reason."""
    if user is None:
        return AuthorizationAnswer(allowed=True)
    decision = authorizer.decide(attributes_of(user, check))
    if not decision.allowed or is_admin(user):
        return AuthorizationAnswer(allowed=decision.allowed)
    return AuthorizationAnswer(allowed=True, reason=decision.reason)
