"""The claims of a service account token, and the user a valid one authenticates as.

What it is: upstream's ``pkg/serviceaccount/claims.go`` (``Claims``: what a token says)
and ``staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go`` (the user
name, groups and extras of a service account), v1.32 with its default feature gates
(``ServiceAccountTokenJTI``, ``ServiceAccountTokenPodNodeInfo``,
``ServiceAccountTokenNodeBinding`` and ``...NodeBindingValidation`` all on). A token's
payload, as go-jose writes it (keys sorted, times in whole Unix seconds, ``aud`` always a
list)::

    {"aud": ["https://kubernetes.default.svc.cluster.local"], "exp": 1700003600,
     "iat": 1700000000, "iss": "https://kubernetes.default.svc.cluster.local",
     "jti": "<uuid>",
     "kubernetes.io": {"namespace": "team-a",
                       "node": {"name": "node-1", "uid": "..."},          (pod- or node-bound)
                       "pod": {"name": "web-1", "uid": "..."},            (pod-bound)
                       "secret": {"name": "s", "uid": "..."},             (secret-bound)
                       "serviceaccount": {"name": "deployer", "uid": "..."},
                       "warnafter": 1700003607},                          (extended tokens)
     "nbf": 1700000000, "sub": "system:serviceaccount:team-a:deployer"}

A valid token authenticates as ``system:serviceaccount:<ns>:<name>`` (uid: the account's),
groups ``system:serviceaccounts`` and ``system:serviceaccounts:<ns>``, and extras
``authentication.kubernetes.io/credential-id`` (``JTI=<jti>``), ``.../pod-name`` and
``.../pod-uid`` (pod-bound), ``.../node-name`` and ``.../node-uid`` (pod- or node-bound).

Who drives it: ``apiserver.tokenrequest`` builds claims, ``apiserver.serviceaccountauthn``
reads them back. Pure: no I/O, no clock (times come in as arguments).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from kubeprio.admission.chain import UserInfo
from kubeprio.api.model import JsonDict

SERVICE_ACCOUNT_USERNAME_PREFIX: Final = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS_GROUP: Final = "system:serviceaccounts"
SERVICE_ACCOUNT_GROUP_PREFIX: Final = "system:serviceaccounts:"
POD_NAME_KEY: Final = "authentication.kubernetes.io/pod-name"
POD_UID_KEY: Final = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY: Final = "authentication.kubernetes.io/node-name"
NODE_UID_KEY: Final = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID_KEY: Final = "authentication.kubernetes.io/credential-id"
"""``user.CredentialIDKey``: which credential authenticated the request."""
PRIVATE_CLAIMS_KEY: Final = "kubernetes.io"

WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS: Final = 60 * 60 + 7
"""``WarnOnlyBoundTokenExpirationSeconds``: the lifetime the ServiceAccount admission
plugin asks for in a pod's token volume (3607), which the API server may extend."""
EXPIRATION_EXTENSION_SECONDS: Final = 24 * 365 * 60 * 60
"""``ExpirationExtensionSeconds``: what such a pod-bound token really lasts (a year)."""


def make_username(namespace: str, name: str) -> str:
    """``MakeUsername``: ``system:serviceaccount:<namespace>:<name>``."""
    return f"{SERVICE_ACCOUNT_USERNAME_PREFIX}{namespace}:{name}"


def make_group_names(namespace: str) -> tuple[str, str]:
    """``MakeGroupNames``: every account's group, then its namespace's."""
    return ALL_SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNT_GROUP_PREFIX}{namespace}"


def credential_id_for_jti(jti: str) -> str:
    """``CredentialIDForJTI``: ``JTI=<jti>`` (empty without a jti)."""
    return f"JTI={jti}" if jti else ""


@dataclasses.dataclass(frozen=True, slots=True)
class Ref:
    """A ``{"name", "uid"}`` reference inside the private claims."""

    name: str
    uid: str

    def to_json(self) -> JsonDict:
        """Go's ``omitempty`` on both fields."""
        return {key: value for key, value in (("name", self.name), ("uid", self.uid)) if value}


@dataclasses.dataclass(frozen=True, slots=True)
class PublicClaims:
    """The registered claims (go-jose's ``jwt.Claims``); times are Unix seconds."""

    issuer: str
    subject: str
    audiences: tuple[str, ...]
    issued_at: int
    not_before: int
    expiry: int
    jti: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class PrivateClaims:
    """The ``kubernetes.io`` claim: the account and the object the token is bound to."""

    namespace: str
    service_account: Ref
    pod: Ref | None = None
    secret: Ref | None = None
    node: Ref | None = None
    warn_after: int | None = None


def claims(
    *,
    namespace: str,
    service_account: Ref,
    pod: Ref | None,
    secret: Ref | None,
    node: Ref | None,
    expiration_seconds: int,
    warn_after_seconds: int,
    audiences: tuple[str, ...],
    now: int,
    jti: str,
) -> tuple[PublicClaims, PrivateClaims]:
    """``Claims``: a token for ``service_account`` issued ``now``, expiring after
    ``expiration_seconds``, bound to at most one of ``pod`` (with its ``node`` when the pod
    is on one) or ``secret`` or ``node``. The issuer is the signer's to add."""
    if secret is not None and (node is not None or pod is not None):
        # TokenREST never asks for this; upstream guards the same way.
        raise ValueError("internal error, token can only be bound to one object type")
    public = PublicClaims(
        issuer="",
        subject=make_username(namespace, service_account.name),
        audiences=audiences,
        issued_at=now,
        not_before=now,
        expiry=now + expiration_seconds,
        jti=jti,
    )
    private = PrivateClaims(
        namespace=namespace,
        service_account=service_account,
        pod=pod,
        secret=secret,
        node=node,
        warn_after=now + warn_after_seconds if warn_after_seconds else None,
    )
    return public, private


