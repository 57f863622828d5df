"""Shared helpers for the service account token tests: keys made once, JWT pieces decoded."""

from __future__ import annotations

import base64
import functools
import json
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, rsa

ISSUER = "https://kubernetes.default.svc.cluster.local"


@functools.cache
def rsa_key(which: str = "a") -> rsa.RSAPrivateKey:
    """An RSA 2048 key per name, made once per test session (making one takes a while)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@functools.cache
def ec_key(curve: str = "p256") -> ec.EllipticCurvePrivateKey:
    """An ECDSA key per curve name."""
    curves = {"p256": ec.SECP256R1(), "p384": ec.SECP384R1(), "p224": ec.SECP224R1()}
    return ec.generate_private_key(curves[curve])


def b64(data: bytes) -> str:
    """Unpadded base64url, as JWS writes its parts."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def part(token: str, index: int) -> Any:
    """The decoded JSON of a token's header (0) or payload (1)."""
    segment = token.split(".")[index]
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def raw_part(token: str, index: int) -> bytes:
    """The bytes of a token's header (0) or payload (1), exactly as signed."""
    segment = token.split(".")[index]
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def with_payload(token: str, body: dict[str, Any]) -> str:
    """The token with its payload replaced (the signature no longer matches)."""
    header, _, signature = token.split(".")
    return ".".join((header, b64(json.dumps(body).encode()), signature))
