"""Declaring API models: field helpers shared by every kind.

Every Kubernetes object kubeprio understands is a frozen, slotted, keyword-only
dataclass (``@dataclass(frozen=True, slots=True, kw_only=True)``, written out on each
class so type checkers see it) (docs/design.md, "Objects"). Attributes are snake_case; the JSON name of an
attribute is its camelCase form unless ``json_name`` overrides it (``hostIP``,
``podCIDR``). Every model keeps the JSON keys it does not model in ``extra``, so a
manifest from a real cluster round-trips untouched (managedFields, env, volumes, ...).

``serialization`` (and ``gozeros``, for JSON keys) read these declarations; nothing else
needs to. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Final

from kubeprio.frozen import evolve as evolve
from kubeprio.frozen import fast_init as fast_init

JsonDict = dict[str, Any]
"""A decoded JSON object: the only place ``Any`` is allowed (I/O boundaries)."""

INT32: Final = "int32"
"""Annotation marking an ``int`` field that is an ``int32`` upstream (range-checked on decode)."""

Int32 = Annotated[int, INT32]
"""An integer that upstream stores as ``int32``; decoding rejects values outside its range."""

INT32_MIN: Final = -(2**31)
"""The smallest ``int32`` (Go's ``math.MinInt32``)."""
INT32_MAX: Final = 2**31 - 1
"""The largest ``int32`` (Go's ``math.MaxInt32``)."""
INT64_MIN: Final = -(2**63)
"""The smallest ``int64`` (Go's ``math.MinInt64``)."""
INT64_MAX: Final = 2**63 - 1
"""The largest ``int64`` (Go's ``math.MaxInt64``)."""


def wrap_int32(value: int) -> int:
    """``int32(value)`` as Go converts: the low 32 bits, two's complement."""
    return (value - INT32_MIN) % 2**32 + INT32_MIN


def wrap_int64(value: int) -> int:
    """``int64(value)`` as Go converts: the low 64 bits, two's complement."""
    return (value - INT64_MIN) % 2**64 + INT64_MIN


JSON_NAME = "json"
"""Field-metadata key holding a JSON name that is not the plain camelCase of the attribute."""


def camel_case(snake: str) -> str:
    """``node_name`` -> ``nodeName``; a trailing underscore (``continue_``) is dropped."""
    head, *rest = snake.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_key(field: dataclasses.Field[Any]) -> str:
    """The JSON key of a model field: its ``json_name`` or the camelCase of its name."""
    key: str = field.metadata.get(JSON_NAME) or camel_case(field.name)
    return key


def json_name(name: str, default: Any = None) -> Any:
    """Declare a field whose JSON key is ``name`` (e.g. ``hostIP``), defaulting to ``default``."""
    return dataclasses.field(default=default, metadata={JSON_NAME: name})


def extra_field() -> Any:
    """The ``extra`` field: unmodelled JSON keys, kept verbatim for round-tripping."""
    return dataclasses.field(default_factory=dict, compare=True, repr=False)
