"""The current-state index every back-end serves reads from: objects by resource and key.

``MemoryStore`` keeps nothing else; ``SqliteStore`` keeps this index as a cache of the
current-state table it persists (the API server's watch cache plays the same role in
front of etcd), so ``get`` and ``list`` never touch the disk or decode JSON. Objects are
immutable models, so the index holds and hands out the same instances.

Objects live in one dict per resource keyed by ``(namespace, name)``, so a list touches
only the resource asked for. Pure data structure: no I/O, no revisions of its own.
"""

from __future__ import annotations

import builtins

from kubeprio.api.meta import ApiObject
from kubeprio.store.errors import KeyNotFoundError, RevisionConflictError
from kubeprio.store.interface import KeyPrefix, ObjectKey, object_revision


class ObjectIndex:
    """The current object at every key, grouped by resource."""

    def __init__(self) -> None:
        self._buckets: dict[str, dict[tuple[str, str], ApiObject]] = {}

    def __contains__(self, key: ObjectKey) -> bool:
        bucket = self._buckets.get(key.resource)
        return bucket is not None and (key.namespace, key.name) in bucket

    def get(self, key: ObjectKey) -> ApiObject:
        """Return the object at ``key`` or raise ``KeyNotFoundError``."""
        try:
            return self._buckets[key.resource][(key.namespace, key.name)]
        except KeyError:
            raise KeyNotFoundError(str(key)) from None

    def list(self, prefix: KeyPrefix) -> list[ApiObject]:
        """Return the objects under ``prefix`` sorted by (namespace, name)."""
        bucket = self._buckets.get(prefix.resource)
        if not bucket:
            return []
        if prefix.namespace is None:
            return [bucket[slot] for slot in sorted(bucket)]
        namespace = prefix.namespace
        return [bucket[slot] for slot in sorted(s for s in bucket if s[0] == namespace)]

    def put(self, key: ObjectKey, obj: ApiObject) -> None:
        """Store ``obj`` at ``key``, replacing what was there."""
        self._buckets.setdefault(key.resource, {})[(key.namespace, key.name)] = obj

    def remove(self, key: ObjectKey) -> None:
        """Forget the object at ``key`` (which must exist)."""
        del self._buckets[key.resource][(key.namespace, key.name)]

    def items(self) -> builtins.list[tuple[ObjectKey, ApiObject]]:
        """Every (key, object), sorted by key (for checks and dumps, not hot paths)."""
        return sorted(
            (
                (ObjectKey(resource, namespace, name), obj)
                for resource, bucket in self._buckets.items()
                for (namespace, name), obj in bucket.items()
            ),
            key=lambda item: item[0],
        )


def check_revision(key: ObjectKey, current: ApiObject, expected: int | None) -> None:
    """Raise ``RevisionConflictError`` unless ``expected`` is None or ``current``'s revision."""
    if expected is not None:
        found = object_revision(current)
        if found != expected:
            raise RevisionConflictError(
                f"{key}: expected revision {expected}, found {found}", current=found
            )
