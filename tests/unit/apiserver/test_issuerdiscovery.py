"""Service account issuer discovery (``apiserver.issuerdiscovery`` and its two routes).

Upstream rules checked (v1.32):

* ``pkg/serviceaccount/openidmetadata.go`` ``openIDConfigJSON``: the configuration's five
  fields in their order (issuer, jwks_uri, ``["id_token"]``, ``["public"]``, the sorted
  algorithms of the keys); ``openIDKeysetJSON``/go-jose's ``JSONWebKey``: ``use: sig``,
  ``kty``, ``kid`` (``keyIDFromPublicKey``), ``crv``, ``alg``, the coordinates or modulus
  and exponent, unpadded base64url, EC coordinates padded to the curve size;
* ``NewOpenIDMetadataProvider``: the JWKS URI defaults to ``https://<external address>
  /openid/v1/jwks``; an issuer that is not https, or carries a query or fragment, and a
  missing address fail with upstream's texts;
* ``pkg/routes/openidmetadata.go``: ``application/json`` and ``application/jwk-set+json``,
  ``Cache-Control: public, max-age=3600`` (``staticPublicKeysGetter``'s cache age);
* ``pkg/kubeapiserver/options/authentication.go``: ``--service-account-jwks-uri`` must be
  https.

The JWKS is checked independently: PyJWT's own JWK parser must rebuild the key from it and
verify a token the server signed, under the ``kid`` the token's header names.
"""

from __future__ import annotations

import base64
import json
import random

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from starlette.testclient import TestClient

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.tokenrequest import TokenRequest, TokenRequestSpec
from kubeprio.apiserver import issuerdiscovery
from kubeprio.apiserver.http import create_app
from kubeprio.apiserver.tokenrequest import TokenIssuer, create_token
from kubeprio.apiserver.tokensigning import TokenSigner, key_id
from tests.unit.apiserver.token_helpers import ISSUER, ec_key, part, rsa_key


def _build(key=None, **overrides):
    args = {"jwks_uri": "", "external_address": "127.0.0.1:6443"}
    args.update(overrides)
    issuer = args.pop("issuer", ISSUER)
    return issuerdiscovery.build(issuer, keys=[(key or rsa_key()).public_key()], **args)


def test_configuration_is_upstreams_document_byte_for_byte():
    found = _build()
    assert found.config_json == (
        b'{"issuer":"https://kubernetes.default.svc.cluster.local",'
        b'"jwks_uri":"https://127.0.0.1:6443/openid/v1/jwks",'
        b'"response_types_supported":["id_token"],"subject_types_supported":["public"],'
        b'"id_token_signing_alg_values_supported":["RS256"]}'
    )


def test_jwks_uri_flag_overrides_the_address():
    found = _build(jwks_uri="https://oidc.example.com/keys")
    assert json.loads(found.config_json)["jwks_uri"] == "https://oidc.example.com/keys"


def test_rsa_key_fields_in_go_jose_order():
    key = rsa_key()
    (entry,) = json.loads(_build(key).keyset_json)["keys"]
    assert list(entry) == ["use", "kty", "kid", "alg", "n", "e"]
    assert entry["use"] == "sig"
    assert entry["kty"] == "RSA"
    assert entry["alg"] == "RS256"
    assert entry["kid"] == key_id(key.public_key())
    assert entry["e"] == "AQAB"
    assert "=" not in entry["n"]


@pytest.mark.parametrize(
    ("curve", "crv", "alg", "length"),
    [("p256", "P-256", "ES256", 43), ("p384", "P-384", "ES384", 64)],
)
def test_ec_key_fields_and_padding(curve, crv, alg, length):
    key = ec_key(curve)
    found = _build(key)
    (entry,) = json.loads(found.keyset_json)["keys"]
    assert list(entry) == ["use", "kty", "kid", "crv", "alg", "x", "y"]
    assert (entry["kty"], entry["crv"], entry["alg"]) == ("EC", crv, alg)
    # newFixedSizeBuffer: each coordinate takes the curve's full byte length.
    assert (len(entry["x"]), len(entry["y"])) == (length, length)
    assert json.loads(found.config_json)["id_token_signing_alg_values_supported"] == [alg]


