"""``model.evolve``: a copy with changes, behaving exactly as ``dataclasses.replace``."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api.core import Container, Pod, PodSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.scheduling import PriorityClass

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
