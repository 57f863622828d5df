"""The csrsigning controller: approved CertificateSigningRequests signed with the cluster CA.

Mirrors v1.32's ``pkg/controller/certificates/signer`` (``signer.handle``, ``duration``,
the per-signer checks) and ``authority`` (``CertificateAuthority.Sign``,
``PermissiveSigningPolicy``), for the three ``kubernetes.io`` signers kube-controller-manager
runs with ``--cluster-signing-cert-file``/``--cluster-signing-key-file``:

* a request is handled once approved (Approved, not Denied), not ``Failed``, without a
  certificate yet, and for one of ``SIGNERS``; anything else is left alone;
* the signer's own rules come first (``kube-apiserver-client``: usages among digital
  signature / key encipherment / client auth, client auth required;
  ``kube-apiserver-client-kubelet`` and ``kubelet-serving``: ``ValidateKubeletClientCSR``
  / ``ValidateKubeletServingCSR``); a request that breaks them gets a ``Failed``
  condition (reason ``SignerValidationFailure``, the rule's message) and is never signed;
* otherwise the certificate copies the request's subject, SANs and public key, gets the
  requested usages (key usages critical, extended ones not), ``CA: false``, a random
  128-bit serial, ``notBefore`` five minutes back, and ``notAfter`` after
  ``expirationSeconds`` capped to ``max_duration`` (``--cluster-signing-duration``, one
  year by default) and raised to at least 10 minutes; a lifetime of 8 hours or more is
  backdated too; never past the CA's own ``notAfter``. It is written to
  ``status.certificate`` as PEM through the status subresource.

The cleaner (``csrcleaner``, which deletes old requests) is not run. Serve wires it with
its own CA (``serve.pki``); simulations run without it. Must not import ``apiserver``,
``store``, ``admission``.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubeprio.api.certificates import (
    FAILED,
    KUBE_APISERVER_CLIENT,
    KUBE_APISERVER_CLIENT_KUBELET,
    KUBELET_SERVING,
    USAGE_CLIENT_AUTH,
    USAGE_DIGITAL_SIGNATURE,
    USAGE_KEY_ENCIPHERMENT,
    USAGE_SERVER_AUTH,
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestStatus,
    certificate_of,
    conditions_of,
    has_true_condition,
    is_approved,
    spec_of,
)
from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, rfc3339
from kubeprio.controllers.base import Controller
from kubeprio.errors import PermanentError

SIGNERS: Final = (KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING)
DEFAULT_MAX_DURATION: Final = 365 * 24 * 3600.0
"""``--cluster-signing-duration``'s default, 8760h."""
BACKDATE: Final = dt.timedelta(minutes=5)
SHORT: Final = dt.timedelta(hours=8)
MIN_DURATION: Final = dt.timedelta(minutes=10)
NODES_GROUP: Final = "system:nodes"
NODE_PREFIX: Final = "system:node:"

CaKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey

_KEY_USAGE_BITS: Final = {
    "signing": "digital_signature",
    USAGE_DIGITAL_SIGNATURE: "digital_signature",
    "content commitment": "content_commitment",
    USAGE_KEY_ENCIPHERMENT: "key_encipherment",
    "key agreement": "key_agreement",
    "data encipherment": "data_encipherment",
    "cert sign": "key_cert_sign",
    "crl sign": "crl_sign",
    "encipher only": "encipher_only",
    "decipher only": "decipher_only",
}
_EXT_KEY_USAGES: Final = {
    "any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
    USAGE_SERVER_AUTH: ExtendedKeyUsageOID.SERVER_AUTH,
    USAGE_CLIENT_AUTH: ExtendedKeyUsageOID.CLIENT_AUTH,
    "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
    "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "ipsec end system": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5"),
    "ipsec tunnel": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6"),
    "ipsec user": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7"),
    "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
    "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING,
    "microsoft sgc": x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3"),
    "netscape sgc": x509.ObjectIdentifier("2.16.840.1.113730.4.1"),
}


def _go_list(values: set[str]) -> str:
    """A sorted ``[]string`` as ``%v`` prints it."""
    return "[" + " ".join(sorted(values)) + "]"


