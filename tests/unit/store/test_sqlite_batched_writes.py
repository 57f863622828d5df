"""A write inside a SQLite batch runs without a savepoint; its failures still undo it alone.

``SqliteStore._batched_write``: a failed statement undoes itself, a failure of the
write's second statement (its ``current`` row) deletes the first one's log row again, and
a failure that ended the batch's whole transaction makes the store refuse use.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kubeprio.store.errors import StorageFailureError
from kubeprio.store.interface import KeyPrefix, ObjectKey
from kubeprio.store.sqlite import SqliteStore
from tests.builders import pod


def key(name: str) -> ObjectKey:
    return ObjectKey("pods", "default", name)


def _refuse_current_rows_of_boom(path: Path, action: str) -> None:
    """Make the ``current`` insert of the name ``boom`` fail with ``action`` (ABORT: the
    statement is undone; ROLLBACK: SQLite ends the whole transaction, as it may on a full
    disk)."""
    SqliteStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON current WHEN NEW.name = 'boom' "
            f"BEGIN SELECT RAISE({action}, 'injected failure'); END"
        )
    conn.close()


def test_a_failed_second_statement_leaves_no_log_row_and_the_batch_goes_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "kubeprio.db"
    _refuse_current_rows_of_boom(path, "ABORT")
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
    _refuse_current_rows_of_boom(path, "ROLLBACK")
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
