"""Periodic compaction of the store's watch history (kube-apiserver ``--etcd-compaction-interval``).

Upstream's compactor (``apiserver/pkg/storage/etcd3/compact.go``) wakes every interval and
compacts etcd up to the revision it saw on its previous wake, so history older than one
or two intervals is gone and a watch started from such a resourceVersion ends with a 410
``Expired`` ERROR event (clients relist). kubeprio's store history is also its watch
cache, so the flag is off unless given (upstream defaults to 5m, but there the watch cache
keeps serving recent resourceVersions after etcd compacts); ``kubeprio serve
--etcd-compaction-interval 10s`` turns it on, for example to exercise a client's
relist-on-410 path. Who drives it: ``serve.server`` adds it to the real-time driver.
"""

from __future__ import annotations

from kubeprio.clock import Clock
from kubeprio.sim.engine import TimedOnly
from kubeprio.store.interface import Store


class PeriodicCompaction(TimedOnly):
    """Every ``interval`` seconds: compact to the revision seen at the previous tick."""

    def __init__(self, store: Store, *, clock: Clock, interval: float) -> None:
        if interval <= 0:
            raise ValueError("the compaction interval must be positive")
        self._store = store
        self._clock = clock
        self.interval = interval
        self._due = clock.now() + interval
        self._previous_revision = store.current_revision()
        self.compacted_through = 0

    def run_once(self) -> bool:
        """Compact if a tick is due; False if it is not."""
        now = self._clock.now()
        if now < self._due:
            return False
        if self._previous_revision > self.compacted_through:
            self._store.compact(self._previous_revision)
            self.compacted_through = self._previous_revision
        self._previous_revision = self._store.current_revision()
        self._due = now + self.interval
        return True

    def next_wakeup(self) -> float | None:
        """The next tick."""
        return self._due