def _san(request: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    try:
        return request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def _organizations(request: x509.CertificateSigningRequest) -> list[str]:
    return [
        str(attr.value)
        for attr in request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    ]


def _common_name(request: x509.CertificateSigningRequest) -> str:
    names = request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""


def api_server_client_error(usages: tuple[str, ...]) -> str | None:
    """``validAPIServerClientUsages``."""
    for usage in usages:
        if usage not in (USAGE_DIGITAL_SIGNATURE, USAGE_KEY_ENCIPHERMENT, USAGE_CLIENT_AUTH):
            return f"invalid usage for client certificate: {usage}"
    if USAGE_CLIENT_AUTH not in usages:
        return f"missing required usage for client certificate: {USAGE_CLIENT_AUTH}"
    return None


def kubelet_client_error(
    request: x509.CertificateSigningRequest, usages: tuple[str, ...]
) -> str | None:
    """``ValidateKubeletClientCSR``."""
    if _organizations(request) != [NODES_GROUP]:
        return "subject organization is not system:nodes"
    san = _san(request)
    if san is not None:
        for kind, message in (
            (x509.DNSName, "DNS subjectAltNames are not allowed"),
            (x509.RFC822Name, "Email subjectAltNames are not allowed"),
            (x509.IPAddress, "IP subjectAltNames are not allowed"),
            (x509.UniformResourceIdentifier, "URI subjectAltNames are not allowed"),
        ):
            if san.get_values_for_type(kind):
                return message
    if not _common_name(request).startswith(NODE_PREFIX):
        return "subject common name does not begin with system:node:"
    required = {USAGE_DIGITAL_SIGNATURE, USAGE_KEY_ENCIPHERMENT, USAGE_CLIENT_AUTH}
    if set(usages) not in (required, required - {USAGE_KEY_ENCIPHERMENT}):
        return f"usages did not match {_go_list(required)}"
    return None


def kubelet_serving_error(
    request: x509.CertificateSigningRequest, usages: tuple[str, ...]
) -> str | None:
    """``ValidateKubeletServingCSR``."""
    if _organizations(request) != [NODES_GROUP]:
        return "subject organization is not system:nodes"
    san = _san(request)
    dns = san.get_values_for_type(x509.DNSName) if san is not None else []
    ips = san.get_values_for_type(x509.IPAddress) if san is not None else []
    if not dns and not ips:
        return "DNS or IP subjectAltName is required"
    if san is not None and san.get_values_for_type(x509.RFC822Name):
        return "Email subjectAltNames are not allowed"
    if san is not None and san.get_values_for_type(x509.UniformResourceIdentifier):
        return "URI subjectAltNames are not allowed"
    required = {USAGE_DIGITAL_SIGNATURE, USAGE_KEY_ENCIPHERMENT, USAGE_SERVER_AUTH}
    if set(usages) not in (required, required - {USAGE_KEY_ENCIPHERMENT}):
        return f"usages did not match {_go_list(required)}"
    if not _common_name(request).startswith(NODE_PREFIX):
        return "subject common name does not begin with system:node:"
    return None


def signer_error(
    signer_name: str, request: x509.CertificateSigningRequest, usages: tuple[str, ...]
) -> str | None:
    """The signer's own rules for ``request`` (``isRequestForSignerFn``)."""
    if signer_name == KUBE_APISERVER_CLIENT:
        return api_server_client_error(usages)
    if signer_name == KUBE_APISERVER_CLIENT_KUBELET:
        return kubelet_client_error(request, usages)
    return kubelet_serving_error(request, usages)


def certificate_lifetime(expiration_seconds: int | None, max_duration: float) -> dt.timedelta:
    """``signer.duration``: the requested lifetime within [10 minutes, the maximum]."""
    ceiling = dt.timedelta(seconds=max_duration)
    if expiration_seconds is None:
        return ceiling
    requested = dt.timedelta(seconds=expiration_seconds)
    return min(max(requested, MIN_DURATION), ceiling)


def sign(
    request: x509.CertificateSigningRequest,
    usages: tuple[str, ...],
    lifetime: dt.timedelta,
    *,
    ca_cert: x509.Certificate,
    ca_key: CaKey,
    now: dt.datetime,
) -> bytes:
    """``CertificateAuthority.Sign`` under ``PermissiveSigningPolicy``: the PEM certificate."""
    unknown = [u for u in usages if u not in _KEY_USAGE_BITS and u not in _EXT_KEY_USAGES]
    if unknown:
        raise PermanentError(f"unrecognized usage values: {unknown}")
    bits = {_KEY_USAGE_BITS[u] for u in usages if u in _KEY_USAGE_BITS}
    extended = list(dict.fromkeys(_EXT_KEY_USAGES[u] for u in usages if u in _EXT_KEY_USAGES))
    not_before = now - BACKDATE
    not_after = now + lifetime if lifetime < SHORT else now + lifetime - BACKDATE
    not_after = min(not_after, ca_cert.not_valid_after_utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(request.subject)
        .issuer_name(ca_cert.subject)
        .public_key(request.public_key())
        .serial_number(random.SystemRandom().getrandbits(128) or 1)
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    )
    if bits:
        agreement = "key_agreement" in bits
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature="digital_signature" in bits,
                content_commitment="content_commitment" in bits,
                key_encipherment="key_encipherment" in bits,
                data_encipherment="data_encipherment" in bits,
                key_agreement=agreement,
                key_cert_sign="key_cert_sign" in bits,
                crl_sign="crl_sign" in bits,
                # X.509 defines these two only alongside key agreement.
                encipher_only=agreement and "encipher_only" in bits,
                decipher_only=agreement and "decipher_only" in bits,
            ),
            critical=True,
        )
    if extended:
        builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
    san = _san(request)
    if san is not None:
        builder = builder.add_extension(san, critical=False)
    certificate = builder.sign(ca_key, hashes.SHA256())
    return certificate.public_bytes(serialization.Encoding.PEM)


