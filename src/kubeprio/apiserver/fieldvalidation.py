"""Server-side field validation: upstream's strict JSON decoding of request bodies.

What it is: the ``fieldValidation`` query parameter (``Strict``, ``Warn``, ``Ignore``) of
create, update and patch. Upstream decodes a body into Go structs with
``sigs.k8s.io/json``'s strict mode, which reports every field the struct does not have and
every key given twice, then drops the unknown ones (a Go struct cannot hold them):

* ``Strict``: the request fails with 400 BadRequest,
  ``Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field
  "spec.foo", duplicate field "metadata.name"``;
* ``Warn`` (the default): each problem becomes a ``Warning`` header (``unknown field
  "spec.foo"``) and the request goes on without the unknown fields;
* ``Ignore``: the unknown fields are dropped silently.

kubeprio's models keep unmodelled keys in ``extra`` (so real dumps round-trip), so they
cannot tell a typo from an upstream field they do not model. The field names of upstream's
structs therefore come from ``apiserver.upstreamtable``, generated from the official
client's models, and kubeprio's own Tenant's from the same table
(``upstreamtable.served``).

Who drives it: ``apiserver.rest`` parses every JSON body with ``parse_json`` (which reports
duplicate keys) and runs ``check`` on it. Rules: no HTTP; the table is loaded once
(a pure cache).
"""

from __future__ import annotations

import enum
import functools
import json
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.model import JsonDict
from kubeprio.apiserver import upstreamtable

STRICT_PREFIX: Final = "strict decoding error: "
MAX_STRICT_ERRORS: Final = 100
"""sigs.k8s.io/json keeps at most this many strict-decoding errors per body."""


class FieldValidation(enum.StrEnum):
    """The ``fieldValidation`` directive."""

    STRICT = "Strict"
    WARN = "Warn"
    IGNORE = "Ignore"

    @classmethod
    def parse(cls, value: str | None) -> FieldValidation:
        """Parse the query value; empty means ``Warn``, upstream's default since 1.27."""
        if not value:
            return cls.WARN
        for member in cls:
            if member.value == value:
                return member
        raise errors.bad_request(
            f"fieldValidation must be one of Ignore, Warn, or Strict, got {value}"
        )


class _Pairs(list[tuple[str, Any]]):
    """A decoded JSON object as its key/value pairs in document order (keys may repeat)."""


class _DuplicateKeyError(Exception):
    """A JSON object gave a key twice: decode again, slowly, to name the paths."""


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    decoded = dict(pairs)
    if len(decoded) != len(pairs):
        raise _DuplicateKeyError
    return decoded


def parse_json(text: bytes | str) -> tuple[Any, list[str]]:
    """``json.loads`` plus the paths of keys given twice (the last value wins, as in Go).

    The result holds plain ``dict``s only (patch code compares element types). Bodies
    almost never repeat a key, so the first pass only counts keys (C-built dicts); a body
    that does is decoded a second time to find where.
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_object, parse_constant=_refuse), []
    except _DuplicateKeyError:
        pass
    duplicates: list[str] = []
    document = json.loads(text, object_pairs_hook=_Pairs, parse_constant=_refuse)
    return _plain(document, "", duplicates), duplicates


def _refuse(constant: str) -> Any:
    """``NaN`` and ``Infinity`` are not JSON: Python's decoder takes them, Go's does not."""
    raise ValueError(f"{constant} is not JSON")


def _plain(value: Any, path: str, duplicates: list[str]) -> Any:
    """Plain dicts from ``_Pairs``, reporting each repeated path once, where it repeats.

    As sigs.k8s.io/json's strict decoder: it meets the keys in document order, decodes
    every value (the overwritten ones too, so a repeat inside a value that a later one
    replaces counts) and keeps one error per path.
    """
    if isinstance(value, _Pairs):
        result: dict[str, Any] = {}
        for key, item in value:
            child = _path(path, key)
            message = f'duplicate field "{child}"'
            if key in result and message not in duplicates:
                duplicates.append(message)
            result[key] = _plain(item, child, duplicates)
        return result
    if isinstance(value, list):
        return [_plain(item, f"{path}[{index}]", duplicates) for index, item in enumerate(value)]
    return value


@functools.cache
def _table() -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """Roots and, per type, each field's nested type or ``""`` where nothing nests.

    A scalar, or a list or map of scalars, is not walked.
    """
    table = upstreamtable.served()
    types = {
        name: {
            field: ref if upstreamtable.is_object_type(ref) else ""
            for field, ref in entry["fields"].items()
        }
        for name, entry in table.types.items()
    }
    return table.roots, types


def has_schema(kind: str) -> bool:
    """Whether upstream's field names are known for ``kind``."""
    return kind in _table()[0]


