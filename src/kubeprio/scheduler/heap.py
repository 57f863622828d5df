"""A binary heap of queued pods addressable by key (upstream ``pkg/scheduler/backend/heap``).

``KeyedHeap`` is what activeQ and the two backoff heaps are made of. Upstream keeps an
index into the heap array to delete or update in place; here each entry carries a
sequence number and deletions are lazy (the stale heap entry is skipped when it surfaces,
and the heap is rebuilt when more than half of it is stale), which keeps ``add_or_update``,
``pop`` and ``delete`` O(log n) amortised on top of ``heapq``'s C implementation.

The order is given by a sort-key function evaluated once, when an item is added; items
with equal keys come out in insertion order (upstream leaves ties to the heap's layout;
a fixed order keeps simulations reproducible). ``less_key`` adapts a plain ``less``
function for sort plugins that offer no key. Single-threaded, no I/O, no clock.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

SortKey = tuple[object, ...]
"""A tuple that orders items; compared with ``<`` only."""

_COMPACT_SLACK = 64


class LessKey(Generic[T]):
    """A sort-key element that orders items with a ``less(a, b)`` function."""

    __slots__ = ("item", "less")

    def __init__(self, less: Callable[[T, T], bool], item: T) -> None:
        self.less = less
        self.item = item

    def __lt__(self, other: LessKey[T]) -> bool:
        return self.less(self.item, other.item)

    def __eq__(self, other: object) -> bool:
        # Tuple comparison asks "equal?" before "less?": equal means neither goes first.
        if not isinstance(other, LessKey):
            return NotImplemented
        return not self.less(self.item, other.item) and not self.less(other.item, self.item)

    __hash__ = None  # type: ignore[assignment]  # mutable ordering wrapper, never a dict key


class KeyedHeap(Generic[T]):
    """Items by string key, popped smallest sort key first (upstream ``heap.Heap``)."""

    __slots__ = ("_heap", "_key_fn", "_live", "_seq")

    def __init__(self, key_fn: Callable[[T], SortKey]) -> None:
        self._key_fn = key_fn
        self._heap: list[tuple[SortKey, int, str]] = []
        self._live: dict[str, tuple[int, T, SortKey]] = {}
        self._seq = 0

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: object) -> bool:
        return key in self._live

    def __iter__(self) -> Iterator[T]:
        """Items in insertion order (not heap order)."""
        return (entry[1] for entry in self._live.values())

    def get(self, key: str) -> T | None:
        """The item stored under ``key``."""
        entry = self._live.get(key)
        return entry[1] if entry is not None else None

    def add_or_update(self, key: str, item: T) -> None:
        """Insert ``item`` under ``key``, replacing (and re-sorting) any previous one."""
        self._seq += 1
        sort_key = self._key_fn(item)
        self._live[key] = (self._seq, item, sort_key)
        heapq.heappush(self._heap, (sort_key, self._seq, key))
        if len(self._heap) > 2 * len(self._live) + _COMPACT_SLACK:
            self._compact()

    def delete(self, key: str) -> T | None:
        """Remove and return the item under ``key`` (``None`` if absent)."""
        entry = self._live.pop(key, None)
        if entry is None:
            return None
        if not self._live:
            self._heap.clear()
        elif len(self._heap) > 2 * len(self._live) + _COMPACT_SLACK:
            self._compact()
        return entry[1]

    def peek(self) -> T | None:
        """The smallest item, left in place."""
        heap = self._heap
        live = self._live
        while heap:
            _, seq, key = heap[0]
            entry = live.get(key)
            if entry is not None and entry[0] == seq:
                return entry[1]
            heapq.heappop(heap)
        return None

    def pop(self) -> T | None:
        """Remove and return the smallest item (``None`` when empty)."""
        heap = self._heap
        live = self._live
        while heap:
            _, seq, key = heapq.heappop(heap)
            entry = live.get(key)
            if entry is not None and entry[0] == seq:
                del live[key]
                return entry[1]
        return None

    def ordered(self) -> list[T]:
        """Every item in pop order, without popping (for debugging and reports)."""
        entries = sorted((sort_key, seq, item) for seq, item, sort_key in self._live.values())
        return [item for _, _, item in entries]

    def _compact(self) -> None:
        self._heap = [(sort_key, seq, key) for key, (seq, _, sort_key) in self._live.items()]
        heapq.heapify(self._heap)
