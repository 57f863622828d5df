"""The API service adds garbage-collection finalizers only for ``COLLECTED_OWNER_KINDS``;
the control plane's collector must watch every one of them as an owner, or an owner
deleted with ``Orphan``/``Foreground`` would keep its finalizer for ever."""

from __future__ import annotations

from kubeprio.api.gcpolicy import COLLECTED_OWNER_KINDS
from kubeprio.controllers.garbagecollector import GarbageCollector
from kubeprio.sim.controlplane import ControlPlane
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock


def test_the_collector_watches_every_kind_the_api_marks(clock: ManualClock) -> None:
    plane = ControlPlane(MemoryStore(), clock=clock, seed=1)
    (collector,) = [c for c in plane.controllers if isinstance(c, GarbageCollector)]
    assert set(collector.owner_kinds) >= COLLECTED_OWNER_KINDS
