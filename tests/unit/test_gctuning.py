"""Garbage-collector settings: ``freezing_survivors`` freezes what outlives a collection
and leaves the collector as it found it."""

from __future__ import annotations

import gc

from kubeprio import gctuning


class _Node:
    """A container the collector tracks (and can put in a cycle)."""

    def __init__(self) -> None:
        self.other: object = None


def test_survivors_are_frozen_inside_and_released_after() -> None:
    assert gc.get_freeze_count() == 0
    with gctuning.freezing_survivors():
        kept = [_Node() for _ in range(100)]
        gc.collect(0)
        frozen = gc.get_freeze_count()
        assert frozen >= len(kept)
        assert not any(gc.is_tracked(k) and k in gc.get_objects(0) for k in kept[:3])
    assert gc.get_freeze_count() == 0
    assert gctuning._freeze_after_collection not in gc.callbacks


def test_young_cycles_are_still_collected() -> None:
    """A cycle that dies before the next collection is freed by it, frozen or not."""
    with gctuning.freezing_survivors():
        gc.collect(0)
        first, second = _Node(), _Node()
        first.other, second.other = second, first
        del first, second
        assert gc.collect(0) >= 2
