"""Generated names (``staging/src/k8s.io/apiserver/pkg/storage/names/generate.go``).

``SimpleNameGenerator.GenerateName`` appends five characters of ``utilrand``'s alphabet and
cuts a prefix longer than 58 characters, so the result fits in 63.
"""

from __future__ import annotations

import random

import pytest

from kubeprio.api import names


@pytest.mark.parametrize(
    ("prefix", "kept"),
    [("web-", "web-"), ("x" * 58, "x" * 58), ("y" * 70, "y" * 58)],
    ids=["short", "58", "cut"],
)
def test_a_prefix_and_five_random_characters(prefix: str, kept: str) -> None:
    name = names.generate_name(prefix, random.Random(0))
    assert name.startswith(kept)
    assert len(name) == len(kept) + 5
    assert set(name[len(kept) :]) <= set(names.ALPHABET)


def test_the_generator_is_the_callers() -> None:
    assert names.generate_name("p-", random.Random(3)) == names.generate_name(
        "p-", random.Random(3)
    )
