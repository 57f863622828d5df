"""``serve.compaction.PeriodicCompaction``: kube-apiserver's ``--etcd-compaction-interval``.

Upstream's compactor (``apiserver/pkg/storage/etcd3/compact.go``) compacts, at each tick,
to the revision it saw at the tick before: history one interval old survives, older
history is gone and a watch from it is ``RevisionCompactedError`` (410 Expired).
"""

from __future__ import annotations

import pytest

from kubeprio.api.configmap import ConfigMap
from kubeprio.api.meta import ObjectMeta
from kubeprio.serve.compaction import PeriodicCompaction
from kubeprio.store.errors import RevisionCompactedError
from kubeprio.store.interface import KeyPrefix, ObjectKey
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock


def _write(store: MemoryStore, name: str) -> int:
    store.create(
        ObjectKey("configmaps", "default", name),
        ConfigMap(metadata=ObjectMeta(name=name, namespace="default")),
    )
    return store.current_revision()


def test_each_tick_compacts_to_the_revision_of_the_tick_before(clock: ManualClock) -> None:
    store = MemoryStore()
    first = _write(store, "a")
    compaction = PeriodicCompaction(store, clock=clock, interval=10)
    assert compaction.next_wakeup() == clock.now() + 10
    assert compaction.run_once() is False  # not due yet
    second = _write(store, "b")
    clock.advance(10)
    assert compaction.run_once() is True
    assert compaction.compacted_through == first  # what the start saw
    store.watch(KeyPrefix("configmaps", None), first).close()  # from `first` on: still there
    with pytest.raises(RevisionCompactedError):
        store.watch(KeyPrefix("configmaps", None), first - 1)
    _write(store, "c")
    clock.advance(10)
    assert compaction.run_once() is True
    assert compaction.compacted_through == second
    with pytest.raises(RevisionCompactedError):
        store.watch(KeyPrefix("configmaps", None), first)


def test_the_interval_must_be_positive(clock: ManualClock) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        PeriodicCompaction(MemoryStore(), clock=clock, interval=0)
