"""The ``serviceaccounts/token`` subresource over HTTP (``apiserver.tokenrequest``, ``rest``).

Upstream rules checked: ``TokenREST.Create`` (``pkg/registry/core/serviceaccount/storage/
token.go``, v1.32, default gates) and the create handler around it:

* 201 with the request echoed: name, namespace and ``creationTimestamp`` filled in,
  ``spec.audiences`` defaulted to the API audiences, ``expirationSeconds`` to 3600,
  ``boundObjectRef: null`` written out, ``status.token`` and ``expirationTimestamp`` =
  now + ``expirationSeconds``; kubectl's protobuf body is read like JSON;
* the errors in upstream's order and words: ``NamespaceLifecycle`` first (404 without the
  namespace, 403 while it terminates), a body name other than the URL's (422), a
  body namespace other than the URL's (the handler's 400), a missing account (404),
  ``ValidateTokenRequest`` (422 ``TokenRequest.authentication.k8s.io ""``), the bound
  object (404; a pod of another account 400; a kind other than Pod, Secret, Node 400 with
  the GroupVersionKind; a stale uid 409 ``Operation cannot be fulfilled on Pod``), and
  strict decoding (400); nothing is written by any of them;
* ``--service-account-max-token-expiration`` shortens with upstream's warning; the
  extension of pod-bound 3607-second tokens for the API audiences to a year (status
  still at the hour, ``warnafter`` at the hour), and not otherwise;
* who may ask: ``create`` on ``serviceaccounts/token`` (admins; tenant users in their
  namespaces, as the ``admin`` role grants it); others get the RBAC-style 403;
* discovery lists ``serviceaccounts/token`` (TokenRequest, authentication.k8s.io/v1,
  ``create``) in both forms; without an issuer the subresource is a 404;
* the token it issues authenticates (whoami) and is authorized by the tenant policy by
  its user name or its groups.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from kubeprio.api.core import Namespace
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.secret import Secret
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.tenant import Tenant, TenantSpec
from kubeprio.apiserver import protobuf
from kubeprio.apiserver.authn import TokenAuthenticator, UnionAuthenticator
from kubeprio.apiserver.authz import TenantAuthorizer
from kubeprio.apiserver.serviceaccountauthn import (
    ServiceAccountTokenAuthenticator,
    StoreTokenGetter,
)
from kubeprio.apiserver.tokenrequest import TokenIssuer
from kubeprio.apiserver.tokensigning import PublicKeys, TokenSigner
from kubeprio.clock import rfc3339
from kubeprio.store.interface import ObjectKey
from tests.builders import node, pod
from tests.conftest import EPOCH
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    AGGREGATED_ACCEPT,
    ALICE,
    BOB,
    TENANCY_TOKENS,
    create_tenancy,
    make_client,
)
from tests.unit.apiserver.test_protobuf import body as protobuf_body
from tests.unit.apiserver.test_protobuf import msg, num
from tests.unit.apiserver.token_helpers import ISSUER, part, rsa_key

URL = "/api/v1/namespaces/team-a/serviceaccounts/deployer/token"
YEAR = 365 * 24 * 3600
KUBECTL_BODY = {
    "kind": "TokenRequest",
    "apiVersion": "authentication.k8s.io/v1",
    "metadata": {"creationTimestamp": None},
    "spec": {"audiences": None, "expirationSeconds": None, "boundObjectRef": None},
    "status": {"token": "", "expirationTimestamp": None},
}
"""What client-go's JSON encoder writes for kubectl's empty TokenRequest."""


def _issuer(**options: Any) -> TokenIssuer:
    signer = TokenSigner(ISSUER, rsa_key())
    return TokenIssuer(signer, api_audiences=(ISSUER,), rng=random.Random(7), **options)


def _client(api, clock, issuer: TokenIssuer | None):
    create_tenancy(api)
    api.create_object(ServiceAccount(metadata=ObjectMeta(name="deployer", namespace="team-a")))
    keys = PublicKeys([rsa_key().public_key()])
    accounts = ServiceAccountTokenAuthenticator(
        issuers=[ISSUER],
        keys=keys,
        api_audiences=[ISSUER],
        getter=StoreTokenGetter(api.store),
        clock=clock,
    )
    return make_client(
        api,
        authenticator=UnionAuthenticator([TokenAuthenticator(TENANCY_TOKENS), accounts]),
        authorizer=TenantAuthorizer(api.listers),
        token_issuer=issuer,
    )


@pytest.fixture
def http(api, clock):
    return _client(api, clock, _issuer())


def _spec(**spec: Any) -> dict[str, Any]:
    return {**KUBECTL_BODY, "spec": {**KUBECTL_BODY["spec"], **spec}}


def _token(response) -> str:
    assert response.status_code == 201, response.text
    token: str = response.json()["status"]["token"]
    return token


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_token_request_is_answered_with_the_request_and_its_token(http, api):
    response = http.post(URL, json=KUBECTL_BODY, headers=ADMIN)
    assert response.status_code == 201, response.text
    body = response.json()
    token = body["status"].pop("token")
    assert body == {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": "deployer",
            "namespace": "team-a",
            "creationTimestamp": rfc3339(EPOCH),
        },
        "spec": {"audiences": [ISSUER], "expirationSeconds": 3600, "boundObjectRef": None},
        "status": {"expirationTimestamp": rfc3339(EPOCH + 3600)},
    }
    account_uid = api.get(ServiceAccount, "deployer", "team-a").metadata.uid
    claims = part(token, 1)
    jti = claims.pop("jti")
    assert len(jti) == 36
    assert claims == {
        "aud": [ISSUER],
        "exp": int(EPOCH) + 3600,
        "iat": int(EPOCH),
        "iss": ISSUER,
        "kubernetes.io": {
            "namespace": "team-a",
            "serviceaccount": {"name": "deployer", "uid": account_uid},
        },
        "nbf": int(EPOCH),
        "sub": "system:serviceaccount:team-a:deployer",
    }


def test_kubectls_protobuf_body_is_read(http):
    # TokenRequest{metadata=1, spec=2{audiences=1, boundObjectRef=3{kind=1, apiVersion=2,
    # name=3}, expirationSeconds=4}}, as kubectl create token --audience --duration sends it.
    spec = msg(1, "vault") + num(4, 1200)
    raw = msg(1, b"") + msg(2, spec)
    response = http.post(
        URL,
        content=protobuf_body("authentication.k8s.io/v1", "TokenRequest", raw),
        headers={**ADMIN, "Content-Type": protobuf.CONTENT_TYPE},
    )
    assert response.status_code == 201, response.text
    assert response.json()["spec"] == {
        "audiences": ["vault"],
        "expirationSeconds": 1200,
        "boundObjectRef": None,
    }


def test_who_a_token_is(http, api):
    token = _token(http.post(URL, json=KUBECTL_BODY, headers=ADMIN))
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    answer = http.post(
        "/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review, headers=_bearer(token)
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"]["userInfo"] == {
        "username": "system:serviceaccount:team-a:deployer",
        "uid": api.get(ServiceAccount, "deployer", "team-a").metadata.uid,
        "groups": [
            "system:serviceaccounts",
            "system:serviceaccounts:team-a",
            "system:authenticated",
        ],
        "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={part(token, 1)['jti']}"]},
    }


def _setup_bound_objects(api):
    api.create_object(node("node-1").build())
    api.create_object(
        pod("web-1", "team-a").on("node-1").spec(service_account_name="deployer").build()
    )
    api.create_object(pod("other", "team-a").spec(service_account_name="default").build())
    api.create_object(Secret(metadata=ObjectMeta(name="s", namespace="team-a")))


@pytest.mark.parametrize(
    ("request_body", "code", "reason", "message"),
    [
        (_spec(expirationSeconds=599), 422, "Invalid",
         'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid '
         "value: 599: may not specify a duration less than 10 minutes"),
        (_spec(expirationSeconds=(1 << 32) + 1), 422, "Invalid",
         'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid '
         "value: 4294967297: may not specify a duration larger than 2^32 seconds"),
        ({**KUBECTL_BODY, "metadata": {"name": "other"}}, 422, "Invalid",
         'TokenRequest.authentication.k8s.io "deployer" is invalid: metadata.name: Invalid '
         'value: "other": must match the service account name if specified'),
        ({**KUBECTL_BODY, "metadata": {"namespace": "team-b"}}, 400, "BadRequest",
         "the namespace of the provided object does not match the namespace sent on the request"),
        (_spec(boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "nope"}), 404, "NotFound",
         'pods "nope" not found'),
        (_spec(boundObjectRef={"kind": "Secret", "apiVersion": "v1", "name": "nope"}), 404,
         "NotFound", 'secrets "nope" not found'),
        (_spec(boundObjectRef={"kind": "Node", "apiVersion": "v1", "name": "nope"}), 404,
         "NotFound", 'nodes "nope" not found'),
        (_spec(boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "other"}), 400,
         "BadRequest", 'cannot bind token for serviceaccount "deployer" to pod running with '
         "different serviceaccount name."),
        (_spec(boundObjectRef={"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}), 400,
         "BadRequest", "cannot bind token to object of type /v1, Kind=ConfigMap"),
        (_spec(boundObjectRef={"kind": "Deployment", "apiVersion": "apps/v1", "name": "d"}), 400,
         "BadRequest", "cannot bind token to object of type apps/v1, Kind=Deployment"),
        (_spec(boundObjectRef={"kind": "Secret", "apiVersion": "v1", "name": "s", "uid": "stale"}),
         409, "Conflict", 'Operation cannot be fulfilled on Secret "s": the UID in the bound '
         "object reference (stale) does not match the UID in record. The object might have "
         "been deleted and then recreated"),
        (_spec(foo=1), 400, "BadRequest",
         'TokenRequest in version "v1" cannot be handled as a TokenRequest: strict decoding '
         'error: unknown field "spec.foo"'),
        ({**KUBECTL_BODY, "apiVersion": "v1"}, 400, "BadRequest",
         "the API version in the data (v1) does not match the expected API version "
         "(authentication.k8s.io/v1)"),
    ],
    ids=["too-short", "too-long", "other-name", "other-namespace", "pod-missing", "secret-missing",
         "node-missing", "pod-of-another-account", "configmap", "deployment", "stale-uid",
         "unknown-field", "wrong-api-version"],
)  # fmt: skip
def test_bad_requests_get_upstreams_status_and_change_nothing(
    http, api, request_body, code, reason, message
):
    _setup_bound_objects(api)
    revision = api.store.current_revision()
    response = http.post(URL + "?fieldValidation=Strict", json=request_body, headers=ADMIN)
    assert (response.status_code, response.json()["reason"], response.json()["message"]) == (
        code,
        reason,
        message,
    )
    assert api.store.current_revision() == revision


def test_the_errors_carry_kubernetes_details(http, api):
    invalid = http.post(URL, json=_spec(expirationSeconds=60), headers=ADMIN).json()
    assert invalid["details"] == {
        "group": "authentication.k8s.io",
        "kind": "TokenRequest",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 60: may not specify a duration less than 10 minutes",
                "field": "spec.expirationSeconds",
            }
        ],
    }
    missing = http.post(
        "/api/v1/namespaces/team-a/serviceaccounts/nope/token", json=KUBECTL_BODY, headers=ADMIN
    )
    assert missing.status_code == 404
    assert missing.json()["message"] == 'serviceaccounts "nope" not found'
    assert missing.json()["details"] == {"name": "nope", "kind": "serviceaccounts"}
    _setup_bound_objects(api)
    stale = {"kind": "Pod", "apiVersion": "v1", "name": "web-1", "uid": "stale"}
    conflict = http.post(URL, json=_spec(boundObjectRef=stale), headers=ADMIN).json()
    assert conflict["details"] == {"name": "web-1", "kind": "Pod"}


def test_namespace_lifecycle_comes_first(http, api):
    missing = http.post(
        "/api/v1/namespaces/nope/serviceaccounts/deployer/token",
        json=_spec(expirationSeconds=60),
        headers=ADMIN,
    )
    assert (missing.status_code, missing.json()["message"]) == (404, 'namespaces "nope" not found')
    team_b = api.get(Namespace, "team-b")
    api.create_object(ServiceAccount(metadata=ObjectMeta(name="robot", namespace="team-b")))
    finalizing = dataclasses.replace(team_b.metadata, finalizers=("example.com/hold",))
    api.update_object(dataclasses.replace(team_b, metadata=finalizing))
    api.delete_object(Namespace, "team-b")
    terminating = http.post(
        "/api/v1/namespaces/team-b/serviceaccounts/robot/token", json=KUBECTL_BODY, headers=ADMIN
    )
    assert (terminating.status_code, terminating.json()["message"]) == (
        403,
        'serviceaccounts "robot" is forbidden: unable to create new content in namespace '
        "team-b because it is being terminated",
    )


def test_the_account_is_looked_up_before_the_lifetime_is_validated(http):
    response = http.post(
        "/api/v1/namespaces/team-a/serviceaccounts/nope/token",
        json=_spec(expirationSeconds=60),
        headers=ADMIN,
    )
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("bound", "claim"),
    [
        ({"kind": "Pod", "apiVersion": "v1", "name": "web-1"}, "pod"),
        ({"kind": "Secret", "apiVersion": "v1", "name": "s"}, "secret"),
        ({"kind": "Node", "apiVersion": "v1", "name": "node-1"}, "node"),
    ],
    ids=["pod", "secret", "node"],
)
def test_a_bound_token_names_its_object_and_the_answer_echoes_the_reference(
    http, api, bound, claim
):
    _setup_bound_objects(api)
    response = http.post(URL, json=_spec(boundObjectRef=bound), headers=ADMIN)
    token = _token(response)
    assert response.json()["spec"]["boundObjectRef"] == bound
    kind = {"pod": "pods", "secret": "secrets", "node": "nodes"}[claim]
    namespace = None if claim == "node" else "team-a"
    stored = api.store.get(ObjectKey(kind, namespace or "", bound["name"]))
    assert part(token, 1)["kubernetes.io"][claim] == {
        "name": bound["name"],
        "uid": stored.metadata.uid,
    }


def test_a_longer_lifetime_than_the_maximum_is_shortened_with_a_warning(api, clock):
    http = _client(api, clock, _issuer(max_expiration_seconds=7200))
    response = http.post(URL, json=_spec(expirationSeconds=10800), headers=ADMIN)
    token = _token(response)
    assert response.headers.get_list("Warning") == [
        '299 - "requested expiration of 10800 seconds shortened to 7200 seconds"'
    ]
    assert response.json()["spec"]["expirationSeconds"] == 7200
    assert response.json()["status"]["expirationTimestamp"] == rfc3339(EPOCH + 7200)
    assert part(token, 1)["exp"] == int(EPOCH) + 7200
    quiet = http.post(URL, json=_spec(expirationSeconds=3600), headers=ADMIN)
    assert quiet.status_code == 201
    assert "Warning" not in quiet.headers


@pytest.mark.parametrize(
    ("options", "spec", "extended"),
    [
        ({}, {"expirationSeconds": 3607}, True),
        ({}, {"expirationSeconds": 3607, "audiences": [ISSUER]}, True),
        ({}, {"expirationSeconds": 3607, "audiences": ["vault"]}, False),
        ({}, {"expirationSeconds": 3600}, False),
        ({"extend_expiration": False}, {"expirationSeconds": 3607}, False),
    ],
    ids=[
        "admission-lifetime",
        "api-audience",
        "foreign-audience",
        "other-lifetime",
        "switched-off",
    ],
)
def test_pod_tokens_asked_for_3607_seconds_last_a_year(api, clock, options, spec, extended):
    http = _client(api, clock, _issuer(**options))
    _setup_bound_objects(api)
    bound = {"kind": "Pod", "apiVersion": "v1", "name": "web-1"}
    response = http.post(URL, json=_spec(boundObjectRef=bound, **spec), headers=ADMIN)
    claims = part(_token(response), 1)
    lifetime = spec["expirationSeconds"]
    assert response.json()["status"]["expirationTimestamp"] == rfc3339(EPOCH + lifetime)
    if extended:
        assert claims["exp"] == int(EPOCH) + YEAR
        assert claims["kubernetes.io"]["warnafter"] == int(EPOCH) + 3607
    else:
        assert claims["exp"] == int(EPOCH) + lifetime
        assert "warnafter" not in claims["kubernetes.io"]


def test_an_unbound_3607_second_token_is_not_extended(http):
    claims = part(_token(http.post(URL, json=_spec(expirationSeconds=3607), headers=ADMIN)), 1)
    assert claims["exp"] == int(EPOCH) + 3607


@pytest.mark.parametrize(
    ("headers", "code"),
    [(ADMIN, 201), (ALICE, 201), (BOB, 403)],
    ids=["admin", "tenant-user", "outsider"],
)
def test_who_may_create_tokens(http, headers, code):
    response = http.post(URL, json=KUBECTL_BODY, headers=headers)
    assert response.status_code == code, response.text
    if code == 403:
        assert response.json()["message"] == (
            'serviceaccounts "deployer" is forbidden: User "bob" cannot create resource '
            '"serviceaccounts/token" in API group "" in the namespace "team-a"'
        )


def test_a_tenant_user_may_not_create_tokens_outside_its_namespaces(http, api):
    api.create_object(ServiceAccount(metadata=ObjectMeta(name="robot", namespace="other")))
    response = http.post(
        "/api/v1/namespaces/other/serviceaccounts/robot/token", json=KUBECTL_BODY, headers=ALICE
    )
    assert response.status_code == 403


def test_an_account_acts_where_a_tenant_names_it_or_its_group(http, api):
    token = _bearer(_token(http.post(URL, json=KUBECTL_BODY, headers=ADMIN)))
    refused = http.get("/api/v1/namespaces/team-a/pods", headers=token)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'pods is forbidden: User "system:serviceaccount:team-a:deployer" cannot list resource '
        '"pods" in API group "" in the namespace "team-a"'
    )
    api.create_object(Namespace(metadata=ObjectMeta(name="team-c")))
    api.create_object(
        Tenant(
            metadata=ObjectMeta(name="robots"),
            spec=TenantSpec(namespaces=("team-c",), groups=("system:serviceaccounts:team-a",)),
        )
    )
    assert http.get("/api/v1/namespaces/team-c/pods", headers=token).status_code == 200
    assert http.get("/api/v1/namespaces/team-a/pods", headers=token).status_code == 403
    kestrel = api.get(Tenant, "kestrel")
    assert kestrel.spec is not None
    users = ("alice", "system:serviceaccount:team-a:deployer")
    spec = TenantSpec(namespaces=kestrel.spec.namespaces, users=users, groups=kestrel.spec.groups)
    api.update_object(Tenant(metadata=kestrel.metadata, spec=spec))
    assert http.get("/api/v1/namespaces/team-a/pods", headers=token).status_code == 200


def test_a_bad_token_is_a_bare_401(http):
    token = _token(http.post(URL, json=KUBECTL_BODY, headers=ADMIN))
    header, payload, signature = token.split(".")
    for bad in (f"{header}.{payload}.{signature[:-4]}AAAA", "not-a-token", f"{header}.{payload}"):
        response = http.get("/api/v1/namespaces/team-a/pods", headers=_bearer(bad))
        assert response.status_code == 401
        assert response.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Unauthorized",
            "reason": "Unauthorized",
            "code": 401,
        }


def test_without_an_issuer_the_subresource_is_not_found(api, clock):
    http = _client(api, clock, None)
    response = http.post(URL, json=KUBECTL_BODY, headers=ADMIN)
    assert response.status_code == 404
    assert response.json()["message"] == "the server could not find the requested resource"


def test_other_verbs_on_the_subresource_are_not_allowed(http):
    assert http.get(URL, headers=ADMIN).status_code == 405


def test_discovery_lists_the_token_subresource(http):
    aggregated = http.get("/api", headers={**ADMIN, "Accept": AGGREGATED_ACCEPT}).json()
    resources = {r["resource"]: r for r in aggregated["items"][0]["versions"][0]["resources"]}
    assert resources["serviceaccounts"]["subresources"] == [
        {
            "subresource": "token",
            "responseKind": {
                "group": "authentication.k8s.io",
                "version": "v1",
                "kind": "TokenRequest",
            },
            "verbs": ["create"],
        }
    ]
    legacy = {r["name"]: r for r in http.get("/api/v1", headers=ADMIN).json()["resources"]}
    assert legacy["serviceaccounts/token"] == {
        "name": "serviceaccounts/token",
        "singularName": "",
        "namespaced": True,
        "group": "authentication.k8s.io",
        "version": "v1",
        "kind": "TokenRequest",
        "verbs": ["create"],
    }