def test_small_ec_coordinate_is_left_padded():
    # A P-256 point whose x has a leading zero byte still writes 32 bytes.
    rng = random.Random(7)
    while True:
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        if key.public_key().public_numbers().x < 1 << 248:
            break
    (entry,) = json.loads(_build(key).keyset_json)["keys"]
    raw = base64.urlsafe_b64decode(entry["x"] + "=")
    assert (len(raw), raw[0]) == (32, 0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"issuer": "http://insecure.example"}, "issuer URL must use https scheme, got: http://insecure.example"),
        ({"issuer": "kubernetes/serviceaccount"}, "issuer URL must use https scheme, got: kubernetes/serviceaccount"),
        ({"issuer": "https://a.example?x=1"}, "issuer URL may not include a query, got: https://a.example?x=1"),
        ({"issuer": "https://a.example#f"}, "issuer URL may not include a fragment, got: https://a.example#f"),
        ({"issuer": ""}, "empty issuer URL"),
        ({"external_address": ""}, "either the JWKS URI or the default external address, or both, must be set"),
    ],
)  # fmt: skip
def test_documents_refused_with_upstream_texts(overrides, message):
    with pytest.raises(issuerdiscovery.DiscoveryError) as caught:
        _build(**overrides)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("uri", "error"),
    [
        ("https://keys.example/jwks", None),
        ("http://baz.com", "service-account-jwks-uri requires https scheme, parsed as: http://baz.com"),
    ],
)  # fmt: skip
def test_jwks_uri_flag_check(uri, error):
    assert issuerdiscovery.jwks_uri_error(uri) == error


def test_served_jwks_verifies_a_server_token_independently(api, rng):
    """PyJWT rebuilds the key from the JWKS alone and checks a TokenRequest's token."""
    signer = TokenSigner(ISSUER, rsa_key())
    api.create_object(ServiceAccount(metadata=ObjectMeta(name="robot", namespace="default")))
    issued = create_token(
        api,
        TokenIssuer(signer, api_audiences=(ISSUER,), rng=rng),
        namespace="default",
        name="robot",
        request=TokenRequest(spec=TokenRequestSpec(audiences=("vault",), expiration_seconds=3600)),
        now=api.clock.now(),
    )
    token = issued.body["status"]["token"]
    keyset = jwt.PyJWKSet.from_json(_build().keyset_json.decode())
    header = part(token, 0)
    (found,) = [k for k in keyset.keys if k.key_id == header["kid"]]
    claims = jwt.decode(
        token,
        found.key,
        algorithms=["RS256"],
        audience="vault",
        issuer=ISSUER,
        options={"verify_exp": False, "verify_nbf": False, "verify_iat": False},
    )
    assert claims["sub"] == "system:serviceaccount:default:robot"


def test_routes_answer_with_upstream_headers(api):
    app = create_app(api)
    found = _build()
    app.state.kube.issuer_discovery = found
    client = TestClient(app)
    for path, body, content_type in (
        ("/.well-known/openid-configuration", found.config_json, "application/json"),
        ("/.well-known/openid-configuration/", found.config_json, "application/json"),
        ("/openid/v1/jwks", found.keyset_json, "application/jwk-set+json"),
        ("/openid/v1/jwks/", found.keyset_json, "application/jwk-set+json"),
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.content == body
        assert response.headers["content-type"] == content_type
        assert response.headers["cache-control"] == "public, max-age=3600"


def test_routes_are_404_without_documents(api):
    response = TestClient(create_app(api)).get("/openid/v1/jwks")
    assert response.status_code == 404
    assert response.json()["reason"] == "NotFound"
