"""The shared JSON encoding (``api.encoded``): same bytes as encoding afresh, one encoding
per object version, and never another object's bytes."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api.core import Container, Pod, PodSpec
from kubeprio.api.encoded import EncodingCache
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.serialization import to_dict


def _pod(name: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", labels={"app": name}),
        spec=PodSpec(containers=(Container(name="c", image="pause"),)),
    )


def test_the_bytes_are_the_encoding_of_the_object() -> None:
    cache = EncodingCache()
    pod = _pod("web")
    assert orjson.loads(cache.json_bytes(pod)) == to_dict(pod)


def test_a_version_is_encoded_once_and_a_new_version_again() -> None:
    cache = EncodingCache()
    pod = _pod("web")
    first = cache.json_bytes(pod)
    assert cache.json_bytes(pod) is first
    relabelled = evolve(pod, metadata=evolve(pod.metadata, labels={"app": "other"}))
    assert orjson.loads(cache.json_bytes(relabelled))["metadata"]["labels"] == {"app": "other"}


def test_an_equal_but_distinct_object_is_encoded_on_its_own() -> None:
    # Keyed by identity, not equality: an equal object may still be a different version
    # in the making (a stamped resourceVersion), so it never shares an entry.
    cache = EncodingCache()
    pod = _pod("web")
    twin = _pod("web")
    cache.json_bytes(pod)
    assert cache.json_bytes(twin) is not cache.json_bytes(pod)


def test_remember_false_reads_the_cache_but_does_not_fill_it() -> None:
    cache = EncodingCache()
    remembered = _pod("a")
    kept = cache.json_bytes(remembered)
    assert cache.json_bytes(remembered, remember=False) is kept
    cache.json_bytes(_pod("b"), remember=False)
    assert len(cache) == 1


@given(st.lists(st.integers(min_value=0, max_value=30), max_size=200))
def test_the_cache_is_bounded_and_never_answers_for_another_object(picks: list[int]) -> None:
    # Objects come and go (some are dropped and their ids may be reused): whatever the
    # order, every answer is the encoding of the object asked for.
    cache = EncodingCache(capacity=8)
    pods = [_pod(f"p-{i}") for i in range(31)]
    for pick in picks:
        pod = pods[pick]
        assert orjson.loads(cache.json_bytes(pod))["metadata"]["name"] == f"p-{pick}"
        if pick % 7 == 0:
            pods[pick] = _pod(f"p-{pick}")  # the old object may be freed; its id reused
        assert len(cache) <= 8
