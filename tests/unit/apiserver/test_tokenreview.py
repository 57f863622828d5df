"""TokenReview (``apiserver.tokenreview`` over ``apiserver.authn``'s union).

Upstream rules checked (``pkg/registry/authentication/tokenreview/storage.go``
``REST.Create``, ``pkg/serviceaccount/jwt.go`` ``AuthenticateToken`` and
``staging/.../authentication/authenticator/audiences.go`` ``WrapAudienceAgnosticToken``,
v1.32; cases after ``tokenreview/storage_test.go``):

* an empty token is a 400 "token is required for TokenReview in authentication";
* a token file user or a service account token authenticates: ``authenticated: true``,
  the user (name, uid, groups, extras: the pod and node of a pod-bound token, the
  credential id) and the audiences the token is valid for, met with the requested ones;
* ``spec.audiences`` narrows the check: a service account token whose audiences miss
  them is refused with upstream's "token audiences ... is invalid for the target
  audiences ..." reason; a token file user is audience-agnostic: valid only for the API
  audiences, unknown (no reason) for others;
* a refused token: ``authenticated`` left out, ``user`` an empty object, ``error``
  "invalid bearer token", with the refusing authenticator's reason in Go's aggregate;
* without authenticators the object comes back unchanged.
"""

from __future__ import annotations

import pytest

from kubeprio.api import errors
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.reviews import TokenReview, TokenReviewSpec
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.tokenrequest import (
    BoundObjectReference,
    TokenRequest,
    TokenRequestSpec,
    default_token_request,
)
from kubeprio.apiserver import tokenreview
from kubeprio.apiserver.authn import TokenAuthenticator, TokenRecord, UnionAuthenticator
from kubeprio.apiserver.serviceaccountauthn import (
    ServiceAccountTokenAuthenticator,
    StoreTokenGetter,
)
from kubeprio.apiserver.tokenrequest import TokenIssuer, create_token
from kubeprio.apiserver.tokensigning import PublicKeys, TokenSigner
from tests.builders import node, pod
from tests.unit.apiserver.token_helpers import ISSUER, rsa_key

SA_USER = "system:serviceaccount:team-a:deployer"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"]


@pytest.fixture
def signer() -> TokenSigner:
    return TokenSigner(ISSUER, rsa_key())


@pytest.fixture
def union(signer, store, clock) -> UnionAuthenticator:
    return UnionAuthenticator(
        [
            TokenAuthenticator(
                [TokenRecord("file-token", "alice", "u-1", ("devs",))], api_audiences=[ISSUER]
            ),
            ServiceAccountTokenAuthenticator(
                issuers=[ISSUER],
                keys=PublicKeys([signer.public_key]),
                api_audiences=[ISSUER],
                getter=StoreTokenGetter(store),
                clock=clock,
            ),
        ]
    )


@pytest.fixture(autouse=True)
def cluster(api):
    api.create_object(Namespace(metadata=ObjectMeta(name="team-a")))
    api.create_object(ServiceAccount(metadata=ObjectMeta(name="deployer", namespace="team-a")))
    api.create_object(node("node-1").build())
    api.create_object(
        pod("web-1", "team-a").on("node-1").spec(service_account_name="deployer").build()
    )


def _token(api, signer, rng, clock, *, audiences=None, pod_name=None) -> str:
    ref = BoundObjectReference(kind="Pod", api_version="v1", name=pod_name) if pod_name else None
    request = default_token_request(
        TokenRequest(spec=TokenRequestSpec(audiences=audiences, bound_object_ref=ref))
    )
    issued = create_token(
        api,
        TokenIssuer(signer, api_audiences=(ISSUER,), rng=rng),
        namespace="team-a",
        name="deployer",
        request=request,
        now=clock.now(),
    )
    token: str = issued.body["status"]["token"]
    return token


def _review(union, token: str, audiences: tuple[str, ...] | None = None) -> dict:
    review = TokenReview(spec=TokenReviewSpec(token=token, audiences=audiences))
    return tokenreview.answer(review, union)


@pytest.mark.parametrize("token", ["", None], ids=["empty", "absent"])
def test_a_token_is_required(union, token) -> None:
    with pytest.raises(errors.BadRequestError) as caught:
        tokenreview.answer(TokenReview(spec=TokenReviewSpec(token=token)), union)
    assert caught.value.status.message == "token is required for TokenReview in authentication"


