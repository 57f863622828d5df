"""The service account signing key of ``kubeprio serve`` (``serve.pki``).

kubeadm's files (``sa.key``, ``sa.pub``; an RSA 2048 key) made on first start and reused
after, so tokens signed before a restart still verify; a user's own RSA or ECDSA key is
taken, anything else refused.
"""

from __future__ import annotations

import stat

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from kubeprio.serve import pki


def test_the_key_is_made_once_and_kept(tmp_path):
    key = pki.ensure_service_account_key(tmp_path)
    assert isinstance(key, rsa.RSAPrivateKey)
    assert key.key_size == 2048
    files = pki.Pki(tmp_path)
    assert stat.S_IMODE(files.service_account_key.stat().st_mode) == 0o600
    public = serialization.load_pem_public_key(files.service_account_public_key.read_bytes())
    assert public == key.public_key()
    again = pki.ensure_service_account_key(tmp_path)
    assert again.private_numbers() == key.private_numbers()


def test_a_users_ecdsa_key_is_used(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    pki.Pki(tmp_path).service_account_key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    loaded = pki.ensure_service_account_key(tmp_path)
    assert isinstance(loaded, ec.EllipticCurvePrivateKey)
    assert loaded.private_numbers() == key.private_numbers()


def test_another_kind_of_key_is_refused(tmp_path):
    key = ed25519.Ed25519PrivateKey.generate()
    path = pki.Pki(tmp_path).service_account_key
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(ValueError, match="not an RSA or ECDSA private key"):
        pki.ensure_service_account_key(tmp_path)
