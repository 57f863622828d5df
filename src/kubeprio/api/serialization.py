"""JSON <-> model conversion for every kind: the only place camelCase exists.

Encoding and decoding are driven by the dataclass declarations in ``api.model``
(lightkube's ``dataclasses_dict`` idea): for each model class a *plan* is built once,
mapping JSON keys to attributes with a converter per field type. Decoding:

* unknown keys go to ``extra`` and come back out unchanged (round-trip fidelity);
* an explicit ``null`` for a modelled key is kept in ``extra`` too, unless Go writes
  ``null`` for that field when unset (a ``metav1.Time`` such as a pod template's
  ``creationTimestamp``): then it decodes as unset, as Go decodes it as the zero value;
* type errors raise ``DecodeError`` with the field path and a message in the form
  upstream's JSON decoder uses (``json: cannot unmarshal string into Go struct field
  PriorityClass.value of type int32``); int32 fields are range-checked;
* quantities are parsed exactly (``api.quantity``) and printed canonically on encode,
  as the API server does;
* ``bytes`` fields (a Secret's ``data``) travel as standard base64, decoded with Go's
  rules and error texts (``api.base64data``);
* ``to_dict`` writes what upstream's Go encoder writes for a field the model leaves unset
  (``api.gozeros``: ``"status": {}``, ``"creationTimestamp": null``, ``"currentHealthy":
  0``), so objects are served as a real API server serves them; ``to_sparse_dict``
  writes only what the object holds, for hashes that must not move (pod-template-hash,
  ControllerRevision data).

Pure: no I/O. Plans are memoised per class (a pure cache: same class, same plan).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any, TypeVar, Union, cast

from kubeprio.api import base64data, gozeros
from kubeprio.api.gotext import json_kind
from kubeprio.api.model import (
    INT32,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    JSON_NAME,
    JsonDict,
)
from kubeprio.api.quantity import Quantity, QuantityError, quantity_from_json
from kubeprio.errors import KubeprioError

_M = TypeVar("_M")


class DecodeError(KubeprioError, ValueError):
    """A JSON value does not fit the model: carries the field path and an upstream-style message."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class _Context:
    """Where a converter is, for error messages: the Go-ish struct name and the JSON path."""

    __slots__ = ("json_path", "path", "struct")

    def __init__(self, struct: str, path: str, json_path: str) -> None:
        self.struct = struct
        self.path = path
        self.json_path = json_path


Decoder = Callable[[Any, str, str], Any]
"""``decode(value, path, struct)``: convert one JSON value; ``path`` is for errors."""
Encoder = Callable[[Any], Any]


def camel_case(snake: str) -> str:
    """``node_name`` -> ``nodeName``; a trailing underscore (``continue_``) is dropped."""
    head, *rest = snake.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _mismatch(value: Any, path: str, struct: str, go_type: str) -> DecodeError:
    field_path = _strip_indices(path)
    where = f"Go struct field {struct}.{field_path}" if field_path else "Go value"
    shown = json_kind(value)
    if shown == "number" and go_type in ("int32", "int64"):
        shown = f"number {value!r}"
    return DecodeError(f"json: cannot unmarshal {shown} into {where} of type {go_type}", path=path)


def _strip_indices(path: str) -> str:
    out: list[str] = []
    depth = 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- field converters ---------------------------------------------------------------------


def _decode_str(value: Any, path: str, struct: str) -> str:
    if isinstance(value, str):
        return value
    raise _mismatch(value, path, struct, "string")


def _decode_bool(value: Any, path: str, struct: str) -> bool:
    if isinstance(value, bool):
        return value
    raise _mismatch(value, path, struct, "bool")


