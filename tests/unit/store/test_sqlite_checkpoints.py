"""The SQLite store's WAL checkpoints run on a worker thread, and its file lock.

``store.walcheckpoint``: no ``COMMIT`` checkpoints (``wal_autocheckpoint=0``); the worker
copies the WAL into the database once ``checkpoint_pages`` frames wait, and starts the WAL
over past ``wal_restart_pages``, so the WAL file stays bounded. ``store.filelock``: one
store per file, across processes too, and a killed holder leaves no stale lock. Crash
safety with the worker running is in ``test_sqlite_crash.py``.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from kubeprio.api.meta import ApiObject
from kubeprio.store.errors import StorageFailureError
from kubeprio.store.interface import KeyPrefix, ObjectKey
from kubeprio.store.sqlite import SqliteStore
from kubeprio.store.walcheckpoint import WAL_FRAME_BYTES, WalCheckpointer
from tests.builders import pod

"""A WAL frame: one page and its header."""


def key(name: str) -> ObjectKey:
    return ObjectKey("pods", "default", name)


def padded(name: str, size: int) -> ApiObject:
    """A pod with a ``size``-byte annotation: a write of several WAL pages."""
    built = pod(name).build()
    metadata = dataclasses.replace(built.metadata, annotations={"padding": "x" * size})
    return dataclasses.replace(built, metadata=metadata)


def wal_bytes(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_commits_do_not_checkpoint(tmp_path: Path) -> None:
    """With the worker never woken, the WAL grows past SQLite's default checkpoint
    threshold (1,000 pages): no COMMIT checkpointed it in place."""
    path = tmp_path / "kubeprio.db"
    with SqliteStore(path, checkpoint_pages=100_000, wal_restart_pages=100_000) as store:
        for i in range(400):
            store.create(key(f"p{i}"), padded(f"p{i}", 12_000))
        assert (store.checkpointer.pending_frames() or 0) > 1_200
        assert wal_bytes(path) > 1_200 * WAL_FRAME_BYTES
        assert store.checkpointer.runs == 0


def test_the_worker_checkpoints_and_the_wal_stays_bounded(tmp_path: Path) -> None:
    """Many writes with small thresholds: the worker ran, RESTARTs included, and once a
    checkpoint has run the next write starts the WAL over, cut back to
    ``wal_restart_pages`` frames (``journal_size_limit``)."""
    path = tmp_path / "kubeprio.db"
    limit = 64 * WAL_FRAME_BYTES
    with SqliteStore(path, checkpoint_pages=8, wal_restart_pages=64) as store:
        current = store.create(key("a"), padded("a", 3_000))
        for i in range(3_000):
            current = store.update(key("a"), current, expected_revision=None)
            store.create(key(f"p{i}"), padded(f"p{i}", 500))
        worker = store.checkpointer
        assert worker.settle()
        assert worker.last_failure is None
        assert worker.runs > 10
        assert worker.restarts > 0
        store.create(key("last"), pod("last").build())
        assert wal_bytes(path) <= limit
        assert store.verify() == []
        (expected, _) = store.list(KeyPrefix("pods"))
    with SqliteStore(path) as reopened:
        assert reopened.list(KeyPrefix("pods"))[0] == expected


def test_close_stops_the_worker_and_leaves_no_wal(tmp_path: Path) -> None:
    path = tmp_path / "kubeprio.db"
    store = SqliteStore(path, checkpoint_pages=4, wal_restart_pages=16)
    for i in range(200):
        store.create(key(f"p{i}"), padded(f"p{i}", 2_000))
    assert store.checkpointer.settle()
    thread_names = {t.name for t in threading.enumerate()}
    assert f"wal-checkpoint {path}" in thread_names
    store.close()
    thread_names = {t.name for t in threading.enumerate()}
    assert f"wal-checkpoint {path}" not in thread_names
    # The last connection to close checkpoints the whole WAL and removes it.
    assert not Path(f"{path}-wal").exists()


@pytest.mark.parametrize(("start", "restart"), [(0, 10), (10, 5), (-1, 10)])
def test_checkpoint_thresholds_must_be_ordered(tmp_path: Path, start: int, restart: int) -> None:
    with pytest.raises(ValueError, match="start_pages"):
        WalCheckpointer(
            str(tmp_path / "db"), synchronous="NORMAL", start_pages=start, restart_pages=restart
        )


HOLDER = textwrap.dedent(
    """
    import sys, time
    from kubeprio.store.sqlite import SqliteStore
    store = SqliteStore(sys.argv[1])
    print("open", flush=True)
    time.sleep(60)
    """
)


def test_another_process_is_refused_until_the_holder_dies(tmp_path: Path) -> None:
    """A second ``kubeprio serve`` (another process) is refused with SQLite's word,
    "database is locked"; the kernel drops the lock of a killed holder (no stale lock)."""
    path = tmp_path / "kubeprio.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "open\n"
        with pytest.raises(StorageFailureError, match=r"kubeprio\.db: open: database is locked"):
            SqliteStore(path)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate()
    with SqliteStore(path) as store:
        assert store.verify() == []
    assert os.path.exists(f"{path}.lock")
