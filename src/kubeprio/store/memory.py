"""The in-memory ``Store``: the reference back-end, used by tests and ``kubeprio simulate``.

Objects are immutable models, so the store keeps and hands out the same instances with
no copying; a write replaces the entry with a new instance stamped with the next
revision. Current objects live in an ``ObjectIndex`` (per resource and namespace, so a
list touches only the objects asked for); watch history lives in the ``WatchHub``'s bounded deque.
Nothing survives the process.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager

from kubeprio.api.meta import ApiObject
from kubeprio.store.errors import KeyExistsError
from kubeprio.store.interface import EventType, KeyPrefix, ObjectKey, StoreEvent, with_revision
from kubeprio.store.objects import ObjectIndex, check_revision
from kubeprio.store.watch import DEFAULT_HISTORY_LIMIT, QueueWatch, WatchHub


class MemoryStore:
    """A ``Store`` held in dictionaries."""

    def __init__(self, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        self._objects = ObjectIndex()
        self._revision = 0
        self._hub = WatchHub(history_limit)

    def current_revision(self) -> int:
        """The revision of the newest write."""
        return self._revision

    def get(self, key: ObjectKey) -> ApiObject:
        """Return the object at ``key``."""
        return self._objects.get(key)

    def list(self, prefix: KeyPrefix) -> tuple[list[ApiObject], int]:
        """Return the objects under ``prefix`` sorted by (namespace, name)."""
        return self._objects.list(prefix), self._revision

    def count(self, resource: str) -> int:
        """How many objects of ``resource`` are stored."""
        return self._objects.count(resource)

    def generation(self, resource: str) -> int:
        """How many times ``resource``'s objects changed."""
        return self._objects.generation(resource)

    def create(self, key: ObjectKey, obj: ApiObject) -> ApiObject:
        """Store a new object at the next revision."""
        if key in self._objects:
            raise KeyExistsError(str(key))
        return self._write(EventType.ADDED, key, obj, None)

    def update(self, key: ObjectKey, obj: ApiObject, *, expected_revision: int | None) -> ApiObject:
        """Replace the object, optionally only if it is still at ``expected_revision``."""
        current = self._objects.get(key)
        check_revision(key, current, expected_revision)
        return self._write(EventType.MODIFIED, key, obj, current)

    def delete(self, key: ObjectKey, *, expected_revision: int | None = None) -> ApiObject:
        """Remove the object; return its last state at the deletion revision."""
        current = self._objects.get(key)
        check_revision(key, current, expected_revision)
        return self._write(EventType.DELETED, key, current, current)

    def watch(self, prefix: KeyPrefix, since_revision: int) -> QueueWatch:
        """Follow changes under ``prefix`` above ``since_revision``."""
        return self._hub.subscribe(prefix, since_revision)

    def compact(self, revision: int) -> None:
        """Forget watch history up to ``revision`` (at most the current revision)."""
        self._hub.compact(min(revision, self._revision))

    def batch(self) -> AbstractContextManager[None]:
        """Nothing to group: memory has no commit, and watchers see each write at once."""
        return contextlib.nullcontext()

    def close(self) -> None:
        """Close every watch."""
        self._hub.close_all()

    def _write(
        self, event_type: EventType, key: ObjectKey, obj: ApiObject, previous: ApiObject | None
    ) -> ApiObject:
        self._revision += 1
        stored: ApiObject = with_revision(obj, self._revision)
        if event_type is EventType.DELETED:
            self._objects.remove(key)
        else:
            self._objects.put(key, stored)
        self._hub.publish(StoreEvent(event_type, key, stored, self._revision, previous))
        return stored
