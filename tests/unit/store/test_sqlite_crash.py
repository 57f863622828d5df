"""``kill -9`` at a random moment loses no acknowledged write and never corrupts the store.

Issue 5 ("Storage"): state survives restarts and ``kill -9`` at any point. A subprocess
(``sqlite_crash_writer.py``) writes through ``SqliteStore`` and prints each write the
store acknowledged; the test SIGKILLs it after a random number of acknowledgements
(so mid-transaction, mid-checkpoint or between writes), reopens the file and checks:

* SQLite's integrity check and the store's own invariants pass (``verify``);
* the revision is the last acknowledged one, or one more (the write in flight when
  the signal landed may have committed without being acknowledged);
* every object is exactly as its last acknowledged write left it, except at most the
  one key that in-flight write touched;
* the store takes new writes at the next revision.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kubeprio.store.interface import KeyPrefix, ObjectKey, object_revision
from kubeprio.store.sqlite import SqliteStore
from tests.builders import pod

WRITER = Path(__file__).with_name("sqlite_crash_writer.py")


def _run_and_kill(
    path: Path, seed: int, acks_before_kill: int, *writer_args: str
) -> list[tuple[str, str, int, int]]:
    """Start the writer, SIGKILL it after ``acks_before_kill`` acks; return every ack it printed."""
    log = path.with_suffix(".stderr")
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(WRITER), str(path), str(seed), *writer_args],
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    assert process.stdout is not None
    lines = []
    for _ in range(acks_before_kill):
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
    process.send_signal(signal.SIGKILL)
    # With stdout as the only pipe, communicate() reads through readline()'s buffer.
    rest, _ = process.communicate()
    assert process.returncode == -signal.SIGKILL, log.read_text()
    # A line cut short by the kill was never fully printed: not an acknowledgement we saw.
    lines += [line + b"\n" for line in rest.split(b"\n")[:-1]]
    acks = []
    for line in lines:
        op, name, step, revision = line.decode().split()
        acks.append((op, name, int(step), int(revision)))
    return acks


State = dict[str, tuple[int, int]]  # name -> (label "step", revision)


def _state(store: SqliteStore) -> State:
    items, _ = store.list(KeyPrefix("pods", "default"))
    return {
        obj.metadata.name: (int(obj.metadata.labels["step"]), object_revision(obj)) for obj in items
    }


def _check_recovery(
    path: Path, acks: list[tuple[str, str, int, int]], *, before: State | None = None
) -> State:
    """Reopen after a kill; check it against the acks applied to ``before``; return the state."""
    expected = dict(before or {})
    first_revision = max((rev for _, rev in expected.values()), default=0) + 1
    for op, name, step, revision in acks:
        if op == "delete":
            del expected[name]
        else:
            expected[name] = (step, revision)
    last_acked = acks[-1][3] if acks else first_revision - 1
    assert [a[3] for a in acks] == list(range(first_revision, last_acked + 1))
    with SqliteStore(path) as store:
        assert store.verify() == []
        revision = store.current_revision()
        assert revision in (last_acked, last_acked + 1)
        actual = _state(store)
        differing = {
            name
            for name in expected.keys() | actual.keys()
            if expected.get(name) != actual.get(name)
        }
        if revision == last_acked:
            assert differing == set()
        else:  # the in-flight write committed: it touched one key, at the next revision
            assert len(differing) <= 1
            for name in differing:
                assert actual.get(name, (0, revision))[1] == revision
        after = store.create(
            ObjectKey("pods", "default", f"after-{revision}"),
            pod(f"after-{revision}").labels(step="0").build(),
        )
        assert object_revision(after) == revision + 1
        assert store.verify() == []
        return _state(store)


def _crash_and_check(tmp_path: Path, seed: int, acks_before_kill: int) -> None:
    path = tmp_path / f"crash-{seed}.db"
    _check_recovery(path, _run_and_kill(path, seed, acks_before_kill))


@pytest.mark.parametrize(
    ("seed", "acks_before_kill"),
    [(1, 0), (2, 1), (3, 120), (4, 700), (5, 2_000)],
    ids=["while-starting", "after-the-first-write", "early", "mid", "late"],
)
def test_kill_9_loses_no_acknowledged_write(
    tmp_path: Path, seed: int, acks_before_kill: int
) -> None:
    _crash_and_check(tmp_path, seed, acks_before_kill)


def test_kill_9_again_after_recovery(tmp_path: Path) -> None:
    """A recovered file is killed again: both runs' acknowledged writes are there."""
    path = tmp_path / "twice.db"
    state = _check_recovery(path, _run_and_kill(path, 11, 400))
    _check_recovery(path, _run_and_kill(path, 12, 400), before=state)


@pytest.mark.parametrize("acks_before_kill", [300, 1_500])
def test_kill_9_while_the_checkpoint_worker_runs(tmp_path: Path, acks_before_kill: int) -> None:
    """Checkpoints every 10 WAL pages and a RESTART every 80 (store.walcheckpoint), on
    the worker thread while the writer goes on: a kill lands during one often."""
    path = tmp_path / "checkpointing.db"
    _check_recovery(path, _run_and_kill(path, 21, acks_before_kill, "10"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 160), ids=lambda s: f"seed-{s}")
def test_kill_9_loses_no_acknowledged_write_at_random_moments(tmp_path: Path, seed: int) -> None:
    _crash_and_check(tmp_path, seed, random.Random(seed).randint(0, 3_000))
