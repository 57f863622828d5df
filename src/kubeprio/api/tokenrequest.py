"""authentication.k8s.io/v1 TokenRequest: a request for a service account's token.

Mirrors ``k8s.io/api/authentication/v1/types.go`` (``TokenRequest``, ``TokenRequestSpec``,
``TokenRequestStatus``, ``BoundObjectReference``) and ``SetDefaults_TokenRequestSpec`` of
``pkg/apis/authentication/v1/defaults.go`` (``expirationSeconds`` defaults to one hour).
A client posts one to ``serviceaccounts/<name>/token`` (``kubectl create token``); the
answer is the same object with the signed token in ``status``. Never stored: the
``serviceaccounts/token`` subresource (``apiserver.tokenrequest``) answers it at once.
Unmodelled keys stay in ``extra``. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, evolve, extra_field, fast_init
from kubeprio.api.reviews import AUTHENTICATION_V1

DEFAULT_EXPIRATION_SECONDS: Final = 60 * 60
"""``SetDefaults_TokenRequestSpec``: a request without ``expirationSeconds`` asks for an hour."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class BoundObjectReference:
    """The object a token is bound to (a Pod, Secret or Node): it is valid while that
    object exists with this uid."""

    kind: str | None = None
    api_version: str | None = None
    name: str | None = None
    uid: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRequestSpec:
    """What the client asks for: audiences, lifetime, bound object."""

    audiences: tuple[str, ...] | None = None
    expiration_seconds: int | None = None
    bound_object_ref: BoundObjectReference | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRequestStatus:
    """What the server answers: the token and when it expires."""

    token: str | None = None
    expiration_timestamp: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRequest:
    """An authentication.k8s.io/v1 TokenRequest."""

    api_version: str | None = AUTHENTICATION_V1
    kind: str | None = "TokenRequest"
    metadata: ObjectMeta = ObjectMeta()
    spec: TokenRequestSpec | None = None
    status: TokenRequestStatus | None = None
    extra: JsonDict = extra_field()


def default_token_request(request: TokenRequest) -> TokenRequest:
    """``SetDefaults_TokenRequestSpec``: ``expirationSeconds`` 3600 when unset (an explicit
    0 stays, and validation refuses it)."""
    spec = request.spec or TokenRequestSpec()
    if spec.expiration_seconds is not None:
        return request
    return evolve(request, spec=evolve(spec, expiration_seconds=DEFAULT_EXPIRATION_SECONDS))
