"""SqliteStore beyond the contract: restarts, the log, exclusivity and failure handling.

The contract suite (``tests/contract``) checks behaviour within one session; these tests
close and reopen the file, look at what survives, and break things on purpose. Crash
safety under ``kill -9`` is in ``test_sqlite_crash.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubeprio.api.meta import ApiObject
from kubeprio.store.errors import KeyNotFoundError, RevisionCompactedError, StorageFailureError
from kubeprio.store.interface import EventType, KeyPrefix, ObjectKey, object_revision
from kubeprio.store.sqlite import SCHEMA_VERSION, SqliteStore
from tests.builders import node, pod, priority_class
from tests.contract.test_store_contract import REAL_OBJECTS
from tests.unit.store.faults import refuse_rows_of_boom


def key(name: str, namespace: str = "default") -> ObjectKey:
    return ObjectKey("pods", namespace, name)


def relabel(obj: Any, **labels: str) -> Any:
    return dataclasses.replace(obj, metadata=dataclasses.replace(obj.metadata, labels=labels))


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "kubeprio.db"


def test_a_reopened_store_has_every_object_and_the_same_revision(path: Path) -> None:
    with SqliteStore(path) as store:
        a = store.create(key("a"), pod("a").requests(cpu="250m").build())
        store.create(key("b"), pod("b").build())
        a = store.update(key("a"), relabel(a, v="2"), expected_revision=1)
        store.delete(key("b"))
        pc = store.create(ObjectKey("priorityclasses", "", "high"), priority_class("high", 9))
        n = store.create(ObjectKey("nodes", "", "n1"), node("n1").allocatable(cpu="4").build())
    with SqliteStore(path) as store:
        assert store.current_revision() == 6
        assert store.list(KeyPrefix("pods")) == ([a], 6)
        assert store.get(ObjectKey("priorityclasses", "", "high")) == pc
        assert store.get(ObjectKey("nodes", "", "n1")) == n
        with pytest.raises(KeyNotFoundError):
            store.get(key("b"))
        assert object_revision(store.create(key("c"), pod("c").build())) == 7
        assert store.verify() == []


def test_real_cluster_objects_are_equal_after_a_restart(path: Path) -> None:
    with SqliteStore(path) as store:
        stored = {k: store.create(k, obj) for k, obj in REAL_OBJECTS}
    with SqliteStore(path) as store:
        assert {k: store.get(k) for k in stored} == stored


def test_a_watch_resumes_across_a_restart_from_the_log(path: Path) -> None:
    """Informers resume after a restart without relisting, as kine serves them from its log."""
    with SqliteStore(path) as store:
        a = store.create(key("a"), pod("a").build())
        store.create(key("b"), pod("b").build())
        store.update(key("a"), relabel(a, v="2"), expected_revision=1)
        store.delete(key("b"))
        live = store.watch(KeyPrefix("pods"), 1).poll()
    with SqliteStore(path) as store:
        watch = store.watch(KeyPrefix("pods"), 1)
        assert watch.poll() == live
        assert [e.type for e in live] == [EventType.ADDED, EventType.MODIFIED, EventType.DELETED]
        store.create(key("c"), pod("c").build())
        assert [(e.type, e.revision) for e in watch.poll()] == [(EventType.ADDED, 5)]


def test_compaction_survives_a_restart_even_when_it_removed_the_newest_row(path: Path) -> None:
    with SqliteStore(path) as store:
        store.create(key("a"), pod("a").build())
        store.create(key("b"), pod("b").build())
        store.delete(key("b"))  # revision 3: a DELETED row, which compaction removes
        store.compact(3)
    with SqliteStore(path) as store:
        assert store.current_revision() == 3
        assert store.compacted_revision == 3
        with pytest.raises(RevisionCompactedError):
            store.watch(KeyPrefix("pods"), 2)
        assert store.watch(KeyPrefix("pods"), 3).poll() == []
        assert object_revision(store.create(key("c"), pod("c").build())) == 4
        assert store.verify() == []


def test_the_history_limit_bounds_the_log_on_disk(path: Path, tmp_path: Path) -> None:
    big = pod("a").labels(padding="x" * 60).build()
    with SqliteStore(path, history_limit=50) as store:
        current = store.create(key("a"), big)
        for _ in range(3_000):
            current = store.update(key("a"), current, expected_revision=None)
        assert store.compacted_revision >= 3_001 - 50 - 5
        assert store.verify() == []
    with SqliteStore(tmp_path / "unbounded.db") as store:
        current = store.create(key("a"), big)
        for _ in range(3_000):
            current = store.update(key("a"), current, expected_revision=None)
    assert path.stat().st_size * 10 < (tmp_path / "unbounded.db").stat().st_size
    with SqliteStore(path, history_limit=50) as store:
        assert store.current_revision() == 3_001
        assert [e.revision for e in store.watch(KeyPrefix("pods"), 2_990).poll()] == list(
            range(2_991, 3_002)
        )


def test_a_second_open_of_the_same_file_fails(path: Path) -> None:
    """The file is exclusively locked (an ``flock`` on ``<file>.lock``, store.filelock): a
    second server cannot change it behind the cache."""
    with SqliteStore(path) as store:
        store.create(key("a"), pod("a").build())
        with pytest.raises(StorageFailureError, match="database is locked") as caught:
            SqliteStore(path)
        assert isinstance(caught.value.__cause__, BlockingIOError)
        store.create(key("b"), pod("b").build())
    with SqliteStore(path) as store:
        assert store.current_revision() == 2


def test_a_file_that_is_not_a_database_fails_to_open(path: Path) -> None:
    path.write_bytes(b"this is not an SQLite database, just some bytes" * 100)
    with pytest.raises(StorageFailureError) as caught:
        SqliteStore(path)
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


def test_a_database_of_another_schema_version_fails_to_open(path: Path) -> None:
    SqliteStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION + 1,)
        )
    conn.close()
    with pytest.raises(StorageFailureError, match="schema version"):
        SqliteStore(path)


def test_an_object_of_the_wrong_kind_for_the_resource_is_refused(path: Path) -> None:
    with SqliteStore(path) as store:
        with pytest.raises(StorageFailureError, match="PriorityClass under resource 'pods'"):
            store.create(key("a"), priority_class("a", 1))
        with pytest.raises(StorageFailureError):
            store.create(ObjectKey("widgets", "", "a"), pod("a").build())
        assert store.current_revision() == 0


def test_a_failed_statement_rolls_back_and_the_store_goes_on(path: Path) -> None:
    refuse_rows_of_boom(path)
    with SqliteStore(path) as store:
        a = store.create(key("a"), pod("a").build())
        with pytest.raises(StorageFailureError, match="injected failure") as caught:
            store.create(key("boom"), pod("boom").build())
        assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)
        assert store.current_revision() == 1
        assert store.list(KeyPrefix("pods")) == ([a], 1)
        assert object_revision(store.create(key("b"), pod("b").build())) == 2
        assert store.verify() == []


class _Delegating:
    """A stand-in for the store's connection that passes everything to the real one;
    subclasses make ``execute`` fail where a test needs it."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class _FailingCommit(_Delegating):
    """A connection whose COMMIT fails (as on an I/O error)."""

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "COMMIT":
            raise sqlite3.OperationalError("disk I/O error")
        return super().execute(sql, *args)


