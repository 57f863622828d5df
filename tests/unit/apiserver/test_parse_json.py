"""``fieldvalidation.parse_json``: the decoded body and the keys given twice.

Upstream (sigs.k8s.io/json strict decoding, behind ``fieldValidation``): a repeated key
keeps its last value, as Go's decoder does, and is reported as ``duplicate field
"<path>"`` when the decoder meets the repeat (document order), once per path.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.apiserver.fieldvalidation import parse_json

CASES = [
    ('{"a": 1}', {"a": 1}, []),
    ('{"a": 1, "a": 2}', {"a": 2}, ['duplicate field "a"']),
    (
        '{"spec": {"containers": [{"name": "x", "name": "y"}]}}',
        {"spec": {"containers": [{"name": "y"}]}},
        ['duplicate field "spec.containers[0].name"'],
    ),
    (
        '{"b": {"c": 1, "c": 2}, "b2": 0, "a": 1, "a": 3}',
        {"b": {"c": 2}, "b2": 0, "a": 3},
        ['duplicate field "b.c"', 'duplicate field "a"'],
    ),
    (
        # The overwritten value is decoded too: its own repeat is reported.
        '{"m": {"k": 1, "k": 2}, "m": {}}',
        {"m": {}},
        ['duplicate field "m.k"', 'duplicate field "m"'],
    ),
    ('{"a": 1, "a": 2, "a": 3}', {"a": 3}, ['duplicate field "a"']),
    # One error per path, wherever it repeats.
    (
        '{"m": {"k": 1, "k": 2}, "m": {"k": 3, "k": 4}}',
        {"m": {"k": 4}},
        ['duplicate field "m.k"', 'duplicate field "m"'],
    ),
    ("[1, 2]", [1, 2], []),
]


@pytest.mark.parametrize(("text", "decoded", "duplicates"), CASES)
def test_decoded_value_and_duplicate_paths(text: str, decoded: Any, duplicates: list[str]) -> None:
    value, found = parse_json(text.encode())
    assert value == decoded
    assert found == duplicates


def _only_plain_dicts(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is dict and all(_only_plain_dicts(v) for v in value.values())
    if isinstance(value, list):
        return all(_only_plain_dicts(v) for v in value)
    return True


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_a_body_without_repeats_decodes_as_json_loads_into_plain_dicts(value: Any) -> None:
    text = json.dumps(value)
    decoded, duplicates = parse_json(text)
    assert decoded == json.loads(text)
    assert duplicates == []
    assert _only_plain_dicts(decoded)