def payload(public: PublicClaims, private: PrivateClaims) -> JsonDict:
    """The JWT payload as go-jose writes it: one JSON object, keys sorted at every level
    (go-jose merges the claim sets through a map), empty claims left out."""
    kubernetes: JsonDict = {"namespace": private.namespace}
    if private.node is not None:
        kubernetes["node"] = private.node.to_json()
    if private.pod is not None:
        kubernetes["pod"] = private.pod.to_json()
    if private.secret is not None:
        kubernetes["secret"] = private.secret.to_json()
    kubernetes["serviceaccount"] = private.service_account.to_json()
    if private.warn_after is not None:
        kubernetes["warnafter"] = private.warn_after
    body: JsonDict = {}
    if public.audiences:
        body["aud"] = list(public.audiences)
    body["exp"] = public.expiry
    body["iat"] = public.issued_at
    if public.issuer:
        body["iss"] = public.issuer
    if public.jti:
        body["jti"] = public.jti
    body[PRIVATE_CLAIMS_KEY] = kubernetes
    body["nbf"] = public.not_before
    body["sub"] = public.subject
    return body


class MalformedClaimsError(ValueError):
    """A signed payload whose claims do not have the types upstream's decoder expects."""


def _string(value: object, claim: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedClaimsError(f"{claim}: not a string")
    return value


def _seconds(value: object, claim: str) -> int | None:
    # go-jose's NumericDate takes any JSON number and keeps whole seconds.
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedClaimsError(f"{claim}: not a number")
    return int(value)


def _ref(value: object, claim: str) -> Ref | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise MalformedClaimsError(f"{claim}: not an object")
    return Ref(_string(value.get("name"), claim), _string(value.get("uid"), claim))


def _audiences(value: object) -> tuple[str, ...]:
    # go-jose's Audience reads a single string or a list of strings.
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise MalformedClaimsError("aud: not a string or a list of strings")


@dataclasses.dataclass(frozen=True, slots=True)
class ParsedClaims:
    """A payload read back: the registered claims (times may be absent) and the private."""

    issuer: str
    subject: str
    audiences: tuple[str, ...]
    issued_at: int | None
    not_before: int | None
    expiry: int | None
    jti: str
    private: PrivateClaims


def parse(body: Mapping[str, Any]) -> ParsedClaims:
    """Read a payload's claims, as go-jose and the ``privateClaims`` struct decode them."""
    kubernetes = body.get(PRIVATE_CLAIMS_KEY)
    if kubernetes is None:
        kubernetes = {}
    if not isinstance(kubernetes, Mapping):
        raise MalformedClaimsError(f"{PRIVATE_CLAIMS_KEY}: not an object")
    private = PrivateClaims(
        namespace=_string(kubernetes.get("namespace"), "namespace"),
        service_account=_ref(kubernetes.get("serviceaccount"), "serviceaccount") or Ref("", ""),
        pod=_ref(kubernetes.get("pod"), "pod"),
        secret=_ref(kubernetes.get("secret"), "secret"),
        node=_ref(kubernetes.get("node"), "node"),
        warn_after=_seconds(kubernetes.get("warnafter"), "warnafter"),
    )
    return ParsedClaims(
        issuer=_string(body.get("iss"), "iss"),
        subject=_string(body.get("sub"), "sub"),
        audiences=_audiences(body.get("aud")),
        issued_at=_seconds(body.get("iat"), "iat"),
        not_before=_seconds(body.get("nbf"), "nbf"),
        expiry=_seconds(body.get("exp"), "exp"),
        jti=_string(body.get("jti"), "jti"),
        private=private,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class ServiceAccountInfo:
    """``ServiceAccountInfo``: who a valid token speaks for."""

    namespace: str
    name: str
    uid: str
    pod_name: str = ""
    pod_uid: str = ""
    node_name: str = ""
    node_uid: str = ""
    credential_id: str = ""

    def user_info(self, *, extra_groups: tuple[str, ...] = ()) -> UserInfo:
        """``ServiceAccountInfo.UserInfo``: the account's user name, uid, groups (then
        ``extra_groups``, the authenticator's ``system:authenticated``) and extras."""
        extra: dict[str, tuple[str, ...]] = {}
        if self.pod_name and self.pod_uid:
            extra[POD_NAME_KEY] = (self.pod_name,)
            extra[POD_UID_KEY] = (self.pod_uid,)
        if self.credential_id:
            extra[CREDENTIAL_ID_KEY] = (self.credential_id,)
        if self.node_name:
            extra[NODE_NAME_KEY] = (self.node_name,)
            # The node uid is optional: a pod's node may have been gone when it was issued.
            if self.node_uid:
                extra[NODE_UID_KEY] = (self.node_uid,)
        return UserInfo(
            make_username(self.namespace, self.name),
            (*make_group_names(self.namespace), *extra_groups),
            self.uid,
            tuple(sorted(extra.items())),
        )