def _int_decoder(bits: int) -> Decoder:
    low, high = (INT32_MIN, INT32_MAX) if bits == 32 else (INT64_MIN, INT64_MAX)
    go_type = f"int{bits}"

    def decode(value: Any, path: str, struct: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer() and low <= value <= high:
                # YAML 1.1 may hand us ``1.0``; Go accepts a JSON number with no fraction.
                return int(value)
            raise _mismatch(value, path, struct, go_type)
        if not low <= value <= high:
            raise _mismatch(value, path, struct, go_type)
        return value

    return decode


def _decode_float(value: Any, path: str, struct: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _mismatch(value, path, struct, "float64")
    return float(value)


def _decode_int_or_string(value: Any, path: str, struct: str) -> int | str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and INT32_MIN <= value <= INT32_MAX:
        return value
    raise _mismatch(value, path, struct, "intstr.IntOrString")


def _decode_quantity(value: Any, path: str, struct: str) -> Quantity:
    try:
        return quantity_from_json(value)
    except QuantityError as exc:
        raise DecodeError(str(exc), path=path) from exc


def _decode_bytes(value: Any, path: str, struct: str) -> bytes:
    if not isinstance(value, str):
        raise _mismatch(value, path, struct, "[]uint8")
    try:
        return base64data.decode(value)
    except base64data.Base64Error as exc:
        raise DecodeError(str(exc), path=path) from exc


def _decode_json(value: Any, path: str, struct: str) -> Any:
    return value


def _decode_json_object(value: Any, path: str, struct: str) -> JsonDict:
    if isinstance(value, dict):
        return value
    raise _mismatch(value, path, struct, "map[string]interface {}")


def _identity(value: Any) -> Any:
    return value


def _encode_quantity(value: Quantity) -> str:
    return str(value)


def _unwrap_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
        return Union[tuple(args)]  # noqa: UP007 - rebuilding a union from runtime args
    return tp


def _go_type(tp: Any) -> str:
    tp = _unwrap_optional(tp)
    if dataclasses.is_dataclass(tp):
        return f"v1.{getattr(tp, '__name__', tp)}"
    origin = typing.get_origin(tp)
    if origin is tuple:
        return "[]" + _go_type(typing.get_args(tp)[0])
    if origin in (Mapping, dict):
        return "map[string]" + _go_type(typing.get_args(tp)[1])
    return {str: "string", bool: "bool", int: "int64", float: "float64", bytes: "[]uint8"}.get(
        tp, "interface {}"
    )


def _converters(tp: Any) -> tuple[Decoder, Encoder]:
    """Build the (decoder, encoder) pair for a field type."""
    tp = _unwrap_optional(tp)
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *marks = typing.get_args(tp)
        if base is int and INT32 in marks:
            return _int_decoder(32), _identity
        return _converters(base)
    if tp is str:
        return _decode_str, _identity
    if tp is bool:
        return _decode_bool, _identity
    if tp is int:
        return _int_decoder(64), _identity
    if tp is float:
        return _decode_float, _identity
    if tp is bytes:
        return _decode_bytes, base64data.encode
    if tp is Quantity:
        return _decode_quantity, _encode_quantity
    if tp is Any:
        return _decode_json, _identity
    if origin is Union or origin is types.UnionType:
        if set(typing.get_args(tp)) == {int, str}:
            return _decode_int_or_string, _identity
        raise TypeError(f"unsupported union {tp!r}")
    if origin is dict and typing.get_args(tp)[1] is Any:
        return _decode_json_object, _identity
    if origin in (Mapping, dict):
        return _mapping_converters(typing.get_args(tp)[1])
    if origin is tuple:
        return _tuple_converters(typing.get_args(tp)[0])
    if dataclasses.is_dataclass(tp):
        model_tp: type[Any] = tp  # type: ignore[assignment]

        def decode_model(value: Any, path: str, struct: str) -> Any:
            if not isinstance(value, dict):
                raise _mismatch(value, path, struct, _go_type(model_tp))
            return _decode_into(model_tp, value, path)

        return decode_model, _encode_model
    raise TypeError(f"unsupported field type {tp!r}")


def _mapping_converters(value_tp: Any) -> tuple[Decoder, Encoder]:
    decode_value, encode_value = _converters(value_tp)
    go_type = "map[string]" + _go_type(value_tp)

    def decode(value: Any, path: str, struct: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise _mismatch(value, path, struct, go_type)
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[str(key)] = decode_value(item, f"{path}[{key}]", struct)
        return out

    if encode_value is _identity:
        return decode, dict
    return decode, lambda mapping: {k: encode_value(v) for k, v in mapping.items()}


def _tuple_converters(item_tp: Any) -> tuple[Decoder, Encoder]:
    decode_item, encode_item = _converters(item_tp)
    go_type = "[]" + _go_type(item_tp)

    def decode(value: Any, path: str, struct: str) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple):
            raise _mismatch(value, path, struct, go_type)
        return tuple(decode_item(item, f"{path}[{i}]", struct) for i, item in enumerate(value))

    if encode_item is _identity:
        return decode, list
    return decode, lambda items: [encode_item(item) for item in items]


# --- per-class plans ------------------------------------------------------------------------


class _Plan:
    """How to decode and encode one model class."""

    __slots__ = ("by_key", "cls", "encode", "fields", "null_keys", "shapes", "struct")

    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls
        self.struct = cls.__name__
        hints = typing.get_type_hints(cls, include_extras=True)
        self.fields: list[tuple[str, str, Decoder, Encoder]] = []
        shapes: list[str] = []
        for field in dataclasses.fields(cls):
            if field.name == "extra":
                continue
            key = field.metadata.get(JSON_NAME) or camel_case(field.name)
            decode, encode = _converters(hints[field.name])
            self.fields.append((key, field.name, decode, encode))
            shapes.append(_encode_shape(hints[field.name], encode))
        self.by_key = {key: (attr, decode) for key, attr, decode, _ in self.fields}
        zeros = gozeros.zero_values(cls)
        # Modelled keys Go writes as null when unset: a null for them decodes as unset.
        self.null_keys = frozenset(
            key for key in self.by_key if key in zeros and zeros[key] is None
        )
        self.shapes = shapes
        self.encode = _compile_encoder(cls, self.fields, shapes, zeros, _encode_model)


def _encode_shape(tp: Any, encode: Encoder) -> str:
    """How the compiled encoder writes a field: as it is (``plain``), as one model
    (``model``), as a list of models (``models``), or through its converter (``call``)."""
    if encode is _identity:
        return "plain"
    tp = _unwrap_optional(tp)
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if tp is Quantity:
        return "call"  # a dataclass, but encoded as its string
    if dataclasses.is_dataclass(tp):
        return "model"
    if typing.get_origin(tp) is tuple and dataclasses.is_dataclass(typing.get_args(tp)[0]):
        return "models"
    return "call"


def _compile_encoder(
    cls: type[Any],
    fields: list[tuple[str, str, Decoder, Encoder]],
    shapes: list[str],
    zeros: Mapping[str, Any],
    encode_model: Callable[[Any], JsonDict],
) -> Callable[[Any], JsonDict]:
    """The encoder of ``cls`` written out as straight-line Python (what ``dataclasses``
    does for ``__init__``): one attribute read per field, no per-field converter call
    for scalars, nested models encoded by their own compiled encoders. Encoding a pod is
    the biggest cost of a stored write and of a watch event; this halves it.

    ``zeros`` (``api.gozeros``) are written for unset fields as literals (a fresh ``{}``
    each time): an ``else`` branch per modelled field, a membership test per unmodelled
    one, nothing more for a field that is set."""
    lines = ["def encode(obj):", "    out = {}"]
    scope: dict[str, Any] = {"encode_model": encode_model}
    for index, ((key, attr, _, encode), shape) in enumerate(zip(fields, shapes, strict=True)):
        lines.append(f"    value = obj.{attr}")
        lines.append("    if value is not None:")
        if shape == "plain":
            lines.append(f"        out[{key!r}] = value")
        elif shape == "model":
            lines.append(f"        out[{key!r}] = encode_model(value)")
        elif shape == "models":
            lines.append(f"        out[{key!r}] = [encode_model(item) for item in value]")
        else:
            scope[f"convert_{index}"] = encode
            lines.append(f"        out[{key!r}] = convert_{index}(value)")
        if key in zeros:
            lines.append(f"    else:\n        out[{key!r}] = {zeros[key]!r}")
    lines += [
        "    extra = obj.extra",
        "    if extra:",
        "        for key, value in extra.items():",
        "            if key not in out:",
        "                out[key] = value",
    ]
    modelled = {key for key, *_ in fields}
    for key, zero in zeros.items():
        if key not in modelled:
            lines.append(f"    if {key!r} not in out:\n        out[{key!r}] = {zero!r}")
    lines.append("    return out")
    # The source is built above from the class's own field names and JSON keys.
    exec("\n".join(lines), scope)
    encoder: Callable[[Any], JsonDict] = scope["encode"]
    encoder.__qualname__ = f"encode_{cls.__name__}"
    return encoder


def _plan(cls: type[Any]) -> _Plan:
    return _cached_plan(cast(Hashable, cls))


@functools.cache
def _cached_plan(cls: Any) -> _Plan:
    return _Plan(cls)


def _decode_into(
    cls: type[_M],
    data: Mapping[str, Any],
    path: str,
    current: _M | None = None,
    changed: Collection[str] = (),
) -> _M:
    """Decode ``data`` as ``cls``; with ``current``, the modelled keys not in ``changed``
    are taken from it as they are (``decode_changes``)."""
    plan = _plan(cls)
    kwargs: dict[str, Any] = {}
    extra: JsonDict = {}
    by_key = plan.by_key
    for key, value in data.items():
        entry = by_key.get(key)
        if entry is None or value is None:
            if value is None and key in plan.null_keys:
                continue  # Go's zero value, which the encoder writes back as null
            extra[key] = value
            continue
        attr, decode = entry
        if current is None or key in changed:
            kwargs[attr] = decode(value, _join(path, key), plan.struct)
        else:
            kwargs[attr] = getattr(current, attr)
    if extra:
        kwargs["extra"] = extra
    return cls(**kwargs)


def _encode_model(obj: Any) -> JsonDict:
    encoder = _ENCODERS.get(type(obj))
    if encoder is None:
        encoder = _ENCODERS[type(obj)] = _plan(type(obj)).encode
    return encoder(obj)


_ENCODERS: dict[type[Any], Callable[[Any], JsonDict]] = {}
"""Compiled encoders by class (a pure cache, filled as classes are first encoded)."""


def _encode_sparse_model(obj: Any) -> JsonDict:
    encoder = _SPARSE_ENCODERS.get(type(obj))
    if encoder is None:
        plan = _plan(type(obj))
        encoder = _compile_encoder(plan.cls, plan.fields, plan.shapes, {}, _encode_sparse_model)
        _SPARSE_ENCODERS[type(obj)] = encoder
    return encoder(obj)


_SPARSE_ENCODERS: dict[type[Any], Callable[[Any], JsonDict]] = {}
"""Compiled encoders without Go's zero values, by class (as ``_ENCODERS``)."""


def from_dict(cls: type[_M], data: Any, *, path: str = "") -> _M:
    """Decode a JSON object into model class ``cls``; raise ``DecodeError`` on type errors."""
    if not isinstance(data, dict):
        raise DecodeError(
            f"json: cannot unmarshal {json_kind(data)} into Go value of type v1.{cls.__name__}",
            path=path,
        )
    return _decode_into(cls, data, path)


def encode_for_change(obj: Any, changed: Collection[str]) -> JsonDict:
    """``to_dict(obj)`` with only the top-level ``changed`` keys encoded: the other modelled
    keys hold the attribute values as they are, in their places, for ``decode_changes``
    to take back unread. Not JSON: only for a patch that touches ``changed`` alone."""
    plan = _plan(type(obj))
    out: JsonDict = {}
    for key, attr, _, encode in plan.fields:
        value = getattr(obj, attr)
        if value is not None:
            out[key] = encode(value) if key in changed else value
    for key, value in obj.extra.items():
        if key not in out:
            out[key] = value
    return out


def decode_changes(current: _M, data: Mapping[str, Any], changed: Collection[str]) -> _M:
    """``from_dict(type(current), data)``, where ``data`` is ``to_dict(current)`` with only
    its top-level ``changed`` keys altered (a patch's result): the other modelled fields are
    taken from ``current`` as they are, since decoding a model's own encoding gives it back.
    Saves decoding a pod's metadata and spec for a status patch."""
    return _decode_into(type(current), data, "", current, changed)


def to_dict(obj: Any) -> JsonDict:
    """Encode a model object as a JSON object (camelCase keys, canonical quantities), with
    the zero values upstream's Go encoder writes for unset fields (``api.gozeros``)."""
    return _encode_model(obj)


def to_sparse_dict(obj: Any) -> JsonDict:
    """``to_dict`` without the zero values of unset fields: only what ``obj`` holds. For
    hashes computed from an object's JSON, which must not change with the encoding."""
    return _encode_sparse_model(obj)
