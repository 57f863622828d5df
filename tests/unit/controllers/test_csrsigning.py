"""The csrsigning controller: v1.32's ``pkg/controller/certificates/signer``.

``signer.handle`` signs approved requests of its signers and marks the ones that break
the signer's rules ``Failed`` (``SignerValidationFailure``); ``signer.duration`` keeps
``expirationSeconds`` within [10 minutes, --cluster-signing-duration];
``PermissiveSigningPolicy`` backdates five minutes (and the end of certificates of 8h or
more). The x509 authenticator (``request/x509``) then accepts what was issued.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubeprio.api.certificates import (
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestSpec,
    CertificateSigningRequestStatus,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.apiserver.x509authn import ClientCertAuthenticator
from kubeprio.client.informer import Informer
from kubeprio.controllers.csrsigning import CsrSigningController, certificate_lifetime
from tests.driving import Driver

START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _ca() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(START - dt.timedelta(days=1))
        .not_valid_after(START + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


CA_CERT, CA_KEY = _ca()


def _request(common_name: str, *organizations: str, dns: tuple[str, ...] = ()) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    subject += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(subject))
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False
        )
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


class World:
    def __init__(self, api: Any, clock: Any) -> None:
        self.api = api
        self.clock = clock
        csrs: Informer[CertificateSigningRequest] = Informer(api, CertificateSigningRequest)
        self.controller = CsrSigningController(
            api, clock=clock, rng=random.Random(0), ca_cert=CA_CERT, ca_key=CA_KEY, csrs=csrs,
            max_duration=30 * 24 * 3600,
        )  # fmt: skip
        self.driver = Driver(clock, [csrs], [self.controller])

    def submit(
        self, name: str, request: bytes, signer: str, usages: tuple[str, ...], *,
        approve: bool = True, seconds: int | None = None,
    ) -> CertificateSigningRequest:  # fmt: skip
        created = self.api.create(
            CertificateSigningRequest(
                metadata=ObjectMeta(name=name),
                spec=CertificateSigningRequestSpec(
                    request=request, signer_name=signer, usages=usages, expiration_seconds=seconds
                ),
            )
        )
        if approve:
            condition = CertificateSigningRequestCondition(type="Approved", status="True")
            self.api.update_object(
                evolve(created, status=CertificateSigningRequestStatus(conditions=(condition,))),
                subresource="approval",
            )
        self.driver.settle()
        return self.api.get(CertificateSigningRequest, name)  # type: ignore[no-any-return]


@pytest.fixture
def world(api, clock) -> World:
    return World(api, clock)


def test_an_approved_client_request_is_signed_and_authenticates(world):
    done = world.submit("jane", _request("jane", "devs"), "kubernetes.io/kube-apiserver-client",
                        ("digital signature", "client auth"), seconds=3600)  # fmt: skip
    cert = x509.load_pem_x509_certificate(done.status.certificate)
    assert cert.subject.rfc4514_string() == "O=devs,CN=jane"
    # A short certificate (under 8h) ends exactly expirationSeconds after now.
    now = dt.datetime.fromtimestamp(world.clock.now(), tz=dt.UTC)
    assert cert.not_valid_before_utc == now - dt.timedelta(minutes=5)
    assert cert.not_valid_after_utc == now + dt.timedelta(hours=1)
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical
    assert usage.value.digital_signature
    assert not usage.value.key_encipherment
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH
    ]
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    authenticate = ClientCertAuthenticator(CA_CERT, clock=world.clock)
    user = authenticate([done.status.certificate.decode()])
    assert (user.name, user.groups) == ("jane", ("devs", "system:authenticated"))


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(None, 30 * 24 * 3600), (60, 600), (7200, 7200), (10**9, 30 * 24 * 3600)],
)
def test_lifetime_is_clamped(seconds, expected):
    assert certificate_lifetime(seconds, 30 * 24 * 3600).total_seconds() == expected


@pytest.mark.parametrize(
    ("request_args", "signer", "usages", "message"),
    [
        (("jane",), "kubernetes.io/kube-apiserver-client", ("server auth",),
         "invalid usage for client certificate: server auth"),
        (("jane",), "kubernetes.io/kube-apiserver-client", ("digital signature",),
         "missing required usage for client certificate: client auth"),
        (("system:node:n1",), "kubernetes.io/kube-apiserver-client-kubelet",
         ("client auth",), "subject organization is not system:nodes"),
        (("n1", "system:nodes"), "kubernetes.io/kube-apiserver-client-kubelet",
         ("digital signature", "client auth"), "subject common name does not begin with system:node:"),
        (("system:node:n1", "system:nodes"), "kubernetes.io/kube-apiserver-client-kubelet",
         ("client auth",), "usages did not match [client auth digital signature key encipherment]"),
        (("system:node:n1", "system:nodes"), "kubernetes.io/kubelet-serving",
         ("digital signature", "server auth"), "DNS or IP subjectAltName is required"),
    ],
    ids=["server usage", "no client auth", "kubelet not in nodes", "kubelet cn",
         "kubelet usages", "serving without names"],
)  # fmt: skip
def test_a_request_breaking_its_signers_rules_fails(world, request_args, signer, usages, message):
    done = world.submit("r", _request(*request_args), signer, usages)
    assert not done.status.certificate
    failed = done.status.conditions[-1]
    assert (failed.type, failed.status, failed.reason, failed.message) == (
        "Failed", "True", "SignerValidationFailure", message
    )  # fmt: skip


def test_a_kubelet_serving_request_gets_its_names(world):
    done = world.submit("serving", _request("system:node:n1", "system:nodes", dns=("n1.local",)),
                        "kubernetes.io/kubelet-serving", ("digital signature", "server auth"))  # fmt: skip
    cert = x509.load_pem_x509_certificate(done.status.certificate)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["n1.local"]


@pytest.mark.parametrize(
    ("signer", "approve"),
    [("kubernetes.io/kube-apiserver-client", False), ("example.com/custom", True)],
    ids=["pending", "someone else's signer"],
)
def test_requests_it_does_not_own_are_left_alone(world, signer, approve):
    done = world.submit("other", _request("x"), signer, ("client auth",), approve=approve)
    assert not done.status.certificate
    assert all(c.type != "Failed" for c in done.status.conditions or ())


def test_the_authenticator_refuses_foreign_and_serving_certificates(world):
    foreign_cert, _key = _ca()
    authenticate = ClientCertAuthenticator(CA_CERT, clock=world.clock)
    assert authenticate([foreign_cert.decode()]) is None
    done = world.submit("srv", _request("system:node:n1", "system:nodes", dns=("n1",)),
                        "kubernetes.io/kubelet-serving", ("digital signature", "server auth"))  # fmt: skip
    # A server-auth-only certificate is no client certificate (x509 verify's KeyUsages).
    assert authenticate([done.status.certificate.decode()]) is None
