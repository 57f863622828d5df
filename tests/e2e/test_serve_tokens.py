"""Service account tokens in a live ``kubeprio serve``, with the real kubectl and the
official Python client.

What a user of a real v1.32 cluster sees (``kubectl create token``:
``staging/src/k8s.io/kubectl/pkg/cmd/create/create_token.go``; the server side:
``pkg/registry/core/serviceaccount/storage/token.go`` and ``pkg/serviceaccount``):

* ``kubectl create token deployer -n team-a --duration=1h`` prints a JWT;
  ``kubectl --token=... auth whoami`` shows ``system:serviceaccount:team-a:deployer``, the
  account's uid, the groups ``system:serviceaccounts``, ``system:serviceaccounts:team-a``,
  ``system:authenticated`` and the ``credential-id`` extra (``JTI=`` the token's jti);
* the account is authorized by its user name or groups: Forbidden with upstream's text
  until a Tenant names it;
* bound tokens (``--bound-object-kind Pod|Secret|Node``) carry the pod and node extras and
  die with their object; a token of a deleted account dies too, also once the account is
  created again; every such refusal is kubectl's "You must be logged in" (a bare 401);
* errors in upstream's words, after kubectl's ``failed to create token:``; the maximum
  lifetime's warning; a tenant user may create tokens only in its namespaces;
* a token issued before a restart still works after it (the key is kept in the data dir).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from collections.abc import Iterator

import pytest
import yaml
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    KUBECTL,
    ServeProcess,
    needs_kubectl,
    new_namespace,
    running,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

ISSUER = "https://kubernetes.default.svc.cluster.local"
UNAUTHORIZED = "error: You must be logged in to the server (Unauthorized)\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(
        tmp_path_factory,
        "serve-tokens",
        ["--nodes", "1", "--preset", "kestrel", "--service-account-max-token-expiration", "48h"],
    ) as server:
        yield server


@pytest.fixture
def ns(served: ServeProcess) -> str:
    """A namespace with the account ``deployer``."""
    name = new_namespace(served, "team")
    served.ok("create", "sa", "deployer", "-n", name)
    return name


def _claims(token: str) -> dict:
    payload = token.split(".")[1]
    decoded: dict = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return decoded


def _whoami(served: ServeProcess, token: str) -> list[list[str]]:
    out = served.ok("--token", token, "auth", "whoami")
    # Columns are padded with spaces; an attribute ("Extra: <key>") has single ones.
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines()]


def _uid(served: ServeProcess, kind: str, name: str, ns: str | None = None) -> str:
    where = ["-n", ns] if ns else []
    return served.ok("get", kind, name, *where, "-o", "jsonpath={.metadata.uid}")


def _tenant(served: ServeProcess, name: str, ns: str, **subjects: list[str]) -> None:
    spec = {"namespaces": [ns], **subjects}
    document = {"apiVersion": "kubeprio.io/v1alpha1", "kind": "Tenant",
                "metadata": {"name": name}, "spec": spec}  # fmt: skip
    served.ok("apply", "-f", "-", stdin=yaml.safe_dump(document))


def test_create_token_then_whoami_and_a_forbidden_list(served, ns):
    token = served.ok("create", "token", "deployer", "-n", ns, "--duration=1h")
    claims = _claims(token)
    assert claims["exp"] - claims["iat"] == 3600
    assert (claims["iss"], claims["aud"]) == (ISSUER, [ISSUER])
    assert _whoami(served, token) == [
        ["ATTRIBUTE", "VALUE"],
        ["Username", f"system:serviceaccount:{ns}:deployer"],
        ["UID", _uid(served, "sa", "deployer", ns)],
        ["Groups", f"[system:serviceaccounts system:serviceaccounts:{ns} system:authenticated]"],
        ["Extra: authentication.kubernetes.io/credential-id", f"[JTI={claims['jti']}]"],
    ]
    refused = served.kubectl("--token", token, "get", "pods", "-n", ns)
    assert refused.returncode == 1
    assert refused.stderr == (
        f'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:{ns}:'
        f'deployer" cannot list resource "pods" in API group "" in the namespace "{ns}"\n'
    )


def test_an_account_acts_where_a_tenant_names_it_or_its_group(served, ns):
    token = served.ok("create", "token", "deployer", "-n", ns)
    _tenant(served, f"{ns}-users", ns, users=[f"system:serviceaccount:{ns}:deployer"])
    assert served.ok("--token", token, "run", "p", "--image=nginx", "-n", ns) == "pod/p created\n"
    assert served.ok("--token", token, "get", "pods", "-n", ns, "-o", "name") == "pod/p\n"
    elsewhere = served.kubectl("--token", token, "get", "pods", "-n", "kestrel-web")
    assert "Error from server (Forbidden)" in elsewhere.stderr
    served.ok("delete", "tenant", f"{ns}-users")
    # Every account of the namespace, through its group.
    served.ok("create", "sa", "robot", "-n", ns)
    robot = served.ok("create", "token", "robot", "-n", ns)
    assert served.kubectl("--token", robot, "get", "pods", "-n", ns).returncode == 1
    _tenant(served, f"{ns}-groups", ns, groups=[f"system:serviceaccounts:{ns}"])
    assert served.ok("--token", robot, "get", "pods", "-n", ns, "-o", "name") == "pod/p\n"
    assert served.ok("--token", robot, "auth", "can-i", "create", "pods", "-n", ns) == "yes\n"


def test_a_pod_bound_token_names_the_pod_and_dies_with_it(served, ns):
    served.ok("run", "web", "--image=nginx", "-n", ns,
              '--overrides={"spec":{"serviceAccountName":"deployer"}}')  # fmt: skip
    node = served.ok("get", "pod", "web", "-n", ns, "-o", "jsonpath={.spec.nodeName}")
    token = served.ok(
        "create", "token", "deployer", "-n", ns, "--bound-object-kind", "Pod",
        "--bound-object-name", "web",
    )  # fmt: skip
    rows = dict(_whoami(served, token)[1:])
    assert rows["Extra: authentication.kubernetes.io/pod-name"] == "[web]"
    assert (
        rows["Extra: authentication.kubernetes.io/pod-uid"] == f"[{_uid(served, 'pod', 'web', ns)}]"
    )
    assert rows["Extra: authentication.kubernetes.io/node-name"] == f"[{node}]"
    assert rows["Extra: authentication.kubernetes.io/node-uid"] == f"[{_uid(served, 'node', node)}]"
    served.ok("delete", "pod", "web", "-n", ns, "--grace-period=0", "--force")
    assert served.kubectl("--token", token, "auth", "whoami").stderr == UNAUTHORIZED


def test_secret_and_node_bound_tokens(served, ns):
    served.ok("create", "secret", "generic", "s", "-n", ns)
    token = served.ok(
        "create", "token", "deployer", "-n", ns, "--bound-object-kind", "Secret",
        "--bound-object-name", "s",
    )  # fmt: skip
    assert _claims(token)["kubernetes.io"]["secret"] == {
        "name": "s",
        "uid": _uid(served, "secret", "s", ns),
    }
    assert _whoami(served, token)[1] == ["Username", f"system:serviceaccount:{ns}:deployer"]
    served.ok("delete", "secret", "s", "-n", ns)
    assert served.kubectl("--token", token, "auth", "whoami").stderr == UNAUTHORIZED
    # kubectl offers Node only with KUBECTL_NODE_BOUND_TOKENS=true; the server takes it.
    assert KUBECTL is not None
    node_token = subprocess.run(
        [KUBECTL, "--kubeconfig", str(served.kubeconfig), "--cache-dir", str(served.cache_dir),
         "create", "token", "deployer", "-n", ns, "--bound-object-kind", "Node",
         "--bound-object-name", "node-1"],
        env={**os.environ, "KUBECTL_NODE_BOUND_TOKENS": "true"},
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout  # fmt: skip
    rows = dict(_whoami(served, node_token)[1:])
    assert rows["Extra: authentication.kubernetes.io/node-name"] == "[node-1]"
    assert "Extra: authentication.kubernetes.io/pod-name" not in rows


def test_a_deleted_account_and_its_namesake_do_not_honour_old_tokens(served, ns):
    token = served.ok("create", "token", "deployer", "-n", ns)
    served.ok("delete", "sa", "deployer", "-n", ns)
    assert served.kubectl("--token", token, "auth", "whoami").stderr == UNAUTHORIZED
    served.ok("create", "sa", "deployer", "-n", ns)
    assert served.kubectl("--token", token, "auth", "whoami").stderr == UNAUTHORIZED
    fresh = served.ok("create", "token", "deployer", "-n", ns)
    assert _whoami(served, fresh)[1] == ["Username", f"system:serviceaccount:{ns}:deployer"]


def test_a_changed_token_is_unauthorized(served, ns):
    token = served.ok("create", "token", "deployer", "-n", ns)
    header, _, signature = token.split(".")
    claims = _claims(token)
    claims["sub"] = "system:serviceaccount:kube-system:default"
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    for forged in (f"{header}.{forged_payload}.{signature}", token[:-3] + "abc"):
        assert served.kubectl("--token", forged, "auth", "whoami").stderr == UNAUTHORIZED


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (["nope"], 'error: failed to create token: serviceaccounts "nope" not found\n'),
        (["deployer", "--duration=5m"],
         'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: '
         "spec.expirationSeconds: Invalid value: 300: may not specify a duration less than "
         "10 minutes\n"),
        (["deployer", "--bound-object-kind", "Pod", "--bound-object-name", "nope"],
         'error: failed to create token: pods "nope" not found\n'),
        (["deployer", "--bound-object-kind", "Pod", "--bound-object-name", "other"],
         'error: failed to create token: cannot bind token for serviceaccount "deployer" to '
         "pod running with different serviceaccount name.\n"),
        (["default", "--bound-object-kind", "Pod", "--bound-object-name", "other",
          "--bound-object-uid", "0d4691ed-659b-4935-a832-355f77ee47cc"],
         'error: failed to create token: Operation cannot be fulfilled on Pod "other": the UID '
         "in the bound object reference (0d4691ed-659b-4935-a832-355f77ee47cc) does not match "
         "the UID in record. The object might have been deleted and then recreated\n"),
    ],
    ids=["no-account", "too-short", "no-pod", "pod-of-another-account", "stale-uid"],
)  # fmt: skip
def test_errors_in_upstreams_words(served, ns, args, stderr):
    if "other" in args:
        served.ok("run", "other", "--image=nginx", "-n", ns)
    result = served.kubectl("create", "token", *args, "-n", ns)
    assert (result.returncode, result.stderr, result.stdout) == (1, stderr, "")


def test_the_request_and_its_answer_as_yaml(served, ns):
    answer = yaml.safe_load(served.ok("create", "token", "deployer", "-n", ns, "-o", "yaml",
                                      "--audience", "vault", "--duration", "20m"))  # fmt: skip
    token = answer["status"].pop("token")
    assert _claims(token)["aud"] == ["vault"]
    assert answer["metadata"]["name"] == "deployer"
    assert answer["metadata"]["namespace"] == ns
    assert set(answer["metadata"]) == {"name", "namespace", "creationTimestamp"}
    assert answer["spec"] == {
        "audiences": ["vault"],
        "boundObjectRef": None,
        "expirationSeconds": 1200,
    }
    assert set(answer["status"]) == {"expirationTimestamp"}
    assert (answer["apiVersion"], answer["kind"]) == ("authentication.k8s.io/v1", "TokenRequest")
    # A token for another audience is no key to the API.
    assert served.kubectl("--token", token, "auth", "whoami").stderr == UNAUTHORIZED


def test_a_lifetime_over_the_maximum_is_shortened_with_a_warning(served, ns):
    result = served.kubectl("create", "token", "deployer", "-n", ns, "--duration=72h")
    assert result.returncode == 0
    assert (
        result.stderr
        == "Warning: requested expiration of 259200 seconds shortened to 172800 seconds\n"
    )
    claims = _claims(result.stdout)
    assert claims["exp"] - claims["iat"] == 172800


def test_a_tenant_user_creates_tokens_only_in_its_namespaces(served):
    served.ok("create", "sa", "builder", "-n", "kestrel-web")
    token = served.ok("create", "token", "builder", "-n", "kestrel-web", context="kubeprio-alice")
    assert _claims(token)["sub"] == "system:serviceaccount:kestrel-web:builder"
    refused = served.kubectl(
        "create", "token", "default", "-n", "default", context="kubeprio-alice"
    )
    assert refused.stderr == (
        'error: failed to create token: serviceaccounts "default" is forbidden: User "alice" '
        'cannot create resource "serviceaccounts/token" in API group "" in the namespace "default"\n'
    )


def test_the_official_python_client_requests_and_uses_a_token(served, ns):
    _tenant(served, f"{ns}-py", ns, users=[f"system:serviceaccount:{ns}:deployer"])
    served.ok("run", "p", "--image=nginx", "-n", ns)
    admin = yaml.safe_load(served.kubeconfig.read_text())["users"][0]["user"]["token"]

    def client(token: str) -> k8s.ApiClient:
        configuration = k8s.Configuration(host=served.url)
        configuration.ssl_ca_cert = str(served.data_dir / "pki" / "ca.crt")
        configuration.api_key = {"authorization": f"Bearer {token}"}
        return k8s.ApiClient(configuration)

    with client(admin) as api:
        request = k8s.AuthenticationV1TokenRequest(
            spec=k8s.V1TokenRequestSpec(audiences=[], expiration_seconds=900)
        )
        answer = k8s.CoreV1Api(api).create_namespaced_service_account_token("deployer", ns, request)
    assert answer.spec.audiences == [ISSUER]
    assert answer.spec.expiration_seconds == 900
    token = answer.status.token
    with client(token) as api:
        pods = k8s.CoreV1Api(api).list_namespaced_pod(ns)
        assert [pod.metadata.name for pod in pods.items] == ["p"]
        review = k8s.AuthenticationV1Api(api).create_self_subject_review(k8s.V1SelfSubjectReview())
        assert review.status.user_info.username == f"system:serviceaccount:{ns}:deployer"
        with pytest.raises(k8s.ApiException) as caught:
            k8s.CoreV1Api(api).list_namespaced_pod("kestrel-web")
        assert caught.value.status == 403


def test_a_token_issued_before_a_restart_works_after_it(tmp_path):
    server = ServeProcess(tmp_path / "data", tmp_path / "cache", ["--nodes", "1"]).start()
    try:
        server.ok("create", "ns", "team-a")
        server.ok("create", "sa", "deployer", "-n", "team-a")
        token = server.ok("create", "token", "deployer", "-n", "team-a")
        key = (tmp_path / "data" / "pki" / "sa.key").read_bytes()
    finally:
        assert server.stop() == 0, server.log()
    server.start()
    try:
        assert (tmp_path / "data" / "pki" / "sa.key").read_bytes() == key
        assert _whoami(server, token)[1] == ["Username", "system:serviceaccount:team-a:deployer"]
    finally:
        assert server.stop() == 0, server.log()


# --- TokenReview (pkg/registry/authentication/tokenreview/storage.go) -------------------------


def test_token_review_of_a_created_token_through_the_python_client(served, ns):
    token = served.ok("create", "token", "deployer", "-n", ns, "--audience", "vault")
    api = k8s.AuthenticationV1Api(served.client())
    review = api.create_token_review(
        k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token=token, audiences=["vault", "x"]))
    )
    assert review.status.authenticated is True
    assert review.status.audiences == ["vault"]
    assert review.status.user.username == f"system:serviceaccount:{ns}:deployer"
    assert review.status.user.uid == _uid(served, "sa", "deployer", ns)
    assert review.status.user.groups == [
        "system:serviceaccounts",
        f"system:serviceaccounts:{ns}",
        "system:authenticated",
    ]
    jti = _claims(token)["jti"]
    assert review.status.user.extra == {
        "authentication.kubernetes.io/credential-id": [f"JTI={jti}"]
    }
    # Not for the API's own audience: refused with the authenticator's reason.
    refused = api.create_token_review(k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token=token)))
    assert refused.status.authenticated is None
    assert refused.status.error == (
        f'[invalid bearer token, token audiences ["vault"] is invalid for the target audiences '
        f'["{ISSUER}"]]'
    )
    with pytest.raises(k8s.ApiException) as caught:
        api.create_token_review(k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token="")))
    assert caught.value.status == 400
    assert json.loads(caught.value.body)["message"] == (
        "token is required for TokenReview in authentication"
    )


def test_token_review_with_kubectl_and_the_auth_delegator_role(served, ns):
    token = served.ok("create", "token", "deployer", "-n", ns)
    document = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                           "spec": {"token": token}})  # fmt: skip
    out = json.loads(served.ok("create", "-f", "-", "-o", "json", stdin=document))
    assert out["status"]["authenticated"] is True
    assert out["status"]["audiences"] == [ISSUER]
    assert out["status"]["user"]["username"] == f"system:serviceaccount:{ns}:deployer"
    # The account itself may not review tokens until bound to system:auth-delegator.
    assert "tokenreviews" in served.ok("api-resources", "--api-group=authentication.k8s.io")
    denied = served.kubectl("--token", token, "auth", "can-i", "create", "tokenreviews")
    assert denied.stdout.startswith("no")
    served.ok("create", "clusterrolebinding", f"{ns}-delegator",
              "--clusterrole=system:auth-delegator", f"--serviceaccount={ns}:deployer")  # fmt: skip
    assert served.ok("--token", token, "auth", "can-i", "create", "tokenreviews") == "yes\n"
    again = json.loads(
        served.ok("--token", token, "create", "-f", "-", "-o", "json", stdin=document)
    )
    assert again["status"]["authenticated"] is True
    rules = served.json("get", "clusterrole", "system:auth-delegator", "-o", "json")["rules"]
    assert rules == [
        {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["tokenreviews"],
            "verbs": ["create"],
        },
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["subjectaccessreviews"],
            "verbs": ["create"],
        },
    ]
    # The role's second rule: the account may now ask about others (SubjectAccessReview).
    assert served.ok("--token", token, "auth", "can-i", "create", "subjectaccessreviews") == (
        "yes\n"
    )
