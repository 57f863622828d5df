"""ConfigMap validation (core/v1), and the key rule ConfigMaps and Secrets share.

Mirrors ``ValidateConfigMap``/``ValidateConfigMapUpdate`` of upstream
``pkg/apis/core/validation/validation.go`` and ``IsConfigMapKey`` of apimachinery's
``pkg/util/validation``:

* every key of ``data`` and ``binaryData`` is at most 253 characters of
  ``[-._a-zA-Z0-9]`` and is not ``.``, ``..`` nor starts with ``..`` (a key becomes a
  file name in a volume); a ``data`` key may not also be in ``binaryData``
  (``duplicate of key present in binaryData``, reported on the ``data`` key);
* the values together hold at most 1 MiB (``core.MaxSecretSize``), reported on the
  empty path, as upstream does (``: Too long: may not be more than 1048576 bytes``);
* once stored with ``immutable: true``, neither ``data`` nor ``binaryData`` may change and
  ``immutable`` may not be unset (``Forbidden: field is immutable when `immutable` is
  set``); the create rules run on every update too.

Go iterates maps in random order; keys are reported sorted. Metadata rules (a
DNS-subdomain name) come from ``validation.meta``. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.configmap import MAX_CONFIG_SIZE, ConfigMap
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.meta import (
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    KindUpdateValidator,
    KindValidator,
    key,
)

_CONFIG_KEY: Final = re.compile(r"[-._a-zA-Z0-9]+")
CONFIG_KEY_ERROR: Final = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)
IMMUTABLE_SET: Final = "field is immutable when `immutable` is set"
DUPLICATE_OF_BINARY: Final = "duplicate of key present in binaryData"


def config_key_errors(value: str) -> list[str]:
    """``IsConfigMapKey``: why ``value`` is not a ConfigMap or Secret key (empty if it is)."""
    messages: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        messages.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
    if not _CONFIG_KEY.fullmatch(value):
        messages.append(CONFIG_KEY_ERROR)
    if value == ".":
        messages.append("must not be '.'")
    elif value == "..":
        messages.append("must not be '..'")
    elif value.startswith(".."):
        messages.append("must not start with '..'")
    return messages


def validate_keys(values: Mapping[str, object] | None, path: str) -> list[FieldError]:
    """Each key of a data map that ``IsConfigMapKey`` refuses, at ``path[key]``."""
    return [
        errors.invalid(key(path, name), name, message)
        for name in sorted(values or {})
        for message in config_key_errors(name)
    ]


def text_size(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes."""
    return len(value.encode("utf-8", "surrogatepass"))


def validate_config_map(config_map: ConfigMap) -> list[FieldError]:
    """``ValidateConfigMap`` (beyond metadata)."""
    data = config_map.data or {}
    binary = config_map.binary_data or {}
    found: list[FieldError] = []
    for name in sorted(data):
        found.extend(validate_keys({name: None}, "data"))
        if name in binary:
            found.append(errors.invalid(key("data", name), name, DUPLICATE_OF_BINARY))
    found.extend(validate_keys(binary, "binaryData"))
    total = sum(text_size(value) for value in data.values())
    total += sum(len(value) for value in binary.values())
    if total > MAX_CONFIG_SIZE:
        found.append(errors.too_long("", MAX_CONFIG_SIZE))
    return found


def validate_config_map_update(new: ConfigMap, old: ConfigMap) -> list[FieldError]:
    """``ValidateConfigMapUpdate``: the immutability rules, then the create rules."""
    found: list[FieldError] = []
    if old.immutable:
        if not new.immutable:
            found.append(errors.forbidden("immutable", IMMUTABLE_SET))
        if dict(new.data or {}) != dict(old.data or {}):
            found.append(errors.forbidden("data", IMMUTABLE_SET))
        if dict(new.binary_data or {}) != dict(old.binary_data or {}):
            found.append(errors.forbidden("binaryData", IMMUTABLE_SET))
    found.extend(validate_config_map(new))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {ConfigMap: validate_config_map}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {ConfigMap: validate_config_map_update}
