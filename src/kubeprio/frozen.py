"""Building and copying frozen, slotted dataclasses fast: ``fast_init`` and ``evolve``.

kubeprio's objects are frozen dataclasses (API models, store events, admission
requests, scheduler records), and the write path builds and copies them dozens of times
per pod. A frozen dataclass forbids ``obj.field = value``, so its generated ``__init__``
and ``dataclasses.replace`` call ``object.__setattr__`` once per field (about 100 ns
each). Here a new object spends its construction as an instance of the class's
*writable twin*, a subclass that declares no slots of its own and allows assignment:
plain attribute stores, which the interpreter specializes to direct slot writes, then
one ``__class__`` assignment turns it into the class itself (same slots, so the same
memory layout). The result is an ordinary, frozen instance; construction is three to
four times faster.

Pure: no I/O. Used by ``api.model`` (which re-exports ``evolve``) and by hot records in
the layers above.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Final, TypeVar

_T = TypeVar("_T")

_TWINS: dict[type[Any], type[Any]] = {}
"""Each class's writable twin (a pure memo: one per class)."""

_COPIERS: dict[type[Any], Any] = {}
"""Per-class compiled copiers for ``evolve`` (a pure memo: same class, same code)."""

_MISSING_ARGUMENT: Final = object()
"""Default of a generated ``__init__`` parameter whose field has a ``default_factory``."""


def _writable_twin(cls: type[Any]) -> type[Any]:
    twin = _TWINS.get(cls)
    if twin is None:
        twin = type(
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
        _TWINS[cls] = twin
    return twin


def _compile(source: list[str], namespace: dict[str, Any], name: str) -> Any:
    exec("\n".join(source), namespace)
    return namespace[name]


def _plain(cls: type[Any]) -> bool:
    """True if ``cls``'s ``__init__`` only stores its arguments, one per field: no
    ``__post_init__``, no ``init=False`` field, no ``InitVar`` pseudo-field."""
    fields = dataclasses.fields(cls)
    parameters = list(inspect.signature(cls.__init__).parameters)[1:]
    return (
        not hasattr(cls, "__post_init__")
        and all(field.init for field in fields)
        and parameters
        == [field.name for field in fields if not field.kw_only]
        + [field.name for field in fields if field.kw_only]
    )


def fast_init(cls: type[_T]) -> type[_T]:
    """Give a frozen, slotted dataclass a faster ``__init__`` with the same signature.

    Apply above ``@dataclass(frozen=True, slots=True, ...)``. The replacement takes the
    same arguments (positional fields first, keyword-only ones after ``*``) with the same
    defaults, a ``default_factory`` called per instance. An instance of a subclass still
    goes through the dataclass ``__init__``. Classes with ``__post_init__``, ``init=False``
    fields or ``InitVar`` parameters are refused: their ``__init__`` does more than store
    its arguments (``evolve`` copies them with ``dataclasses.replace``).
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__ or not _plain(cls):
        raise TypeError(f"fast_init: {cls.__name__} is not a plain frozen slotted dataclass")
    # Every name the generated code uses starts with "__", which no field name does.
    namespace: dict[str, Any] = {
        "__cls": cls,
        "__writable": _writable_twin(cls),
        "__dataclass_init": cls.__init__,
        "__set_class": object.__setattr__,
        "__type": type,
        "__MISSING": _MISSING_ARGUMENT,
    }
    positional: list[str] = []
    keyword: list[str] = []
    values: list[str] = []
    for field in fields:
        name = field.name
        if field.default is not dataclasses.MISSING:
            namespace[f"__default_{name}"] = field.default
            parameter = f"{name}=__default_{name}"
            value = name
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"__factory_{name}"] = field.default_factory
            parameter = f"{name}=__MISSING"
            value = f"__factory_{name}() if {name} is __MISSING else {name}"
        else:
            parameter = value = name
        (keyword if field.kw_only else positional).append(parameter)
        values.append(value)
    parameters = ["self", *positional, *(["*", *keyword] if keyword else [])]
    pairs = list(zip(fields, values, strict=True))
    arguments = ", ".join(f"{field.name}=({value})" for field, value in pairs)
    source = [
        f"def __init__({', '.join(parameters)}):",
        "    if __type(self) is not __cls:",
        f"        return __dataclass_init(self, {arguments})",
        "    __set_class(self, '__class__', __writable)",
        *(f"    self.{field.name} = {value}" for field, value in pairs),
        "    self.__class__ = __cls",
    ]
    init = _compile(source, namespace, "__init__")
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


def _compile_copier(cls: type[Any]) -> Any:
    names = [field.name for field in dataclasses.fields(cls)]
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
        "writable": _writable_twin(cls),
        "cls": cls,
        "names": frozenset(names),
    }
    return _compile(source, namespace, "copier")


def _replace(instance: Any, changes: dict[str, Any]) -> Any:
    return dataclasses.replace(instance, **changes)


def evolve(instance: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace`` for frozen slotted dataclasses, several times faster.

    ``dataclasses.replace`` re-runs ``__init__`` through keyword plumbing; a copier
    compiled once per class copies the slots straight into a writable twin. Unknown
    field names raise ``TypeError`` as ``replace`` does. Other classes use ``replace``.
    """
    cls = type(instance)
    copier = _COPIERS.get(cls)
    if copier is None:
        fast = hasattr(cls, "__slots__") and dataclasses.is_dataclass(cls) and _plain(cls)
        # replace() recomputes init=False fields and runs __post_init__; a copy would not.
        copier = _compile_copier(cls) if fast else _replace
        _COPIERS[cls] = copier
    result: _T = copier(instance, changes)
    return result
