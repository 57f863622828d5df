"""Watches as the API serves them: a store watch translated into API watch events.

``ServiceWatch`` wraps a ``store.interface.StoreWatch`` for ``ApiService.watch``: it
puts the objects listed at the start first (as ADDED), and filters by label and field
selectors comparing each object before and after the change, as upstream's watch
cache does (``cacheWatcher.convertToWatchEvent``). Non-blocking: drained with
``poll``. No threads, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubeprio.api.meta import ApiObject
from kubeprio.client.protocol import WatchEvent, WatchEventType
from kubeprio.store.interface import EventType, StoreWatch, object_revision

ObjectFilter = Callable[[ApiObject], bool]

_API_TYPE: dict[EventType, WatchEventType] = {
    kind: WatchEventType(kind.value) for kind in EventType
}
"""A store event's type as the API's (a look-up: ``WatchEventType(value)`` goes through
the enum's value search, once for each event each watch delivers)."""


class ServiceWatch:
    """A ``client.protocol.Watch`` over a store watch, with selector filtering.

    Filtering looks at the object before and after each change, as upstream's watch
    cache does (``cacheWatcher.convertToWatchEvent``): an object that starts matching
    is reported ADDED, one that stops matching DELETED (with its new state), one that
    matches before and after MODIFIED, and a deletion of a matching object DELETED.
    """

    def __init__(
        self,
        store_watch: StoreWatch,
        initial: Sequence[ApiObject],
        matches: ObjectFilter | None,
    ) -> None:
        self._watch = store_watch
        self._matches = matches
        self._initial: list[WatchEvent[Any]] = [
            WatchEvent(WatchEventType.ADDED, obj, object_revision(obj)) for obj in initial
        ]

    def poll(self) -> list[WatchEvent[Any]]:
        """Drain pending events, filtered and translated."""
        out = self._initial
        self._initial = []
        for event in self._watch.poll():
            translated = self._translate(event.type, event.object, event.previous, event.revision)
            if translated is not None:
                out.append(translated)
        return out

    def _translate(
        self, kind: EventType, obj: ApiObject, previous: ApiObject | None, revision: int
    ) -> WatchEvent[Any] | None:
        matches = self._matches
        if matches is None:
            return WatchEvent(_API_TYPE[kind], obj, revision)
        if kind is EventType.DELETED:
            was = matches(previous if previous is not None else obj)
            return WatchEvent(WatchEventType.DELETED, obj, revision) if was else None
        now_matches = matches(obj)
        was = previous is not None and matches(previous)
        if now_matches and not was:
            return WatchEvent(WatchEventType.ADDED, obj, revision)
        if was and not now_matches:
            return WatchEvent(WatchEventType.DELETED, obj, revision)
        if now_matches:
            return WatchEvent(WatchEventType.MODIFIED, obj, revision)
        return None

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Wake ``listener`` when events arrive."""
        self._watch.set_listener(listener)
        if listener is not None and self._initial:
            listener()

    @property
    def notifies(self) -> bool:
        """The store's watch calls its listener for every event and on close."""
        return True

    def close(self) -> None:
        """Stop the watch."""
        self._watch.close()

    @property
    def closed(self) -> bool:
        """Whether the underlying watch ended."""
        return self._watch.closed
