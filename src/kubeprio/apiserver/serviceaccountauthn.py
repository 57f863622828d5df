"""Bearer-token authentication of service account tokens (the JWTs TokenRequest issues).

What it is: upstream's ``jwtTokenAuthenticator.AuthenticateToken`` and its bound-token
``validator.Validate`` (``pkg/serviceaccount/jwt.go``, ``claims.go``, v1.32), in order:

1. the token's unverified ``iss`` must be one of the issuers (``--service-account-issuer``),
   else the token is not this authenticator's (the next one may take it);
2. its signature must verify with a known key, the ``kid`` choosing the key
   (``apiserver.tokensigning``), and the verified ``iss`` must still be an issuer;
3. its audiences must meet the API audiences (``--api-audiences``, by default the
   issuers); a token without ``aud`` counts as one for the API audiences (legacy tokens);
4. the times, as go-jose's ``Claims.Validate`` with its one-minute leeway: not before
   ``nbf - 60s``, not after ``exp + 60s``, not issued more than a minute in the future;
5. the service account must still exist with the uid the token names, and not have been
   deleted more than a minute ago; so must a bound Secret or Pod; a node-bound token's
   Node likewise (a pod-bound token's node claims are only read, never checked).

A token failing any step is refused with upstream's reason (kept for the log at debug
level); the client only ever sees 401 ``Unauthorized``, as upstream answers, so nothing
about accounts or objects leaks. A valid one is the account's user
(``tokenclaims.ServiceAccountInfo``) plus ``system:authenticated``.

Who drives it: ``apiserver.http`` through ``serve``'s union of authenticators
(``apiserver.authn``), on every request with a bearer token the token file does not know.
Per request it reads at most four objects by key (account, pod or secret, node): no
list, nothing proportional to the cluster's size. No cache: upstream caches a success for
ten seconds, so it may still accept a token a moment after its account is deleted;
kubeprio refuses it at once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from kubeprio.admission.chain import UserInfo
from kubeprio.api.core import Node, Pod
from kubeprio.api.secret import Secret
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.apiserver import authn, tokenclaims, tokensigning
from kubeprio.apiserver.authn import AUTHENTICATED_GROUP, TokenResponse, bearer_token
from kubeprio.apiserver.listers import StoreLister
from kubeprio.clock import Clock, parse_rfc3339
from kubeprio.store.interface import Store

LEEWAY_SECONDS: Final = 60.0
"""go-jose's ``jwt.DefaultLeeway``: clock skew tolerated on ``nbf``, ``exp``, ``iat`` and
on the deletion of the objects a token names."""
LOG: Final = logging.getLogger("kubeprio.apiserver.serviceaccountauthn")


InvalidTokenError = authn.InvalidTokenError
"""A token of this issuer that does not authenticate (upstream's reason as message)."""


class TokenGetter(Protocol):
    """``ServiceAccountTokenGetter``: the objects a token may name, by key (None: absent)."""

    def service_account(self, namespace: str, name: str) -> ServiceAccount | None:
        """The ServiceAccount, or None."""
        ...

    def pod(self, namespace: str, name: str) -> Pod | None:
        """The Pod, or None."""
        ...

    def secret(self, namespace: str, name: str) -> Secret | None:
        """The Secret, or None."""
        ...

    def node(self, name: str) -> Node | None:
        """The Node, or None."""
        ...


class StoreTokenGetter:
    """A ``TokenGetter`` reading the store by key (upstream reads its informers' caches
    and falls back to a live read; one process's store is both)."""

    def __init__(self, store: Store) -> None:
        self._service_accounts = StoreLister(store, ServiceAccount)
        self._pods = StoreLister(store, Pod)
        self._secrets = StoreLister(store, Secret)
        self._nodes = StoreLister(store, Node)

    def service_account(self, namespace: str, name: str) -> ServiceAccount | None:
        """The ServiceAccount, or None."""
        return self._service_accounts.get(name, namespace)

    def pod(self, namespace: str, name: str) -> Pod | None:
        """The Pod, or None."""
        return self._pods.get(name, namespace)

    def secret(self, namespace: str, name: str) -> Secret | None:
        """The Secret, or None."""
        return self._secrets.get(name, namespace)

    def node(self, name: str) -> Node | None:
        """The Node, or None."""
        return self._nodes.get(name)


def _deleted_before(deletion_timestamp: str | None, moment: float) -> bool:
    return bool(deletion_timestamp) and parse_rfc3339(deletion_timestamp or "") < moment


class ServiceAccountTokenAuthenticator:
    """Maps a request's service account token to its user (an ``http.Authenticator``)."""

    def __init__(
        self,
        *,
        issuers: Sequence[str],
        keys: tokensigning.PublicKeys,
        api_audiences: Sequence[str],
        getter: TokenGetter,
        clock: Clock,
    ) -> None:
        self._issuers = frozenset(issuers)
        self._keys = keys
        self._api_audiences = tuple(api_audiences)
        self._getter = getter
        self._clock = clock

    def __call__(self, headers: Mapping[str, str]) -> UserInfo | None:
        """The caller, or None (401) for anything but a valid token of ours."""
        token = bearer_token(headers)
        if token is None:
            return None
        try:
            return self.authenticate_token(token)
        except InvalidTokenError as exc:
            # Upstream logs these and answers a bare 401; so does kubeprio.
            LOG.debug("service account token refused: %s", exc)
            return None

    def authenticate_token(self, token: str) -> UserInfo | None:
        """The token's user; None when the token is not one of this issuer's; raises
        ``InvalidTokenError`` for one that is but does not authenticate."""
        response = self.review_token(token, None)
        return None if response is None else response.user

    def review_token(self, token: str, audiences: tuple[str, ...] | None) -> TokenResponse | None:
        """``AuthenticateToken`` for ``audiences`` (None: the API audiences): the user and
        the audiences it is valid for, as ``authenticate_token`` otherwise."""
        unverified = tokensigning.unverified_issuer(token)
        if unverified is None or unverified not in self._issuers:
            return None
        try:
            body = tokensigning.verify(token, self._keys)
        except tokensigning.SignatureError as exc:
            raise InvalidTokenError(str(exc)) from exc
        if not isinstance(body, dict):
            raise InvalidTokenError("token payload is not a JSON object")
        try:
            claims = tokenclaims.parse(body)
        except tokenclaims.MalformedClaimsError as exc:
            raise InvalidTokenError(f"token claims could not be read: {exc}") from exc
        if claims.issuer not in self._issuers:
            raise InvalidTokenError(f'token issuer "{claims.issuer}" is invalid')
        met = self._check_audiences(claims.audiences, audiences)
        info = self._validate(token, body, claims)
        return TokenResponse(info.user_info(extra_groups=(AUTHENTICATED_GROUP,)), met)

    def _check_audiences(
        self, audiences: tuple[str, ...], requested: tuple[str, ...] | None
    ) -> tuple[str, ...]:
        """The token's audiences met with the requested ones (``Audiences.Intersect``)."""
        # A token without audiences is a legacy token: valid for the API's own audiences.
        token_audiences = audiences or self._api_audiences
        target = self._api_audiences if requested is None else requested
        met = tuple(audience for audience in token_audiences if audience in target)
        if not met and self._api_audiences:
            raise InvalidTokenError(
                f"token audiences {_go_quoted(token_audiences)} is invalid for the target "
                f"audiences {_go_quoted(target)}"
            )
        return met

    def _validate(
        self, token: str, body: Mapping[str, Any], claims: tokenclaims.ParsedClaims
    ) -> tokenclaims.ServiceAccountInfo:
        """``validator.Validate`` of bound tokens: times, then the account and the bound
        objects (``apiserver.legacytokens`` validates secret-based tokens instead)."""
        now = self._clock.now()
        if claims.not_before is not None and now + LEEWAY_SECONDS < claims.not_before:
            raise InvalidTokenError("service account token is not valid yet")
        if claims.expiry is not None and now - LEEWAY_SECONDS > claims.expiry:
            raise InvalidTokenError("service account token has expired")
        if claims.issued_at is not None and now + LEEWAY_SECONDS < claims.issued_at:
            raise InvalidTokenError("service account token is issued in the future")
        # Things deleted before now minus the leeway no longer vouch for the token.
        invalid_if_deleted_before = now - LEEWAY_SECONDS
        private = claims.private
        namespace = private.namespace
        sa_ref = private.service_account
        account = self._getter.service_account(namespace, sa_ref.name)
        if account is None:
            raise InvalidTokenError(f'serviceaccounts "{sa_ref.name}" not found')
        if (account.metadata.uid or "") != sa_ref.uid:
            raise InvalidTokenError(
                f"service account UID ({account.metadata.uid or ''}) does not match claim "
                f"({sa_ref.uid})"
            )
        if _deleted_before(account.metadata.deletion_timestamp, invalid_if_deleted_before):
            raise InvalidTokenError(f"service account {namespace}/{sa_ref.name} has been deleted")
        if private.secret is not None:
            secret = self._getter.secret(namespace, private.secret.name)
            self._check_bound("secret", secret, private.secret, invalid_if_deleted_before)
        pod_name = pod_uid = ""
        if private.pod is not None:
            pod = self._getter.pod(namespace, private.pod.name)
            self._check_bound("pod", pod, private.pod, invalid_if_deleted_before)
            pod_name, pod_uid = private.pod.name, private.pod.uid
        node_name = node_uid = ""
        if private.node is not None:
            if private.pod is None:
                node = self._getter.node(private.node.name)
                self._check_bound("node", node, private.node, invalid_if_deleted_before)
            # A pod-bound token's node claims are only carried into the user's extras.
            node_name, node_uid = private.node.name, private.node.uid
        return tokenclaims.ServiceAccountInfo(
            namespace=namespace,
            name=sa_ref.name,
            uid=sa_ref.uid,
            pod_name=pod_name,
            pod_uid=pod_uid,
            node_name=node_name,
            node_uid=node_uid,
            credential_id=tokenclaims.credential_id_for_jti(claims.jti),
        )

    @staticmethod
    def _check_bound(
        kind: str, found: Secret | Pod | Node | None, ref: tokenclaims.Ref, before: float
    ) -> None:
        """A bound object must still be there, be the same one (uid) and not have been
        deleted before ``before`` (upstream's three checks for a secret, pod or node)."""
        if found is None:
            raise InvalidTokenError("service account token has been invalidated")
        if ref.uid != (found.metadata.uid or ""):
            raise InvalidTokenError(
                f"{kind} UID ({found.metadata.uid or ''}) does not match service account "
                f"{kind} ref claim ({ref.uid})"
            )
        if _deleted_before(found.metadata.deletion_timestamp, before):
            raise InvalidTokenError("service account token has been invalidated")


def _go_quoted(values: Sequence[str]) -> str:
    """Go's ``%q`` of a string slice: ``["a" "b"]``."""
    return "[" + " ".join('"' + value.replace('"', '\\"') + '"' for value in values) + "]"
