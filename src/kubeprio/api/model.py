"""Declaring API models: field helpers shared by every kind.

Every Kubernetes object kubeprio understands is a frozen, slotted, keyword-only
dataclass (``@dataclass(frozen=True, slots=True, kw_only=True)``, written out on each
class so type checkers see it) (docs/design.md, "Objects"). Attributes are snake_case; the JSON name of an
attribute is its camelCase form unless ``json_name`` overrides it (``hostIP``,
``podCIDR``). Every model keeps the JSON keys it does not model in ``extra``, so a
manifest from a real cluster round-trips untouched (managedFields, env, volumes, ...).

``serialization`` reads these declarations; nothing else needs to. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Final, TypeVar

_T = TypeVar("_T")

JsonDict = dict[str, Any]
"""A decoded JSON object: the only place ``Any`` is allowed (I/O boundaries)."""

INT32: Final = "int32"
"""Annotation marking an ``int`` field that is an ``int32`` upstream (range-checked on decode)."""

Int32 = Annotated[int, INT32]
"""An integer that upstream stores as ``int32``; decoding rejects values outside its range."""

JSON_NAME = "json"
"""Field-metadata key holding a JSON name that is not the plain camelCase of the attribute."""


def json_name(name: str, default: Any = None) -> Any:
    """Declare a field whose JSON key is ``name`` (e.g. ``hostIP``), defaulting to ``default``."""
    return dataclasses.field(default=default, metadata={JSON_NAME: name})


def extra_field() -> Any:
    """The ``extra`` field: unmodelled JSON keys, kept verbatim for round-tripping."""
    return dataclasses.field(default_factory=dict, compare=True, repr=False)


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}
"""Per-class field names for ``evolve`` (a pure memo: same class, same names)."""


def evolve(instance: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace`` for frozen slotted models, several times faster.

    ``dataclasses.replace`` re-runs ``__init__`` through keyword plumbing (about 10 µs
    for a pod spec); copying the slots directly costs a fraction of that, and the write
    path copies models dozens of times per pod. Unknown field names raise ``TypeError``
    as ``replace`` does. Classes without ``__slots__`` fall back to ``replace``.
    """
    cls = type(instance)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        if not hasattr(cls, "__slots__"):
            return dataclasses.replace(instance, **changes)  # type: ignore[type-var]
        names = tuple(field.name for field in dataclasses.fields(cls))  # type: ignore[arg-type]
        _FIELD_NAMES[cls] = names
    for name in changes:
        if name not in names:
            raise TypeError(
                f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}"
            )
    new = object.__new__(cls)
    setter = object.__setattr__
    for name in names:
        setter(new, name, changes[name] if name in changes else getattr(instance, name))
    return new
