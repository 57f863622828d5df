"""Secret-based ("legacy") service account tokens: their claims, signing and authentication.

What it is: upstream's ``pkg/serviceaccount/legacy.go`` (v1.32): ``LegacyClaims``, the
``kubernetes/serviceaccount`` issuer and ``legacyValidator``. A legacy token is what the
tokens controller (``controllers.serviceaccounttokens``) writes into a Secret of type
``kubernetes.io/service-account-token``: a JWS signed with the same key as bound tokens, no
audience, no expiry, its payload (go-jose's, keys sorted)::

    {"iss": "kubernetes/serviceaccount",
     "kubernetes.io/serviceaccount/namespace": "team-a",
     "kubernetes.io/serviceaccount/secret.name": "deployer-token",
     "kubernetes.io/serviceaccount/service-account.name": "deployer",
     "kubernetes.io/serviceaccount/service-account.uid": "<uid>",
     "sub": "system:serviceaccount:team-a:deployer"}

The authenticator is kube-apiserver's legacy one (``--service-account-lookup`` on): the
issuer, signature and audience steps of ``apiserver.serviceaccountauthn`` (a token without
``aud`` counts for the API audiences), then ``legacyValidator.Validate`` in upstream's order
and words: the claims must be there (``sub claim is missing``, ``namespace claim is
missing``, ...) and agree (``sub claim is invalid``); the Secret must exist, not be
deleting and hold this very token (``Token has been invalidated``, ``Token does not match
server's copy``); the account must exist (``serviceaccounts "x" not found``), not be
deleting and have the claimed uid. A Secret labelled ``kubernetes.io/legacy-token-invalid-
since`` refuses the token (upstream's long text). Every use, accepted or refused for that
label, stamps the Secret with ``kubernetes.io/legacy-token-last-used: <UTC date>`` unless
it already says today or tomorrow (``LegacyServiceAccountTokenTracking``, GA since 1.28):
a merge patch at most once a day per Secret, by the server itself.

The user is the account's (``system:serviceaccount:<ns>:<name>``, its groups and
``system:authenticated``), without extras: a legacy token carries no ``jti``. Upstream also
warns when the Secret is one the account lists (an auto-generated token); kubeprio never
generates those (clusters stopped in 1.24), so the warning is left out.

Who drives it: ``serve.server`` signs through ``LegacyTokenGenerator`` (for the tokens
controller) and puts ``LegacyTokenAuthenticator`` in its union of authenticators, before
the bound one (upstream's order). Per request: two reads by key, at most one write a day.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.api.model import JsonDict
from kubeprio.api.secret import SERVICE_ACCOUNT_TOKEN_KEY, Secret
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.apiserver import tokenclaims, tokensigning
from kubeprio.apiserver.serviceaccountauthn import (
    InvalidTokenError,
    ServiceAccountTokenAuthenticator,
    TokenGetter,
)
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.errors import KubeprioError

LEGACY_ISSUER: Final = "kubernetes/serviceaccount"
"""``serviceaccount.LegacyIssuer``: the ``iss`` of every secret-based token."""
LAST_USED_LABEL: Final = "kubernetes.io/legacy-token-last-used"
INVALID_SINCE_LABEL: Final = "kubernetes.io/legacy-token-invalid-since"
_PREFIX: Final = "kubernetes.io/serviceaccount/"
NAMESPACE_CLAIM: Final = f"{_PREFIX}namespace"
SECRET_NAME_CLAIM: Final = f"{_PREFIX}secret.name"
SERVICE_ACCOUNT_NAME_CLAIM: Final = f"{_PREFIX}service-account.name"
SERVICE_ACCOUNT_UID_CLAIM: Final = f"{_PREFIX}service-account.uid"
INVALIDATED: Final = "Token has been invalidated"
LOG: Final = logging.getLogger("kubeprio.apiserver.legacytokens")


def legacy_payload(account: ServiceAccount, secret_name: str) -> JsonDict:
    """``LegacyClaims`` with the legacy issuer, as go-jose writes them (keys sorted)."""
    namespace = account.metadata.namespace or ""
    name = account.metadata.name or ""
    return {
        "iss": LEGACY_ISSUER,
        NAMESPACE_CLAIM: namespace,
        SECRET_NAME_CLAIM: secret_name,
        SERVICE_ACCOUNT_NAME_CLAIM: name,
        SERVICE_ACCOUNT_UID_CLAIM: account.metadata.uid or "",
        "sub": tokenclaims.make_username(namespace, name),
    }


class LegacyTokenGenerator:
    """``JWTTokenGenerator(LegacyIssuer, key)``: what kube-controller-manager signs secret
    tokens with (``--service-account-private-key-file``, kubeadm's ``sa.key``)."""

    def __init__(self, key: tokensigning.SigningKey) -> None:
        self._signer = tokensigning.TokenSigner(LEGACY_ISSUER, key)

    def __call__(self, account: ServiceAccount, secret: Secret) -> str:
        """The token for ``secret`` of ``account``."""
        return self._signer.sign(legacy_payload(account, secret.metadata.name or ""))


def split_username(username: str) -> tuple[str, str] | None:
    """``SplitUsername``: the namespace and name of ``system:serviceaccount:<ns>:<name>``."""
    if not username.startswith(tokenclaims.SERVICE_ACCOUNT_USERNAME_PREFIX):
        return None
    parts = username[len(tokenclaims.SERVICE_ACCOUNT_USERNAME_PREFIX) :].split(":")
    if len(parts) != 2 or not all(parts):
        return None
    return parts[0], parts[1]


def _claim(body: Mapping[str, Any], key: str) -> str:
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidTokenError(f"token claims could not be read: {key}: not a string")
    return value


def _utc_date(moment: float) -> datetime.date:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).date()


