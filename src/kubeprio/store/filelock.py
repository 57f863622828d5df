"""An exclusive lock on a file next to the database: one ``SqliteStore`` per file.

The SQLite store keeps every live object in memory and serves reads from there, so no
other store (a second ``kubeprio serve`` on the same data directory, in this process or
another) may write the file behind it. SQLite's ``locking_mode=EXCLUSIVE`` used to give
that, but it also keeps any second connection out, and the store's WAL checkpoints now
run on a second connection on a worker thread (``store.walcheckpoint``). So the store
takes this lock instead: an ``flock`` on ``<database>.lock``, taken without waiting at
open and held until the store closes (or the process dies: the kernel drops it then, so
a ``kill -9`` never leaves a stale lock behind, unlike a PID file).

``flock`` locks belong to the open file, not the process, so a second open in the same
process is refused too. Driven by ``SqliteStore``'s open and close.
"""

from __future__ import annotations

import fcntl
import os

from kubeprio.store.errors import StorageFailureError


class FileLock:
    """An exclusive ``flock`` on ``path``, held from construction until ``release``."""

    def __init__(self, path: str, *, database: str) -> None:
        """Take the lock or raise ``StorageFailureError`` saying ``database`` is locked."""
        self.path = path
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StorageFailureError(f"{database}: open: cannot open {path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            # "locked" as SQLite says it: the message a second server has always shown.
            raise StorageFailureError(
                f"{database}: open: database is locked (another kubeprio store holds {path})"
            ) from exc
        self._fd: int | None = fd

    def release(self) -> None:
        """Drop the lock (closing the file drops it); a second call does nothing."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
