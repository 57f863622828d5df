"""``RowChanges``: the rows of a per-node table in the order their versions were bumped.

The scheduler's per-row tables (``NodeTable``, ``VictimTable``, ``NominatedLoad``) give
each row a version, a counter value handed out on every change, so that the fast paths
can cache per-row results and recompute only rows whose version moved. Finding those
rows by comparing versions costs a pass over every row per decision. This log answers
the same question from the other side: a consumer remembers the counter value it last
caught up with and asks which rows were bumped since, a list as long as the changes,
not as the table. The log keeps a bounded tail; a consumer that fell behind it (or
asks after ``bump_all``) is told to compare every row, as before.

Driven by the tables' writers (one ``bump`` per version change); pure bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

KEPT_CHANGES: Final = 1 << 16
"""Changes kept before the older half is dropped (a consumer that far behind rescans)."""


class RowChanges:
    """Version counter of a per-row table, with the rows it was handed to."""

    __slots__ = ("_base", "_rows", "counter")

    def __init__(self) -> None:
        self.counter = 0
        """The last version handed out."""
        self._rows: list[int] = []
        """``_rows[i]`` received version ``_base + i + 1``."""
        self._base = 0

    def bump(self, row: int) -> int:
        """A new version for ``row``."""
        self.counter += 1
        rows = self._rows
        rows.append(row)
        if len(rows) > KEPT_CHANGES:
            dropped = len(rows) // 2
            del rows[:dropped]
            self._base += dropped
        return self.counter

    def bump_all(self) -> int:
        """A new version for every row at once (rows renumbered): nobody catches up by rows."""
        self.counter += 1
        self._rows.clear()
        self._base = self.counter
        return self.counter

    def since(self, seen: int) -> list[int] | None:
        """Rows bumped after version ``seen`` (repeats kept), or None when the log no
        longer reaches back that far (compare every row's version instead)."""
        if seen < self._base:
            return None
        return self._rows[seen - self._base :]


def rows_changed_since(logs: Sequence[RowChanges], seen: Sequence[int]) -> set[int] | None:
    """Rows any of ``logs`` bumped after the counter ``seen`` holds for it, or None when
    one of them no longer reaches back that far (compare every row's versions)."""
    rows: set[int] = set()
    for log, counter in zip(logs, seen, strict=True):
        changed = log.since(counter)
        if changed is None:
            return None
        rows.update(changed)
    return rows


def counters(logs: Sequence[RowChanges]) -> tuple[int, ...]:
    """Each log's current counter: what a consumer caught up now has seen."""
    return tuple(log.counter for log in logs)