class CsrSigningController(Controller):
    """``CSRSigningController`` for the three kubernetes.io signers, over one CA."""

    name = "csrsigning"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        ca_cert: bytes,
        ca_key: bytes,
        csrs: Informer[CertificateSigningRequest],
        max_duration: float = DEFAULT_MAX_DURATION,
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.ca_cert = x509.load_pem_x509_certificate(ca_cert)
        loaded = serialization.load_pem_private_key(ca_key, password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
            raise ValueError("the cluster signing key is not an ECDSA or RSA key")
        self.ca_key: CaKey = loaded
        self.max_duration = max_duration
        self.csrs = csrs
        csrs.add_handler(
            FuncHandler(on_add=self._enqueue, on_update=lambda _old, csr: self._enqueue(csr))
        )

    def _enqueue(self, csr: CertificateSigningRequest) -> None:
        self.queue.add(csr.metadata.name or "")

    def event_target(self, key: str) -> ApiObject | None:
        """The request."""
        return self.csrs.get(key)

    def reconcile(self, key: str) -> None:
        """``signer.handle``: sign an approved request, or mark it Failed."""
        csr = self.csrs.get(key)
        spec = spec_of(csr) if csr is not None else None
        if (
            csr is None
            or spec is None
            or certificate_of(csr)
            or not is_approved(csr)
            or has_true_condition(csr, FAILED)
            or spec.signer_name not in SIGNERS
        ):
            return
        signer_name = spec.signer_name or ""
        try:
            request = x509.load_pem_x509_csr(spec.request or b"")
        except ValueError as exc:
            raise PermanentError(f'unable to parse csr "{key}": {exc}') from None
        status = csr.status or CertificateSigningRequestStatus()
        usages = spec.usages or ()
        problem = signer_error(signer_name, request, usages)
        if problem is not None:
            failed = CertificateSigningRequestCondition(
                type=FAILED,
                status="True",
                reason="SignerValidationFailure",
                message=problem,
                last_update_time=rfc3339(self.clock.now()),
            )
            conditions = (*conditions_of(csr), failed)
            self.client.update_status(evolve(csr, status=evolve(status, conditions=conditions)))
            return
        now = dt.datetime.fromtimestamp(self.clock.now(), tz=dt.UTC).replace(microsecond=0)
        lifetime = certificate_lifetime(spec.expiration_seconds, self.max_duration)
        pem = sign(request, usages, lifetime, ca_cert=self.ca_cert, ca_key=self.ca_key, now=now)
        self.client.update_status(evolve(csr, status=evolve(status, certificate=pem)))
