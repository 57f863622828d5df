"""Per-shape row caches: one entry per pod shape, valid while the node table keeps its rows.

The fast paths cache per-row results by the shape of the pod asking (its requests, and
for preemption its priority): the filter kinds and resource scores in ``fastpath``, the
dry-run verdicts in ``fastpreemption``. Each entry holds arrays indexed by table row, so
it is only valid for the table ``epoch`` it was built in (a renumbering starts a new
one), and each cache keeps a bounded number of shapes, dropping the oldest. Driven by
those callers once per decision; pure bookkeeping, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from kubeprio.scheduler.nodetable import NodeTable


class RowEntry(Protocol):
    """A per-row cache built for one table epoch."""

    @property
    def epoch(self) -> int:
        """The table epoch its rows belong to."""
        ...


K = TypeVar("K")
E = TypeVar("E", bound=RowEntry)


def shape_entry(
    entries: dict[K, E],
    key: K,
    table: NodeTable,
    *,
    limit: int,
    new: Callable[[int, int], E],
) -> E:
    """``key``'s entry, built anew (``new(epoch, capacity)``) when missing or from another
    epoch; a new shape beyond ``limit`` drops the oldest one."""
    entry = entries.get(key)
    if entry is None or entry.epoch != table.epoch:
        if entry is None and len(entries) >= limit:
            entries.pop(next(iter(entries)))
        entry = new(table.epoch, table.capacity)
        entries[key] = entry
    return entry
