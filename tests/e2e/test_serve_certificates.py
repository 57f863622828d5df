"""Adding a user with a CertificateSigningRequest, as on a real v1.32 cluster.

The user makes a key and a PKCS#10 request (CN = user name, O = groups); the admin
``kubectl apply``s a certificates.k8s.io/v1 CertificateSigningRequest for the
``kubernetes.io/kube-apiserver-client`` signer and ``kubectl certificate approve``s it;
the csrsigning controller (``pkg/controller/certificates/signer``) signs it with the
cluster CA; the user's kubeconfig with that certificate logs in through x509 client
authentication (``request/x509``: CN -> user, O -> groups) and RBAC decides the rest.
Also: the Table columns (``printCertificateSigningRequest``), the strategy's requester
(``PrepareForCreate``), the CertificateApproval plugin's refusal without ``approve`` on the
signer, CertificateSubjectRestriction's refusal of ``system:masters``, and the official
client's ``CertificatesV1Api``.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
SIGNER_APPROVER = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: signer-approver}
rules:
- apiGroups: [certificates.k8s.io]
  resources: [signers]
  resourceNames: [kubernetes.io/*]
  verbs: [approve]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-csr", ["--nodes", "1"]) as server:
        yield server


def _key_and_request(
    common_name: str, organizations: tuple[str, ...] = ()
) -> tuple[ec.EllipticCurvePrivateKey, bytes]:
    """What ``openssl req -new -subj /CN=.../O=...`` makes: a key and a PEM request."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    subject += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name(subject))
        .sign(key, hashes.SHA256())
    )
    return key, request.public_bytes(serialization.Encoding.PEM)


def _manifest(name: str, request: bytes, extra: str = "") -> str:
    return (
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\n"
        f"metadata: {{name: {name}}}\nspec:\n"
        f"  request: {base64.b64encode(request).decode()}\n"
        f"  signerName: {CLIENT_SIGNER}\n  usages: [client auth]\n{extra}"
    )


def _issue(
    served: ServeProcess, name: str, organizations: tuple[str, ...] = ()
) -> tuple[ec.EllipticCurvePrivateKey, bytes]:
    """Create, approve and wait for the certificate of user ``name``."""
    key, request = _key_and_request(name, organizations)
    served.ok("apply", "-f", "-", stdin=_manifest(name, request, "  expirationSeconds: 86400\n"))
    served.ok("certificate", "approve", name)
    issued = eventually(
        lambda: served.ok("get", "csr", name, "-o", "jsonpath={.status.certificate}")
    )
    return key, base64.b64decode(issued)


