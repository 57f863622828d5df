"""Authentication of service account tokens (``apiserver.serviceaccountauthn``).

Upstream rules checked (``pkg/serviceaccount/jwt.go`` ``AuthenticateToken`` and
``claims.go`` ``validator.Validate``, v1.32 default gates):

* a token of another issuer is not this authenticator's (no error: the next one may take
  it); one of ours must verify with our key (another key: "invalid signature, no keys
  found"), and its audiences must meet the API audiences (a token without ``aud`` is a
  legacy token, valid for them);
* go-jose's times with the one-minute ``DefaultLeeway``: valid until ``exp`` + 60 s, from
  ``nbf`` - 60 s, not issued more than a minute ahead; each failure with its text;
* the account must exist with the token's uid (deleted; re-created with a new uid), and not
  be deleted for more than the leeway; a bound Secret or Pod likewise ("service account
  token has been invalidated", or the uid mismatch texts); a node-bound token's Node too,
  while a pod-bound token's node claims are only carried into the user's extras;
* the user: ``system:serviceaccount:<ns>:<name>``, the two service account groups and
  ``system:authenticated``, the credential id and the pod/node extras;
* every refusal is a plain ``None`` to the HTTP layer (a bare 401, nothing leaked).
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.api.core import Namespace, Node, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.secret import Secret
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.tokenrequest import (
    BoundObjectReference,
    TokenRequest,
    TokenRequestSpec,
    default_token_request,
)
from kubeprio.apiserver import tokenclaims
from kubeprio.apiserver.authn import TokenAuthenticator, TokenRecord, UnionAuthenticator
from kubeprio.apiserver.serviceaccountauthn import (
    InvalidTokenError,
    ServiceAccountTokenAuthenticator,
    StoreTokenGetter,
)
from kubeprio.apiserver.tokenrequest import TokenIssuer, create_token
from kubeprio.apiserver.tokensigning import PublicKeys, TokenSigner
from kubeprio.client.protocol import DeleteRequest
from tests.builders import node, pod
from tests.unit.apiserver.token_helpers import ISSUER, part, rsa_key, with_payload

GROUPS = ("system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated")
CREDENTIAL = "authentication.kubernetes.io/credential-id"


@pytest.fixture
def signer() -> TokenSigner:
    return TokenSigner(ISSUER, rsa_key())


@pytest.fixture
def issuer(signer, rng) -> TokenIssuer:
    return TokenIssuer(signer, api_audiences=(ISSUER,), rng=rng)


@pytest.fixture
def authenticator(signer, store, clock) -> ServiceAccountTokenAuthenticator:
    return ServiceAccountTokenAuthenticator(
        issuers=[ISSUER, "https://old-issuer"],
        keys=PublicKeys([signer.public_key]),
        api_audiences=[ISSUER],
        getter=StoreTokenGetter(store),
        clock=clock,
    )


@pytest.fixture(autouse=True)
def cluster(api):
    api.create_object(Namespace(metadata=ObjectMeta(name="team-a")))
    api.create_object(ServiceAccount(metadata=ObjectMeta(name="deployer", namespace="team-a")))
    api.create_object(node("node-1").build())
    api.create_object(
        pod("web-1", "team-a").on("node-1").spec(service_account_name="deployer").build()
    )
    api.create_object(Secret(metadata=ObjectMeta(name="s", namespace="team-a")))


def _issue(api, issuer, clock, *, bound: tuple[str, str] | None = None, **spec: Any) -> str:
    ref = (
        None
        if bound is None
        else BoundObjectReference(kind=bound[0], api_version="v1", name=bound[1])
    )
    request = default_token_request(
        TokenRequest(spec=TokenRequestSpec(bound_object_ref=ref, **spec))
    )
    issued = create_token(
        api, issuer, namespace="team-a", name="deployer", request=request, now=clock.now()
    )
    token: str = issued.body["status"]["token"]
    return token


def _refusal(authenticator, token: str) -> str:
    with pytest.raises(InvalidTokenError) as caught:
        authenticator.authenticate_token(token)
    assert authenticator({"authorization": f"Bearer {token}"}) is None
    return str(caught.value)


def _uid(api, kind, name, namespace=None) -> str:
    return str(api.get(kind, name, namespace).metadata.uid)


def test_a_token_authenticates_as_its_service_account(api, issuer, clock, authenticator):
    token = _issue(api, issuer, clock)
    user = authenticator({"authorization": f"Bearer {token}"})
    jti = part(token, 1)["jti"]
    assert user == UserInfo(
        "system:serviceaccount:team-a:deployer",
        GROUPS,
        _uid(api, ServiceAccount, "deployer", "team-a"),
        ((CREDENTIAL, (f"JTI={jti}",)),),
    )


def test_a_pod_bound_token_carries_the_pod_and_its_node(api, issuer, clock, authenticator):
    user = authenticator.authenticate_token(_issue(api, issuer, clock, bound=("Pod", "web-1")))
    assert user is not None
    assert dict(user.extra) == {
        CREDENTIAL: dict(user.extra)[CREDENTIAL],
        "authentication.kubernetes.io/node-name": ("node-1",),
        "authentication.kubernetes.io/node-uid": (_uid(api, Node, "node-1"),),
        "authentication.kubernetes.io/pod-name": ("web-1",),
        "authentication.kubernetes.io/pod-uid": (_uid(api, Pod, "web-1", "team-a"),),
    }


@pytest.mark.parametrize(
    ("later", "refusal"),
    [
        (3600 + 59, None),
        (3600 + 61, "service account token has expired"),
    ],
    ids=["within-the-leeway", "past-the-leeway"],
)
def test_a_token_expires_a_minute_after_exp(api, issuer, clock, authenticator, later, refusal):
    token = _issue(api, issuer, clock)
    clock.advance(later)
    if refusal is None:
        assert authenticator.authenticate_token(token) is not None
    else:
        assert _refusal(authenticator, token) == refusal


def _signed(signer, clock, api, **changes: Any) -> str:
    """A token for deployer with chosen claims (times relative to the clock)."""
    now = int(clock.now())
    public, private = tokenclaims.claims(
        namespace="team-a",
        service_account=tokenclaims.Ref(
            "deployer", _uid(api, ServiceAccount, "deployer", "team-a")
        ),
        pod=None,
        secret=None,
        node=None,
        expiration_seconds=3600,
        warn_after_seconds=0,
        audiences=(ISSUER,),
        now=now,
        jti="jti",
    )
    public = dataclasses.replace(public, issuer=ISSUER, **changes)
    return signer.sign(tokenclaims.payload(public, private))


@pytest.mark.parametrize(
    ("changes", "refusal"),
    [
        ({"not_before": 30}, None),
        ({"not_before": 90, "issued_at": 90}, "service account token is not valid yet"),
        ({"issued_at": 90}, "service account token is issued in the future"),
        ({"expiry": -61}, "service account token has expired"),
    ],
    ids=["nbf-within-the-leeway", "nbf-ahead", "iat-ahead", "expired"],
)
def test_the_times_are_checked_with_go_joses_leeway(
    api, signer, clock, authenticator, changes, refusal
):
    now = int(clock.now())
    token = _signed(signer, clock, api, **{key: now + value for key, value in changes.items()})
    if refusal is None:
        assert authenticator.authenticate_token(token) is not None
    else:
        assert _refusal(authenticator, token) == refusal


def test_a_token_of_another_issuer_is_not_ours(api, issuer, clock, authenticator):
    foreign = TokenIssuer(
        TokenSigner("https://elsewhere", rsa_key("other")),
        api_audiences=("x",),
        rng=random.Random(0),
    )
    token = _issue(api, foreign, clock)
    assert authenticator.authenticate_token(token) is None
    assert authenticator({"authorization": f"Bearer {token}"}) is None


def test_every_issuer_is_accepted(api, clock, authenticator, rng):
    old = TokenIssuer(
        TokenSigner("https://old-issuer", rsa_key()), api_audiences=(ISSUER,), rng=rng
    )
    assert authenticator.authenticate_token(_issue(api, old, clock)) is not None


@pytest.mark.parametrize(
    ("make", "refusal"),
    [
        (lambda api, issuer, clock: _issue(api, TokenIssuer(TokenSigner(ISSUER, rsa_key("other")),
                                                            api_audiences=(ISSUER,), rng=random.Random(0)), clock),
         "invalid signature, no keys found"),
        (lambda api, issuer, clock: with_payload(_issue(api, issuer, clock),
                                                 {**part(_issue(api, issuer, clock), 1), "sub": "x"}),
         "Signature verification failed"),
        (lambda api, issuer, clock: _issue(api, issuer, clock, audiences=("vault",)),
         'token audiences ["vault"] is invalid for the target audiences '
         '["https://kubernetes.default.svc.cluster.local"]'),
    ],
    ids=["foreign-key", "tampered", "wrong-audience"],
)  # fmt: skip
def test_a_token_must_be_signed_by_our_key_for_our_audiences(
    api, issuer, clock, authenticator, make, refusal
):
    assert _refusal(authenticator, make(api, issuer, clock)) == refusal


def test_a_token_without_audiences_counts_for_the_api(api, signer, clock, authenticator):
    assert authenticator.authenticate_token(_signed(signer, clock, api, audiences=())) is not None


def test_malformed_claims_are_refused(api, signer, authenticator):
    token = signer.sign({"iss": ISSUER, "kubernetes.io": "team-a"})
    assert (
        _refusal(authenticator, token)
        == "token claims could not be read: kubernetes.io: not an object"
    )


def test_a_deleted_account_invalidates_its_tokens(api, issuer, clock, authenticator):
    token = _issue(api, issuer, clock)
    api.delete_object(ServiceAccount, "deployer", "team-a")
    assert _refusal(authenticator, token) == 'serviceaccounts "deployer" not found'


def test_an_account_created_again_does_not_honour_old_tokens(api, issuer, clock, authenticator):
    token = _issue(api, issuer, clock)
    old_uid = _uid(api, ServiceAccount, "deployer", "team-a")
    api.delete_object(ServiceAccount, "deployer", "team-a")
    api.create_object(ServiceAccount(metadata=ObjectMeta(name="deployer", namespace="team-a")))
    new_uid = _uid(api, ServiceAccount, "deployer", "team-a")
    assert _refusal(authenticator, token) == (
        f"service account UID ({new_uid}) does not match claim ({old_uid})"
    )
    assert authenticator.authenticate_token(_issue(api, issuer, clock)) is not None


def _finalize(api, kind, name, namespace=None):
    """Give an object a finalizer, so deleting it only marks it (deletionTimestamp = now)."""
    current = api.get(kind, name, namespace)
    metadata = dataclasses.replace(current.metadata, finalizers=("example.com/hold",))
    api.update_object(dataclasses.replace(current, metadata=metadata))


@pytest.mark.parametrize(
    ("kind", "name", "namespace", "bound", "refusal"),
    [
        (ServiceAccount, "deployer", "team-a", None, "service account team-a/deployer has been deleted"),
        (Secret, "s", "team-a", ("Secret", "s"), "service account token has been invalidated"),
        (Pod, "web-1", "team-a", ("Pod", "web-1"), "service account token has been invalidated"),
        (Node, "node-1", None, ("Node", "node-1"), "service account token has been invalidated"),
    ],
    ids=["account", "secret", "pod", "node"],
)  # fmt: skip
def test_an_object_being_deleted_vouches_for_a_minute_more(
    api, issuer, clock, authenticator, kind, name, namespace, bound, refusal
):
    token = _issue(api, issuer, clock, bound=bound)
    _finalize(api, kind, name, namespace)
    api.delete_object(kind, name, namespace, options=DeleteRequest(grace_period_seconds=0))
    clock.advance(59)
    assert authenticator.authenticate_token(token) is not None
    clock.advance(2)
    assert _refusal(authenticator, token) == refusal


def test_a_terminating_pod_vouches_until_its_grace_period_is_over(
    api, issuer, clock, authenticator
):
    token = _issue(api, issuer, clock, bound=("Pod", "web-1"))
    api.delete_object(Pod, "web-1", "team-a", options=DeleteRequest(grace_period_seconds=30))
    clock.advance(30 + 59)
    assert authenticator.authenticate_token(token) is not None
    clock.advance(2)
    assert _refusal(authenticator, token) == "service account token has been invalidated"


@pytest.mark.parametrize(
    ("kind", "name", "namespace", "bound", "text"),
    [
        (Pod, "web-1", "team-a", ("Pod", "web-1"), "pod UID ({new}) does not match service account pod ref claim ({old})"),
        (Secret, "s", "team-a", ("Secret", "s"), "secret UID ({new}) does not match service account secret ref claim ({old})"),
        (Node, "node-1", None, ("Node", "node-1"), "node UID ({new}) does not match service account node ref claim ({old})"),
    ],
    ids=["pod", "secret", "node"],
)  # fmt: skip
def test_a_bound_object_deleted_and_created_again_invalidates_the_token(
    api, issuer, clock, authenticator, kind, name, namespace, bound, text
):
    token = _issue(api, issuer, clock, bound=bound)
    old = api.get(kind, name, namespace)
    api.delete_object(kind, name, namespace, options=DeleteRequest(grace_period_seconds=0))
    assert _refusal(authenticator, token) == "service account token has been invalidated"
    again = dataclasses.replace(
        old, metadata=dataclasses.replace(old.metadata, uid=None, resource_version=None)
    )
    api.create_object(again)
    new = _uid(api, kind, name, namespace)
    assert _refusal(authenticator, token) == text.format(new=new, old=old.metadata.uid)


def test_a_pod_bound_tokens_node_is_not_checked(api, issuer, clock, authenticator):
    token = _issue(api, issuer, clock, bound=("Pod", "web-1"))
    api.delete_object(Node, "node-1", options=DeleteRequest(grace_period_seconds=0))
    user = authenticator.authenticate_token(token)
    assert user is not None
    assert dict(user.extra)["authentication.kubernetes.io/node-name"] == ("node-1",)


def test_the_token_file_is_asked_first_and_unknown_tokens_are_nobodys(
    api, issuer, clock, authenticator
):
    union = UnionAuthenticator(
        [TokenAuthenticator([TokenRecord("static", "alice", "a")]), authenticator]
    )
    assert union({"authorization": "Bearer static"}) == UserInfo(
        "alice", ("system:authenticated",), "a"
    )
    token = _issue(api, issuer, clock)
    user = union({"authorization": f"Bearer {token}"})
    assert user is not None
    assert user.name == "system:serviceaccount:team-a:deployer"
    assert union({"authorization": "Bearer nobody"}) is None
    assert union({}) is None