def test_token_file_user(union) -> None:
    body = _review(union, "file-token")
    assert body["status"] == {
        "authenticated": True,
        "user": {"username": "alice", "uid": "u-1", "groups": ["devs", "system:authenticated"]},
        "audiences": [ISSUER],
    }
    assert body["metadata"] == {"creationTimestamp": None}
    assert body["spec"] == {"token": "file-token"}


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (None, {"authenticated": True, "audiences": [ISSUER]}),
        ((ISSUER, "other"), {"authenticated": True, "audiences": [ISSUER]}),
        (("other",), {"error": "invalid bearer token"}),
    ],
    ids=["api-audiences", "met", "not-met-unknown"],
)
def test_token_file_users_are_audience_agnostic(union, requested, expected) -> None:
    status = _review(union, "file-token", requested)["status"]
    assert {k: v for k, v in status.items() if k != "user"} == expected


def test_service_account_token_of_a_pod(api, signer, rng, clock, union) -> None:
    token = _token(api, signer, rng, clock, pod_name="web-1")
    status = _review(union, token)["status"]
    assert status["authenticated"] is True
    assert status["audiences"] == [ISSUER]
    user = status["user"]
    assert user["username"] == SA_USER
    assert user["groups"] == SA_GROUPS
    assert user["uid"] == api.get(ServiceAccount, "deployer", "team-a").metadata.uid
    pod_obj = api.get(Pod, "web-1", "team-a")
    assert user["extra"]["authentication.kubernetes.io/pod-name"] == ["web-1"]
    assert user["extra"]["authentication.kubernetes.io/pod-uid"] == [pod_obj.metadata.uid]
    assert user["extra"]["authentication.kubernetes.io/node-name"] == ["node-1"]
    assert user["extra"]["authentication.kubernetes.io/credential-id"][0].startswith("JTI=")


@pytest.mark.parametrize(
    ("token_audiences", "requested", "expected"),
    [
        (("api", "vault"), ("vault",), {"authenticated": True, "audiences": ["vault"]}),
        (
            ("api", "vault"),
            ("vault", "api"),
            {"authenticated": True, "audiences": ["api", "vault"]},
        ),
        (
            ("vault",),
            None,
            {
                "error": '[invalid bearer token, token audiences ["vault"] is invalid for the '
                f'target audiences ["{ISSUER}"]]'
            },
        ),
        (
            ("api",),
            ("vault",),
            {
                "error": '[invalid bearer token, token audiences ["api"] is invalid for the '
                'target audiences ["vault"]]'
            },
        ),
    ],
    ids=["requested-met", "order-of-token", "api-audiences-missed", "requested-missed"],
)
def test_service_account_token_audiences(
    api, signer, rng, clock, union, token_audiences, requested, expected
) -> None:
    token = _token(api, signer, rng, clock, audiences=token_audiences)
    status = _review(union, token, requested)["status"]
    assert {k: v for k, v in status.items() if k != "user"} == expected


def test_refused_tokens(api, signer, rng, clock, union) -> None:
    token = _token(api, signer, rng, clock)
    api.delete(ServiceAccount, "deployer", "team-a")
    assert _review(union, token)["status"] == {
        "user": {},
        "error": '[invalid bearer token, serviceaccounts "deployer" not found]',
    }
    assert _review(union, "garbage")["status"] == {"user": {}, "error": "invalid bearer token"}


def test_without_authenticators_the_review_comes_back_unchanged() -> None:
    body = tokenreview.answer(TokenReview(spec=TokenReviewSpec(token="t")), None)
    assert "status" not in body
    assert body["kind"] == "TokenReview"


def test_auth_delegator_is_bootstrapped_unbound(api) -> None:
    """``bootstrappolicy/policy.go``: ``system:auth-delegator`` creates tokenreviews and
    subjectaccessreviews; no binding."""
    from kubeprio.api.rbac import ClusterRole, ClusterRoleBinding
    from kubeprio.apiserver import rbacbootstrap

    rbacbootstrap.ensure(api)
    role = api.get(ClusterRole, "system:auth-delegator")
    assert [(r.verbs, r.api_groups, r.resources) for r in role.rules or ()] == [
        (("create",), ("authentication.k8s.io",), ("tokenreviews",)),
        (("create",), ("authorization.k8s.io",), ("subjectaccessreviews",)),
    ]
    names = {b.metadata.name for b in api.list(ClusterRoleBinding).items}
    assert "system:auth-delegator" not in names
