"""Event expiry: an Event disappears ``ttl`` after its last write, as with ``--event-ttl``.

kube-apiserver stores every Event with an etcd lease of ``--event-ttl`` (default one
hour) renewed by each create and update (the events registry's ``TTLFunc``); when the
lease runs out etcd deletes the key and watchers see the deletion. ``EventExpiry`` does
the same over a ``Store``: it follows the ``events`` prefix, keeps a heap of (expiry,
key, revision) with one entry per write, and deletes an Event at its expiry only if it
was not written again since (the store's revision check; a stale entry is skipped).

Driven like the other components (``pump``/``run_once``/``next_wakeup``); ``kubeprio
serve`` runs it. When it starts over a store that already holds Events (a restart), an
Event's last write is taken from its series' ``lastObservedTime`` (else ``lastTimestamp``, else ``eventTime``, else its
``creationTimestamp``), since leases are not stored here. The heap holds at most one
entry per Event (a rewrite moves its expiry in a map; an entry that comes up early is
pushed back), so repeated events cost no memory. A delete the store refuses is retried a
second later. Time comes from the injected clock; no threads.
"""

from __future__ import annotations

import heapq
from typing import Final

from kubeprio.api.core import Event
from kubeprio.clock import Clock, parse_rfc3339
from kubeprio.store.errors import KeyNotFoundError, RevisionConflictError, StorageFailureError
from kubeprio.store.interface import (
    EventType,
    KeyPrefix,
    ObjectKey,
    Store,
    StoreWatch,
    object_revision,
)

DEFAULT_EVENT_TTL: Final = 3600.0
"""kube-apiserver's ``--event-ttl`` default: one hour."""

EVENTS: Final = "events"
RETRY_DELAY: Final = 1.0
"""Seconds before retrying a delete the store refused."""


def _last_write(event: Event) -> float | None:
    for stamp in (
        event.series.last_observed_time if event.series else None,
        event.last_timestamp,
        event.event_time,
        event.metadata.creation_timestamp,
    ):
        if stamp:
            try:
                return parse_rfc3339(stamp)
            except ValueError:
                continue
    return None


class EventExpiry:
    """Deletes Events ``ttl`` seconds after their last write."""

    def __init__(self, store: Store, *, clock: Clock, ttl: float = DEFAULT_EVENT_TTL) -> None:
        if ttl <= 0:
            raise ValueError("the event TTL must be positive")
        self._store = store
        self._clock = clock
        self.ttl = ttl
        self._leases: dict[ObjectKey, tuple[float, int]] = {}
        """Event -> (expiry, revision of its last write)."""
        self._heap: list[tuple[float, ObjectKey]] = []
        self._in_heap: set[ObjectKey] = set()
        self._watch: StoreWatch | None = None
        self.expired = 0

    def start(self) -> None:
        """Schedule the Events already stored and follow new writes."""
        stored, revision = self._store.list(KeyPrefix(EVENTS))
        now = self._clock.now()
        for obj in stored:
            if not isinstance(obj, Event):
                continue
            written = _last_write(obj)
            self._lease(_key(obj), now if written is None else written + self.ttl, obj)
        self._watch = self._store.watch(KeyPrefix(EVENTS), revision)

    def _lease(self, key: ObjectKey, expires: float, event: Event) -> None:
        self._leases[key] = (expires, object_revision(event))
        self._schedule(key, expires)

    def _schedule(self, key: ObjectKey, when: float) -> None:
        if key not in self._in_heap:
            self._in_heap.add(key)
            heapq.heappush(self._heap, (when, key))

    def pump(self) -> int:
        """Note the writes since the last pump; each renews its Event's lease."""
        if self._watch is None:
            return 0
        changes = self._watch.poll()
        now = self._clock.now()
        for change in changes:
            if change.type is EventType.DELETED:
                self._leases.pop(change.key, None)
            elif isinstance(change.object, Event):
                self._lease(change.key, now + self.ttl, change.object)
        return len(changes)

    def run_once(self) -> bool:
        """Delete the Events whose lease ran out; False if none was due."""
        now = self._clock.now()
        due = False
        while self._heap and self._heap[0][0] <= now:
            _, key = heapq.heappop(self._heap)
            self._in_heap.discard(key)
            due = True
            lease = self._leases.get(key)
            if lease is None:
                continue  # deleted meanwhile
            expires, revision = lease
            if expires > now:
                self._schedule(key, expires)  # written again since: a later expiry
                continue
            try:
                self._store.delete(key, expected_revision=revision)
            except (KeyNotFoundError, RevisionConflictError):
                # Gone, or written again: that write's watch event renews the lease.
                self._leases.pop(key, None)
                continue
            except StorageFailureError:
                self._schedule(key, now + RETRY_DELAY)
                continue
            self._leases.pop(key, None)
            self.expired += 1
        return due

    def next_wakeup(self) -> float | None:
        """When the next lease may run out."""
        return self._heap[0][0] if self._heap else None

    def stop(self) -> None:
        """Stop following writes."""
        if self._watch is not None:
            self._watch.close()


def _key(event: Event) -> ObjectKey:
    meta = event.metadata
    return ObjectKey(EVENTS, meta.namespace or "", meta.name or "")
