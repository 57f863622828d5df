"""Service account issuer discovery: the OIDC configuration and the JWKS relying parties read.

What it is: upstream's ``pkg/serviceaccount/openidmetadata.go`` (``NewOpenIDMetadataProvider``,
``openIDConfigJSON``, ``openIDKeysetJSON``) and the headers of ``pkg/routes/openidmetadata.go``
(v1.32). Two documents, rendered once at start:

* ``/.well-known/openid-configuration`` (``application/json``)::

      {"issuer":"https://kubernetes.default.svc.cluster.local",
       "jwks_uri":"https://127.0.0.1:6443/openid/v1/jwks",
       "response_types_supported":["id_token"],"subject_types_supported":["public"],
       "id_token_signing_alg_values_supported":["RS256"]}

* ``/openid/v1/jwks`` (``application/jwk-set+json``): every verifying key as go-jose's
  ``JSONWebKey`` writes it, fields in its order (``use``, ``kty``, ``kid``, ``crv``, ``alg``,
  ``x``, ``y``, ``n``, ``e``), unpadded base64url, EC coordinates padded to the curve's size::

      {"keys":[{"use":"sig","kty":"RSA","kid":"<key id>","alg":"RS256","n":"...","e":"AQAB"}]}

Both answer with ``Cache-Control: public, max-age=3600`` (static keys' cache age). The
issuer is the first ``--service-account-issuer``; the ``jwks_uri`` is
``--service-account-jwks-uri`` or ``https://<external address>/openid/v1/jwks``. An issuer
that is not an https URL without query or fragment makes ``build`` fail with upstream's
text: kube-apiserver then logs it and leaves the endpoints out (404), and so does serve.

Who drives it: ``serve.server`` builds the documents once the listening address is known;
``apiserver.http`` serves them (authenticated and authorized as non-resource paths: the
bootstrap role ``system:service-account-issuer-discovery`` lets every service account read
them). Pure: no I/O.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Sequence
from typing import Final
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kubeprio.api.model import JsonDict
from kubeprio.apiserver import tokensigning
from kubeprio.errors import KubeprioError

OPENID_CONFIG_PATH: Final = "/.well-known/openid-configuration"
JWKS_PATH: Final = "/openid/v1/jwks"
SERVED_PATHS: Final = (OPENID_CONFIG_PATH, f"{OPENID_CONFIG_PATH}/", JWKS_PATH, f"{JWKS_PATH}/")
"""The paths served, as the bootstrap role names them (a trailing slash answers the same)."""
CONFIG_CONTENT_TYPE: Final = "application/json"
JWKS_CONTENT_TYPE: Final = "application/jwk-set+json"
"""RFC 7517 section 8.5.1, which upstream's keyset handler sets."""
CACHE_MAX_AGE_SECONDS: Final = 3600
"""``staticPublicKeysGetter.GetCacheAgeMaxSeconds``: static keys may be cached an hour."""
CACHE_CONTROL: Final = f"public, max-age={CACHE_MAX_AGE_SECONDS}"
_CURVE_NAMES: Final = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}


class DiscoveryError(KubeprioError):
    """Why the discovery documents could not be built (upstream's texts)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _int_bytes(value: int, size: int = 0) -> bytes:
    """Big-endian bytes of ``value``: minimal (go-jose's ``newBuffer`` of ``big.Int.Bytes``
    and ``newBufferFromInt``), or left-padded to ``size`` (``newFixedSizeBuffer``)."""
    length = max((value.bit_length() + 7) // 8, size, 1)
    return value.to_bytes(length, "big")


def jwk(key: tokensigning.VerifyingKey) -> JsonDict:
    """``jwkFromPublicKey`` as go-jose marshals it: the key, its id, ``use: sig``, its alg."""
    algorithm = tokensigning.algorithm_for(key)
    body: JsonDict = {"use": "sig"}
    if isinstance(key, rsa.RSAPublicKey):
        numbers = key.public_numbers()
        body.update(kty="RSA", kid=tokensigning.key_id(key), alg=algorithm)
        body.update(n=_b64(_int_bytes(numbers.n)), e=_b64(_int_bytes(numbers.e)))
        return body
    assert isinstance(key, ec.EllipticCurvePublicKey)
    point = key.public_numbers()
    size = (key.curve.key_size + 7) // 8
    body.update(kty="EC", kid=tokensigning.key_id(key), crv=_CURVE_NAMES[key.curve.name])
    body.update(alg=algorithm, x=_b64(_int_bytes(point.x, size)), y=_b64(_int_bytes(point.y, size)))
    return body


def _go_json(body: JsonDict) -> bytes:
    """Go's ``json.Marshal``: compact, fields in declaration order, ``<``, ``>`` and ``&``
    escaped as Go's HTML-safe encoder writes them."""
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


@dataclasses.dataclass(frozen=True, slots=True)
class IssuerDiscovery:
    """The two pre-rendered documents (``openidConfig``)."""

    config_json: bytes
    keyset_json: bytes


def _check_issuer(issuer: str) -> None:
    # The OIDC spec's rules for an issuer, which upstream adds on top of its flag checks.
    if not issuer:
        raise DiscoveryError("empty issuer URL")
    try:
        parts = urlsplit(issuer)
    except ValueError as exc:
        raise DiscoveryError(str(exc)) from exc
    if parts.scheme != "https":
        raise DiscoveryError(f"issuer URL must use https scheme, got: {issuer}")
    if parts.query:
        raise DiscoveryError(f"issuer URL may not include a query, got: {issuer}")
    if parts.fragment:
        raise DiscoveryError(f"issuer URL may not include a fragment, got: {issuer}")


def jwks_uri_error(uri: str) -> str | None:
    """kube-apiserver's start-up check of ``--service-account-jwks-uri`` (None: fine)."""
    try:
        scheme = urlsplit(uri).scheme
    except ValueError as exc:
        return f"service-account-jwks-uri must be a valid URL: {exc}"
    if scheme != "https":
        return f"service-account-jwks-uri requires https scheme, parsed as: {uri}"
    return None


def build(
    issuer: str,
    *,
    jwks_uri: str,
    external_address: str,
    keys: Sequence[tokensigning.VerifyingKey],
) -> IssuerDiscovery:
    """``NewOpenIDMetadataProvider``: the documents for ``issuer`` and ``keys``, the JWKS
    URI being ``jwks_uri`` or else derived from ``external_address`` (``host:port``)."""
    if not jwks_uri and not external_address:
        raise DiscoveryError(
            "either the JWKS URI or the default external address, or both, must be set"
        )
    _check_issuer(issuer)
    if not jwks_uri:
        jwks_uri = f"https://{external_address}{JWKS_PATH}"
    elif (problem := jwks_uri_error(jwks_uri)) is not None:
        raise DiscoveryError(problem)
    if not keys:
        raise DiscoveryError("no keys provided for validating keyset")
    keyset = [jwk(key) for key in keys]
    config: JsonDict = {
        "issuer": issuer,
        "jwks_uri": jwks_uri,
        # Kubernetes only issues ID tokens, for public subjects.
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": sorted({key["alg"] for key in keyset}),
    }
    return IssuerDiscovery(_go_json(config), _go_json({"keys": keyset}))
