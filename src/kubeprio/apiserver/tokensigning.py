"""Signing service account tokens, and checking a token's signature.

What it is: upstream's ``JWTTokenGenerator`` and the signature half of
``jwtTokenAuthenticator.AuthenticateToken`` (``pkg/serviceaccount/jwt.go``), over PyJWT's
JWS layer and ``cryptography`` keys. A token is a compact JWS: header
``{"alg":"RS256","kid":"<key id>"}`` (no ``typ``, as go-jose writes it), the payload of
``apiserver.tokenclaims``, the signature. The key id is upstream's
``keyIDFromPublicKey``: the unpadded base64url SHA-256 of the public key's DER
(SubjectPublicKeyInfo), so a verifier picks the key a token names. An RSA key signs RS256
(kubeadm's ``sa.key`` is RSA, and upstream's OIDC discovery supports RS256 only); an
ECDSA key signs ES256/ES384/ES512 by its curve, as upstream's ``signerFromECDSAPrivateKey``.

Verification takes the token's ``kid`` to choose among the known public keys (all of them
when it has none), checks the signature with the algorithm of each candidate key (so an
``alg`` the key cannot have, ``none`` included, never verifies) and returns the raw
payload. Claims are not judged here (``apiserver.serviceaccountauthn`` does).

Who drives it: ``apiserver.tokenrequest`` signs, ``apiserver.serviceaccountauthn``
verifies; ``serve`` hands in the key from its data directory. Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kubeprio.api.model import JsonDict
from kubeprio.errors import KubeprioError

SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
"""A private key upstream can sign service account tokens with."""
VerifyingKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
"""A public key that checks them."""

_CURVE_ALGORITHMS: Final = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


class SignatureError(KubeprioError):
    """A token whose signature no known key verifies (upstream's texts)."""


def algorithm_for(key: SigningKey | VerifyingKey) -> str:
    """The JWS algorithm a key signs with: RS256 for RSA, ES256/384/512 by the curve."""
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        return "RS256"
    algorithm = _CURVE_ALGORITHMS.get(key.curve.name)
    if algorithm is None:
        raise ValueError("unknown private key curve, must be 256, 384, or 521")
    return algorithm


def key_id(public_key: VerifyingKey) -> str:
    """``keyIDFromPublicKey``: unpadded base64url of the SHA-256 of the key's DER."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def _compact_json(body: JsonDict) -> bytes:
    # Go's encoding/json: no spaces; the payload builder already sorted the keys.
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


class TokenSigner:
    """``JWTTokenGenerator``: signs payloads with one key, asserting one issuer."""

    def __init__(self, issuer: str, key: SigningKey) -> None:
        self.issuer = issuer
        self._key = key
        self._algorithm = algorithm_for(key)
        self.key_id = key_id(key.public_key())
        self._jws = jwt.PyJWS()

    @property
    def public_key(self) -> VerifyingKey:
        """The key that verifies this signer's tokens."""
        return self._key.public_key()

    def sign(self, body: JsonDict) -> str:
        """The compact JWS of ``body`` (its ``iss`` must already be this signer's)."""
        return self._jws.encode(
            _compact_json(body),
            self._key,
            algorithm=self._algorithm,
            headers={"kid": self.key_id, "typ": None},
        )


def _segment(token: str, index: int) -> bytes | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        return base64.urlsafe_b64decode(parts[index] + "=" * (-len(parts[index]) % 4))
    except (binascii.Error, ValueError):
        return None


def unverified_issuer(token: str) -> str | None:
    """The ``iss`` a compact JWT claims before any check (``hasCorrectIssuer``), or None
    for anything that is not one: JSON serialisation (``{...}``), not three parts, a
    payload that is not base64url JSON with a string ``iss``."""
    if token.strip().startswith("{"):
        return None
    raw = _segment(token, 1)
    if raw is None:
        return None
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None
    issuer = body.get("iss") if isinstance(body, dict) else None
    return issuer if isinstance(issuer, str) else None


class PublicKeys:
    """``StaticPublicKeysGetter``: the keys tokens may be signed with, by key id."""

    def __init__(self, keys: Sequence[VerifyingKey]) -> None:
        # Key ids worked out once: a verification only compares strings.
        self._keys = [(key_id(key), key) for key in keys]

    def for_key_id(self, kid: str) -> list[VerifyingKey]:
        """The keys with this id, or every key when the token names none."""
        return [key for known, key in self._keys if not kid or known == kid]


def verify(token: str, keys: PublicKeys) -> Any:
    """The decoded JSON payload of a token one of ``keys`` signed; ``SignatureError``
    otherwise (a token that is not a JWS at all, no key with its ``kid``, a bad signature)."""
    jws = jwt.PyJWS()
    try:
        header = jws.get_unverified_header(token)
    except jwt.InvalidTokenError as exc:
        raise SignatureError(f"token is not a signed JWT: {exc}") from exc
    kid = header.get("kid") or ""
    candidates = keys.for_key_id(kid if isinstance(kid, str) else "")
    if not candidates:
        raise SignatureError("invalid signature, no keys found")
    failures: list[str] = []
    for key in candidates:
        try:
            decoded = jws.decode_complete(token, key, algorithms=[algorithm_for(key)])
        except jwt.InvalidTokenError as exc:
            failures.append(str(exc))
            continue
        try:
            return json.loads(decoded["payload"])
        except (UnicodeDecodeError, ValueError) as exc:
            raise SignatureError(f"token payload is not JSON: {exc}") from exc
    raise SignatureError("; ".join(failures))
