"""Go's ``%#v`` rendering of typed values, for bad values in v1.32's field errors.

Kubernetes v1.32's ``field.Error.ErrorBody`` prints a bad value that is not a string,
a number, a bool or a ``fmt.Stringer`` with Go's ``%#v`` verb (``map[string]string{"app":
"web"}``, ``v1.LabelSelector{MatchLabels:..., MatchExpressions:...}``). ``%#v`` needs
the value's Go type, which a Python value does not carry, so call sites describe it with
the small typed wrappers here:

* :class:`GoMap` — a map type (``map[string]string``, ``core.ResourceList``);
* :class:`GoSlice` — a slice type (``[]string``, ``[]core.ResourceQuotaScope``);
* :class:`GoStruct` — a struct type and its fields in declaration order;
* :class:`GoPointer` — a pointer type and what it points to (or ``None`` for nil).

Plain ``str``, ``int`` and ``bool`` are the scalars (named string and int types print
the same way: ``"In"``, ``1``). The rules follow ``fmt/print.go``: map keys sorted, ``", "``
between entries and fields, ``Name:value`` for fields, ``T(nil)`` for nil maps and
slices, ``T{}`` for empty ones, element type names repeated for struct elements.

A pointer at the top is followed, as ``ErrorBody`` does; a non-nil pointer *inside* a
value prints as its address (``(*v1.Time)(0xc000123456)``), which cannot be reproduced:
:func:`go_syntax` raises :class:`GoAddressError` then, and the caller keeps another
rendering. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubeprio.api.gotext import go_quote


class GoAddressError(ValueError):
    """The value holds a non-nil nested pointer, which ``%#v`` prints as a memory address."""


@dataclass(frozen=True, slots=True)
class GoMap:
    """A Go map of type ``type_name`` (``map[string]string``); ``entries`` None is nil."""

    type_name: str
    entries: Mapping[str, object] | None


@dataclass(frozen=True, slots=True)
class GoSlice:
    """A Go slice of type ``type_name`` (``[]string``); ``items`` None is nil."""

    type_name: str
    items: Sequence[object] | None


@dataclass(frozen=True, slots=True)
class GoStruct:
    """A Go struct value of type ``type_name`` (``v1.LabelSelector``), fields in order."""

    type_name: str
    fields: tuple[tuple[str, object], ...]


@dataclass(frozen=True, slots=True)
class GoPointer:
    """A Go pointer of type ``type_name`` (``*apps.RollingUpdateDeployment``) to ``target``."""

    type_name: str
    target: object | None = None


GoTyped = GoMap | GoSlice | GoStruct | GoPointer
"""The wrappers :func:`go_syntax` renders (besides ``str``, ``int`` and ``bool``)."""


def go_syntax(value: object) -> str:
    """``fmt.Sprintf("%#v", value)`` after ``ErrorBody``'s dereference of a top-level pointer.

    Raises :class:`GoAddressError` when a nested pointer is not nil.
    """
    if isinstance(value, GoPointer):
        if value.target is None:
            return _nil(value.type_name)
        value = value.target
    return _render(value)


def _render(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, GoMap):
        if value.entries is None:
            return _nil(value.type_name)
        entries = ", ".join(
            f"{go_quote(name)}:{_render(value.entries[name])}" for name in sorted(value.entries)
        )
        return f"{value.type_name}{{{entries}}}"
    if isinstance(value, GoSlice):
        if value.items is None:
            return _nil(value.type_name)
        return f"{value.type_name}{{{', '.join(_render(item) for item in value.items)}}}"
    if isinstance(value, GoStruct):
        fields = ", ".join(f"{name}:{_render(field)}" for name, field in value.fields)
        return f"{value.type_name}{{{fields}}}"
    if isinstance(value, GoPointer):
        if value.target is None:
            return _nil(value.type_name)
        raise GoAddressError(f"{value.type_name} is not nil: %#v prints its address")
    raise TypeError(f"no Go type for {type(value).__name__} value {value!r}")


def _nil(type_name: str) -> str:
    """A typed nil: ``map[string]string(nil)``, ``(*v1.Time)(nil)``."""
    if type_name.startswith("*"):
        return f"({type_name})(nil)"
    return f"{type_name}(nil)"


def string_map(entries: Mapping[str, str] | None) -> GoMap:
    """A ``map[string]string`` (labels, annotations, node selectors)."""
    return GoMap("map[string]string", entries)


def string_slice(items: Sequence[str] | None) -> GoSlice:
    """A ``[]string``."""
    return GoSlice("[]string", items)


def int_or_string(value: int | str) -> GoStruct:
    """An ``intstr.IntOrString`` value: ``Type`` 0 holds ``IntVal``, 1 holds ``StrVal``."""
    if isinstance(value, str):
        return GoStruct("intstr.IntOrString", (("Type", 1), ("IntVal", 0), ("StrVal", value)))
    return GoStruct("intstr.IntOrString", (("Type", 0), ("IntVal", value), ("StrVal", "")))