@contextlib.contextmanager
def _connection_swapped(
    store: SqliteStore, broken: Callable[[sqlite3.Connection], _Delegating]
) -> Iterator[None]:
    """Run the block with ``broken(real)`` as the store's connection; then put the real
    one back and close the store (so the file can be reopened and checked)."""
    real = store._conn
    store._conn = broken(real)  # type: ignore[assignment]
    try:
        yield
    finally:
        store._conn = real
        store.close()


def test_a_failed_commit_makes_the_store_refuse_further_use(path: Path) -> None:
    """After a failed COMMIT the outcome is unknown; only a reopen (from the file) is safe."""
    store = SqliteStore(path)
    store.create(key("a"), pod("a").build())
    with _connection_swapped(store, _FailingCommit):
        with pytest.raises(StorageFailureError, match="disk I/O error"):
            store.create(key("b"), pod("b").build())
        for call in (
            lambda: store.create(key("c"), pod("c").build()),
            lambda: store.get(key("a")),
            lambda: store.list(KeyPrefix("pods")),
            lambda: store.watch(KeyPrefix("pods"), 0),
        ):
            with pytest.raises(StorageFailureError, match="unusable"):
                call()
    with SqliteStore(path) as reopened:
        assert reopened.current_revision() == 1  # the failed COMMIT was rolled back
        assert reopened.verify() == []


def test_use_from_another_thread_is_refused(path: Path) -> None:
    store = SqliteStore(path)
    errors: list[BaseException] = []

    def write() -> None:
        try:
            store.create(key("a"), pod("a").build())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    thread.join()
    [error] = errors
    assert isinstance(error, StorageFailureError)
    assert isinstance(error.__cause__, sqlite3.ProgrammingError)
    assert store.current_revision() == 0
    assert object_revision(store.create(key("b"), pod("b").build())) == 1  # still usable
    store.close()


def test_a_closed_store_refuses_use_and_closes_twice_quietly(path: Path) -> None:
    store = SqliteStore(path)
    watch = store.watch(KeyPrefix("pods"), 0)
    store.close()
    store.close()
    assert watch.closed
    with pytest.raises(StorageFailureError, match="closed"):
        store.create(key("a"), pod("a").build())


def test_fsync_each_commit_stores_the_same_way(path: Path) -> None:
    with SqliteStore(path, fsync_each_commit=True) as store:
        stored: ApiObject = store.create(key("a"), pod("a").build())
    with SqliteStore(path) as store:
        assert store.get(key("a")) == stored


@pytest.mark.parametrize(
    "kwargs",
    [{"history_limit": 0}, {"memory_history": 0}],
    ids=["history_limit", "memory_history"],
)
def test_history_sizes_must_be_positive(path: Path, kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="positive"):
        SqliteStore(path, **kwargs)


