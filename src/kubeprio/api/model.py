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


def json_name(name: str, default: Any = None) -> Any:
    """Declare a field whose JSON key is ``name`` (e.g. ``hostIP``), defaulting to ``default``."""
    return dataclasses.field(default=default, metadata={JSON_NAME: name})


def extra_field() -> Any:
    """The ``extra`` field: unmodelled JSON keys, kept verbatim for round-tripping."""
    return dataclasses.field(default_factory=dict, compare=True, repr=False)


def _writable_twin(cls: type[Any]) -> type[Any]:
    """A subclass of the frozen slotted ``cls`` that allows attribute assignment.

    A frozen dataclass forbids ``obj.field = value``, so building or copying one calls
    ``object.__setattr__`` once per field (about 100 ns each). Instead the new object
    spends its construction as an instance of this twin, which declares no slots of its
    own: plain attribute stores, which the interpreter specializes to direct slot writes,
    then one ``__class__`` assignment turns it into ``cls`` (same slots, so the same
    memory layout). The result is an ordinary, frozen ``cls`` instance.
    """
    return type(
        cls.__name__,
        (cls,),
        {
            "__slots__": (),
            # Both: they share one type slot, which stays generic (and fast) only
            # when neither is overridden.
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
            "__module__": cls.__module__,
            "__qualname__": f"{cls.__qualname__}.<under construction>",
        },
    )


def _compile(source: list[str], namespace: dict[str, Any], name: str) -> Any:
    exec("\n".join(source), namespace)
    return namespace[name]


_MISSING_ARGUMENT: Final = object()
"""Default of a generated ``__init__`` parameter whose field has a ``default_factory``."""


def fast_init(cls: type[_T]) -> type[_T]:
    """Give a frozen, slotted, keyword-only dataclass a faster, equivalent ``__init__``.

    Apply above ``@dataclass(frozen=True, slots=True, kw_only=True)``. The replacement
    takes the same keyword arguments with the same defaults (``default_factory`` called
    per instance) and stores them through the class's writable twin: three times faster
    for an ``ObjectMeta``, and decoding, admission and every controller build models all
    the time. A subclass instance still goes through the dataclass ``__init__``.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if hasattr(cls, "__post_init__") or not all(field.init and field.kw_only for field in fields):
        raise TypeError(f"fast_init: {cls.__name__} is not a plain keyword-only model")
    # Every name the generated code uses starts with "__", which no field name does.
    namespace: dict[str, Any] = {
        "__cls": cls,
        "__writable": _writable_twin(cls),
        "__dataclass_init": cls.__init__,
        "__set_class": object.__setattr__,
        "__type": type,
        "__MISSING": _MISSING_ARGUMENT,
    }
    parameters, values = [], []
    for field in fields:
        name = field.name
        if field.default is not dataclasses.MISSING:
            namespace[f"__default_{name}"] = field.default
            parameters.append(f"{name}=__default_{name}")
            values.append(name)
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"__factory_{name}"] = field.default_factory
            parameters.append(f"{name}=__MISSING")
            values.append(f"__factory_{name}() if {name} is __MISSING else {name}")
        else:
            parameters.append(name)
            values.append(name)
    stores = [
        f"    self.{field.name} = {value}" for field, value in zip(fields, values, strict=True)
    ]
    arguments = ", ".join(
        f"{field.name}=({value})" for field, value in zip(fields, values, strict=True)
    )
    source = [
        f"def __init__(self, *, {', '.join(parameters)}):",
        "    if __type(self) is not __cls:",
        f"        return __dataclass_init(self, {arguments})",
        "    __set_class(self, '__class__', __writable)",
        *stores,
        "    self.__class__ = __cls",
    ]
    init = _compile(source, namespace, "__init__")
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    _TWINS[cls] = namespace["__writable"]
    return cls


_TWINS: dict[type[Any], type[Any]] = {}
"""Each class's writable twin (a pure memo: one per class)."""

_COPIERS: dict[type[Any], Any] = {}
"""Per-class compiled copiers for ``evolve`` (a pure memo: same class, same code)."""


def _compile_copier(cls: type[Any]) -> Any:
    """A function copying an instance of ``cls`` with some fields changed, through its
    writable twin: five times faster than ``object.__setattr__`` per field."""
    names = [field.name for field in dataclasses.fields(cls)]
    writable = _TWINS.get(cls) or _TWINS.setdefault(cls, _writable_twin(cls))
    source = ["def copier(instance, changes):", "    new = new_object(writable)"]
    source.extend(f"    new.{name} = instance.{name}" for name in names)
    source += [
        "    for name, value in changes.items():",
        "        if name not in names:",
        "            raise TypeError(",
        "                f'{cls.__name__}.__init__() got an unexpected keyword argument {name!r}'",
        "            )",
        "        setattr(new, name, value)",
        "    new.__class__ = cls",
        "    return new",
    ]
    namespace: dict[str, Any] = {
        "new_object": object.__new__,
        "writable": writable,
        "cls": cls,
        "names": frozenset(names),
    }
    return _compile(source, namespace, "copier")


def evolve(instance: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace`` for frozen slotted models, several times faster.

    ``dataclasses.replace`` re-runs ``__init__`` through keyword plumbing (about 10 µs
    for a pod spec); a copier compiled once per class copies the slots directly, and the
    write path copies models dozens of times per object. Unknown field names raise
    ``TypeError`` as ``replace`` does. Classes without ``__slots__`` use ``replace``.
    """
    cls = type(instance)
    copier = _COPIERS.get(cls)
    if copier is None:
        if not hasattr(cls, "__slots__") or not dataclasses.is_dataclass(cls):
            return dataclasses.replace(instance, **changes)  # type: ignore[type-var]
        copier = _compile_copier(cls)
        _COPIERS[cls] = copier
    result: _T = copier(instance, changes)
    return result
