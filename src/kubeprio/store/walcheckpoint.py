"""WAL checkpoints of the SQLite store, run on a worker thread instead of inside COMMIT.

A WAL database must now and then copy the frames of its ``-wal`` file back into the
database file (a checkpoint) and fsync both. By default SQLite does that inside the
``COMMIT`` that takes the WAL past 1,000 pages, on the writing thread: ``serve``'s event
loop, blocked for the copy and the two fsyncs (up to 15 ms each time in a
``bench.serve_load throughput`` run). The store turns that off
(``wal_autocheckpoint=0``) and hands checkpoints to a ``WalCheckpointer``:

* After each ``COMMIT`` the writer calls ``after_commit``, which reads how many WAL
  frames are not yet in the database file from the WAL index (the ``-shm`` file; one
  ``pread`` of its documented header, see below) and, past ``start_pages``, wakes the
  worker. No fsync and no copy on the writer's thread.
* The worker, on its own connection, runs a PASSIVE checkpoint: it copies the frames
  that no reader still needs and never waits for the writer. ``sqlite3`` releases the
  GIL while SQLite works, so the loop goes on meanwhile.
* The writer starts the WAL file over at its next write once a checkpoint has copied
  every frame. Under a steady load a PASSIVE checkpoint seldom catches up (new frames
  arrive while it runs), so when the WAL holds ``restart_pages`` frames the worker
  follows it with a RESTART checkpoint, which holds the writer off while it copies the
  few frames left and so guarantees the start-over: the WAL stays bounded. The writer
  then waits on SQLite's busy handler for those milliseconds (its connection has a busy
  timeout for this one purpose).

Durability is unchanged: a checkpoint fsyncs the WAL before it copies and the database
after, as the in-COMMIT one did (the worker's connection has the store's
``synchronous``); a ``kill -9`` during one leaves a WAL that the next open replays.

The WAL index header (https://www.sqlite.org/walformat.html, "The WAL-Index Header"),
in native byte order: ``mxFrame`` (the last valid frame) is a u32 at offset 16, and
``nBackfill`` (frames already copied to the database) a u32 at offset 96. A torn read
(the writer updating it meanwhile) only misjudges one wake-up; if the header cannot be
read at all the worker is woken every ``start_pages // 8`` commits instead.

Driven by ``SqliteStore`` (``store.sqlite``): created at open, ``after_commit`` from its
``_commit``, ``close`` before its own connection closes.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import threading
from typing import Final

_HEADER_BYTES: Final = 136
_MX_FRAME_OFFSET: Final = 16
_BACKFILL_OFFSET: Final = 96
_U32: Final = struct.Struct("=I")

WAL_FRAME_BYTES: Final = 4096 + 24
"""A WAL frame: one 4 KiB page and its 24-byte frame header."""

_RESTART_WAIT_S: Final = 2.0
"""How long a RESTART checkpoint waits for the writer before giving up (until the next
wake-up)."""


class WalCheckpointer:
    """Checkpoints one WAL database from a worker thread, woken by its writer."""

    def __init__(
        self,
        database: str,
        *,
        synchronous: str,
        start_pages: int,
        restart_pages: int,
    ) -> None:
        """``start_pages``: un-copied WAL frames that wake the worker for a PASSIVE
        checkpoint. ``restart_pages``: WAL frames past which it also runs a RESTART one."""
        if not 0 < start_pages <= restart_pages:
            raise ValueError("need 0 < start_pages <= restart_pages")
        self._database = database
        self._synchronous = synchronous
        self._start_pages = start_pages
        self._restart_pages = restart_pages
        self._shm_fd: int | None = None
        self._wake = threading.Event()
        self._ran = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.started = 0
        """Checkpoint runs the worker has begun."""
        self.runs = 0
        """Runs finished (each a PASSIVE checkpoint, maybe a RESTART)."""
        self.restarts = 0
        """RESTART checkpoints run."""
        self.last_failure: str | None = None
        """The last checkpoint's error, if it failed (the next wake-up tries again)."""

    def after_commit(self) -> None:
        """On the writer's thread, after a COMMIT: wake the worker if the WAL holds
        ``start_pages`` frames not yet in the database file."""
        if self._wake.is_set() or self._stopping:
            return
        pending = self.pending_frames()
        # An unreadable WAL index (never seen: the store's own connection made it) asks
        # for a run; the wake-up check above keeps that to one per run.
        if pending is None or pending >= self._start_pages:
            self.request()

    def pending_frames(self) -> int | None:
        """WAL frames not yet copied into the database file, from the WAL index header
        (None if it cannot be read)."""
        if self._shm_fd is None:
            try:
                self._shm_fd = os.open(self._database + "-shm", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        try:
            header = os.pread(self._shm_fd, _HEADER_BYTES, 0)
        except OSError:
            return None
        if len(header) < _HEADER_BYTES:
            return None
        (last_frame,) = _U32.unpack_from(header, _MX_FRAME_OFFSET)
        (copied,) = _U32.unpack_from(header, _BACKFILL_OFFSET)
        return max(0, int(last_frame) - int(copied))

    def request(self) -> None:
        """Wake the worker (starting it the first time) for a checkpoint."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._work, name=f"wal-checkpoint {self._database}", daemon=True
            )
            self._thread.start()
        self._wake.set()

    def settle(self, timeout: float = 10.0) -> bool:
        """Request a checkpoint and wait until the worker has run one (tests)."""
        with self._ran:
            # The worker runs one at a time: run number ``target`` begins after this call.
            target = self.started + 1
            self.request()
            return self._ran.wait_for(lambda: self.runs >= target or self._stopping, timeout)

    def close(self) -> None:
        """Stop the worker (after the checkpoint it is running) and close its connection."""
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._shm_fd is not None:
            os.close(self._shm_fd)
            self._shm_fd = None

    def _work(self) -> None:
        try:
            conn = sqlite3.connect(self._database, isolation_level=None, timeout=_RESTART_WAIT_S)
            conn.execute(f"PRAGMA synchronous = {self._synchronous}")
        except sqlite3.Error as exc:
            self._begin_run()
            self._finish_run(f"open: {exc}")  # the next wake-up starts a new worker
            return
        try:
            # ``close`` sets ``_stopping`` before it wakes us, and a run clears the wake-up
            # before the loop looks at ``_stopping`` again: no stop is missed.
            while not self._stopping:
                self._wake.wait()
                if self._stopping:
                    return
                self._begin_run()
                self._finish_run(self._checkpoint(conn))
        finally:
            conn.close()

    def _checkpoint(self, conn: sqlite3.Connection) -> str | None:
        try:
            _, wal_frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if wal_frames >= self._restart_pages:
                conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
                self.restarts += 1
        except sqlite3.Error as exc:
            return str(exc)
        return None

    def _begin_run(self) -> None:
        with self._ran:
            # Cleared as the run starts: a commit meanwhile that finds the WAL over the
            # threshold again asks for the next run.
            self._wake.clear()
            self.started += 1

    def _finish_run(self, failure: str | None) -> None:
        with self._ran:
            self.last_failure = failure
            self.runs += 1
            self._ran.notify_all()
