"""``frozen``: ``evolve`` copies as ``dataclasses.replace`` does, ``fast_init`` builds as the
dataclass ``__init__`` does; both leave an ordinary frozen instance of the class."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api.core import Container, Pod, PodSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.scheduling import PriorityClass
from kubeprio.frozen import evolve, fast_init

POD = Pod(
    metadata=ObjectMeta(name="web", namespace="default", labels={"app": "web"}),
    spec=PodSpec(containers=(Container(name="c", image="nginx"),), node_name="n1"),
)


@pytest.mark.parametrize(
    ("original", "changes"),
    [
        (POD, {}),
        (POD, {"spec": evolve(POD.spec, node_name="n2")}),
        (POD.metadata, {"resource_version": "7", "labels": {}}),
        (POD.spec, {"priority": 10, "priority_class_name": "high"}),
        (PriorityClass(metadata=ObjectMeta(name="high"), value=10), {"value": 11}),
    ],
)
def test_evolve_is_replace(original: object, changes: dict[str, object]) -> None:
    copy = evolve(original, **changes)
    assert copy == dataclasses.replace(original, **changes)  # type: ignore[type-var]
    # The copy is an ordinary instance of the class, not of the writable helper.
    assert type(copy) is type(original)
    assert copy is not original


def test_a_copy_is_frozen_and_the_original_unchanged() -> None:
    copy = evolve(POD.spec, node_name="n2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.node_name = "n3"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del copy.node_name  # type: ignore[misc]
    assert POD.spec.node_name == "n1"


def test_an_unknown_field_raises_type_error_as_replace_does() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'nodename'"):
        evolve(POD.spec, nodename="n2")
    with pytest.raises(TypeError):
        dataclasses.replace(POD.spec, nodename="n2")  # type: ignore[call-arg]


@given(st.text(max_size=20), st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_evolve_matches_replace_for_any_values(node_name: str, priority: int) -> None:
    assert evolve(POD.spec, node_name=node_name, priority=priority) == dataclasses.replace(
        POD.spec, node_name=node_name, priority=priority
    )


def _plain_and_fast(fields: list[Any], **options: Any) -> tuple[Any, Any]:
    """The same frozen slotted dataclass twice: as declared, and with ``fast_init``."""

    def declare() -> Any:
        return dataclasses.make_dataclass("Record", fields, frozen=True, slots=True, **options)

    return declare(), fast_init(declare())


_Plain, _Fast = _plain_and_fast(
    [
        ("name", str),
        ("count", int, dataclasses.field(default=3)),
        ("labels", dict[str, str], dataclasses.field(default_factory=dict)),
    ],
    kw_only=True,
)
_PlainPositional, _FastPositional = _plain_and_fast(
    [
        ("key", str),
        ("revision", int, dataclasses.field(default=0)),
        ("tags", list[str], dataclasses.field(default_factory=list)),
        ("note", str, dataclasses.field(default="", kw_only=True)),
    ]
)


@pytest.mark.parametrize(
    "arguments",
    [{"name": "a"}, {"name": "a", "count": 0}, {"name": "a", "labels": {"x": "y"}, "count": -1}],
)
def test_fast_init_stores_what_the_dataclass_init_stores(arguments: dict[str, Any]) -> None:
    fast, plain = _Fast(**arguments), _Plain(**arguments)
    assert type(fast) is _Fast
    assert (fast.name, fast.count, fast.labels) == (plain.name, plain.count, plain.labels)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.count = 4  # type: ignore[misc]


def test_fast_init_calls_each_default_factory_per_instance() -> None:
    assert _Fast(name="a").labels is not _Fast(name="b").labels


def test_fast_init_rejects_what_the_dataclass_init_rejects() -> None:
    with pytest.raises(TypeError, match="name"):
        _Fast()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour"):
        _Fast(name="a", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Fast("a")  # type: ignore[misc]


def test_fast_init_leaves_a_subclass_its_own_type() -> None:
    class Sub(_Fast):  # inherits the generated __init__
        __slots__ = ()

    sub = Sub(name="a", count=1)
    assert type(sub) is Sub
    assert (sub.name, sub.count, sub.labels) == ("a", 1, {})


def test_fast_init_refuses_a_class_it_cannot_reproduce() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Checked:
        name: str

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError, match="not a plain frozen slotted dataclass"):
        fast_init(Checked)


def test_the_api_models_use_fast_init() -> None:
    # Decoding builds models with cls(**kwargs): the faster __init__ must be in place.
    for cls in (Pod, PodSpec, ObjectMeta, Container, PriorityClass):
        assert cls.__init__.__code__.co_filename == "<string>", cls


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("k",), {}),
        (("k", 2), {}),
        (("k", 2, ["a"]), {"note": "n"}),
        ((), {"key": "k", "tags": []}),
    ],
)
def test_fast_init_keeps_positional_and_keyword_only_parameters(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    fast, plain = _FastPositional(*args, **kwargs), _PlainPositional(*args, **kwargs)
    assert dataclasses.astuple(fast) == dataclasses.astuple(plain)
    assert type(fast) is _FastPositional
    with pytest.raises(TypeError):
        _FastPositional("k", 1, [], "note is keyword-only")  # type: ignore[misc]


def test_fast_init_refuses_a_class_that_is_not_frozen_and_slotted() -> None:
    @dataclasses.dataclass(slots=True)
    class Mutable:
        name: str

    @dataclasses.dataclass(frozen=True)
    class Unslotted:
        name: str

    for cls in (Mutable, Unslotted):
        with pytest.raises(TypeError, match="not a plain frozen slotted dataclass"):
            fast_init(cls)


def test_fast_init_refuses_an_init_var() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithInitVar:
        x: int
        y: dataclasses.InitVar[int] = 0

    with pytest.raises(TypeError, match="not a plain frozen slotted dataclass"):
        fast_init(WithInitVar)


def test_evolve_is_replace_where_init_does_more_than_store() -> None:
    # Quantity keeps its text in an init=False field: replace() drops it, so the copy
    # prints its new value, where a slot-by-slot copy would print the old text.
    quantity = parse_quantity("1Ki")
    changed = evolve(quantity, nanos=5 * 10**9)
    assert str(changed) == str(dataclasses.replace(quantity, nanos=5 * 10**9)) == "5"
