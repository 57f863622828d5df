"""Watch fan-out with bounded history, shared by every store back-end.

The back-end calls ``publish`` after each committed write; ``subscribe`` replays the
retained events above a revision and then delivers new ones to the watcher's queue.
History is a bounded deque: once an event falls out, watches from before it raise
``RevisionCompactedError`` (HTTP 410 Gone), and clients relist, as with etcd compaction.

Watchers are plain queues drained with ``poll``; a listener callback lets an asyncio
server wake the request that streams them. No threads, no clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from kubeprio.store.errors import RevisionCompactedError
from kubeprio.store.interface import KeyPrefix, StoreEvent

DEFAULT_HISTORY_LIMIT = 200_000


class QueueWatch:
    """A watcher: the events under one prefix, queued until polled."""

    def __init__(self, hub: WatchHub, prefix: KeyPrefix, since_revision: int) -> None:
        self._hub = hub
        self.prefix = prefix
        self.since_revision = since_revision
        self._pending: deque[StoreEvent] = deque()
        self._listener: Callable[[], None] | None = None
        self._closed = False

    def deliver(self, event: StoreEvent) -> None:
        """Queue ``event`` (called by the hub) and wake the listener."""
        if event.revision <= self.since_revision:
            return
        self._pending.append(event)
        if self._listener is not None:
            self._listener()

    def poll(self) -> list[StoreEvent]:
        """Return and forget the pending events, oldest first."""
        events = list(self._pending)
        self._pending.clear()
        return events

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` whenever an event is queued (and now, if some are pending)."""
        self._listener = listener
        if listener is not None and self._pending:
            listener()

    def close(self) -> None:
        """Unsubscribe; pending events stay readable."""
        if not self._closed:
            self._closed = True
            self._hub.unsubscribe(self)
            if self._listener is not None:
                self._listener()

    @property
    def closed(self) -> bool:
        """Whether the watch has been closed."""
        return self._closed


class WatchHub:
    """Bounded event history plus the live watchers, indexed by resource."""

    def __init__(self, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be positive")
        self._history: deque[StoreEvent] = deque(maxlen=history_limit)
        self._watchers: dict[str, list[QueueWatch]] = {}
        self._compacted_through = 0

    @property
    def compacted_through(self) -> int:
        """Revisions up to this one can no longer be replayed."""
        return self._compacted_through

    def reset(self, revision: int) -> None:
        """Start with no replayable history before ``revision`` (a store reopened from disk)."""
        self._history.clear()
        self._compacted_through = revision

    def publish(self, event: StoreEvent) -> None:
        """Record a committed event and deliver it to matching watchers."""
        if self._history.maxlen is not None and len(self._history) == self._history.maxlen:
            self._compacted_through = self._history[0].revision
        self._history.append(event)
        for watcher in self._watchers.get(event.key.resource, ()):
            if watcher.prefix.contains(event.key):
                watcher.deliver(event)

    def subscribe(
        self,
        prefix: KeyPrefix,
        since_revision: int,
        *,
        backlog: Iterable[StoreEvent] | None = None,
    ) -> QueueWatch:
        """Start a watcher; replay retained events above ``since_revision`` first.

        A back-end that keeps older history elsewhere (``SqliteStore``'s log table) passes
        it as ``backlog``: the events under ``prefix`` from ``since_revision`` up to
        ``compacted_through``, oldest first; they are replayed before the retained ones.
        """
        if backlog is None and since_revision < self._compacted_through:
            oldest = self._history[0].revision if self._history else self._compacted_through + 1
            raise RevisionCompactedError(since_revision, oldest)
        watcher = QueueWatch(self, prefix, since_revision)
        for event in backlog or ():
            if event.revision <= self._compacted_through and prefix.contains(event.key):
                watcher.deliver(event)
        for event in self._history:
            if event.revision > since_revision and prefix.contains(event.key):
                watcher.deliver(event)
        self._watchers.setdefault(prefix.resource, []).append(watcher)
        return watcher

    def unsubscribe(self, watcher: QueueWatch) -> None:
        """Remove a watcher."""
        watchers = self._watchers.get(watcher.prefix.resource)
        if watchers and watcher in watchers:
            watchers.remove(watcher)

    def compact(self, revision: int) -> None:
        """Drop history up to and including ``revision``."""
        while self._history and self._history[0].revision <= revision:
            self._history.popleft()
        self._compacted_through = max(self._compacted_through, revision)

    def close_all(self) -> None:
        """Close every watcher (store shutdown)."""
        for watchers in list(self._watchers.values()):
            for watcher in list(watchers):
                watcher.close()
