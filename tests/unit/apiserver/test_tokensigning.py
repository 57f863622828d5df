"""Signing and checking service account tokens (``apiserver.tokensigning``).

Upstream rules checked (``pkg/serviceaccount/jwt.go``, v1.32): ``keyIDFromPublicKey`` (the
unpadded base64url SHA-256 of the public key's DER), ``signerFromRSAPrivateKey`` (RS256)
and ``signerFromECDSAPrivateKey`` (ES256/384/512 by curve, others refused), go-jose's
compact form (header ``{"alg","kid"}`` without ``typ``), ``hasCorrectIssuer`` (an unsigned
peek at ``iss``; JSON serialisation and non-JWTs are not ours) and the signature check of
``AuthenticateToken`` (the ``kid`` picks the keys; no key for it: "invalid signature, no
keys found"; a token another key signed, or changed after signing, fails).
"""

from __future__ import annotations

import base64
import hashlib
import json

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from kubeprio.apiserver import tokensigning
from kubeprio.apiserver.tokensigning import PublicKeys, SignatureError, TokenSigner
from tests.unit.apiserver.token_helpers import ISSUER, b64, ec_key, part, raw_part, rsa_key

BODY = {"aud": ["api"], "exp": 2, "iat": 1, "iss": ISSUER, "sub": "system:serviceaccount:a:b"}


def test_the_key_id_is_the_hash_of_the_public_key_der():
    public = rsa_key().public_key()
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    expected = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
    assert tokensigning.key_id(public) == expected
    assert len(expected) == 43


@pytest.mark.parametrize(
    ("key", "algorithm"),
    [(rsa_key, "RS256"), (lambda: ec_key("p256"), "ES256"), (lambda: ec_key("p384"), "ES384")],
    ids=["rsa", "p256", "p384"],
)
def test_a_token_is_a_compact_jws_with_alg_and_kid_only(key, algorithm):
    signer = TokenSigner(ISSUER, key())
    token = signer.sign(BODY)
    assert part(token, 0) == {"alg": algorithm, "kid": signer.key_id}
    assert (
        raw_part(token, 0)
        == json.dumps({"alg": algorithm, "kid": signer.key_id}, separators=(",", ":")).encode()
    )
    assert raw_part(token, 1) == json.dumps(BODY, separators=(",", ":")).encode()
    assert tokensigning.verify(token, PublicKeys([signer.public_key])) == BODY


def test_an_ecdsa_key_on_another_curve_cannot_sign():
    with pytest.raises(ValueError, match="unknown private key curve, must be 256, 384, or 521"):
        TokenSigner(ISSUER, ec_key("p224"))


def test_a_token_another_key_signed_is_refused():
    token = TokenSigner(ISSUER, rsa_key("other")).sign(BODY)
    mine = rsa_key().public_key()
    with pytest.raises(SignatureError, match="invalid signature, no keys found"):
        tokensigning.verify(token, PublicKeys([mine]))


def test_without_a_kid_every_key_is_tried():
    signer = TokenSigner(ISSUER, rsa_key())
    token = jwt.PyJWS().encode(
        json.dumps(BODY).encode(), rsa_key(), algorithm="RS256", headers={"typ": None}
    )
    keys = PublicKeys([rsa_key("other").public_key(), signer.public_key])
    assert tokensigning.verify(token, keys) == BODY
    foreign = jwt.PyJWS().encode(b"{}", rsa_key("third"), algorithm="RS256")
    with pytest.raises(SignatureError, match="Signature verification failed"):
        tokensigning.verify(foreign, keys)


def test_a_changed_payload_no_longer_verifies():
    signer = TokenSigner(ISSUER, rsa_key())
    header, _, signature = signer.sign(BODY).split(".")
    forged = ".".join((header, b64(json.dumps({**BODY, "sub": "admin"}).encode()), signature))
    with pytest.raises(SignatureError, match="Signature verification failed"):
        tokensigning.verify(forged, PublicKeys([signer.public_key]))


@pytest.mark.parametrize(
    "header",
    [{"alg": "none", "kid": "K"}, {"alg": "HS256", "kid": "K"}, {"alg": "ES256", "kid": "K"}],
    ids=["none", "hmac", "ecdsa-claimed-for-an-rsa-key"],
)
def test_an_algorithm_the_key_does_not_have_never_verifies(header):
    signer = TokenSigner(ISSUER, rsa_key())
    header = {**header, "kid": signer.key_id}
    unsigned = ".".join((b64(json.dumps(header).encode()), b64(json.dumps(BODY).encode()), ""))
    with pytest.raises(SignatureError):
        tokensigning.verify(unsigned, PublicKeys([signer.public_key]))


@pytest.mark.parametrize(
    ("token", "issuer"),
    [
        (f"e30.{b64(json.dumps({'iss': ISSUER}).encode())}.sig", ISSUER),
        (f"e30.{b64(json.dumps({'iss': 7}).encode())}.sig", None),
        (f"e30.{b64(b'[1]')}.sig", None),
        ("e30.bm90IGpzb24.sig", None),
        ("only.two", None),
        ("a.b.c.d", None),
        ('{"payload": "x", "signatures": []}', None),
        ("0123456789abcdef", None),
    ],
    ids=["jwt", "iss-number", "payload-list", "payload-not-json", "two-parts", "four-parts",
         "json-serialisation", "static-token"],
)  # fmt: skip
def test_the_issuer_is_read_before_any_check_only_from_compact_jwts(token, issuer):
    assert tokensigning.unverified_issuer(token) == issuer


@pytest.mark.parametrize(
    "token", ["garbage", "a.b.c", "e30.e30."], ids=["word", "junk", "empty-sig"]
)
def test_what_is_not_a_jws_fails_as_a_signature(token):
    with pytest.raises(SignatureError):
        tokensigning.verify(token, PublicKeys([rsa_key().public_key()]))
