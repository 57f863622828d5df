"""The Go decoders behind Secret and ConfigMap bytes: base64, JSON objects, TLS key pairs.

Upstream's texts, byte for byte:

* ``encoding/base64`` (``StdEncoding.Decode``/``decodeQuantum``): ``illegal base64 data at
  input byte N``, with Go's offsets; ``\\r``/``\\n`` are skipped anywhere;
* ``encoding/json`` (``json.Unmarshal`` into ``map[string]interface{}``): the scanner's
  syntax errors and the type error of a non-object;
* ``crypto/tls.X509KeyPair``: the errors a mismatched or misplaced PEM pair gets.
"""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from kubeprio.api import base64data, gojson, tlskeypair
from kubeprio.api.secret import Secret
from kubeprio.api.serialization import DecodeError, from_dict


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("", b""),
        ("aGVsbG8=", b"hello"),
        ("aGVs\nbG8=", b"hello"),  # newlines are skipped
        ("aGVsbA==\r\n", b"hell"),
        ("YR==", b"a"),  # unused low bits are not checked (not strict)
    ],
)
def test_base64_decodes_as_go(text, decoded):
    assert base64data.decode(text) == decoded


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("abc", 0),  # a short final quantum: si - j
        ("aGVsbG8", 4),
        ("a", 0),
        ("aGVs!G8=", 4),  # a byte outside the alphabet
        ("=", 0),  # padding too early
        ("aG=", 3),  # "==" expected, not enough padding: len(src)
        ("aG=x", 2),  # "==" expected, a different byte after the first '='
        ("aGVsbG8=x", 8),  # trailing garbage after the padding
        ("aGVs bG8=", 4),  # a space is not skipped (only \r and \n)
        ("aGVsbG8=\n\nx", 10),
    ],
)
def test_base64_errors_carry_gos_offsets(text, offset):
    with pytest.raises(base64data.Base64Error) as raised:
        base64data.decode(text)
    assert str(raised.value) == f"illegal base64 data at input byte {offset}"


def test_a_bad_secret_value_is_a_decode_error_at_its_key():
    with pytest.raises(DecodeError) as raised:
        from_dict(Secret, {"data": {"k": "YWJj!"}})
    assert (raised.value.message, raised.value.path) == (
        "illegal base64 data at input byte 4",
        "data[k]",
    )
    with pytest.raises(DecodeError) as raised:
        from_dict(Secret, {"data": {"k": 1}})
    assert raised.value.message == (
        "json: cannot unmarshal number into Go struct field Secret.data of type []uint8"
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{}", None),
        ('{"auths": {"r": {"auth": "eA=="}}}', None),
        ("null", None),  # json.Unmarshal of null into a map is no error
        ("", "unexpected end of JSON input"),
        ('{"a":', "unexpected end of JSON input"),
        ("x", "invalid character 'x' looking for beginning of value"),
        ("{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ('{"a": 1 "b"}', "invalid character '\"' after object key:value pair"),
        ('{"a": [1 2]}', "invalid character '2' after array element"),
        ('{"a": tru}', "invalid character '}' in literal true (expecting 'e')"),
        ('{"a": "\\x"}', "invalid character 'x' in string escape code"),
        ('{"a": "\\u12g4"}', "invalid character 'g' in \\u hexadecimal character escape"),
        ('{"a": "\n"}', "invalid character '\\n' in string literal"),
        ('{"a": -}', "invalid character '}' in numeric literal"),
        ('{"a": 1.}', "invalid character '}' after decimal point in numeric literal"),
        ('{"a": 1e}', "invalid character '}' in exponent of numeric literal"),
        ("{} {}", "invalid character '{' after top-level value"),
        ("[]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ('"s"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
        ("1", "json: cannot unmarshal number into Go value of type map[string]interface {}"),
        ("true", "json: cannot unmarshal bool into Go value of type map[string]interface {}"),
    ],
)
def test_json_object_errors_are_gos(text, error):
    assert gojson.object_error(text.encode()) == error


# --- TLS key pairs ------------------------------------------------------------------------


def _pair(key: object) -> tuple[bytes, bytes]:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "web")])
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())  # type: ignore[attr-defined]
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())  # type: ignore[arg-type]
    )
    key_pem = key.private_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


EC_CERT, EC_KEY = _pair(ec.generate_private_key(ec.SECP256R1()))
OTHER_CERT, OTHER_KEY = _pair(ec.generate_private_key(ec.SECP256R1()))
RSA_CERT, RSA_KEY = _pair(rsa.generate_private_key(public_exponent=65537, key_size=2048))


@pytest.mark.parametrize(
    ("cert", "key", "error"),
    [
        (EC_CERT, EC_KEY, None),
        (RSA_CERT, RSA_KEY, None),
        (EC_CERT, OTHER_KEY, "tls: private key does not match public key"),
        (RSA_CERT, EC_KEY, "tls: private key type does not match public key type"),
        (b"nothing", EC_KEY, "tls: failed to find any PEM data in certificate input"),
        (
            EC_KEY,
            EC_CERT,
            "tls: failed to find certificate PEM data in certificate input, but did find a "
            "private key; PEM inputs may have been switched",
        ),
        (EC_CERT, b"", "tls: failed to find any PEM data in key input"),
        (
            EC_CERT,
            EC_CERT,
            "tls: found a certificate rather than a key in the PEM for the private key",
        ),
        (
            b"-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n",
            EC_KEY,
            'tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping '
            "PEM blocks of the following types: [FOO]",
        ),
        (
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            EC_KEY,
            "x509: malformed certificate",
        ),
        (
            EC_CERT,
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            "tls: failed to parse private key",
        ),
    ],
    ids=[
        "ec",
        "rsa",
        "other-key",
        "key-type",
        "no-pem",
        "switched",
        "no-key",
        "cert-as-key",
        "other-block",
        "bad-cert",
        "bad-key",
    ],
)
def test_tls_key_pair_verdicts_are_gos(cert, key, error):
    assert tlskeypair.key_pair_error(cert, key) == error
