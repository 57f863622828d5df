"""certificates.k8s.io/v1 CertificateSigningRequest: a request for a signed x509 certificate.

Mirrors ``k8s.io/api/certificates/v1/types.go``. A user (or a kubelet) puts a PEM
"CERTIFICATE REQUEST" in ``spec.request`` and names the signer that should answer it
(``spec.signerName``); the API server records who asked (``username``, ``uid``,
``groups``, ``extra``: the strategy fills them from the request's user, whatever the body
says). An approver adds an ``Approved`` (or ``Denied``) condition through the
``approval`` subresource; the signer then writes the PEM certificate into
``status.certificate`` through ``status`` (``controllers.csrsigning`` for the
``kubernetes.io/*`` signers ``kubeprio serve`` runs).

``request`` and ``certificate`` are ``[]byte`` upstream: base64 on the wire, bytes here.
``spec``, ``request`` and ``signerName`` have no ``omitempty`` upstream, but validation
requires all three, so every stored request has them; absent keys stay absent here (a
document round-trips as sent), and ``spec_of`` reads a missing spec as Go's zero value.
Validation is in ``api.validation.certificates``.
Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init, json_name

GROUP: Final = "certificates.k8s.io"

KUBE_APISERVER_CLIENT: Final = "kubernetes.io/kube-apiserver-client"
"""Client certificates for users of the API server (never auto-approved upstream)."""
KUBE_APISERVER_CLIENT_KUBELET: Final = "kubernetes.io/kube-apiserver-client-kubelet"
"""Client certificates kubelets authenticate with."""
KUBELET_SERVING: Final = "kubernetes.io/kubelet-serving"
"""Serving certificates for kubelets' TLS endpoints."""
LEGACY_UNKNOWN: Final = "kubernetes.io/legacy-unknown"
"""The v1beta1 default signer; the v1 API refuses it on new objects."""

APPROVED: Final = "Approved"
DENIED: Final = "Denied"
FAILED: Final = "Failed"

USAGE_DIGITAL_SIGNATURE: Final = "digital signature"
USAGE_KEY_ENCIPHERMENT: Final = "key encipherment"
USAGE_SERVER_AUTH: Final = "server auth"
USAGE_CLIENT_AUTH: Final = "client auth"

KEY_USAGES: Final = frozenset(
    {
        "signing",
        USAGE_DIGITAL_SIGNATURE,
        "content commitment",
        USAGE_KEY_ENCIPHERMENT,
        "key agreement",
        "data encipherment",
        "cert sign",
        "crl sign",
        "encipher only",
        "decipher only",
        "any",
        USAGE_SERVER_AUTH,
        USAGE_CLIENT_AUTH,
        "code signing",
        "email protection",
        "s/mime",
        "ipsec end system",
        "ipsec tunnel",
        "ipsec user",
        "timestamping",
        "ocsp signing",
        "microsoft sgc",
        "netscape sgc",
    }
)
"""Every ``KeyUsage`` constant of the v1 API (``allValidUsages`` in validation)."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CertificateSigningRequestSpec:
    """The request, its signer and usages, and who made it (set by the server)."""

    request: bytes | None = None
    signer_name: str | None = None
    expiration_seconds: Int32 | None = None
    usages: tuple[str, ...] | None = None
    username: str | None = None
    uid: str | None = None
    groups: tuple[str, ...] | None = None
    user_extra: Mapping[str, tuple[str, ...]] | None = json_name("extra")
    """Upstream's ``extra`` (this model's own ``extra`` holds unmodelled keys)."""
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CertificateSigningRequestCondition:
    """``Approved``, ``Denied``, ``Failed`` (or a signer's own type), with a status."""

    type: str | None = None
    status: str | None = None
    reason: str | None = None
    message: str | None = None
    last_update_time: str | None = None
    last_transition_time: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CertificateSigningRequestStatus:
    """The conditions and, once issued, the PEM certificate (chain)."""

    conditions: tuple[CertificateSigningRequestCondition, ...] | None = None
    certificate: bytes | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CertificateSigningRequest:
    """A certificates.k8s.io/v1 CertificateSigningRequest (cluster-scoped)."""

    api_version: str | None = "certificates.k8s.io/v1"
    kind: str | None = "CertificateSigningRequest"
    metadata: ObjectMeta = ObjectMeta()
    spec: CertificateSigningRequestSpec | None = None
    status: CertificateSigningRequestStatus | None = None
    extra: JsonDict = extra_field()


EMPTY_SPEC: Final = CertificateSigningRequestSpec()


def spec_of(csr: CertificateSigningRequest) -> CertificateSigningRequestSpec:
    """The request's spec (Go's zero value when absent)."""
    return csr.spec if csr.spec is not None else EMPTY_SPEC


def conditions_of(csr: CertificateSigningRequest) -> tuple[CertificateSigningRequestCondition, ...]:
    """The request's conditions (none when it has no status)."""
    return (csr.status.conditions or ()) if csr.status is not None else ()


def certificate_of(csr: CertificateSigningRequest) -> bytes:
    """The issued certificate, ``b""`` until there is one."""
    return (csr.status.certificate or b"") if csr.status is not None else b""


def has_true_condition(csr: CertificateSigningRequest, condition_type: str) -> bool:
    """``HasTrueCondition``: a condition of the type with status ``True``."""
    return any(c.type == condition_type and c.status == "True" for c in conditions_of(csr))


def is_approved(csr: CertificateSigningRequest) -> bool:
    """``IsCertificateRequestApproved``: approved and not denied."""
    approved = denied = False
    for condition in conditions_of(csr):
        if condition.type == APPROVED:
            approved = True
        elif condition.type == DENIED:
            denied = True
    return approved and not denied
