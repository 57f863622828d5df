"""Reference counts kept in a dict: a key is present exactly while its count is positive.

Indexes across layers count things per key (pods per node with affinity, pods per
namespace, host ports in use, nominated pods per priority, terminating pods per node)
and drop a key when its count reaches zero, so "any left?" is a membership test.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")


def adjust(counts: dict[K, int], key: K, delta: int) -> None:
    """Add ``delta`` to ``key``'s count; forget the key once it is zero (or less)."""
    value = counts.get(key, 0) + delta
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)