def check(kind: str, data: JsonDict, *, patch: bool = False) -> tuple[JsonDict, list[str]]:
    """Return ``data`` without unknown fields, and the strict-decoding problems found.

    Problems read as upstream's: ``unknown field "spec.containers[0].foo"``, in document
    order (``parse_json`` reports the duplicate keys). ``patch`` skips the
    strategic-merge directives (``$patch``, ``$setElementOrder/...``, ...).
    """
    roots, types = _table()
    root = roots.get(kind)
    problems: list[str] = []
    if root is None:
        return data, problems
    if not _scan_object(data, root, types, patch):
        # Nearly every body: nothing to prune, no copy made, no path formatted.
        return data, problems
    pruned = _walk_object(data, root, "", types, problems, patch)
    return pruned, problems


def _scan_object(
    data: JsonDict, type_name: str, types: dict[str, dict[str, str]], patch: bool
) -> bool:
    """Whether ``data`` holds an unknown field anywhere (``_walk_object``'s verdict,
    without its copy, its problem texts, or a path for each scalar field)."""
    fields = types.get(type_name)
    if fields is None:
        return False
    for key, value in data.items():
        if patch and key.startswith("$"):
            continue
        ref = fields.get(key)
        if ref is None:
            return True
        if ref and value is not None and _scan_value(value, ref, types, patch):
            return True
    return False


def _scan_value(value: Any, ref: str, types: dict[str, dict[str, str]], patch: bool) -> bool:
    """``_scan_object`` for a field's value of upstream type ``ref`` (not empty)."""
    if ref.startswith("[]"):
        if not isinstance(value, list):
            return False
        inner = ref[2:]
        return bool(inner) and any(
            item is not None and _scan_value(item, inner, types, patch) for item in value
        )
    if ref.startswith("{}"):
        if not isinstance(value, dict):
            return False
        inner = ref[2:]
        return bool(inner) and any(
            item is not None and _scan_value(item, inner, types, patch) for item in value.values()
        )
    if isinstance(value, dict):
        return _scan_object(value, ref, types, patch)
    return False


def _path(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _walk_object(
    data: JsonDict,
    type_name: str,
    path: str,
    types: dict[str, dict[str, str]],
    problems: list[str],
    patch: bool,
) -> JsonDict:
    fields = types.get(type_name)
    if fields is None:
        return data
    out: JsonDict = {}
    for key, value in data.items():
        if patch and key.startswith("$"):
            out[key] = value
            continue
        ref = fields.get(key)
        if ref is None:
            problems.append(f'unknown field "{_path(path, key)}"')
            continue
        out[key] = _walk_value(value, ref, _path(path, key), types, problems, patch)
    return out


def _walk_value(
    value: Any,
    ref: str,
    path: str,
    types: dict[str, dict[str, str]],
    problems: list[str],
    patch: bool,
) -> Any:
    if not ref or value is None:
        return value
    if ref.startswith("[]"):
        if not isinstance(value, list):
            return value
        inner = ref[2:]
        return [
            _walk_value(item, inner, f"{path}[{index}]", types, problems, patch)
            for index, item in enumerate(value)
        ]
    if ref.startswith("{}"):
        if not isinstance(value, dict):
            return value
        inner = ref[2:]
        return {
            key: _walk_value(item, inner, f"{path}[{key}]", types, problems, patch)
            for key, item in value.items()
        }
    if isinstance(value, dict):
        return _walk_object(value, ref, path, types, problems, patch)
    return value


def strict_problems(duplicates: list[str], unknown: list[str]) -> list[str]:
    """The problems upstream's decoder reports: each text once, at most 100 of them.

    sigs.k8s.io/json saves a strict error only while it has fewer than
    ``MAX_STRICT_ERRORS`` and drops repeats, so a huge body cannot make a huge answer (or
    a flood of ``Warning`` headers).
    """
    return list(dict.fromkeys([*duplicates, *unknown]))[:MAX_STRICT_ERRORS]


def strict_error(problems: list[str]) -> str:
    """``strict decoding error: unknown field "a", unknown field "b"``."""
    return STRICT_PREFIX + ", ".join(problems)
