"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``) as JSON.

What it is: the decoder for the bodies kubectl's typed clients send — ``kubectl create
priorityclass``, ``create deployment``, ``create poddisruptionbudget``, ``create
namespace``, ``create job``, ``create token`` (a TokenRequest) post built-in objects as
protobuf, and client-go falls back to JSON only from CBOR, never from protobuf.
Upstream's format (k8s.io/apimachinery ``pkg/runtime/serializer/protobuf``): the 4 bytes
``k8s\\0``, then a ``runtime.Unknown`` message holding ``typeMeta`` (apiVersion, kind)
and ``raw``, the object's own message. The object becomes the JSON dict the JSON path
would have parsed, so everything after decoding (field validation, defaulting, admission)
is shared.

The field numbers, names and types come from upstream's ``generated.proto`` files
(``upstream_protobuf.json``, written by ``tools/gen_upstream_protobuf.py``). JSON forms
follow upstream's JSON encoding of the same Go values:

* ``Time`` is RFC 3339 to the second, ``MicroTime`` to the microsecond; an empty one
  (Go's zero time) is absent;
* ``Quantity`` is its string, ``IntOrString`` an integer or a string;
* ``RawExtension`` and ``FieldsV1`` carry raw JSON; ``bytes`` are base64;
* embedded Go structs (``inline``) merge their fields into the parent;
* a zero scalar (``""``, 0, false) of a non-pointer ``omitempty`` Go field is absent:
  Go's protobuf marshals such fields even when zero, its JSON leaves them out. A pointer
  field's zero was set on purpose (``replicas: 0``) and stays.

Unknown field numbers are skipped, as upstream's generated decoders skip them.

Who drives it: ``apiserver.rest`` for request bodies with the protobuf content type.
Rules: pure; the table is loaded once.
"""

from __future__ import annotations

import base64
import functools
import json
from importlib import resources
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.model import JsonDict, wrap_int32, wrap_int64
from kubeprio.clock import rfc3339

CONTENT_TYPE: Final = "application/vnd.kubernetes.protobuf"
MAGIC: Final = b"k8s\x00"

_TIME: Final = "k8s.io.apimachinery.pkg.apis.meta.v1.Time"
_MICRO_TIME: Final = "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"
_QUANTITY: Final = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING: Final = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
_RAW_EXTENSION: Final = "k8s.io.apimachinery.pkg.runtime.RawExtension"
_FIELDS_V1: Final = "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1"

_VARINT: Final = 0
_FIXED64: Final = 1
_LENGTH_DELIMITED: Final = 2
_FIXED32: Final = 5
_VARINT_TYPES: Final = frozenset({"int32", "int64", "bool"})

Field = tuple[int, int, Any]
"""(field number, wire type, value: an int for varints and fixed, bytes otherwise)."""


@functools.cache
def _table() -> tuple[dict[str, str], dict[str, dict[int, list[Any]]]]:
    raw = resources.files("kubeprio.apiserver").joinpath("upstream_protobuf.json").read_text()
    data = json.loads(raw)
    messages = {
        name: {int(number): entry for number, entry in fields.items()}
        for name, fields in data["messages"].items()
    }
    return data["roots"], messages


def decode(body: bytes) -> JsonDict:
    """The object in a protobuf request body, as its JSON dict (``apiVersion`` and
    ``kind`` first). Raises ``BadRequest`` for a body that is not one."""
    if not body.startswith(MAGIC):
        raise errors.bad_request("provided input is not protobuf: missing the k8s prefix")
    try:
        api_version, kind, raw = _unknown(body[len(MAGIC) :])
        roots, messages = _table()
        # A version served by conversion has its own root (``Kind@apiVersion``).
        message = roots.get(f"{kind}@{api_version}") or roots.get(kind)
        if message is None:
            raise errors.bad_request(f'no kind "{kind}" is registered for protobuf')
        obj: JsonDict = {"apiVersion": api_version, "kind": kind}
        obj.update(_message(raw, message, messages))
        return obj
    except (IndexError, ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"malformed protobuf body: {exc}") from exc


def _unknown(body: bytes) -> tuple[str, str, bytes]:
    """``runtime.Unknown``: typeMeta (1: apiVersion, 2: kind) and raw (2)."""
    envelope = _by_number(body)
    type_meta = _by_number(envelope.get(1, b""))
    return type_meta.get(1, b"").decode(), type_meta.get(2, b"").decode(), envelope.get(2, b"")


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _fields(data: bytes) -> list[Field]:
    """The wire-level fields of one message, in order."""
    fields: list[Field] = []
    position = 0
    end = len(data)
    while position < end:
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == _VARINT:
            value, position = _varint(data, position)
        elif wire == _LENGTH_DELIMITED:
            length, position = _varint(data, position)
            if position + length > end:
                raise ValueError("field runs past the end of its message")
            value = data[position : position + length]
            position += length
        elif wire == _FIXED64:
            value = int.from_bytes(data[position : position + 8], "little")
            position += 8
        elif wire == _FIXED32:
            value = int.from_bytes(data[position : position + 4], "little")
            position += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        fields.append((number, wire, value))
    return fields


def _by_number(data: bytes) -> dict[int, Any]:
    """A small message's fields by number (a repeated number: the last one wins, as in
    protobuf), for the messages read by hand (the envelope, Time, IntOrString, ...)."""
    return {number: value for number, _wire, value in _fields(data)}


def _scalar(type_name: str, value: Any) -> Any:
    if type_name == "string":
        return value.decode()
    if type_name == "bool":
        return bool(value)
    # Varints are read as two's complement (negative int32s are sign-extended to 64 bits).
    if type_name == "int32":
        return wrap_int32(value)
    if type_name == "int64":
        return wrap_int64(value)
    if type_name == "bytes":
        return base64.b64encode(value).decode()
    raise ValueError(f"unsupported field type {type_name}")


def _repeated_scalars(type_name: str, wire: int, value: Any) -> list[Any]:
    """One occurrence of a repeated scalar: a single value, or a packed run of varints."""
    if wire == _LENGTH_DELIMITED and type_name in _VARINT_TYPES:
        items: list[Any] = []
        position = 0
        while position < len(value):
            item, position = _varint(value, position)
            items.append(_scalar(type_name, item))
        return items
    return [_scalar(type_name, value)]


def _value(type_name: str, value: Any, messages: dict[str, dict[int, list[Any]]]) -> Any:
    """One field value as JSON; None when upstream's JSON would leave it out."""
    if type_name not in messages:
        return _scalar(type_name, value)
    if type_name in (_TIME, _MICRO_TIME):
        return _time(value, micro=type_name == _MICRO_TIME)
    if type_name == _QUANTITY:
        return _by_number(value).get(1, b"").decode()
    if type_name == _INT_OR_STRING:
        return _int_or_string(value)
    if type_name in (_RAW_EXTENSION, _FIELDS_V1):
        raw = _by_number(value).get(1, b"")
        return json.loads(raw) if raw else None
    return _message(value, type_name, messages)