class LegacyTokenAuthenticator(ServiceAccountTokenAuthenticator):
    """kube-apiserver's legacy service account authenticator: the ``kubernetes/serviceaccount``
    issuer, the same keys and audiences, ``legacyValidator`` with lookup."""

    def __init__(
        self,
        *,
        keys: tokensigning.PublicKeys,
        api_audiences: Sequence[str],
        getter: TokenGetter,
        secrets: Client,
        clock: Clock,
    ) -> None:
        super().__init__(
            issuers=(LEGACY_ISSUER,),
            keys=keys,
            api_audiences=api_audiences,
            getter=getter,
            clock=clock,
        )
        self._secrets = secrets

    def _validate(
        self, token: str, body: Mapping[str, Any], claims: tokenclaims.ParsedClaims
    ) -> tokenclaims.ServiceAccountInfo:
        """``legacyValidator.Validate`` (the module doc)."""
        if not claims.subject:
            raise InvalidTokenError("sub claim is missing")
        namespace = _claim(body, NAMESPACE_CLAIM)
        if not namespace:
            raise InvalidTokenError("namespace claim is missing")
        secret_name = _claim(body, SECRET_NAME_CLAIM)
        if not secret_name:
            raise InvalidTokenError("secretName claim is missing")
        name = _claim(body, SERVICE_ACCOUNT_NAME_CLAIM)
        if not name:
            raise InvalidTokenError("serviceAccountName claim is missing")
        uid = _claim(body, SERVICE_ACCOUNT_UID_CLAIM)
        if not uid:
            raise InvalidTokenError("serviceAccountUID claim is missing")
        if split_username(claims.subject) != (namespace, name):
            raise InvalidTokenError("sub claim is invalid")
        secret = self._getter.secret(namespace, secret_name)
        if secret is None or secret.metadata.deletion_timestamp:
            raise InvalidTokenError(INVALIDATED)
        if (secret.data or {}).get(SERVICE_ACCOUNT_TOKEN_KEY) != token.encode():
            raise InvalidTokenError("Token does not match server's copy")
        account = self._getter.service_account(namespace, name)
        if account is None:
            raise InvalidTokenError(f'serviceaccounts "{name}" not found')
        if account.metadata.deletion_timestamp:
            raise InvalidTokenError(f"ServiceAccount {namespace}/{name} has been deleted")
        if (account.metadata.uid or "") != uid:
            raise InvalidTokenError(
                f"ServiceAccount UID ({account.metadata.uid or ''}) does not match claim ({uid})"
            )
        if (secret.metadata.labels or {}).get(INVALID_SINCE_LABEL):
            self._mark_used(secret)
            raise InvalidTokenError(
                f"the token in secret {namespace}/{secret_name} for service account "
                f"{namespace}/{name} has been marked invalid. Use tokens from the TokenRequest "
                "API or manually created secret-based tokens, or remove the "
                f"'{INVALID_SINCE_LABEL}' label from the secret to temporarily allow use of "
                "this token"
            )
        self._mark_used(secret)
        return tokenclaims.ServiceAccountInfo(namespace=namespace, name=name, uid=uid)

    def _mark_used(self, secret: Secret) -> None:
        """``patchSecretWithLastUsedDate``: today's UTC date in the last-used label, unless
        it already holds today or tomorrow (a clock a little ahead elsewhere)."""
        today = _utc_date(self._clock.now())
        current = (secret.metadata.labels or {}).get(LAST_USED_LABEL)
        if current in (today.isoformat(), (today + datetime.timedelta(days=1)).isoformat()):
            return
        meta = secret.metadata
        patch: JsonDict = {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {
                "name": meta.name,
                "namespace": meta.namespace,
                "uid": meta.uid,
                "labels": {LAST_USED_LABEL: today.isoformat()},
            },
        }
        try:
            self._secrets.patch(Secret, meta.name or "", patch, namespace=meta.namespace)
        except KubeprioError as exc:
            # Upstream logs a failed label and still answers the request.
            LOG.error(
                "Failed to label legacy service account token %s/%s with last-used date, err: %s",
                meta.name,
                meta.namespace,
                exc,
            )
