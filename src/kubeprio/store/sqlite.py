"""The SQLite ``Store``: ``kubeprio serve``'s embedded default, durable across ``kill -9``.

The database is a log of revisions, as in kine (k3s's etcd shim)::

    log      revision INTEGER PRIMARY KEY   one row per write, in revision order
             resource, namespace, name       the key (resource = the kind's plural)
             type                            ADDED | MODIFIED | DELETED
             prev_revision                   the key's previous row (0 for ADDED)
             value                           the stored object as JSON (``to_sparse_dict``:
                                             what it holds, so that it reads back
                                             as the very object);
                                             NULL for DELETED: the last state is the
                                             row at prev_revision, re-stamped
    current  (resource, namespace, name) -> revision    the live object's log row
    meta     schema_version, compacted                   compacted: see below

Who drives it: ``cli`` builds it for ``kubeprio serve``; ``apiserver.service`` calls it.
It must not be shared between threads or processes (see *Threading* below).

Writes. Each create/update/delete is one transaction: insert the log row, point
``current`` at it (an UPDATE/DELETE guarded by the old revision, so a cache that
disagreed with the database would fail loudly rather than fork history). Only after
COMMIT returns does the store change its in-memory state, publish the watch event and
return: an object handed back to a caller is committed ("acknowledged").

Reads. ``get`` and ``list`` are served from an in-memory ``ObjectIndex`` loaded from
``current`` at open and kept in step with every commit, like the API server's watch
cache in front of etcd: no disk access or JSON decoding on the read path. The store
holds an ``flock`` on ``<file>.lock`` from open to close (``store.filelock``), so no
other store, in this process or another, can change the file behind the cache (a second
``kubeprio serve`` on the same data directory fails at open with ``StorageFailureError``,
"database is locked").

Watches. Live events and the most recent ``memory_history`` events come from a
``WatchHub``; a watch from an older revision is replayed from the log table first (kine
serves watches from its log the same way), so informers resume across restarts without
relisting. History before the last compaction answers ``RevisionCompactedError``.

Compaction (kine's rule). Compacting at R deletes the log rows at or below R that are
superseded by a row at or below R, and the DELETED rows at or below R; current objects'
rows stay whatever their age. Rows above R are untouched, so every watch from R or later
can be replayed. With ``history_limit`` N, each write that leaves more than N (plus a
small step) revisions of history compacts to ``revision - N`` in the same transaction.

Durability. WAL journal with ``synchronous=NORMAL`` by default: COMMIT appends the
transaction's frames to the WAL file with write(2) before returning, and the WAL is
fsynced at each checkpoint (run on a worker thread, not inside COMMIT: see
``store.walcheckpoint``; the WAL stays bounded). A killed process (``kill -9``, a crash, an OOM kill) loses
nothing that was acknowledged, because written data lives in the kernel's page cache,
not the process; the next open replays the WAL. Only an operating-system crash or a
power cut can lose the transactions committed since the last checkpoint, and even then
the database stays consistent (WAL frames are checksummed; recovery stops at the
first incomplete one). ``fsync_each_commit=True`` selects ``synchronous=FULL``: the WAL
is fsynced at every COMMIT, which closes that window at the cost of one fsync per write
(about 230 µs here against 25 µs; see ``docs/storage.md``).

Batches (group commit). Inside ``batch()`` the writes share one transaction: a failed
write is undone alone and raises, as above (its log row deleted again if its second
statement failed; a write that also compacts is a savepoint), the in-memory index and
revision move at once so later reads and writes in the batch see it, and the watch events
are published, in order, after the batch's COMMIT. One COMMIT (one append of the WAL
frames, each page once) then serves many writes instead of one each. Nothing written in
a batch is acknowledged outside the process before that COMMIT: ``serve``'s driver runs
each round of its components (binds, events, kubelet status writes) in a batch, between
two yields to the HTTP server, and no HTTP request is answered in between. A batch that
ends with the store unusable is rolled back; one interrupted by a ``BaseException``
(KeyboardInterrupt) is rolled back and makes the store unusable (memory may be a step
ahead of the file); one whose body raised an ``Exception`` commits the writes that
returned.

Failures. Every ``sqlite3`` error is raised as ``StorageFailureError`` (``from`` the
cause). A failed statement before COMMIT rolls back and leaves the store as it was; a
failed COMMIT or ROLLBACK leaves the outcome unknown, so the store refuses further use
(reopen it to recover from the file).

Threading. One connection, created with sqlite3's same-thread check: the store must be
used from the thread that opened it (``serve`` uses it from the asyncio loop thread).
Calls block only on the disk, and, for a few milliseconds when the WAL must start over,
on the checkpoint worker's second connection (its RESTART holds the write lock). This
module and ``store.walcheckpoint`` are the only ones that import ``sqlite3`` (an
import-linter contract).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, Final

from kubeprio.api import kinds, serialization
from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.encoded import held_json_bytes
from kubeprio.api.meta import ApiObject
from kubeprio.store.errors import (
    KeyExistsError,
    RevisionCompactedError,
    StorageFailureError,
)
from kubeprio.store.filelock import FileLock
from kubeprio.store.interface import (
    EventType,
    KeyPrefix,
    ObjectKey,
    StoreEvent,
    object_revision,
    with_revision,
)
from kubeprio.store.objects import ObjectIndex, check_revision
from kubeprio.store.walcheckpoint import WAL_FRAME_BYTES, WalCheckpointer
from kubeprio.store.watch import DEFAULT_HISTORY_LIMIT, QueueWatch, WatchHub

SCHEMA_VERSION: Final = 1

DEFAULT_MEMORY_HISTORY: Final = 10_000
"""Recent events kept decoded in memory; older watches are replayed from the log table."""

DEFAULT_CHECKPOINT_PAGES: Final = 1_000
"""WAL pages not yet in the database file that start a checkpoint (SQLite's default)."""

DEFAULT_WAL_RESTART_PAGES: Final = 8_000
"""WAL pages past which a checkpoint also starts the WAL over (about 32 MiB)."""

_WRITER_BUSY_TIMEOUT_S: Final = 10.0
"""How long a write waits for a RESTART checkpoint holding the write lock (milliseconds
in practice; no other connection ever writes: see *Threading*)."""

_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS log (
        revision INTEGER PRIMARY KEY,
        resource TEXT NOT NULL,
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL,  -- ADDED | MODIFIED | DELETED (no CHECK: it costs 15% of a write)
        prev_revision INTEGER NOT NULL,
        value TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS current (
        resource TEXT NOT NULL,
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        revision INTEGER NOT NULL,
        PRIMARY KEY (resource, namespace, name)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS meta (
        key TEXT PRIMARY KEY,
        value INTEGER NOT NULL
    ) WITHOUT ROWID""",
)

_INSERT_LOG: Final = "INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?)"
_INSERT_CURRENT: Final = "INSERT INTO current VALUES (?, ?, ?, ?)"
_UPDATE_CURRENT: Final = (
    "UPDATE current SET revision = ? "
    "WHERE resource = ? AND namespace = ? AND name = ? AND revision = ?"
)
_DELETE_CURRENT: Final = (
    "DELETE FROM current WHERE resource = ? AND namespace = ? AND name = ? AND revision = ?"
)
_UNDO_LOG_ROW: Final = "DELETE FROM log WHERE revision = ?"
_COMPACT: Final = """DELETE FROM log WHERE revision IN (
    SELECT prev_revision FROM log
        WHERE revision > :old AND revision <= :new AND prev_revision != 0
    UNION ALL
    SELECT revision FROM log
        WHERE revision > :old AND revision <= :new AND type = 'DELETED')"""
_REPLAY: Final = """SELECT l.revision, l.namespace, l.name, l.type, COALESCE(l.value, p.value)
    FROM log AS l LEFT JOIN log AS p ON l.value IS NULL AND p.revision = l.prev_revision
    WHERE l.revision > ? AND l.revision <= ? AND l.resource = ?"""


class SqliteStore:
    """A ``Store`` in one SQLite database file (WAL), with an in-memory read index."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        memory_history: int = DEFAULT_MEMORY_HISTORY,
        fsync_each_commit: bool = False,
        checkpoint_pages: int = DEFAULT_CHECKPOINT_PAGES,
        wal_restart_pages: int = DEFAULT_WAL_RESTART_PAGES,
    ) -> None:
        """Open (creating if needed) the database at ``path`` and load the current objects.

        ``history_limit``: revisions of watch history kept in the log table.
        ``memory_history``: how many of those are also kept decoded in memory.
        ``fsync_each_commit``: survive power loss too, at one fsync per write.
        ``checkpoint_pages``, ``wal_restart_pages``: when the worker thread checkpoints
        the WAL, and when it starts the WAL over (see ``store.walcheckpoint``).
        """
        if history_limit < 1 or memory_history < 1:
            raise ValueError("history_limit and memory_history must be positive")
        self.path = os.fspath(path)
        self._history_limit = history_limit
        # Compact in steps so a steady write load pays one bulk DELETE per step, not per write.
        self._compact_step = max(1, min(history_limit // 10, 1_000))
        self._models: dict[str, type[Any]] = {info.plural: info.model for info in kinds.RESOURCES}
        self._objects = ObjectIndex()
        self._unusable: str | None = None
        self._batched: builtins.list[StoreEvent] | None = None
        """Inside ``batch``: the watch events to publish once it commits."""
        synchronous = "FULL" if fsync_each_commit else "NORMAL"
        # Built first: it checks its thresholds and touches no file until woken.
        self._checkpointer = WalCheckpointer(
            self.path,
            synchronous=synchronous,
            start_pages=checkpoint_pages,
            restart_pages=wal_restart_pages,
        )
        self._lock = FileLock(self.path + ".lock", database=self.path)
        conn: sqlite3.Connection | None = None
        try:
            conn = self._conn = self._open(synchronous, wal_restart_pages * WAL_FRAME_BYTES)
            self._revision, self._compacted = self._load()
        except BaseException:
            if conn is not None:
                conn.close()
            self._lock.release()
            raise
        self._hub = WatchHub(min(history_limit, memory_history))
        self._hub.reset(self._revision)

    # --- Store protocol ---------------------------------------------------------------------

    def current_revision(self) -> int:
        """The revision of the newest write (recovered from the log at open)."""
        return self._revision

    def get(self, key: ObjectKey) -> ApiObject:
        """Return the object at ``key``."""
        self._check_usable()
        return self._objects.get(key)

    def list(self, prefix: KeyPrefix) -> tuple[list[ApiObject], int]:
        """Return the objects under ``prefix`` sorted by (namespace, name)."""
        self._check_usable()
        return self._objects.list(prefix), self._revision

    def count(self, resource: str) -> int:
        """How many objects of ``resource`` are stored (from the in-memory index)."""
        self._check_usable()
        return self._objects.count(resource)

    def generation(self, resource: str) -> int:
        """How many times ``resource``'s objects changed since the store opened."""
        return self._objects.generation(resource)

    def create(self, key: ObjectKey, obj: ApiObject) -> ApiObject:
        """Store a new object at the next revision."""
        self._check_usable()
        if key in self._objects:
            raise KeyExistsError(str(key))
        return self._write(EventType.ADDED, key, obj, 0)

    def update(self, key: ObjectKey, obj: ApiObject, *, expected_revision: int | None) -> ApiObject:
        """Replace the object, optionally only if it is still at ``expected_revision``."""
        self._check_usable()
        current = self._objects.get(key)
        check_revision(key, current, expected_revision)
        return self._write(EventType.MODIFIED, key, obj, object_revision(current))

    def delete(self, key: ObjectKey, *, expected_revision: int | None = None) -> ApiObject:
        """Remove the object; return its last state at the deletion revision."""
        self._check_usable()
        current = self._objects.get(key)
        check_revision(key, current, expected_revision)
        return self._write(EventType.DELETED, key, current, object_revision(current))

    def watch(self, prefix: KeyPrefix, since_revision: int) -> QueueWatch:
        """Follow changes under ``prefix`` above ``since_revision``, replaying the log if needed."""
        self._check_usable()
        if since_revision >= self._hub.compacted_through:
            return self._hub.subscribe(prefix, since_revision)
        if since_revision < self._compacted:
            raise RevisionCompactedError(since_revision, self._compacted + 1)
        backlog = self._replay(prefix, since_revision, self._hub.compacted_through)
        return self._hub.subscribe(prefix, since_revision, backlog=backlog)

    def compact(self, revision: int) -> None:
        """Forget history up to ``revision`` (at most the current one) in memory and on disk."""
        self._check_usable()
        revision = min(revision, self._revision)
        if revision > self._compacted:
            self._transaction(lambda: self._compact_log(revision))
            self._compacted = revision
        self._hub.compact(revision)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction for every write made inside (group commit; see *Batches*)."""
        if self._batched is not None:
            yield
            return
        self._check_usable()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StorageFailureError(f"{self.path}: {exc}") from exc
        self._batched = []
        try:
            yield
        except Exception:
            # The writes that returned are whole (a failed one undid its savepoint).
            self._end_batch()
            raise
        except BaseException:
            # Interrupted (KeyboardInterrupt, ...) perhaps between a write's statements
            # and its in-memory step: memory and file may disagree, so keep neither.
            self._batched = None
            self._unusable = "a batch was interrupted"
            self._rollback()
            raise
        self._end_batch()

    def failure(self) -> str | None:
        """Why the store refuses use (a batch that ended so was rolled back), or None."""
        return self._unusable

    def _end_batch(self) -> None:
        pending, self._batched = self._batched or [], None
        if self._unusable is None:
            self._commit()
            for event in pending:
                self._hub.publish(event)
        else:
            self._rollback()

    def close(self) -> None:
        """Close every watch and the database (whose last connection checkpoints the WAL
        into it), then release the file lock."""
        if self._unusable == "closed":
            return
        self._unusable = "closed"
        self._hub.close_all()
        try:
            self._checkpointer.close()
            self._conn.close()
        except sqlite3.Error as exc:
            raise StorageFailureError(f"{self.path}: close: {exc}") from exc
        finally:
            self._lock.release()

    @property
    def checkpointer(self) -> WalCheckpointer:
        """The WAL's checkpoint worker (for tests and figures)."""
        return self._checkpointer

    # --- beyond the protocol ----------------------------------------------------------------

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def compacted_revision(self) -> int:
        """History up to this revision is gone from the log (0: nothing compacted)."""
        return self._compacted

    def verify(self) -> builtins.list[str]:
        """Check the file and the store's invariants; return the problems found (none: ``[]``).

        SQLite's ``integrity_check``, then: every ``current`` row points at a live log row
        of the same key, every DELETED row's previous row exists, no row is newer than the
        current revision, and the in-memory index matches ``current``.
        """
        self._check_usable()
        try:
            problems = [
                f"integrity_check: {row[0]}"
                for row in self._conn.execute("PRAGMA integrity_check")
                if row[0] != "ok"
            ]
            problems += [
                f"current row {r}/{ns}/{n} -> {rev} has no live log row of its key"
                for r, ns, n, rev in self._conn.execute(
                    """SELECT c.resource, c.namespace, c.name, c.revision FROM current AS c
                    LEFT JOIN log AS l ON l.revision = c.revision
                    WHERE l.revision IS NULL OR l.type = 'DELETED' OR l.value IS NULL
                        OR l.resource != c.resource OR l.namespace != c.namespace
                        OR l.name != c.name"""
                )
            ]
            problems += [
                f"DELETED row {rev} lost its previous row {prev}"
                for rev, prev in self._conn.execute(
                    """SELECT l.revision, l.prev_revision FROM log AS l
                    LEFT JOIN log AS p ON p.revision = l.prev_revision
                    WHERE l.type = 'DELETED' AND p.revision IS NULL"""
                )
            ]
            (newest,) = self._conn.execute("SELECT COALESCE(MAX(revision), 0) FROM log").fetchone()
            on_disk = {
                ObjectKey(r, ns, n): rev
                for r, ns, n, rev in self._conn.execute("SELECT * FROM current")
            }
        except sqlite3.Error as exc:
            raise StorageFailureError(f"{self.path}: verify: {exc}") from exc
        if newest > self._revision:
            problems.append(f"log row {newest} is newer than revision {self._revision}")
        in_memory = {key: object_revision(obj) for key, obj in self._objects.items()}
        if in_memory != on_disk:
            problems.append("the in-memory index differs from the current table")
        return problems

    # --- internals --------------------------------------------------------------------------

    def _open(self, synchronous: str, wal_limit_bytes: int) -> sqlite3.Connection:
        try:
            # isolation_level=None: no implicit transactions; every write BEGINs explicitly.
            # timeout: only the checkpoint worker's RESTART ever holds the write lock.
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=_WRITER_BUSY_TIMEOUT_S)
        except sqlite3.Error as exc:
            raise StorageFailureError(f"{self.path}: open: {exc}") from exc
        try:
            (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            if mode != "wal":
                raise StorageFailureError(f"{self.path}: cannot use a WAL journal (got {mode!r})")
            conn.execute(f"PRAGMA synchronous = {synchronous}")
            # Checkpoints run on the worker thread, never inside this connection's COMMIT.
            conn.execute("PRAGMA wal_autocheckpoint = 0")
            # When the WAL starts over, its file is cut back to this size.
            conn.execute(f"PRAGMA journal_size_limit = {wal_limit_bytes}")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?), ('compacted', 0)",
                (SCHEMA_VERSION,),
            )
            conn.execute("COMMIT")
            (version,) = conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
        except sqlite3.Error as exc:
            conn.close()
            raise StorageFailureError(f"{self.path}: open: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        if version != SCHEMA_VERSION:
            conn.close()
            raise StorageFailureError(
                f"{self.path}: schema version {version}, this kubeprio reads {SCHEMA_VERSION}"
            )
        return conn

    def _load(self) -> tuple[int, int]:
        """Fill the index from ``current``; return (revision, compacted revision)."""
        try:
            (compacted,) = self._conn.execute(
                "SELECT value FROM meta WHERE key = 'compacted'"
            ).fetchone()
            (newest,) = self._conn.execute("SELECT COALESCE(MAX(revision), 0) FROM log").fetchone()
            rows = self._conn.execute(
                """SELECT c.resource, c.namespace, c.name, l.value FROM current AS c
                JOIN log AS l ON l.revision = c.revision"""
            ).fetchall()
        except sqlite3.Error as exc:
            raise StorageFailureError(f"{self.path}: load: {exc}") from exc
        for resource, namespace, name, value in rows:
            key = ObjectKey(resource, namespace, name)
            self._objects.put(key, self._decode(key, value))
        # Compaction may delete the newest row (a DELETED one); ``compacted`` remembers it.
        return max(int(newest), int(compacted)), int(compacted)

    def _model(self, resource: str) -> type[Any] | None:
        """The model of a resource: a built-in's, or ``CustomObject`` for a custom
        resource (keyed ``<plural>.<group>``; no built-in plural has a dot)."""
        model = self._models.get(resource)
        if model is None and "." in resource:
            return CustomObject
        return model

    def _decode(self, key: ObjectKey, value: str | None) -> ApiObject:
        model = self._model(key.resource)
        if model is None or value is None:
            raise StorageFailureError(f"{self.path}: cannot decode the row of {key}")
        try:
            obj: ApiObject = serialization.from_dict(model, json.loads(value))
        except ValueError as exc:  # json.JSONDecodeError and serialization.DecodeError
            raise StorageFailureError(f"{self.path}: cannot decode {key}: {exc}") from exc
        return obj

    def _replay(self, prefix: KeyPrefix, since: int, until: int) -> builtins.list[StoreEvent]:
        """The log's events under ``prefix`` in (since, until], oldest first."""
        query, params = _REPLAY, [since, until, prefix.resource]
        if prefix.namespace is not None:
            query += " AND l.namespace = ?"
            params.append(prefix.namespace)
        try:
            rows = self._conn.execute(query + " ORDER BY l.revision", params).fetchall()
        except sqlite3.Error as exc:
            raise StorageFailureError(f"{self.path}: replay: {exc}") from exc
        events = []
        for revision, namespace, name, event_type, value in rows:
            key = ObjectKey(prefix.resource, namespace, name)
            obj = self._decode(key, value)
            if event_type == EventType.DELETED:
                obj = with_revision(obj, revision)
            events.append(StoreEvent(EventType(event_type), key, obj, revision))
        return events

    def _write(self, event_type: EventType, key: ObjectKey, obj: ApiObject, prev: int) -> ApiObject:
        model = self._model(key.resource)
        if type(obj) is not model:
            raise StorageFailureError(
                f"cannot store a {type(obj).__name__} under resource {key.resource!r}"
            )
        revision = self._revision + 1
        stored: ApiObject = with_revision(obj, revision)
        value = None if event_type is EventType.DELETED else held_json_bytes(stored).decode()
        compact_to = revision - self._history_limit
        if compact_to - self._compacted < self._compact_step:
            compact_to = 0
        where = (key.resource, key.namespace, key.name)

        def statements() -> None:
            self._conn.execute(_INSERT_LOG, (revision, *where, event_type.value, prev, value))
            if event_type is EventType.ADDED:
                self._conn.execute(_INSERT_CURRENT, (*where, revision))
            else:
                sql = _DELETE_CURRENT if event_type is EventType.DELETED else _UPDATE_CURRENT
                args = (
                    (*where, prev) if event_type is EventType.DELETED else (revision, *where, prev)
                )
                if self._conn.execute(sql, args).rowcount != 1:
                    self._unusable = f"the current table disagrees with memory at {key}"
                    raise sqlite3.IntegrityError(self._unusable)
            if compact_to:
                self._compact_log(compact_to)

        previous = self._objects.get(key) if key in self._objects else None
        # A write that also compacts cannot be undone by deleting its log row alone.
        self._transaction(statements, undo_log_row=None if compact_to else revision)
        # Committed (or, in a batch, part of the batch's commit): from here on the write
        # is acknowledged.
        self._revision = revision
        if compact_to:
            self._compacted = compact_to
        if event_type is EventType.DELETED:
            self._objects.remove(key)
        else:
            self._objects.put(key, stored)
        event = StoreEvent(event_type, key, stored, revision, previous)
        if self._batched is None:
            self._hub.publish(event)
        else:
            self._batched.append(event)
        return stored

    def _compact_log(self, revision: int) -> None:
        """Inside a transaction: apply kine's compaction rule to the rows in (compacted, revision]."""
        self._conn.execute(_COMPACT, {"old": self._compacted, "new": revision})
        self._conn.execute("UPDATE meta SET value = ? WHERE key = 'compacted'", (revision,))

    def _transaction(
        self, statements: Callable[[], None], *, undo_log_row: int | None = None
    ) -> None:
        """Run ``statements`` in one transaction; raise ``StorageFailureError`` if they
        fail, leaving the database as it was. Inside a batch they join the batch's
        transaction: when they are a write's two statements whose failure is undone by
        deleting the log row ``undo_log_row``, without a savepoint (cheaper, see
        *Batches*), otherwise as a savepoint."""
        conn = self._conn
        if self._batched is not None:
            if undo_log_row is None:
                self._savepoint(statements)
            else:
                self._batched_write(statements, undo_log_row)
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            statements()
        except sqlite3.Error as exc:
            self._rollback()
            raise StorageFailureError(f"{self.path}: {exc}") from exc
        self._commit()

    def _savepoint(self, statements: Callable[[], None]) -> None:
        """Inside a batch: ``statements`` as a savepoint, undone alone if they fail."""
        conn = self._conn
        try:
            conn.execute("SAVEPOINT write")
            statements()
            conn.execute("RELEASE write")
        except BaseException as exc:
            try:
                conn.execute("ROLLBACK TO write")
                conn.execute("RELEASE write")
            except sqlite3.Error as undo:
                self._unusable = f"ROLLBACK TO SAVEPOINT failed: {undo}"
            if isinstance(exc, sqlite3.Error):
                raise StorageFailureError(f"{self.path}: {exc}") from exc
            raise

    def _batched_write(self, statements: Callable[[], None], revision: int) -> None:
        """Inside a batch: ``statements`` (a write's log row, then its ``current`` change)
        without a savepoint. A failed statement undoes itself (SQLite's statement
        atomicity); if the second one fails, the first one's log row is deleted. If the
        failure ended the whole transaction (SQLite may roll back on a full disk or an I/O
        error) or the undo fails, the store refuses use, as a failed ROLLBACK TO does."""
        try:
            statements()
        except Exception as exc:
            try:
                if not self._conn.in_transaction:
                    self._unusable = f"a failed write ended the batch's transaction: {exc}"
                else:
                    self._conn.execute(_UNDO_LOG_ROW, (revision,))
            except sqlite3.Error as undo:
                self._unusable = f"undoing a failed write failed: {undo}"
            if isinstance(exc, sqlite3.Error):
                raise StorageFailureError(f"{self.path}: {exc}") from exc
            raise

    def _commit(self) -> None:
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            # The frames may or may not have reached the WAL: the outcome is unknown.
            self._unusable = f"COMMIT failed: {exc}"
            self._rollback()
            raise StorageFailureError(f"{self.path}: {exc}") from exc
        self._checkpointer.after_commit()

    def _rollback(self) -> None:
        try:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.Error as exc:
            self._unusable = f"ROLLBACK failed: {exc}"

    def _check_usable(self) -> None:
        if self._unusable is not None:
            raise StorageFailureError(
                f"{self.path}: the store is unusable ({self._unusable}); reopen it"
            )
