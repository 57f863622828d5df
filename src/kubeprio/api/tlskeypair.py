"""Whether a certificate and a private key form a pair: Go's ``tls.X509KeyPair`` verdict.

Upstream's Secret strategy warns (never refuses) when a ``kubernetes.io/tls`` Secret's
``tls.crt`` and ``tls.key`` are not a usable pair (``warningsForSecret``), with the error
text of Go's ``crypto/tls.X509KeyPair``; ``kubectl create secret tls`` checks the same
before it sends anything. This module gives the same verdict and texts:

* the certificate input must hold a ``CERTIFICATE`` PEM block (texts for no PEM at all,
  for a lone private key — "PEM inputs may have been switched" — and for other types);
* the key input must hold a block whose type is ``PRIVATE KEY`` or ends in
  `` PRIVATE KEY`` (texts for none, for a certificate instead, and for other types);
* the first certificate must parse (``x509: malformed certificate``), the key must parse
  as PKCS #1, PKCS #8 or SEC 1 (``tls: failed to parse private key``), be of the
  certificate's key type and hold its public key.

PEM blocks are found as Go's ``pem.Decode`` finds them (a block whose body is not base64
is skipped). Pure: parsing only, through ``cryptography``, imported when a pair is first
checked (it costs 50 ms, and only TLS Secrets need it); no I/O.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

_BLOCK: Final = re.compile(rb"-----BEGIN ([^\r\n-]*)-----\r?\n(.*?)-----END \1-----", re.DOTALL)
_PRIVATE_KEY_SUFFIX: Final = " PRIVATE KEY"


def _blocks(data: bytes) -> list[tuple[str, bytes]]:
    """The (type, DER bytes) of each decodable PEM block, in order."""
    found: list[tuple[str, bytes]] = []
    for match in _BLOCK.finditer(data):
        lines = match.group(2).splitlines()
        # RFC 1421 headers ("Proc-Type: ...") come before a blank line; Go skips them.
        body = b"".join(line.strip() for line in lines if b":" not in line)
        try:
            der = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            continue
        found.append((match.group(1).decode("latin-1"), der))
    return found


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


def _is_private_key_type(kind: str) -> bool:
    return kind == "PRIVATE KEY" or kind.endswith(_PRIVATE_KEY_SUFFIX)


def _certificate_der(cert_pem: bytes) -> bytes:
    blocks = _blocks(cert_pem)
    ders = [der for kind, der in blocks if kind == "CERTIFICATE"]
    if ders:
        return ders[0]
    skipped = [kind for kind, _ in blocks]
    if not skipped:
        raise ValueError("tls: failed to find any PEM data in certificate input")
    if len(skipped) == 1 and skipped[0].endswith("PRIVATE KEY"):
        raise ValueError(
            "tls: failed to find certificate PEM data in certificate input, but did find a "
            "private key; PEM inputs may have been switched"
        )
    raise ValueError(
        'tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping '
        f"PEM blocks of the following types: {_go_list(skipped)}"
    )


def _key_der(key_pem: bytes) -> bytes:
    skipped: list[str] = []
    for kind, der in _blocks(key_pem):
        if _is_private_key_type(kind):
            return der
        skipped.append(kind)
    if not skipped:
        raise ValueError("tls: failed to find any PEM data in key input")
    if skipped == ["CERTIFICATE"]:
        raise ValueError(
            "tls: found a certificate rather than a key in the PEM for the private key"
        )
    raise ValueError(
        'tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after '
        f"skipping PEM blocks of the following types: {_go_list(skipped)}"
    )


def key_pair_error(cert_pem: bytes, key_pem: bytes) -> str | None:
    """Go's ``tls.X509KeyPair(cert, key)`` error text, or None when they form a pair."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    try:
        cert_der = _certificate_der(cert_pem)
        key_der = _key_der(key_pem)
    except ValueError as exc:
        return str(exc)
    try:
        public = x509.load_der_x509_certificate(cert_der).public_key()
    except ValueError:
        return "x509: malformed certificate"
    try:
        private = serialization.load_der_private_key(key_der, password=None)
    except (ValueError, TypeError):
        return "tls: failed to parse private key"
    if isinstance(public, rsa.RSAPublicKey):
        if not isinstance(private, rsa.RSAPrivateKey):
            return "tls: private key type does not match public key type"
        same = public.public_numbers() == private.public_key().public_numbers()
    elif isinstance(public, ec.EllipticCurvePublicKey):
        if not isinstance(private, ec.EllipticCurvePrivateKey):
            return "tls: private key type does not match public key type"
        same = public.public_numbers() == private.public_key().public_numbers()
    elif isinstance(public, ed25519.Ed25519PublicKey):
        if not isinstance(private, ed25519.Ed25519PrivateKey):
            return "tls: private key type does not match public key type"
        same = public == private.public_key()
    else:
        return "tls: unknown public key algorithm"
    return None if same else "tls: private key does not match public key"
