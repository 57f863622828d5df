"""Subprocess for ``test_sqlite_crash``: write through a SqliteStore until killed.

Usage: ``python sqlite_crash_writer.py DB SEED [CHECKPOINT_PAGES]`` (the store's
``checkpoint_pages``, and eight times that as ``wal_restart_pages``: small values make
the checkpoint worker run, RESTARTs included, all through the run). Performs a seeded random sequence of
creates (new names only), unconditional updates and deletes (a deleted name is never
used again), and after each acknowledged write prints ``OP NAME STEP REVISION`` and
flushes, so every printed line is a write the store returned. The object's label
``step`` is the step that wrote it. Runs until the parent kills it.
"""

from __future__ import annotations

import random
import sys

from kubeprio.api.core import Container, Pod, PodSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.store.interface import ObjectKey, object_revision
from kubeprio.store.sqlite import SqliteStore


def make_pod(name: str, step: int, rng: random.Random) -> Pod:
    # Some pods are large, so a transaction spans several pages and WAL frames.
    padding = "x" * rng.choice((0, 10, 200, 3_000, 20_000))
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace="default",
            labels={"step": str(step)},
            annotations={"padding": padding},
        ),
        spec=PodSpec(containers=(Container(name="c", image="busybox"),)),
    )


def main() -> None:
    path, seed = sys.argv[1], int(sys.argv[2])
    rng = random.Random(seed)
    pages = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000
    store = SqliteStore(
        path,
        history_limit=rng.choice((50, 1_000, 200_000)),
        checkpoint_pages=pages,
        wal_restart_pages=8 * pages,
    )
    live: list[str] = []
    step = 0
    while True:
        step += 1
        choice = rng.random()
        if not live or choice < 0.4:
            name = f"p{seed}-{step}"
            stored = store.create(ObjectKey("pods", "default", name), make_pod(name, step, rng))
            live.append(name)
            op = "create"
        elif choice < 0.85:
            name = rng.choice(live)
            stored = store.update(
                ObjectKey("pods", "default", name),
                make_pod(name, step, rng),
                expected_revision=None,
            )
            op = "update"
        else:
            name = live.pop(rng.randrange(len(live)))
            stored = store.delete(ObjectKey("pods", "default", name))
            op = "delete"
        sys.stdout.write(f"{op} {name} {step} {object_revision(stored)}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
