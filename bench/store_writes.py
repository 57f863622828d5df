"""Per-write cost of each Store back-end: create, CAS update (a bind), delete.

Run: ``python -m bench.store_writes [--count N]``. Prints wall-clock and CPU
microseconds per operation for the memory store, SQLite (``synchronous=NORMAL``, the
default) and SQLite with ``fsync_each_commit`` (``synchronous=FULL``). CPU time is the
steadier figure on a shared machine; the wall-clock figure includes fsync waits.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kubeprio.api.core import Container, Pod, PodSpec, ResourceRequirements
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.quantity import parse_quantity
from kubeprio.store.interface import ObjectKey, Store, object_revision
from kubeprio.store.memory import MemoryStore
from kubeprio.store.sqlite import SqliteStore


def _pod(name: str) -> Pod:
    requests = {"cpu": parse_quantity("500m"), "memory": parse_quantity("1Gi")}
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", labels={"app": "web"}),
        spec=PodSpec(
            containers=(
                Container(
                    name="c", image="busybox", resources=ResourceRequirements(requests=requests)
                ),
            ),
            priority=1000,
            priority_class_name="high",
        ),
    )


def _measure(store: Store, count: int) -> dict[str, tuple[float, float]]:
    keys = [ObjectKey("pods", "default", f"p{i}") for i in range(count)]
    pods = [_pod(key.name) for key in keys]
    results: dict[str, tuple[float, float]] = {}

    def timed(name: str, action: Callable[[], None]) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        results[name] = (
            (time.perf_counter() - wall) / count * 1e6,
            (time.process_time() - cpu) / count * 1e6,
        )

    def create() -> None:
        for key, obj in zip(keys, pods, strict=True):
            store.create(key, obj)

    def bind() -> None:
        for key in keys:
            current = store.get(key)
            assert isinstance(current, Pod)
            assert current.spec is not None
            bound = dataclasses.replace(
                current, spec=dataclasses.replace(current.spec, node_name="node-1")
            )
            store.update(key, bound, expected_revision=object_revision(current))

    def delete() -> None:
        for key in keys:
            store.delete(key)

    timed("create", create)
    timed("bind (get + CAS update)", bind)
    timed("delete", delete)
    return results


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=5_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        backends: dict[str, Callable[[], Store]] = {
            "memory": MemoryStore,
            "sqlite": lambda: SqliteStore(Path(tmp) / "normal.db"),
            "sqlite fsync": lambda: SqliteStore(Path(tmp) / "full.db", fsync_each_commit=True),
        }
        print(f"{'back-end':14} {'operation':26} {'wall µs':>9} {'cpu µs':>9}")
        for name, make in backends.items():
            store = make()
            for operation, (wall, cpu) in _measure(store, args.count).items():
                print(f"{name:14} {operation:26} {wall:9.1f} {cpu:9.1f}")
            store.close()


if __name__ == "__main__":
    main()
