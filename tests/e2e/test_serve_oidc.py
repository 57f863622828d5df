"""Service account issuer discovery and secret-based tokens in a live ``kubeprio serve``,
with the real kubectl and the official Python client.

What a user of a real v1.32 cluster sees:

* ``kubectl get --raw /.well-known/openid-configuration`` and ``/openid/v1/jwks``
  (``pkg/serviceaccount/openidmetadata.go``, ``pkg/routes/openidmetadata.go``): the issuer,
  the JWKS URI on the server's address, ``application/json`` and
  ``application/jwk-set+json`` with ``Cache-Control: public, max-age=3600``; the Python
  client's ``WellKnownApi``/``OpenidApi`` read the same documents; a token the server
  issued verifies against the served keys in PyJWT, by its ``kid``;
* every service account may read them (``system:service-account-issuer-discovery`` bound to
  ``system:serviceaccounts``), another user is Forbidden, nobody anonymous (401);
* a ``kubernetes.io/service-account-token`` Secret is filled by the tokens controller
  (``pkg/controller/serviceaccount/tokens_controller.go``): ``token``, ``ca.crt``,
  ``namespace``, the uid annotation; ``kubectl describe sa`` lists it under ``Tokens``;
  its token authenticates as the account and stamps ``kubernetes.io/legacy-token-last-used``
  (``pkg/serviceaccount/legacy.go``); deleting the Secret ends the token; a Secret naming a
  missing account is deleted.
"""

from __future__ import annotations

import base64
import datetime
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator

import jwt
import pytest
import yaml
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

ISSUER = "https://kubernetes.default.svc.cluster.local"
UNAUTHORIZED = "error: You must be logged in to the server (Unauthorized)\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-oidc", ["--nodes", "1"]) as server:
        yield server


