"""A write inside a SQLite batch runs without a savepoint; its failures still undo it alone.

``SqliteStore._batched_write``: a failed statement undoes itself, a failure of the
write's second statement (its ``current`` row) deletes the first one's log row again, and
a failure that ended the batch's whole transaction makes the store refuse use (the
failures injected by ``tests.unit.store.faults``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kubeprio.store.errors import StorageFailureError
from kubeprio.store.interface import KeyPrefix, ObjectKey
from kubeprio.store.sqlite import SqliteStore
from tests.builders import pod
from tests.unit.store.faults import refuse_rows_of_boom


def key(name: str) -> ObjectKey:
    return ObjectKey("pods", "default", name)


@pytest.mark.parametrize("table", ["log", "current"], ids=["first-statement", "second-statement"])
def test_a_failed_write_in_a_batch_is_undone_alone_and_the_batch_goes_on(
    tmp_path: Path, table: str
) -> None:
    """Whichever statement of the write fails, it leaves no log row behind."""
    path = tmp_path / "kubeprio.db"
    refuse_rows_of_boom(path, table=table)
    with SqliteStore(path) as store:
        watch = store.watch(KeyPrefix("pods"), 0)
        with store.batch():
            store.create(key("a"), pod("a").build())
            with pytest.raises(StorageFailureError, match="injected failure"):
                store.create(key("boom"), pod("boom").build())
            store.create(key("b"), pod("b").build())
        assert [(e.key.name, e.revision) for e in watch.poll()] == [("a", 1), ("b", 2)]
        assert store.verify() == []
    with SqliteStore(path) as reopened:
        assert [o.metadata.name for o in reopened.list(KeyPrefix("pods"))[0]] == ["a", "b"]
        assert reopened.current_revision() == 2
        assert reopened.verify() == []
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT name FROM log ORDER BY revision").fetchall() == [
            ("a",),
            ("b",),
        ]
    conn.close()


def test_a_failure_that_ends_the_transaction_makes_the_store_refuse_use(tmp_path: Path) -> None:
    path = tmp_path / "kubeprio.db"
    refuse_rows_of_boom(path, table="current", action="ROLLBACK")
    store = SqliteStore(path)
    store.create(key("before"), pod("before").build())
    watch = store.watch(KeyPrefix("pods"), 1)
    with store.batch():
        store.create(key("a"), pod("a").build())
        with pytest.raises(StorageFailureError, match="injected failure"):
            store.create(key("boom"), pod("boom").build())
    assert watch.poll() == []  # the batch's writes were lost with its transaction
    assert store.failure() is not None
    with pytest.raises(StorageFailureError, match="unusable"):
        store.get(key("before"))
    store.close()
    with SqliteStore(path) as reopened:
        assert [o.metadata.name for o in reopened.list(KeyPrefix("pods"))[0]] == ["before"]
        assert reopened.verify() == []
