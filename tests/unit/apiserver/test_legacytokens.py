"""Secret-based service account tokens (``apiserver.legacytokens``).

Upstream rules checked (``pkg/serviceaccount/legacy.go``, v1.32):

* ``LegacyClaims`` with ``LegacyIssuer``: the payload go-jose writes (``iss``
  ``kubernetes/serviceaccount``, the four ``kubernetes.io/serviceaccount/*`` claims, ``sub``;
  no ``aud``, no times), signed with the key id of ``keyIDFromPublicKey``;
* ``legacyValidator.Validate`` with lookup, every refusal in its order and words: missing
  claims, a ``sub`` that disagrees, the Secret gone, deleting, or holding another token, the
  account gone, deleting, or re-created (uid), the ``legacy-token-invalid-since`` label;
* ``patchSecretWithLastUsedDate``: the ``kubernetes.io/legacy-token-last-used`` label holds
  today's UTC date, written only when it is neither today nor tomorrow;
* kube-apiserver's union: a legacy token is not the bound authenticator's and a bound one
  not the legacy authenticator's; TokenReview shows the legacy reason, and a token without
  audiences is refused for audiences the API does not have.
"""

from __future__ import annotations

import datetime

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.api.core import Namespace
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.secret import (
    SECRET_TYPE_SERVICE_ACCOUNT_TOKEN,
    SERVICE_ACCOUNT_NAME_KEY,
    Secret,
)
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.apiserver.authn import UnionAuthenticator
from kubeprio.apiserver.legacytokens import (
    INVALID_SINCE_LABEL,
    LAST_USED_LABEL,
    LEGACY_ISSUER,
    LegacyTokenAuthenticator,
    LegacyTokenGenerator,
    legacy_payload,
    split_username,
)
from kubeprio.apiserver.serviceaccountauthn import (
    InvalidTokenError,
    ServiceAccountTokenAuthenticator,
    StoreTokenGetter,
)
from kubeprio.apiserver.tokensigning import PublicKeys, TokenSigner, key_id
from tests.unit.apiserver.token_helpers import ISSUER, part, raw_part, rsa_key

GROUPS = ("system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated")


@pytest.fixture
def authenticator(api, store, clock) -> LegacyTokenAuthenticator:
    return LegacyTokenAuthenticator(
        keys=PublicKeys([rsa_key().public_key()]),
        api_audiences=[ISSUER],
        getter=StoreTokenGetter(store),
        secrets=api,
        clock=clock,
    )


@pytest.fixture
def bound(store, clock) -> ServiceAccountTokenAuthenticator:
    return ServiceAccountTokenAuthenticator(
        issuers=[ISSUER],
        keys=PublicKeys([rsa_key().public_key()]),
        api_audiences=[ISSUER],
        getter=StoreTokenGetter(store),
        clock=clock,
    )


@pytest.fixture
def token(api) -> str:
    """A token Secret ``robot-token`` of ``team-a/robot``, filled as the controller does."""
    api.create_object(Namespace(metadata=ObjectMeta(name="team-a")))
    account = api.create(ServiceAccount(metadata=ObjectMeta(name="robot", namespace="team-a")))
    secret = Secret(
        metadata=ObjectMeta(
            name="robot-token",
            namespace="team-a",
            annotations={SERVICE_ACCOUNT_NAME_KEY: "robot"},
        ),
        type=SECRET_TYPE_SERVICE_ACCOUNT_TOKEN,
    )
    value = LegacyTokenGenerator(rsa_key())(account, secret)
    api.create_object(evolve(secret, data={"token": value.encode()}))
    return value


def _refusal(authenticator, token: str) -> str:
    with pytest.raises(InvalidTokenError) as caught:
        authenticator.authenticate_token(token)
    assert authenticator({"authorization": f"Bearer {token}"}) is None
    return str(caught.value)


def _signed(body) -> str:
    return TokenSigner(LEGACY_ISSUER, rsa_key()).sign(body)


def test_payload_is_go_joses(api, token):
    uid = api.get(ServiceAccount, "robot", "team-a").metadata.uid
    assert raw_part(token, 1) == (
        b'{"iss":"kubernetes/serviceaccount",'
        b'"kubernetes.io/serviceaccount/namespace":"team-a",'
        b'"kubernetes.io/serviceaccount/secret.name":"robot-token",'
        b'"kubernetes.io/serviceaccount/service-account.name":"robot",'
        b'"kubernetes.io/serviceaccount/service-account.uid":"' + uid.encode() + b'",'
        b'"sub":"system:serviceaccount:team-a:robot"}'
    )
    assert part(token, 0) == {"alg": "RS256", "kid": key_id(rsa_key().public_key())}


def test_token_authenticates_as_the_account(api, authenticator, token):
    uid = api.get(ServiceAccount, "robot", "team-a").metadata.uid
    user = authenticator({"authorization": f"Bearer {token}"})
    assert user == UserInfo("system:serviceaccount:team-a:robot", GROUPS, uid, ())


