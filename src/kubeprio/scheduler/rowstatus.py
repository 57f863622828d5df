"""Filter statuses of many nodes held as one small integer per node row.

When no node fits a plain pod, the fast path rejects every node — thousands of statuses,
though only a handful of distinct ones (``Insufficient cpu``, ``node(s) were
unschedulable``, ...). ``RowStatuses`` keeps a *kind* per ``NodeTable`` row (an index into
a palette of ``Status`` objects, ``-1`` for a row that was not rejected) and answers as a
read-only ``Mapping`` of node name to ``Status``, iterating in evaluation order (from the
cycle's start row, wrapping), as the dict it stands for would. What the failure path
reads — the histogram of reasons for the ``FitError`` message, the rejecting plugins for
the queue, the rows preemption may help — is computed with numpy over the kinds, so a
failed cycle is not a Python loop over every node.

Valid for the cycle that built it (it reads the ``NodeTable``'s names and index, which
do not change during a cycle); its kinds are not changed after it is built. ``reason_counts``, ``rejector_plugins`` and
``error_statuses`` accept any mapping and use the vectorised form when they can.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from kubeprio.scheduler.framework import Code, Status

IntArray = npt.NDArray[np.int64]


class RowStatuses(Mapping[str, Status]):
    """Node name -> status, backed by a kind per row and a palette of statuses."""

    __slots__ = ("_index", "_names", "_order", "_present", "_start", "kinds", "palette")

    def __init__(
        self,
        names: Sequence[str],
        index: Mapping[str, int],
        kinds: IntArray,
        palette: Sequence[Status],
        start: int = 0,
    ) -> None:
        self._names = names
        self._index = index
        self.kinds = kinds
        """Per row: the palette index of its status, or -1 when the row was not rejected."""
        self.palette = palette
        self._order: IntArray | None = None
        self._present: list[tuple[int, int]] | None = None
        self._start = start

    def _rows(self) -> IntArray:
        """Rejected rows in evaluation order (from the start row, wrapping)."""
        if self._order is None:
            start = self._start
            kinds = self.kinds
            self._order = np.concatenate(
                (np.flatnonzero(kinds[start:] >= 0) + start, np.flatnonzero(kinds[:start] >= 0))
            )
        return self._order

    def __getitem__(self, name: str) -> Status:
        row = self._index.get(name)
        if row is None or row >= len(self.kinds):
            raise KeyError(name)
        kind = int(self.kinds[row])
        if kind < 0:
            raise KeyError(name)
        return self.palette[kind]

    def __iter__(self) -> Iterator[str]:
        names = self._names
        return (names[row] for row in self._rows().tolist())

    def __len__(self) -> int:
        return sum(rows for _, rows in self.present())

    def present(self) -> list[tuple[int, int]]:
        """(palette index, number of rows) of every kind that occurs.

        Computed once: a failed cycle asks three times (errors, the FitError histogram,
        the rejecting plugins), and the kinds do not change after construction."""
        if self._present is None:
            kinds = self.kinds
            # Shifted by one so that -1 (not rejected) counts in a bin of its own: about
            # half the cost of selecting the rejected rows first (a mask and a copy).
            counts = np.bincount(kinds + 1, minlength=len(self.palette) + 1)[1:]
            self._present = [(kind, int(counts[kind])) for kind in np.flatnonzero(counts).tolist()]
        return self._present

    def codes(self) -> IntArray:
        """Per row, its status code (-1 where the row was not rejected)."""
        palette_codes = np.array([int(s.code) for s in self.palette] + [-1], np.int64)
        return palette_codes[self.kinds]


def reason_counts(statuses: Mapping[str, Status]) -> dict[str, int]:
    """How many statuses carry each reason (the ``FitError`` histogram)."""
    counts: dict[str, int] = {}
    if isinstance(statuses, RowStatuses):
        for kind, rows in statuses.present():
            for reason in statuses.palette[kind].reasons:
                counts[reason] = counts.get(reason, 0) + rows
        return counts
    for status in statuses.values():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    return counts


def rejector_plugins(statuses: Mapping[str, Status]) -> set[str]:
    """The plugins that rejected some node."""
    if isinstance(statuses, RowStatuses):
        return {statuses.palette[kind].plugin for kind, _ in statuses.present()} - {""}
    return {s.plugin for s in statuses.values() if s.plugin}


def error_statuses(statuses: Mapping[str, Status]) -> list[Status]:
    """The ``Code.ERROR`` statuses, in iteration order."""
    if isinstance(statuses, RowStatuses) and not any(
        statuses.palette[kind].code is Code.ERROR for kind, _ in statuses.present()
    ):
        return []
    return [s for s in statuses.values() if s.code is Code.ERROR]