# --- batches (group commit) ------------------------------------------------------------------


def test_a_batch_publishes_its_events_after_its_commit(path: Path) -> None:
    """Watchers see nothing of a batch before its COMMIT, then everything, in order; a
    reopened file has every write of the batch."""
    with SqliteStore(path) as store:
        watch = store.watch(KeyPrefix("pods"), 0)
        with store.batch():
            store.create(key("a"), pod("a").build())
            store.create(key("b"), pod("b").build())
            assert watch.poll() == []
            assert store._conn.in_transaction  # one transaction for the whole batch
        assert [(e.type, e.key.name, e.revision) for e in watch.poll()] == [
            (EventType.ADDED, "a", 1),
            (EventType.ADDED, "b", 2),
        ]
        assert not store._conn.in_transaction
    with SqliteStore(path) as reopened:
        assert [object_revision(o) for o in reopened.list(KeyPrefix("pods"))[0]] == [1, 2]
        assert reopened.verify() == []


_KILLED_IN_A_BATCH = """
import os, signal, sys
from kubeprio.store.interface import ObjectKey
from kubeprio.store.sqlite import SqliteStore
from tests.builders import pod
from tests.unit.store.faults import refuse_rows_of_boom
store = SqliteStore(sys.argv[1])
store.create(ObjectKey("pods", "default", "before"), pod("before").build())
with store.batch():
    store.create(ObjectKey("pods", "default", "in-1"), pod("in-1").build())
    store.create(ObjectKey("pods", "default", "in-2"), pod("in-2").build())
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_batch_killed_before_its_commit_leaves_none_of_its_writes(path: Path) -> None:
    """``kill -9`` inside a batch: the batch was never acknowledged, and it is atomic."""
    result = subprocess.run(
        [sys.executable, "-c", _KILLED_IN_A_BATCH, str(path)],
        cwd=Path(__file__).parents[3],
        capture_output=True,
        check=False,
    )
    assert result.returncode == -signal.SIGKILL, result.stderr
    with SqliteStore(path) as store:
        assert [o.metadata.name for o in store.list(KeyPrefix("pods"))[0]] == ["before"]
        assert store.current_revision() == 1
        assert store.verify() == []


def test_a_batch_whose_commit_fails_publishes_nothing_and_the_store_refuses_use(
    path: Path,
) -> None:
    store = SqliteStore(path)
    store.create(key("a"), pod("a").build())
    watch = store.watch(KeyPrefix("pods"), 1)
    with _connection_swapped(store, _FailingCommit):
        with pytest.raises(StorageFailureError, match="disk I/O error"), store.batch():
            store.create(key("b"), pod("b").build())
        assert watch.poll() == []
        with pytest.raises(StorageFailureError, match="unusable"):
            store.get(key("a"))
    with SqliteStore(path) as reopened:
        assert reopened.current_revision() == 1
        assert reopened.verify() == []


def test_a_batch_whose_body_raises_keeps_the_writes_that_returned(path: Path) -> None:
    with SqliteStore(path) as store:
        watch = store.watch(KeyPrefix("pods"), 0)

        def failing_round() -> None:
            with store.batch():
                store.create(key("a"), pod("a").build())
                raise RuntimeError("component failed")

        with pytest.raises(RuntimeError, match="component failed"):
            failing_round()
        assert [(e.key.name, e.revision) for e in watch.poll()] == [("a", 1)]
        assert object_revision(store.create(key("b"), pod("b").build())) == 2
    with SqliteStore(path) as reopened:
        assert reopened.current_revision() == 2
        assert reopened.verify() == []


class _InterruptAfterInsert(_Delegating):
    """A connection that is interrupted (KeyboardInterrupt) right after inserting ``name``'s
    log row: between a write's statements, where memory has not moved yet."""

    def __init__(self, conn: sqlite3.Connection, name: str) -> None:
        super().__init__(conn)
        self._name = name

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        cursor = super().execute(sql, *args)
        if sql.lstrip().upper().startswith("INSERT INTO LOG") and self._name in args[0]:
            raise KeyboardInterrupt
        return cursor


def test_a_batch_interrupted_mid_write_is_rolled_back_and_the_store_refuses_use(
    path: Path,
) -> None:
    store = SqliteStore(path)
    store.create(key("a"), pod("a").build())
    watch = store.watch(KeyPrefix("pods"), 1)

    def interrupted_round() -> None:
        with store.batch():
            store.create(key("b"), pod("b").build())
            store.create(key("c"), pod("c").build())

    with _connection_swapped(store, lambda real: _InterruptAfterInsert(real, "c")):
        with pytest.raises(KeyboardInterrupt):
            interrupted_round()
        assert watch.poll() == []
        with pytest.raises(StorageFailureError, match="interrupted"):
            store.get(key("a"))
    with SqliteStore(path) as reopened:
        assert [o.metadata.name for o in reopened.list(KeyPrefix("pods"))[0]] == ["a"]
        assert reopened.verify() == []
