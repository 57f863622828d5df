"""A real admission webhook for end-to-end tests: HTTPS on 127.0.0.1 with its own CA.

``WebhookServer`` generates a CA and a serving certificate for ``127.0.0.1`` (and
``localhost``), serves AdmissionReviews on a thread, and records every review it gets.
Paths:

* ``/deny-priority``: a validating webhook that refuses pods whose
  ``spec.priorityClassName`` is ``forbidden`` (403, reason Forbidden, as controller-runtime's
  ``admission.Denied`` answers) and allows everything else with a warning;
* ``/add-label``: a mutating webhook that adds the label ``webhook-mutated: "true"`` with a
  JSONPatch;
* ``/deny-delete``: a validating webhook that refuses a DELETE of an object labelled
  ``keep: "true"`` (read from the review's ``oldObject``) and allows everything else;
* ``/cap-replicas/N``: a mutating webhook that lowers a Scale's ``spec.replicas`` to N
  (JSONPatch ``replace``) when more are asked for;
* ``/slow``: allows after sleeping two seconds (longer than a 1-second timeoutSeconds);
* ``/sleep/SECONDS/PATH``: sleeps that long, then answers as ``/PATH`` (``/sleep/4/allow``
  allows: any other path does).

``reviews`` records a review as it arrives, ``answered`` its path once the answer is sent,
so a test can tell a call in flight from one that finished.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

FORBIDDEN_CLASS = "forbidden"
ALLOW_WARNING = "deny-priority webhook: priority class checked"

PRIORITY_CLASSES = f"""\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {FORBIDDEN_CLASS}}}
value: 5000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: standard}}
value: 100
"""
"""The class the deny-priority webhook refuses, and one it allows."""


def _certificates(directory: Path) -> tuple[bytes, Path, Path]:
    """A CA (PEM) and a serving certificate and key for 127.0.0.1, written to files."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webhook-test-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    key = ec.generate_private_key(ec.SECP256R1())
    serving = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webhook")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    cert_path, key_path = directory / "webhook.crt", directory / "webhook.key"
    cert_path.write_bytes(serving.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca.public_bytes(serialization.Encoding.PEM), cert_path, key_path


def _allow(uid: str, **extra: Any) -> dict[str, Any]:
    return {"uid": uid, "allowed": True, **extra}


def answer(path: str, request: dict[str, Any]) -> dict[str, Any]:
    """The webhook's response to one AdmissionReview request."""
    uid = request["uid"]
    obj = request.get("object") or {}
    if path.startswith("/sleep/"):
        seconds, _, rest = path.removeprefix("/sleep/").partition("/")
        time.sleep(float(seconds))
        return answer(f"/{rest}", request)
    if path.startswith("/deny-priority"):
        wanted = (obj.get("spec") or {}).get("priorityClassName")
        if wanted == FORBIDDEN_CLASS:
            return {
                "uid": uid,
                "allowed": False,
                "status": {
                    "code": 403,
                    "reason": "Forbidden",
                    "message": f'priority class "{wanted}" is reserved for the platform team',
                },
            }
        return _allow(uid, warnings=[ALLOW_WARNING])
    if path.startswith("/add-label"):
        labels = (obj.get("metadata") or {}).get("labels")
        patch: list[dict[str, Any]] = []
        if labels is None:
            patch.append({"op": "add", "path": "/metadata/labels", "value": {}})
        patch.append({"op": "add", "path": "/metadata/labels/webhook-mutated", "value": "true"})
        encoded = base64.b64encode(json.dumps(patch).encode()).decode()
        return _allow(uid, patchType="JSONPatch", patch=encoded)
    if path.startswith("/deny-delete"):
        # Refuses deleting what is labelled keep=true: only a DELETE's oldObject says so.
        old = request.get("oldObject") or {}
        labels = (old.get("metadata") or {}).get("labels") or {}
        if request.get("operation") == "DELETE" and labels.get("keep") == "true":
            return {
                "uid": uid,
                "allowed": False,
                "status": {
                    "code": 403,
                    "reason": "Forbidden",
                    "message": f"{old['metadata']['name']} is labelled keep=true",
                },
            }
        return _allow(uid)
    if path.startswith("/cap-replicas/"):
        # Caps a Scale's spec.replicas (the review of a ``<kind>/scale`` write).
        cap = int(path.removeprefix("/cap-replicas/").partition("/")[0].partition("?")[0])
        wanted = (obj.get("spec") or {}).get("replicas") or 0
        if wanted <= cap:
            return _allow(uid)
        ops = [{"op": "replace", "path": "/spec/replicas", "value": cap}]
        encoded = base64.b64encode(json.dumps(ops).encode()).decode()
        return _allow(uid, patchType="JSONPatch", patch=encoded)
    if path.startswith("/slow"):
        time.sleep(2)
        return _allow(uid)
    return _allow(uid)


class _QuietServer(ThreadingHTTPServer):
    """Answers sent after the caller gave up (past its timeout) fail quietly."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class WebhookServer:
    """The HTTPS webhook server; ``reviews`` holds (path, review) of every call."""

    def __init__(self, directory: Path) -> None:
        self.ca_pem, cert, key = _certificates(directory)
        self.reviews: list[tuple[str, dict[str, Any]]] = []
        self.answered: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                review = json.loads(self.rfile.read(length))
                server.reviews.append((self.path, review))
                body = json.dumps(
                    {
                        "apiVersion": review["apiVersion"],
                        "kind": "AdmissionReview",
                        "response": answer(self.path, review["request"]),
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                server.answered.append(self.path)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def ca_bundle(self) -> str:
        """The CA as a webhook configuration's ``caBundle`` (base64 of the PEM)."""
        return base64.b64encode(self.ca_pem).decode()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def start(self) -> WebhookServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def namespaced_hook(
    hook_name: str,
    url: str,
    ca: str,
    *,
    namespace: str,
    resources: tuple[str, ...] = ("pods",),
    operations: tuple[str, ...] = ("CREATE",),
    group: str = "",
    **fields: Any,
) -> dict[str, Any]:
    """One webhook called at ``url`` on ``operations`` (CREATE) of ``resources`` (pods;
    in ``group``/v1, core unless told) in ``namespace`` only; ``fields`` (its JSON
    names: ``failurePolicy``, ``timeoutSeconds``, ``reinvocationPolicy``, ...) added or
    replaced."""
    return {
        "name": hook_name,
        "clientConfig": {"url": url, "caBundle": ca},
        "rules": [
            {
                "operations": list(operations),
                "apiGroups": [group],
                "apiVersions": ["v1"],
                "resources": list(resources),
            }
        ],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 10,
        **fields,
    }


def webhook_configuration(kind: str, name: str, *hooks: dict[str, Any]) -> str:
    """A ``kind`` (Validating or MutatingWebhookConfiguration) named ``name`` with
    ``hooks``, as JSON for ``kubectl create -f -``."""
    return json.dumps(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": list(hooks),
        }
    )


def namespaced_webhook_configuration(
    name: str,
    hook_name: str,
    url: str,
    ca: str,
    *,
    namespace: str,
    resource: str,
    operations: tuple[str, ...] = ("CREATE",),
    group: str = "",
    kind: str = "ValidatingWebhookConfiguration",
) -> str:
    """A ValidatingWebhookConfiguration (or ``kind``) with one ``namespaced_hook`` on
    ``resource``."""
    hook = namespaced_hook(
        hook_name,
        url,
        ca,
        namespace=namespace,
        resources=(resource,),
        operations=operations,
        group=group,
    )
    return webhook_configuration(kind, name, hook)


def requests_on(webhook: WebhookServer, path: str) -> list[dict[str, Any]]:
    """The review requests ``webhook`` got on ``path``."""
    return [review["request"] for seen, review in webhook.reviews if seen.partition("?")[0] == path]


def requests_in(webhook: WebhookServer, path: str, namespace: str) -> list[dict[str, Any]]:
    """The review requests ``webhook`` got on ``path`` about objects in ``namespace``."""
    return [r for r in requests_on(webhook, path) if r.get("namespace") == namespace]
