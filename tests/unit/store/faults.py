"""Failures injected into a SQLite store's file: a trigger that makes SQLite refuse the
rows of one object name, the way a full disk or an I/O error would fail a statement."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kubeprio.store.sqlite import SqliteStore

FAILING_NAME = "boom"
"""The object name whose rows the trigger refuses."""


def refuse_rows_of_boom(path: Path, *, table: str = "log", action: str = "ABORT") -> None:
    """Create the store at ``path`` and make every insert into ``table`` (``log``: a
    write's first statement; ``current``: its second) of the name ``boom`` fail with
    ``action`` (ABORT: the statement is undone; ROLLBACK: SQLite ends the whole
    transaction, as it may on a full disk)."""
    SqliteStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            f"CREATE TRIGGER boom BEFORE INSERT ON {table} WHEN NEW.name = '{FAILING_NAME}' "
            f"BEGIN SELECT RAISE({action}, 'injected failure'); END"
        )
    conn.close()
