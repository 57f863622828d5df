"""Certificates for ``kubeprio serve``: a private CA and the API server's certificate.

On first start ``ensure_pki`` creates, under ``DATA_DIR/pki``, a self-signed CA
(``ca.crt``/``ca.key``, ten years) and a serving certificate signed by it
(``apiserver.crt``/``apiserver.key``, one year, as kubeadm issues them) whose subject
alternative names are ``localhost``, ``127.0.0.1`` and the ``--host`` the server binds.
Later starts reuse both; the serving certificate alone is reissued (by the same CA, so
existing kubeconfigs stay valid) when it lacks a needed name or expires within a day.
Keys are ECDSA P-256 (kubectl's Go TLS stack accepts them), written with mode 0600.

``ensure_service_account_key`` keeps the key service account tokens are signed with,
``sa.key`` (and its public half ``sa.pub``), kubeadm's names: an RSA 2048-bit key made on
first start, as kubeadm makes it, so tokens are RS256, upstream's default (its OIDC
discovery supports no other). It is reused at every start, so tokens issued before a
restart stay valid after it. A user may put their own RSA or ECDSA (P-256/384/521) key
there instead; anything else is refused at start.

Who drives it: ``serve.server`` (a composition root; the current time comes from its
clock). Uses ``cryptography`` only; no network.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import ipaddress
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVICE_ACCOUNT_KEY_BITS: Final = 2048
"""kubeadm's service account key size."""
CA_DAYS: Final = 3650
SERVING_DAYS: Final = 365
RENEW_BEFORE: Final = dt.timedelta(days=1)
WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "::", ""})


@dataclasses.dataclass(frozen=True, slots=True)
class Pki:
    """Paths of the CA and serving certificate files."""

    directory: Path

    @property
    def ca_cert(self) -> Path:
        """The CA certificate (PEM); clients trust it."""
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        """The CA key."""
        return self.directory / "ca.key"

    @property
    def cert(self) -> Path:
        """The serving certificate (PEM)."""
        return self.directory / "apiserver.crt"

    @property
    def key(self) -> Path:
        """The serving key."""
        return self.directory / "apiserver.key"

    @property
    def service_account_key(self) -> Path:
        """The key service account tokens are signed with (kubeadm's ``sa.key``)."""
        return self.directory / "sa.key"

    @property
    def service_account_public_key(self) -> Path:
        """Its public half (kubeadm's ``sa.pub``), for anyone verifying tokens."""
        return self.directory / "sa.pub"


def serving_names(host: str) -> list[str]:
    """The names the serving certificate must cover: localhost, 127.0.0.1 and ``host``."""
    names = ["localhost", "127.0.0.1"]
    if host not in WILDCARD_HOSTS and host not in names:
        names.append(host)
    return names


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _san(names: Sequence[str]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


def _new_ca(pki: Pki, now: dt.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubeprio-ca")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_private(pki.ca_key, _key_pem(key))
    pki.ca_cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _new_serving(
    pki: Pki,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    names: Sequence[str],
    now: dt.datetime,
) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=SERVING_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .add_extension(_san(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    _write_private(pki.key, _key_pem(key))
    pki.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _serving_ok(pki: Pki, names: Sequence[str], now: dt.datetime) -> bool:
    if not (pki.cert.exists() and pki.key.exists()):
        return False
    cert = x509.load_pem_x509_certificate(pki.cert.read_bytes())
    if cert.not_valid_after_utc - RENEW_BEFORE < now:
        return False
    try:
        present = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have = {str(ip) for ip in present.get_values_for_type(x509.IPAddress)}
    have |= set(present.get_values_for_type(x509.DNSName))
    return all(str(ipaddress.ip_address(n)) in have if _is_ip(n) else n in have for n in names)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def ensure_pki(directory: Path, *, host: str, now: float) -> Pki:
    """Create (first start) or reuse the CA and serving certificate; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(directory)
    moment = dt.datetime.fromtimestamp(now, tz=dt.UTC)
    if pki.ca_cert.exists() and pki.ca_key.exists():
        ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
        loaded = serialization.load_pem_private_key(pki.ca_key.read_bytes(), password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{pki.ca_key}: not an ECDSA key")
        ca_key = loaded
    else:
        ca_cert, ca_key = _new_ca(pki, moment)
        pki.cert.unlink(missing_ok=True)
    names = serving_names(host)
    if not _serving_ok(pki, names, moment):
        _new_serving(pki, ca_cert, ca_key, names, moment)
    return pki


def ensure_service_account_key(directory: Path) -> ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey:
    """Read (creating on first start) the service account signing key ``sa.key``."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(directory)
    if pki.service_account_key.exists():
        loaded = serialization.load_pem_private_key(
            pki.service_account_key.read_bytes(), password=None
        )
        if not isinstance(loaded, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
            raise ValueError(f"{pki.service_account_key}: not an RSA or ECDSA private key")
        return loaded
    key = rsa.generate_private_key(public_exponent=65537, key_size=SERVICE_ACCOUNT_KEY_BITS)
    _write_private(pki.service_account_key, _key_pem(key))
    pki.service_account_public_key.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return key
