"""Event expiry (kube-apiserver ``--event-ttl``): a lease renewed by every write.

Upstream: ``pkg/registry/core/event/storage/storage.go`` gives every create and update of
an Event the TTL (``TTLFunc`` returns ``ttl`` whatever the operation), and etcd deletes
the key when the lease runs out, which watchers see as a deletion. Checked on both store
back-ends.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.core import Event, Pod
from kubeprio.apiserver.eventttl import EventExpiry
from kubeprio.apiserver.service import ApiService
from kubeprio.client.eventcorrelator import EventCorrelator
from kubeprio.client.record import EventRecorder
from kubeprio.clock import rfc3339
from kubeprio.store.interface import EventType, KeyPrefix, Store
from kubeprio.store.memory import MemoryStore
from kubeprio.store.sqlite import SqliteStore
from tests.builders import pod
from tests.conftest import ManualClock

TTL = 3600.0


@pytest.fixture(params=["memory", "sqlite"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    store: Store = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "db")
    yield store
    store.close()


def _setup(store: Store, clock: ManualClock) -> tuple[ApiService, EventExpiry, EventRecorder]:
    api = ApiService(store, clock=clock, rng=random.Random(3), admission=AdmissionChain())
    expiry = EventExpiry(store, clock=clock, ttl=TTL)
    expiry.start()
    return api, expiry, EventRecorder(api, clock=clock, component="kubelet")


def _settle(expiry: EventExpiry) -> None:
    expiry.pump()
    expiry.run_once()


def _names(api: ApiService) -> list[str]:
    return sorted(e.reason or "" for e in api.list(Event).items)


def test_an_event_is_deleted_one_ttl_after_it_was_written(
    backend: Store, clock: ManualClock
) -> None:
    api, expiry, recorder = _setup(backend, clock)
    target = api.create(pod("web").build())
    watch = backend.watch(KeyPrefix("events"), backend.current_revision())
    recorder.event(target, "Normal", "Pulled", "image present")
    _settle(expiry)
    assert expiry.next_wakeup() == clock.now() + TTL
    clock.advance(TTL - 1)
    _settle(expiry)
    assert _names(api) == ["Pulled"]
    clock.advance(1)
    assert expiry.run_once()
    assert _names(api) == []
    assert [change.type for change in watch.poll()] == [EventType.ADDED, EventType.DELETED]
    assert api.get(Pod, "web", "default") is not None  # only Events expire
    assert expiry.expired == 1
    assert expiry.next_wakeup() is None


def test_every_write_renews_the_lease(backend: Store, clock: ManualClock) -> None:
    """A repeated event (count bumped by a PATCH) lives one TTL after the repeat."""
    api, expiry, recorder = _setup(backend, clock)
    target = api.create(pod("web").build())
    recorder.event(target, "Warning", "BackOff", "restarting")
    _settle(expiry)
    clock.advance(1800)
    recorder.event(target, "Warning", "BackOff", "restarting")
    _settle(expiry)
    clock.advance(1800)
    _settle(expiry)  # the first write's lease ran out; the second holds
    (event,) = api.list(Event).items
    assert event.count == 2
    clock.advance(1800)
    _settle(expiry)
    assert api.list(Event).items == []


def test_after_a_restart_events_expire_one_ttl_after_their_last_timestamp(
    backend: Store, clock: ManualClock
) -> None:
    api, expiry, recorder = _setup(backend, clock)
    target = api.create(pod("web").build())
    recorder.event(target, "Normal", "Old", "written an hour before the restart")
    clock.advance(TTL / 2)
    recorder.event(target, "Normal", "Recent", "written at the restart")
    expiry.stop()
    restarted = EventExpiry(backend, clock=clock, ttl=TTL)
    restarted.start()
    assert restarted.next_wakeup() == clock.now() - TTL / 2 + TTL
    clock.advance(TTL / 2)
    _settle(restarted)
    assert _names(api) == ["Recent"]
    assert rfc3339(clock.now() - TTL / 2) == api.list(Event).items[0].last_timestamp


def test_the_ttl_must_be_positive(clock: ManualClock) -> None:
    with pytest.raises(ValueError, match="positive"):
        EventExpiry(MemoryStore(), clock=clock, ttl=0)


def test_repeated_writes_keep_one_pending_expiry_per_event(
    backend: Store, clock: ManualClock
) -> None:
    """A FailedScheduling event bumped every few seconds for an hour must not pile up
    one expiry per write (etcd reuses leases too)."""
    api, expiry, _ = _setup(backend, clock)
    # Every repeat written: client-go's spam filter would let only 25 and a refill through
    # (tests/unit/client/test_eventcorrelator.py checks that).
    recorder = EventRecorder(
        api, clock=clock, component="kubelet", correlator=EventCorrelator(burst=200)
    )
    target = api.create(pod("web").build())
    for _ in range(200):
        recorder.event(target, "Warning", "FailedScheduling", "0/1 nodes are available")
        _settle(expiry)
        clock.advance(10)
    assert len(expiry._heap) == 1
    (event,) = api.list(Event).items
    assert event.count == 200
    clock.advance(TTL)
    _settle(expiry)
    _settle(expiry)
    assert api.list(Event).items == []