def _get(served: ServeProcess, path: str, token: str | None) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTPS GET (status, headers, body): what a relying party outside kubectl sees."""
    context = ssl.create_default_context(cafile=str(served.data_dir / "pki" / "ca.crt"))
    request = urllib.request.Request(served.url + path)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, context=context) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_discovery_documents_with_kubectl(served):
    config = json.loads(served.ok("get", "--raw", "/.well-known/openid-configuration"))
    assert config == {
        "issuer": ISSUER,
        "jwks_uri": f"{served.url}/openid/v1/jwks",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }
    (key,) = json.loads(served.ok("get", "--raw", "/openid/v1/jwks"))["keys"]
    assert list(key) == ["use", "kty", "kid", "alg", "n", "e"]
    assert (key["use"], key["kty"], key["alg"], key["e"]) == ("sig", "RSA", "RS256", "AQAB")


def test_a_service_account_reads_the_keys_and_verifies_its_token(served):
    ns = new_namespace(served, "oidc")
    served.ok("create", "sa", "relying", "-n", ns)
    token = served.ok("create", "token", "relying", "-n", ns).strip()
    status, headers, body = _get(served, "/openid/v1/jwks", token)
    assert status == 200
    assert headers["content-type"] == "application/jwk-set+json"
    assert headers["cache-control"] == "public, max-age=3600"
    status, headers, _ = _get(served, "/.well-known/openid-configuration", token)
    assert (status, headers["content-type"]) == (200, "application/json")
    # PyJWT rebuilds the key from the JWKS alone and checks a token meant for another
    # audience (which the API itself refuses); the token's kid picks the key.
    vault = served.ok("create", "token", "relying", "-n", ns, "--audience", "vault").strip()
    assert _get(served, "/openid/v1/jwks", vault)[0] == 401
    keyset = jwt.PyJWKSet.from_json(body.decode())
    kid = jwt.get_unverified_header(vault)["kid"]
    (key,) = [k for k in keyset.keys if k.key_id == kid]
    claims = jwt.decode(vault, key.key, algorithms=["RS256"], audience="vault", issuer=ISSUER)
    assert claims["sub"] == f"system:serviceaccount:{ns}:relying"


def test_other_users_are_forbidden_and_nobody_is_anonymous(served):
    refused = served.kubectl("--as", "bob", "get", "--raw", "/openid/v1/jwks")
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (Forbidden): forbidden: User "bob" cannot get path "/openid/v1/jwks"\n'
    )
    status, _, body = _get(served, "/.well-known/openid-configuration", None)
    assert status == 401
    assert json.loads(body)["reason"] == "Unauthorized"


def test_the_official_python_client_reads_both_documents(served):
    # The client's generated methods are declared to return a str; the raw answer is JSON.
    with served.client() as api:
        config = k8s.WellKnownApi(api).get_service_account_issuer_open_id_configuration(
            _preload_content=False
        )
        keyset = k8s.OpenidApi(api).get_service_account_issuer_open_id_keyset(
            _preload_content=False
        )
        assert json.loads(config.data)["issuer"] == ISSUER
        assert config.headers["content-type"] == "application/json"
        assert json.loads(keyset.data)["keys"][0]["kty"] == "RSA"
        assert keyset.headers["content-type"] == "application/jwk-set+json"


def _token_secret(served: ServeProcess, ns: str, name: str, account: str) -> None:
    document = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                "metadata": {"name": name, "namespace": ns,
                             "annotations": {"kubernetes.io/service-account.name": account}}}  # fmt: skip
    served.ok("apply", "-f", "-", stdin=yaml.safe_dump(document))


def _secret_token(served: ServeProcess, ns: str, name: str) -> str:
    def filled() -> str:
        return served.ok("get", "secret", name, "-n", ns, "-o", "jsonpath={.data.token}")

    return base64.b64decode(eventually(filled)).decode()


def test_a_token_secret_is_filled_and_its_token_works_until_deleted(served):
    ns = new_namespace(served, "legacy")
    served.ok("create", "sa", "robot", "-n", ns)
    _token_secret(served, ns, "robot-token", "robot")
    token = _secret_token(served, ns, "robot-token")
    secret = served.json("get", "secret", "robot-token", "-n", ns)
    uid = served.ok("get", "sa", "robot", "-n", ns, "-o", "jsonpath={.metadata.uid}")
    assert sorted(secret["data"]) == ["ca.crt", "namespace", "token"]
    assert base64.b64decode(secret["data"]["namespace"]).decode() == ns
    ca = (served.data_dir / "pki" / "ca.crt").read_bytes()
    assert base64.b64decode(secret["data"]["ca.crt"]) == ca
    assert secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == uid
    assert jwt.decode(token, options={"verify_signature": False})["iss"] == (
        "kubernetes/serviceaccount"
    )
    described = served.ok("describe", "sa", "robot", "-n", ns)
    assert "Tokens:              robot-token\n" in described
    whoami = served.ok("--token", token, "auth", "whoami")
    assert f"system:serviceaccount:{ns}:robot" in whoami
    today = datetime.datetime.now(datetime.UTC).date()
    stamped = served.ok("get", "secret", "robot-token", "-n", ns, "-o",
                        "jsonpath={.metadata.labels.kubernetes\\.io/legacy-token-last-used}")  # fmt: skip
    assert stamped in (today.isoformat(), (today + datetime.timedelta(days=1)).isoformat())
    # kubectl create token keeps working beside the secret-based token.
    bound = served.ok("create", "token", "robot", "-n", ns).strip()
    assert f"system:serviceaccount:{ns}:robot" in served.ok("--token", bound, "auth", "whoami")
    served.ok("delete", "secret", "robot-token", "-n", ns)
    refused = served.kubectl("--token", token, "auth", "whoami")
    assert (refused.returncode, refused.stderr) == (1, UNAUTHORIZED)


def test_a_secret_naming_a_missing_account_is_deleted(served):
    ns = new_namespace(served, "legacy")
    _token_secret(served, ns, "ghost-token", "ghost")

    def gone() -> bool:
        return served.kubectl("get", "secret", "ghost-token", "-n", ns).returncode == 1

    eventually(gone)


def test_the_python_client_creates_a_token_secret_and_reviews_its_token(served):
    ns = new_namespace(served, "legacy")
    served.ok("create", "sa", "bot", "-n", ns)
    secret = k8s.V1Secret(
        metadata=k8s.V1ObjectMeta(
            name="bot-token", annotations={"kubernetes.io/service-account.name": "bot"}
        ),
        type="kubernetes.io/service-account-token",
    )
    with served.client() as api:
        k8s.CoreV1Api(api).create_namespaced_secret(ns, secret)
        token = _secret_token(served, ns, "bot-token")
        review = k8s.AuthenticationV1Api(api).create_token_review(
            k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token=token))
        )
        assert review.status.authenticated is True
        assert review.status.user.username == f"system:serviceaccount:{ns}:bot"
        k8s.CoreV1Api(api).delete_namespaced_service_account("bot", ns)
        # The account's deletion takes its token Secret along.
        eventually(lambda: not k8s.CoreV1Api(api).list_namespaced_secret(ns).items)
        review = k8s.AuthenticationV1Api(api).create_token_review(
            k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token=token))
        )
    assert review.status.authenticated is None
    assert review.status.error == "[invalid bearer token, Token has been invalidated]"
