"""``RowChanges``: the rows bumped since a version, and when the log cannot tell."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubeprio.scheduler import rowchanges
from kubeprio.scheduler.rowchanges import RowChanges


def test_rows_since_a_version_in_bump_order() -> None:
    changes = RowChanges()
    assert changes.since(-1) is None  # a consumer that never caught up compares every row
    assert changes.since(0) == []
    versions = [changes.bump(row) for row in (4, 1, 4)]
    assert versions == [1, 2, 3]
    assert changes.since(0) == [4, 1, 4]
    assert changes.since(2) == [4]
    assert changes.since(3) == []


def test_bump_all_sends_every_consumer_back_to_comparing() -> None:
    changes = RowChanges()
    changes.bump(2)
    assert changes.bump_all() == 2
    assert changes.since(1) is None
    assert changes.since(2) == []
    changes.bump(7)
    assert changes.since(2) == [7]


def test_a_consumer_behind_the_kept_tail_compares_every_row() -> None:
    changes = RowChanges()
    for row in range(rowchanges.KEPT_CHANGES + 1):
        changes.bump(row % 5)
    assert changes.since(0) is None
    tail = changes.since(changes.counter - 3)
    assert tail == [(changes.counter - k) % 5 for k in (3, 2, 1)]


@given(st.lists(st.integers(0, 9), max_size=60), st.integers(0, 60))
def test_since_lists_exactly_the_rows_whose_version_moved(rows: list[int], seen: int) -> None:
    """A consumer that caught up at version ``seen`` must refresh exactly the rows whose
    version is now above it (the per-row comparison the log replaces)."""
    changes = RowChanges()
    version = [0] * 10
    for row in rows:
        version[row] = changes.bump(row)
    seen = min(seen, changes.counter)
    since = changes.since(seen)
    assert since is not None
    assert set(since) == {row for row in range(10) if version[row] > seen}
