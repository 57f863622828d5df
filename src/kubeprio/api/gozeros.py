"""What upstream's API server writes for a field kubeprio's model leaves unset.

Upstream encodes objects with Go's ``encoding/json``: ``omitempty`` drops nil pointers,
empty slices, maps and strings, zero numbers and ``false``, but never a struct value; a
field without ``omitempty`` is always written; and ``metav1.Time`` writes its zero value
as ``null``. So a just-created Deployment is served with ``"status": {}``, its pod
template with ``"metadata": {"creationTimestamp": null}``, a PodDisruptionBudget's status
with ``"currentHealthy": 0``. kubeprio's models hold ``None`` for what was never set.

The facts come from ``go_zeros.json``, which ``tools/gen_go_zeros.py`` writes from the
v1.32 ``types.go`` files: per upstream type, the JSON value written for each unset field
(``zeros``) and which fields lead to types that have such values (``refs``). This module
pairs them with kubeprio's model classes by walking each served kind's model alongside
its upstream type (``api.kinds``), so ``api.serialization`` can compile the zero values
into each class's encoder. A model class shared by upstream types that disagree (one
``WorkloadCondition`` for the conditions of several workload kinds) gets only the values
they all agree on.

Driven by ``api.serialization``, once per model class. Pure: reads a packaged file.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import sys
import types
import typing
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final, Union

from kubeprio.api.model import JSON_NAME
from kubeprio.api.quantity import Quantity

_MISSING: Final = object()


@functools.cache
def _table() -> dict[str, Any]:
    raw = resources.files("kubeprio.api").joinpath("go_zeros.json").read_text()
    table: dict[str, Any] = json.loads(raw)
    return table


def _json_key(field: dataclasses.Field[Any]) -> str:
    name: str = field.metadata.get(JSON_NAME) or field.name
    if JSON_NAME in field.metadata:
        return name
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _model_class(tp: Any) -> type[Any] | None:
    """The model class a field holds (alone, in a tuple or as a map's values), if any."""
    while True:
        origin = typing.get_origin(tp)
        if origin is Union or origin is types.UnionType:
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return None
            tp = args[0]
        elif origin is typing.Annotated or origin is tuple:
            tp = typing.get_args(tp)[0]
        elif origin in (Mapping, dict):
            tp = typing.get_args(tp)[1]
        else:
            break
    if dataclasses.is_dataclass(tp) and tp is not Quantity:
        return typing.cast(type[Any], tp)
    return None


def _field_model(cls: type[Any], field: dataclasses.Field[Any]) -> type[Any] | None:
    """``_model_class`` of one field. Its annotation is a string (the model modules use
    ``from __future__ import annotations``): the model class is read off the names in it,
    which saves resolving every field of every class (``typing.get_type_hints``)."""
    if not isinstance(field.type, str):
        return _model_class(field.type)
    namespace = vars(sys.modules[cls.__module__])
    for name in _NAMES.findall(field.type):
        found = namespace.get(name)
        if found is not None and found is not Quantity and dataclasses.is_dataclass(found):
            return typing.cast(type[Any], found)
    return None


_NAMES: Final = re.compile(r"[A-Za-z_]\w*")


def _served_models() -> dict[str, type[Any]]:
    """Each kind the API server encodes from a model, by kind name."""
    from kubeprio.api import kinds

    rows = (
        *kinds.RESOURCES,
        kinds.LEGACY_BINDINGS,
        kinds.COMPONENT_STATUSES,
        *kinds.REVIEWS,
        *kinds.RESOURCE_METRICS,
    )
    served = {info.kind: info.model for info in rows}
    served.update(kinds.NON_STORED_KINDS)
    return served


@functools.cache
def _upstream_types() -> dict[type[Any], tuple[str, ...]]:
    """Every reachable model class with the upstream types it stands for."""
    table = _table()
    found: dict[type[Any], list[str]] = {}

    def walk(cls: type[Any], type_name: str) -> None:
        if type_name in found.setdefault(cls, []):
            return
        found[cls].append(type_name)
        refs = table["types"][type_name]["refs"]
        for field in dataclasses.fields(cls):
            ref = refs.get(_json_key(field))
            nested = _field_model(cls, field) if ref is not None else None
            if ref is not None and nested is not None:
                walk(nested, ref.lstrip("[]{}"))

    for kind, model in _served_models().items():
        root = table["roots"].get(kind)
        if root is not None and dataclasses.is_dataclass(model):
            walk(model, root)
    return {cls: tuple(sorted(names)) for cls, names in found.items()}


def _agreed(candidates: list[dict[str, Any]]) -> dict[str, Any]:
    """The zero values every upstream type behind one model class writes alike."""
    first, *rest = candidates
    return {
        key: value
        for key, value in first.items()
        if all(other.get(key, _MISSING) == value for other in rest)
    }


@functools.cache
def _by_class() -> dict[type[Any], dict[str, Any]]:
    zeros = {name: entry["zeros"] for name, entry in _table()["types"].items()}
    return {
        cls: _agreed([zeros[name] for name in names]) for cls, names in _upstream_types().items()
    }


def zero_values(cls: type[Any]) -> Mapping[str, Any]:
    """What upstream writes for each unset field of ``cls`` by JSON key (``{}`` when
    ``cls`` is no served type's model): ``None`` for ``null``, ``{}`` for an empty struct."""
    return _by_class().get(cls, {})


def upstream_types(cls: type[Any]) -> tuple[str, ...]:
    """The upstream types (client names, ``V1PodSpec``) model class ``cls`` stands for."""
    return _upstream_types().get(cls, ())


def disagreements() -> dict[str, list[str]]:
    """Per model class shared by upstream types, the JSON keys they do not all write alike
    (which ``zero_values`` therefore leaves out); for tests and review."""
    zeros = {name: entry["zeros"] for name, entry in _table()["types"].items()}
    out: dict[str, list[str]] = {}
    for cls, names in _upstream_types().items():
        every = set().union(*(zeros[name] for name in names))
        left_out = every - set(_by_class()[cls])
        if left_out:
            out[cls.__name__] = sorted(left_out)
    return out


def root_type(schema_key: str) -> str | None:
    """The upstream type (client name) of a served kind's schema key (``Event``,
    ``Event@events.k8s.io/v1``), if any of its fields has a zero value to write."""
    root: str | None = _table()["roots"].get(schema_key)
    return root


def filled(document: Any, type_name: str) -> Any:
    """``document``, a JSON value of upstream type ``type_name``, with the zero values Go
    writes for the fields it lacks, at every depth; for JSON built without a model (a
    conversion's output). Copies only what changes: the input is never modified."""
    entry = _table()["types"].get(type_name)
    if entry is None or not isinstance(document, dict):
        return document
    out: dict[str, Any] | None = None
    for key, zero in entry["zeros"].items():
        if key not in document:
            out = out if out is not None else dict(document)
            out[key] = json.loads(json.dumps(zero)) if isinstance(zero, dict | list) else zero
    for key, ref in entry["refs"].items():
        value = document.get(key)
        new = _filled_ref(value, ref)
        if new is not value:
            out = out if out is not None else dict(document)
            out[key] = new
    return out if out is not None else document


def _filled_ref(value: Any, ref: str) -> Any:
    """``filled`` for a field of the table's type notation (``[]T``, ``{}T``, ``T``)."""
    if ref.startswith("[]"):
        if not isinstance(value, list):
            return value
        items = [_filled_ref(item, ref[2:]) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if ref.startswith("{}"):
        if not isinstance(value, dict):
            return value
        members = {k: _filled_ref(v, ref[2:]) for k, v in value.items()}
        return members if any(members[k] is not v for k, v in value.items()) else value
    return filled(value, ref)