def _user_kubeconfig(
    served: ServeProcess, tmp_path: Path, user: str, key: ec.EllipticCurvePrivateKey, cert: bytes
) -> Path:
    """A kubeconfig holding only the cluster and the user's key and certificate."""
    admin = yaml.safe_load(served.kubeconfig.read_text())
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": admin["clusters"],
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate-data": base64.b64encode(cert).decode(),
                    "client-key-data": base64.b64encode(key_pem).decode(),
                },
            }
        ],
        "contexts": [{"name": user, "context": {"cluster": "kubeprio", "user": user}}],
        "current-context": user,
    }
    path = tmp_path / f"{user}.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def _as(served: ServeProcess, config: Path, *args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    """kubectl with the user's kubeconfig instead of the admin's."""
    return served.kubectl("--kubeconfig", str(config), *args, stdin=stdin)


def test_a_user_added_by_csr_logs_in_with_the_signed_certificate(served, tmp_path):
    key, request = _key_and_request("jane", ("devs", "qa"))
    created = served.ok(
        "apply", "-f", "-", stdin=_manifest("jane", request, "  expirationSeconds: 86400\n")
    )
    assert created == "certificatesigningrequest.certificates.k8s.io/jane created\n"
    # PrepareForCreate: the requester is the admin who created it, whatever the body says.
    header, row = table_rows(served.ok("get", "csr", "jane"))
    assert header == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    assert row[0] == "jane"
    assert row[2:] == [CLIENT_SIGNER, "admin", "24h", "Pending"]
    assert served.ok("certificate", "approve", "jane") == (
        "certificatesigningrequest.certificates.k8s.io/jane approved\n"
    )
    issued = eventually(
        lambda: served.ok("get", "csr", "jane", "-o", "jsonpath={.status.certificate}")
    )
    assert table_rows(served.ok("get", "csr", "jane"))[1][-1] == "Approved,Issued"
    conditions = served.json("get", "csr", "jane")["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [
        ("Approved", "True", "KubectlApprove")
    ]
    assert conditions[0]["lastUpdateTime"]
    assert conditions[0]["lastTransitionTime"]
    cert = x509.load_pem_x509_certificate(base64.b64decode(issued))
    assert cert.subject.rfc4514_string() == "O=qa,O=devs,CN=jane"
    # expirationSeconds honoured (a long-lived certificate is backdated five minutes).
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert lifetime.total_seconds() == 86400
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]

    config = _user_kubeconfig(served, tmp_path, "jane", key, base64.b64decode(issued))
    whoami = _as(served, config, "auth", "whoami")
    assert whoami.returncode == 0, whoami.stderr
    assert table_rows(whoami.stdout) == [
        ["ATTRIBUTE", "VALUE"],
        ["Username", "jane"],
        ["Groups", "[devs", "qa", "system:authenticated]"],
    ]
    refused = _as(served, config, "get", "pods", "-n", "default")
    assert refused.stderr == (
        'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource '
        '"pods" in API group "" in the namespace "default"\n'
    )
    # RBAC on the certificate's group: devs may view the default namespace.
    served.ok(
        "create", "rolebinding", "devs-view", "--clusterrole=view", "--group=devs", "-n", "default"
    )
    allowed = eventually(
        lambda: _as(served, config, "get", "pods", "-n", "default").returncode == 0
    )
    assert allowed


def test_approving_needs_the_approve_verb_on_the_signer(served, tmp_path):
    key, cert = _issue(served, "approver")
    config = _user_kubeconfig(served, tmp_path, "approver", key, cert)
    _unused, request = _key_and_request("someone")
    served.ok("apply", "-f", "-", stdin=_manifest("someone", request))
    # RBAC lets the user reach the approval subresource; the CertificateApproval plugin
    # then asks for approve on the signer (plugin/pkg/admission/certificates/approval).
    served.ok(
        "create", "clusterrole", "csr-approver", "--verb=get,list,watch,update",
        "--resource=certificatesigningrequests,certificatesigningrequests/approval",
    )  # fmt: skip
    served.ok(
        "create",
        "clusterrolebinding",
        "csr-approver",
        "--clusterrole=csr-approver",
        "--user=approver",
    )
    refused = _as(served, config, "certificate", "approve", "someone")
    assert refused.stderr == (
        'Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io "someone" '
        "is forbidden: user not "
        f'permitted to approve requests with signerName "{CLIENT_SIGNER}"\n'
    )
    # signers is not a served resource (kubectl create clusterrole would refuse it): the
    # rule is applied as YAML, as the upstream docs show it.
    served.ok("apply", "-f", "-", stdin=SIGNER_APPROVER)
    served.ok(
        "create",
        "clusterrolebinding",
        "signer-approver",
        "--clusterrole=signer-approver",
        "--user=approver",
    )
    approved = _as(served, config, "certificate", "approve", "someone")
    assert approved.stdout == "certificatesigningrequest.certificates.k8s.io/someone approved\n"


def test_invalid_requests_get_upstreams_errors(served):
    _unused, request = _key_and_request("root", ("system:masters",))
    refused = served.kubectl("apply", "-f", "-", stdin=_manifest("root", request))
    assert refused.stderr == (
        'Error from server (Forbidden): error when creating "STDIN": '
        'certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of '
        f"{CLIENT_SIGNER} signer with system:masters group is not allowed\n"
    )
    short = served.kubectl(
        "apply",
        "-f",
        "-",
        stdin=_manifest("short", _key_and_request("s")[1], "  expirationSeconds: 60\n"),
    )
    assert short.stderr == (
        'The CertificateSigningRequest "short" is invalid: spec.expirationSeconds: Invalid '
        "value: 60: may not specify a duration less than 600 seconds (10 minutes)\n"
    )
    assert served.kubectl("get", "csr", "root").returncode == 1


def test_a_client_auth_less_request_fails_at_the_signer(served):
    _unused, request = _key_and_request("server-ish")
    manifest = _manifest("server-ish", request).replace("[client auth]", "[server auth]")
    served.ok("apply", "-f", "-", stdin=manifest)
    served.ok("certificate", "approve", "server-ish")
    conditions = eventually(
        lambda: len(c := served.json("get", "csr", "server-ish")["status"]["conditions"]) == 2 and c
    )
    failed = conditions[1]
    assert (failed["type"], failed["reason"], failed["message"]) == (
        "Failed",
        "SignerValidationFailure",
        "invalid usage for client certificate: server auth",
    )
    assert table_rows(served.ok("get", "csr", "server-ish"))[1][-1] == "Approved,Failed"


def test_a_denied_request_is_never_signed(served):
    _unused, request = _key_and_request("denied")
    served.ok("apply", "-f", "-", stdin=_manifest("denied", request))
    assert served.ok("certificate", "deny", "denied") == (
        "certificatesigningrequest.certificates.k8s.io/denied denied\n"
    )
    assert table_rows(served.ok("get", "csr", "denied"))[1][-1] == "Denied"
    # kubectl itself refuses to approve a denied request (the server would too:
    # validateConditions keeps Approved and Denied exclusive, tests/unit).
    assert served.kubectl("certificate", "approve", "denied", "--force").stderr == (
        'error: certificate signing request "denied" is already Denied\n'
    )
    assert not served.json("get", "csr", "denied")["status"].get("certificate")


def test_the_python_client_creates_approves_and_reads(served):
    _unused, request = _key_and_request("py-user", ("py",))
    with served.client() as api:
        certs = k8s.CertificatesV1Api(api)
        body = k8s.V1CertificateSigningRequest(
            metadata=k8s.V1ObjectMeta(name="py-user"),
            spec=k8s.V1CertificateSigningRequestSpec(
                request=base64.b64encode(request).decode(),
                signer_name=CLIENT_SIGNER,
                usages=["digital signature", "client auth"],
                username="not-me",
            ),
        )
        created = certs.create_certificate_signing_request(body)
        assert created.spec.username == "admin"
        assert "system:masters" in created.spec.groups
        created.status.conditions = [
            k8s.V1CertificateSigningRequestCondition(
                type="Approved", status="True", reason="PythonApprove", message="ok"
            )
        ]
        certs.replace_certificate_signing_request_approval("py-user", created)

        def issued() -> k8s.V1CertificateSigningRequest | None:
            current = certs.read_certificate_signing_request("py-user")
            return current if current.status.certificate else None

        done = eventually(issued)
        pem = base64.b64decode(done.status.certificate)
        cert = x509.load_pem_x509_certificate(pem)
        assert cert.subject.rfc4514_string() == "O=py,CN=py-user"
        names = [item.metadata.name for item in certs.list_certificate_signing_request().items]
        assert "py-user" in names
