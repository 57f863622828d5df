"""``RowStatuses.present``: the (palette index, rows) of every kind that occurs, the
``FitError`` histogram's input (upstream ``FitError.Error`` counts each node's reasons).
Rows that were not rejected (-1) count for no kind."""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.scheduler.framework import Code, Status
from kubeprio.scheduler.rowstatus import RowStatuses

PALETTE = tuple(Status(Code.UNSCHEDULABLE, (f"reason {i}",)) for i in range(5))


@given(st.lists(st.integers(min_value=-1, max_value=len(PALETTE) - 1), max_size=60))
def test_present_counts_the_rejected_rows_of_each_kind(kinds: list[int]) -> None:
    names = [f"n{i}" for i in range(len(kinds))]
    statuses = RowStatuses(
        names, {n: i for i, n in enumerate(names)}, np.array(kinds, np.int64), PALETTE
    )
    expected = collections.Counter(kind for kind in kinds if kind >= 0)
    assert statuses.present() == sorted(expected.items())
    assert len(statuses) == sum(expected.values())
