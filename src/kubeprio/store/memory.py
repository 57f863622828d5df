"""The in-memory ``Store``: the reference back-end, used by tests and ``kubeprio simulate``.

Objects are immutable models, so the store keeps and hands out the same instances with
no copying; a write replaces the entry with a new instance stamped with the next
revision. Objects are kept per resource, in dicts keyed by (namespace, name), so a list
touches only the resource (and namespace) asked for.
"""

from __future__ import annotations

from kubeprio.api.meta import ApiObject
from kubeprio.store.errors import KeyExistsError, KeyNotFoundError, RevisionConflictError
from kubeprio.store.interface import (
    EventType,
    KeyPrefix,
    ObjectKey,
    StoreEvent,
    object_revision,
    with_revision,
)
from kubeprio.store.watch import DEFAULT_HISTORY_LIMIT, QueueWatch, WatchHub


class MemoryStore:
    """A ``Store`` held in dictionaries."""

    def __init__(self, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        self._objects: dict[str, dict[tuple[str, str], ApiObject]] = {}
        self._revision = 0
        self._hub = WatchHub(history_limit)

    def current_revision(self) -> int:
        """The revision of the newest write."""
        return self._revision

    def get(self, key: ObjectKey) -> ApiObject:
        """Return the object at ``key``."""
        try:
            return self._objects[key.resource][(key.namespace, key.name)]
        except KeyError:
            raise KeyNotFoundError(str(key)) from None

    def list(self, prefix: KeyPrefix) -> tuple[list[ApiObject], int]:
        """Return the objects under ``prefix`` sorted by (namespace, name)."""
        bucket = self._objects.get(prefix.resource, {})
        if prefix.namespace is None:
            items = [bucket[k] for k in sorted(bucket)]
        else:
            items = [bucket[k] for k in sorted(bucket) if k[0] == prefix.namespace]
        return items, self._revision

    def create(self, key: ObjectKey, obj: ApiObject) -> ApiObject:
        """Store a new object at the next revision."""
        bucket = self._objects.setdefault(key.resource, {})
        slot = (key.namespace, key.name)
        if slot in bucket:
            raise KeyExistsError(str(key))
        self._revision += 1
        stored: ApiObject = with_revision(obj, self._revision)
        bucket[slot] = stored
        self._hub.publish(StoreEvent(EventType.ADDED, key, stored, self._revision))
        return stored

    def update(self, key: ObjectKey, obj: ApiObject, *, expected_revision: int | None) -> ApiObject:
        """Replace the object, optionally only if it is still at ``expected_revision``."""
        current = self.get(key)
        self._check_revision(key, current, expected_revision)
        self._revision += 1
        stored: ApiObject = with_revision(obj, self._revision)
        self._objects[key.resource][(key.namespace, key.name)] = stored
        self._hub.publish(StoreEvent(EventType.MODIFIED, key, stored, self._revision, current))
        return stored

    def delete(self, key: ObjectKey, *, expected_revision: int | None = None) -> ApiObject:
        """Remove the object; return its last state at the deletion revision."""
        current = self.get(key)
        self._check_revision(key, current, expected_revision)
        del self._objects[key.resource][(key.namespace, key.name)]
        self._revision += 1
        last: ApiObject = with_revision(current, self._revision)
        self._hub.publish(StoreEvent(EventType.DELETED, key, last, self._revision, current))
        return last

    def watch(self, prefix: KeyPrefix, since_revision: int) -> QueueWatch:
        """Follow changes under ``prefix`` above ``since_revision``."""
        return self._hub.subscribe(prefix, since_revision)

    def compact(self, revision: int) -> None:
        """Forget watch history up to ``revision``."""
        self._hub.compact(revision)

    def close(self) -> None:
        """Close every watch."""
        self._hub.close_all()

    @staticmethod
    def _check_revision(key: ObjectKey, current: ApiObject, expected: int | None) -> None:
        if expected is not None and object_revision(current) != expected:
            raise RevisionConflictError(
                f"{key}: expected revision {expected}, found {object_revision(current)}",
                current=object_revision(current),
            )