def test_last_used_label_written_once_a_day(api, authenticator, token, clock):
    def label():
        return (api.get(Secret, "robot-token", "team-a").metadata.labels or {}).get(LAST_USED_LABEL)

    today = datetime.datetime.fromtimestamp(clock.now(), datetime.UTC).date()
    assert label() is None
    authenticator.authenticate_token(token)
    assert label() == today.isoformat()
    version = api.get(Secret, "robot-token", "team-a").metadata.resource_version
    authenticator.authenticate_token(token)
    assert api.get(Secret, "robot-token", "team-a").metadata.resource_version == version
    clock.advance(24 * 3600)
    authenticator.authenticate_token(token)
    assert label() == (today + datetime.timedelta(days=1)).isoformat()


def test_a_date_of_tomorrow_is_left_alone(api, authenticator, token, clock):
    tomorrow = datetime.datetime.fromtimestamp(clock.now() + 86400, datetime.UTC).date()
    api.patch(Secret, "robot-token", {"metadata": {"labels": {LAST_USED_LABEL: tomorrow.isoformat()}}}, namespace="team-a")  # fmt: skip
    version = api.get(Secret, "robot-token", "team-a").metadata.resource_version
    authenticator.authenticate_token(token)
    assert api.get(Secret, "robot-token", "team-a").metadata.resource_version == version


def test_deleted_secret_invalidates_the_token(api, authenticator, token):
    api.delete(Secret, "robot-token", "team-a")
    assert _refusal(authenticator, token) == "Token has been invalidated"


def test_secret_holding_another_token_refuses(api, authenticator, token):
    api.patch(Secret, "robot-token", {"data": {"token": "b3RoZXI="}}, namespace="team-a")
    assert _refusal(authenticator, token) == "Token does not match server's copy"


def test_deleted_account_refuses(api, authenticator, token):
    api.delete(ServiceAccount, "robot", "team-a")
    assert _refusal(authenticator, token) == 'serviceaccounts "robot" not found'


def test_recreated_account_refuses(api, authenticator, token):
    old = api.get(ServiceAccount, "robot", "team-a").metadata.uid
    api.delete(ServiceAccount, "robot", "team-a")
    new = api.create(ServiceAccount(metadata=ObjectMeta(name="robot", namespace="team-a")))
    assert _refusal(authenticator, token) == (
        f"ServiceAccount UID ({new.metadata.uid}) does not match claim ({old})"
    )


def test_invalid_since_label_refuses_and_stamps_last_used(api, authenticator, token):
    labels = {INVALID_SINCE_LABEL: "2024-01-01"}
    api.patch(Secret, "robot-token", {"metadata": {"labels": labels}}, namespace="team-a")
    assert _refusal(authenticator, token) == (
        "the token in secret team-a/robot-token for service account team-a/robot has been "
        "marked invalid. Use tokens from the TokenRequest API or manually created "
        "secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label "
        "from the secret to temporarily allow use of this token"
    )
    assert LAST_USED_LABEL in api.get(Secret, "robot-token", "team-a").metadata.labels


@pytest.mark.parametrize(
    ("drop", "change", "message"),
    [
        ("sub", {}, "sub claim is missing"),
        ("kubernetes.io/serviceaccount/namespace", {}, "namespace claim is missing"),
        ("kubernetes.io/serviceaccount/secret.name", {}, "secretName claim is missing"),
        ("kubernetes.io/serviceaccount/service-account.name", {}, "serviceAccountName claim is missing"),
        ("kubernetes.io/serviceaccount/service-account.uid", {}, "serviceAccountUID claim is missing"),
        ("", {"sub": "system:serviceaccount:team-a:other"}, "sub claim is invalid"),
        ("", {"sub": "alice"}, "sub claim is invalid"),
    ],
)  # fmt: skip
def test_claims_checked_in_upstreams_order(api, authenticator, token, drop, change, message):
    body = legacy_payload(api.get(ServiceAccount, "robot", "team-a"), "robot-token")
    body.pop(drop, None)
    body.update(change)
    assert _refusal(authenticator, _signed(body)) == message


def test_issuers_keep_the_two_authenticators_apart(api, authenticator, bound, token):
    assert bound.authenticate_token(token) is None
    bound_token = TokenSigner(ISSUER, rsa_key()).sign({"iss": ISSUER, "sub": "x"})
    assert authenticator.authenticate_token(bound_token) is None


def test_token_review_reports_legacy_reasons(api, authenticator, bound, token):
    union = UnionAuthenticator([authenticator, bound])
    assert union.review_token(token, ("vault",)) == (
        '[invalid bearer token, token audiences ["https://kubernetes.default.svc.cluster.local"] '
        'is invalid for the target audiences ["vault"]]'
    )
    api.delete(Secret, "robot-token", "team-a")
    assert union.review_token(token, None) == "[invalid bearer token, Token has been invalidated]"


@pytest.mark.parametrize(
    ("username", "split"),
    [
        ("system:serviceaccount:ns:name", ("ns", "name")),
        ("system:serviceaccount:ns", None),
        ("system:serviceaccount:ns:a:b", None),
        ("system:serviceaccount::name", None),
        ("alice", None),
    ],
)
def test_split_username(username, split):
    assert split_username(username) == split
