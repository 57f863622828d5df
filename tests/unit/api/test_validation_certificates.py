"""CertificateSigningRequest validation: v1.32's ``pkg/apis/certificates/validation``.

``validateCertificateSigningRequest`` (request PEM and signature, usages, signerName as
``ValidateSignerName`` of ``pkg/apis/core/validation``, expirationSeconds, conditions,
certificate) and ``validateCertificateSigningRequestUpdate`` (what the main resource, the
``status`` and the ``approval`` paths may change), with the compatibility options of
``getValidationOptions``.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubeprio.api import kinds, validation
from kubeprio.api.certificates import (
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestSpec,
    CertificateSigningRequestStatus,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve

INFO = kinds.for_model(CertificateSigningRequest)
SIGNER = "kubernetes.io/kube-apiserver-client"


@functools.cache
def _request(common_name: str = "jane") -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    csr = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM)


@functools.cache
def _certificate() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ca")])
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


def csr(
    request: bytes | None = None,
    *,
    signer: str = SIGNER,
    usages: tuple[str, ...] | None = ("client auth",),
    seconds: int | None = None,
    conditions: tuple[CertificateSigningRequestCondition, ...] | None = None,
    certificate: bytes | None = None,
) -> CertificateSigningRequest:
    return CertificateSigningRequest(
        metadata=ObjectMeta(name="any:name/at all"),
        spec=CertificateSigningRequestSpec(
            request=_request() if request is None else request,
            signer_name=signer,
            usages=usages,
            expiration_seconds=seconds,
        ),
        status=CertificateSigningRequestStatus(conditions=conditions, certificate=certificate),
    )


def cond(kind: str, status: str = "True") -> CertificateSigningRequestCondition:
    return CertificateSigningRequestCondition(type=kind, status=status)


def messages(obj: CertificateSigningRequest) -> list[str]:
    return [str(error) for error in validation.validate_create(obj, INFO)]


def test_a_signed_request_with_any_name_is_valid():
    # ValidateCertificateRequestName accepts every name.
    assert messages(csr(seconds=600, certificate=_certificate())) == []


def test_a_tampered_signature_fails_check_signature():
    pem = _request()
    body = x509.load_pem_x509_csr(pem)
    der = bytearray(body.public_bytes(serialization.Encoding.DER))
    der[-3] ^= 0x01  # inside the signature
    tampered = (
        b"-----BEGIN CERTIFICATE REQUEST-----\n"
        + base64.encodebytes(bytes(der))
        + b"-----END CERTIFICATE REQUEST-----\n"
    )
    found = messages(csr(tampered))
    assert len(found) == 1
    assert found[0].startswith("spec.request: Invalid value: []byte{0x2d, 0x2d")
    assert found[0].endswith(": x509: ECDSA verification failure")


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            csr(b"hi"),
            ["spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST"],
        ),
        (
            csr(b""),
            ["spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST"],
        ),
        (csr(usages=None), ["spec.usages: Required value"]),
        (
            csr(usages=("client auth", "client auth")),
            ['spec.usages[1]: Duplicate value: "client auth"'],
        ),
        (csr(signer=""), ["spec.signerName: Required value"]),
        (
            csr(signer="kubernetes.io"),
            ["spec.signerName: Invalid value: \"kubernetes.io\": must be a fully qualified domain and path of the form 'example.com/signer-name'"],
        ),
        (
            csr(signer="example/x"),
            ['spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots'],
        ),
        (
            csr(signer="kubernetes.io/legacy-unknown"),
            ['spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version'],
        ),
        (
            csr(seconds=599),
            ["spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"],
        ),
        (
            csr(conditions=(cond("Approved", "False"),)),
            ['status.conditions[0].status: Unsupported value: "False": supported values: "True"'],
        ),
        (
            csr(conditions=(cond("Custom", "Maybe"),)),
            ['status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'],
        ),
        (
            csr(conditions=(cond("Approved"), cond("Denied"))),
            ['status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive'],
        ),
        (
            csr(conditions=(cond("Failed"), cond("Failed"))),
            ['status.conditions[1].type: Duplicate value: "Failed"'],
        ),
        (
            csr(conditions=(cond(""),)),
            ["status.conditions[0].type: Required value"],
        ),
        (
            csr(certificate=b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
            ['status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"'],
        ),
        (
            csr(certificate=b"garbage"),
            ['status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block'],
        ),
    ],
    ids=[
        "not pem", "empty request", "no usages", "usage twice", "no signer", "no slash",
        "one-label domain", "legacy signer", "short expiration", "approved false",
        "unknown status", "approved and denied", "duplicate type", "empty type",
        "wrong block", "no block",
    ],
)  # fmt: skip
def test_invalid_requests(obj, expected):
    assert messages(obj) == expected


def test_unknown_usages_list_every_key_usage_sorted():
    (message,) = messages(csr(usages=("bogus",)))
    assert message.startswith(
        'spec.usages[0]: Unsupported value: "bogus": supported values: "any", "cert sign", '
    )
    assert message.endswith('"server auth", "signing", "timestamping"')


def _update(new, old, subresource=""):  # type: ignore[no-untyped-def]
    return [str(e) for e in validation.validate_update(new, old, INFO, subresource=subresource)]


@pytest.mark.parametrize(
    ("subresource", "expected"),
    [
        ("", ['status.conditions: Forbidden: updates may not add a condition of type "Approved"']),
        (
            "status",
            ['status.conditions: Forbidden: updates may not add a condition of type "Approved"'],
        ),
        ("approval", []),
    ],
)
def test_only_the_approval_path_adds_an_approved_condition(subresource, expected):
    old = csr()
    assert _update(csr(conditions=(cond("Approved"),)), old, subresource) == expected


def test_no_path_removes_a_decision():
    old = csr(conditions=(cond("Denied"),))
    assert _update(csr(), old, "approval") == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Denied"'
    ]


@pytest.mark.parametrize(
    ("subresource", "old_cert", "expected"),
    [
        ("", None, ["status.certificate: Forbidden: updates may not set certificate content"]),
        ("approval", None, ["status.certificate: Forbidden: updates may not set certificate content"]),
        ("status", None, []),
        ("status", b"-----BEGIN CERTIFICATE-----\n", ["status.certificate: Forbidden: updates may not modify existing certificate content"]),
    ],
)  # fmt: skip
def test_only_status_sets_the_certificate_once(subresource, old_cert, expected):
    old = csr(certificate=old_cert)
    assert _update(csr(certificate=_certificate()), old, subresource) == expected


def test_stored_problems_are_tolerated_on_update():
    # getValidationOptions: what the stored object already had is allowed again.
    old = csr(usages=("bogus", "bogus"), conditions=(cond("Approved"), cond("Denied")))
    assert _update(evolve(old, metadata=evolve(old.metadata, labels={"a": "b"})), old) == []
