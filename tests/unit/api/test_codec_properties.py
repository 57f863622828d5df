"""The JSON codec round-trips any document of any kind (issue 2, section 2).

Documents are generated from the model declarations themselves: every modelled field
with a value of its type (int32 and int64 ranges, canonical quantities, int-or-string,
base64 bytes, nested objects, lists, maps), explicit nulls, and unknown keys holding arbitrary JSON.
Fields Go's encoder always writes (``api.gozeros``: struct values, ``metav1.Time``,
fields without ``omitempty``) are always in the documents, as in what a real API server
serves. ``to_dict(from_dict(doc)) == doc`` must hold for all of them: a manifest read
from a real cluster comes back unchanged. Decoding also never raises anything but
``DecodeError`` on wrongly-typed input.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, Union

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeprio.api import gozeros, kinds
from kubeprio.api.model import INT32, JSON_NAME
from kubeprio.api.quantity import Quantity, QuantityFormat, canonical
from kubeprio.api.serialization import DecodeError, camel_case, from_dict, to_dict

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.text(max_size=8))
json_any = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=5,
)
# What a server prints, read back: a BinarySI value that is no multiple of 1024 prints
# bare ("25000"), which parses as DecimalSI and prints "25k" (upstream too), so the
# documents hold the printed form of the parsed text, which reads back as itself.
quantities = st.builds(
    lambda n, fmt: canonical(str(Quantity(n, fmt))),
    st.integers(-(10**15), 10**15).map(lambda n: n * 1_000_000),
    st.sampled_from(list(QuantityFormat)),
)


def _unwrap(tp: Any) -> Any:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
        return Union[tuple(args)]  # noqa: UP007
    return tp


def _for_type(tp: Any) -> st.SearchStrategy[Any]:
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *marks = typing.get_args(tp)
        if base is int and INT32 in marks:
            return st.integers(-(2**31), 2**31 - 1)
        return _for_type(base)
    if tp is str:
        return st.text(max_size=10)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(-(2**63), 2**63 - 1)
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if tp is bytes:
        # ``[]byte`` travels as canonical standard base64.
        return st.binary(max_size=8).map(lambda raw: base64.b64encode(raw).decode())
    if tp is Quantity:
        return quantities
    if tp is Any:
        return json_any
    if origin in (Union, types.UnionType):
        return st.one_of(st.integers(-(2**31), 2**31 - 1), st.text(max_size=6))
    if origin is dict and typing.get_args(tp)[1] is Any:
        return st.dictionaries(st.text(max_size=6), json_any, max_size=3)
    if origin in (Mapping, dict):
        return st.dictionaries(st.text(max_size=6), _for_type(typing.get_args(tp)[1]), max_size=3)
    if origin is tuple:
        return st.lists(_for_type(typing.get_args(tp)[0]), max_size=2)
    if dataclasses.is_dataclass(tp):
        return _for_model(tp)
    raise TypeError(tp)


TOP_LEVEL = ("apiVersion", "kind", "metadata")
"""Fields with non-null defaults on top-level kinds: always present in real manifests."""


@functools.cache
def _for_model(cls: type[Any], *, top_level: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    hints = typing.get_type_hints(cls, include_extras=True)
    zeros = gozeros.zero_values(cls)
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for field in dataclasses.fields(cls):
        if field.name == "extra":
            continue
        key = field.metadata.get(JSON_NAME) or camel_case(field.name)
        value = st.deferred(lambda hint=hints[field.name]: _for_type(hint))
        if key in zeros:
            # Go always writes this field (gozeros): a real document always has it, and
            # a null only where Go's zero value is null (a metav1.Time).
            required[key] = st.one_of(st.none(), value) if zeros[key] is None else value
        elif top_level and key in TOP_LEVEL:
            required[key] = value
        else:
            # An explicit null survives too: it is kept as an unknown key.
            optional[key] = st.one_of(st.none(), value)
    for key, zero in zeros.items():
        if key not in required:
            required[key] = st.one_of(st.just(zero), json_any)  # an unmodelled field
    unknown = st.dictionaries(
        st.text(min_size=1, max_size=6).map(lambda k: "x-" + k), json_any, max_size=2
    )
    known = st.fixed_dictionaries(required, optional=optional)
    return st.builds(lambda known, extra: {**extra, **known}, known, unknown)


MODELS = [info.model for info in kinds.RESOURCES]


@pytest.mark.parametrize("model", MODELS, ids=[m.__name__ for m in MODELS])
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_any_document_round_trips(model: type[Any], data: st.DataObject) -> None:
    document = data.draw(_for_model(model, top_level=True))
    assert to_dict(from_dict(model, document)) == document


@pytest.mark.parametrize("model", MODELS, ids=[m.__name__ for m in MODELS])
@settings(max_examples=60, deadline=None)
@given(
    junk=st.dictionaries(
        st.sampled_from(["metadata", "spec", "status", "value", "items", "involvedObject"]),
        json_any,
        max_size=3,
    )
)
def test_wrongly_typed_documents_raise_decode_error_only(
    model: type[Any], junk: dict[str, Any]
) -> None:
    try:
        decoded = from_dict(model, junk)
    except DecodeError:
        return  # the only failure allowed
    encoded = to_dict(decoded)
    assert to_dict(from_dict(model, encoded)) == encoded