def _message(data: bytes, name: str, messages: dict[str, dict[int, list[Any]]]) -> JsonDict:
    fields = messages[name]
    obj: JsonDict = {}
    for number, wire, value in _fields(data):
        entry = fields.get(number)
        if entry is None:
            continue  # an unknown field: upstream's generated decoders skip it too
        json_name, label, type_name, omit_zero = entry
        if label == "inline":
            obj.update(_message(value, type_name, messages))
        elif label == "map":
            key, item = _map_entry(value, type_name, messages)
            obj.setdefault(json_name, {})[key] = item
        elif label == "repeated":
            items = obj.setdefault(json_name, [])
            if type_name in messages:
                items.append(_value(type_name, value, messages))
            else:
                items.extend(_repeated_scalars(type_name, wire, value))
        else:
            decoded = _value(type_name, value, messages)
            zero = omit_zero and type_name not in messages and not decoded
            if decoded is None or zero:
                obj.pop(json_name, None)
            else:
                obj[json_name] = decoded
    return obj


def _map_entry(
    data: bytes, value_type: str, messages: dict[str, dict[int, list[Any]]]
) -> tuple[str, Any]:
    """A map entry message: 1 is the (string) key, 2 the value."""
    entry = _by_number(data)
    # An entry without a value holds the type's zero value.
    zero = b"" if value_type in messages or value_type in ("string", "bytes") else 0
    return entry.get(1, b"").decode(), _value(value_type, entry.get(2, zero), messages)


def _time(data: bytes, *, micro: bool) -> str | None:
    """``metav1.Time``/``MicroTime`` (1: seconds, 2: nanos) as upstream's JSON text."""
    if not data:
        return None
    fields = _by_number(data)
    text = rfc3339(wrap_int64(fields.get(1, 0)))
    if micro:
        nanos = wrap_int32(fields.get(2, 0))
        return f"{text[:-1]}.{nanos // 1000:06d}Z"
    return text


def _int_or_string(data: bytes) -> int | str:
    """``IntOrString``: 1 is the type (0 int, 1 string), 2 the int, 3 the string."""
    fields = _by_number(data)
    if fields.get(1, 0) == 1:
        text: str = fields.get(3, b"").decode()
        return text
    return wrap_int32(fields.get(2, 0))
