"""Secret validation (core/v1), and the warning a TLS Secret with a bad key pair gets.

Mirrors ``ValidateSecret``/``ValidateSecretUpdate`` of upstream
``pkg/apis/core/validation/validation.go`` and ``warningsForSecret`` of
``pkg/registry/core/secret/strategy.go``. ``stringData`` was merged into ``data`` before
(``api.defaults.default_secret``), so only ``data`` is checked:

* every ``data`` key passes ``IsConfigMapKey`` (``validation.configmap``); the values
  together hold at most 1 MiB (``data: Too long: may not be more than 1048576 bytes``);
* each type needs its keys (the table in ``api.secret``): a missing one is ``Required
  value`` at ``data[<key>]`` (``metadata.annotations[kubernetes.io/service-account.name]``
  for tokens; both ``username`` and ``password`` when a basic-auth Secret has neither);
  docker configs must be JSON objects (``Invalid value: "<secret contents redacted>":
  <Go's json error>``); other types, ``Opaque`` and custom ones, need nothing;
* on update ``type`` is immutable (``Invalid value: "...": field is immutable``), and an
  immutable Secret keeps its ``data`` and its ``immutable: true`` (``Forbidden: field is
  immutable when `immutable` is set``); the create rules run on every update too;
* a ``kubernetes.io/tls`` Secret whose ``tls.crt`` and ``tls.key`` are not a pair is
  stored with a warning holding Go's ``tls.X509KeyPair`` error (``api.tlskeypair``).

Go iterates maps in random order; keys are reported sorted. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors, gojson, tlskeypair
from kubeprio.api.configmap import MAX_CONFIG_SIZE
from kubeprio.api.errors import FieldError
from kubeprio.api.secret import (
    BASIC_AUTH_PASSWORD_KEY,
    BASIC_AUTH_USERNAME_KEY,
    DOCKER_CONFIG_JSON_KEY,
    DOCKER_CONFIG_KEY,
    SECRET_TYPE_BASIC_AUTH,
    SECRET_TYPE_DOCKER_CONFIG_JSON,
    SECRET_TYPE_DOCKERCFG,
    SECRET_TYPE_SERVICE_ACCOUNT_TOKEN,
    SECRET_TYPE_SSH_AUTH,
    SECRET_TYPE_TLS,
    SERVICE_ACCOUNT_NAME_KEY,
    SSH_AUTH_PRIVATE_KEY,
    TLS_CERT_KEY,
    TLS_PRIVATE_KEY_KEY,
    Secret,
)
from kubeprio.api.validation.configmap import IMMUTABLE_SET, validate_keys
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    KindWarnings,
    key,
    validate_immutable,
)

REDACTED: Final = "<secret contents redacted>"
_DOCKER_KEYS: Final = {
    SECRET_TYPE_DOCKERCFG: DOCKER_CONFIG_KEY,
    SECRET_TYPE_DOCKER_CONFIG_JSON: DOCKER_CONFIG_JSON_KEY,
}


def _type_errors(secret: Secret) -> list[FieldError]:
    """The keys (or annotation) a typed Secret must carry."""
    data = secret.data or {}
    kind = secret.type or ""
    if kind == SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        if not secret.metadata.annotation(SERVICE_ACCOUNT_NAME_KEY):
            return [errors.required(key("metadata.annotations", SERVICE_ACCOUNT_NAME_KEY))]
    elif kind in _DOCKER_KEYS:
        name = _DOCKER_KEYS[kind]
        if name not in data:
            return [errors.required(key("data", name))]
        problem = gojson.object_error(data[name])
        if problem is not None:
            return [errors.invalid(key("data", name), REDACTED, problem)]
    elif kind == SECRET_TYPE_BASIC_AUTH:
        # Either may be empty, but one of the two must be present.
        if BASIC_AUTH_USERNAME_KEY not in data and BASIC_AUTH_PASSWORD_KEY not in data:
            return [
                errors.required(key("data", BASIC_AUTH_USERNAME_KEY)),
                errors.required(key("data", BASIC_AUTH_PASSWORD_KEY)),
            ]
    elif kind == SECRET_TYPE_SSH_AUTH:
        if not data.get(SSH_AUTH_PRIVATE_KEY):
            return [errors.required(key("data", SSH_AUTH_PRIVATE_KEY))]
    elif kind == SECRET_TYPE_TLS:
        return [
            errors.required(key("data", name))
            for name in (TLS_CERT_KEY, TLS_PRIVATE_KEY_KEY)
            if name not in data
        ]
    return []


def validate_secret(secret: Secret) -> list[FieldError]:
    """``ValidateSecret`` (beyond metadata)."""
    data = secret.data or {}
    found = validate_keys(data, "data")
    if sum(len(value) for value in data.values()) > MAX_CONFIG_SIZE:
        found.append(errors.too_long("data", MAX_CONFIG_SIZE))
    found.extend(_type_errors(secret))
    return found


def validate_secret_update(new: Secret, old: Secret) -> list[FieldError]:
    """``ValidateSecretUpdate``: ``type`` immutable, the immutability rules, the create rules."""
    found = validate_immutable(new.type or "", old.type or "", "type")
    if old.immutable:
        if not new.immutable:
            found.append(errors.forbidden("immutable", IMMUTABLE_SET))
        if dict(new.data or {}) != dict(old.data or {}):
            found.append(errors.forbidden("data", IMMUTABLE_SET))
    found.extend(validate_secret(new))
    return found


def secret_warnings(secret: Secret) -> list[str]:
    """``warningsForSecret``: a TLS Secret whose certificate and key are not a pair."""
    if secret.type != SECRET_TYPE_TLS:
        return []
    data = secret.data or {}
    problem = tlskeypair.key_pair_error(
        data.get(TLS_CERT_KEY, b""), data.get(TLS_PRIVATE_KEY_KEY, b"")
    )
    return [] if problem is None else [problem]


CREATE: Final[dict[type[Any], KindValidator]] = {Secret: validate_secret}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {Secret: validate_secret_update}
WARNINGS: Final[dict[type[Any], KindWarnings]] = {Secret: secret_warnings}
