"""ObjectIndex against a plain dict: gets, lists per resource and namespace, removals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api.core import Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.store.errors import KeyNotFoundError
from kubeprio.store.interface import KeyPrefix, ObjectKey
from kubeprio.store.objects import ObjectIndex

_KEYS = st.builds(
    ObjectKey,
    st.sampled_from(["pods", "nodes"]),
    st.sampled_from(["", "a", "b", "kube-system"]),
    st.sampled_from(["x", "y", "z", "web-0"]),
)
_OPS = st.lists(st.tuples(st.booleans(), _KEYS), max_size=40)


def _pod(key: ObjectKey, step: int) -> Pod:
    return Pod(metadata=ObjectMeta(name=key.name, namespace=key.namespace, uid=str(step)))


@given(_OPS)
def test_index_agrees_with_a_dict(ops: list[tuple[bool, ObjectKey]]) -> None:
    """Every list is the matching objects in (namespace, name) order; removed keys are gone."""
    index = ObjectIndex()
    model: dict[ObjectKey, Pod] = {}
    for step, (put, key) in enumerate(ops):
        if put:
            model[key] = _pod(key, step)
            index.put(key, model[key])
        elif key in model:
            del model[key]
            index.remove(key)
    for resource in ("pods", "nodes", "leases"):
        everything = sorted(k for k in model if k.resource == resource)
        assert index.list(KeyPrefix(resource, None)) == [model[k] for k in everything]
        for namespace in ("", "a", "b", "kube-system", "other"):
            expected = [model[k] for k in everything if k.namespace == namespace]
            assert index.list(KeyPrefix(resource, namespace)) == expected
    assert index.items() == sorted(model.items(), key=lambda item: item[0])
    for _put, key in ops:
        assert (key in index) == (key in model)
        if key in model:
            assert index.get(key) is model[key]


def test_a_missing_key_raises_key_not_found() -> None:
    index = ObjectIndex()
    key = ObjectKey("pods", "a", "x")
    index.put(key, _pod(key, 0))
    index.remove(key)
    assert key not in index
    assert index.list(KeyPrefix("pods", "a")) == []
    with pytest.raises(KeyNotFoundError, match="pods/a/x"):
        index.get(key)
