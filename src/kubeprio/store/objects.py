"""The current-state index every back-end serves reads from: objects by resource and key.

``MemoryStore`` keeps nothing else; ``SqliteStore`` keeps this index as a cache of the
current-state table it persists (the API server's watch cache plays the same role in
front of etcd), so ``get`` and ``list`` never touch the disk or decode JSON. Objects are
immutable models, so the index holds and hands out the same instances.

Objects live in one dict per resource and namespace, keyed by name, so a list touches
only the resource (and namespace) asked for: listing 100 pods of one namespace among
150,000 does not walk the other 149,900. Pure data structure: no I/O, no revisions of
its own. Each resource also has a *generation*, a count of the changes made to its
objects (not persisted, not a revision): a cache of something derived from a resource's
few objects (the admission webhook configurations, say) asks for it on every use and
derives again only when it moved, instead of listing the objects each time.
"""

from __future__ import annotations

import builtins

from kubeprio.api.meta import ApiObject
from kubeprio.store.errors import KeyNotFoundError, RevisionConflictError
from kubeprio.store.interface import KeyPrefix, ObjectKey, object_revision


class ObjectIndex:
    """The current object at every key, grouped by resource, then by namespace."""

    def __init__(self) -> None:
        # Two views of the same objects: one flat dict for the hot single-key reads, and
        # the nested buckets that lists walk.
        self._by_key: dict[ObjectKey, ApiObject] = {}
        self._buckets: dict[str, dict[str, dict[str, ApiObject]]] = {}
        self._generations: dict[str, int] = {}

    def __contains__(self, key: ObjectKey) -> bool:
        return key in self._by_key

    def get(self, key: ObjectKey) -> ApiObject:
        """Return the object at ``key`` or raise ``KeyNotFoundError``."""
        try:
            return self._by_key[key]
        except KeyError:
            raise KeyNotFoundError(str(key)) from None

    def list(self, prefix: KeyPrefix) -> list[ApiObject]:
        """Return the objects under ``prefix`` sorted by (namespace, name)."""
        namespaces = self._buckets.get(prefix.resource)
        if not namespaces:
            return []
        if prefix.namespace is not None:
            names = namespaces.get(prefix.namespace)
            return [names[name] for name in sorted(names)] if names else []
        listed: list[ApiObject] = []
        for namespace in sorted(namespaces):
            names = namespaces[namespace]
            listed.extend(names[name] for name in sorted(names))
        return listed

    def count(self, resource: str) -> int:
        """How many objects ``resource`` has (one length per namespace, no object read)."""
        return sum(len(names) for names in self._buckets.get(resource, {}).values())

    def generation(self, resource: str) -> int:
        """How many times ``resource``'s objects changed (put or removed) in this index."""
        return self._generations.get(resource, 0)

    def put(self, key: ObjectKey, obj: ApiObject) -> None:
        """Store ``obj`` at ``key``, replacing what was there."""
        generations = self._generations
        generations[key.resource] = generations.get(key.resource, 0) + 1
        namespaces = self._buckets.get(key.resource)
        if namespaces is None:
            namespaces = self._buckets[key.resource] = {}
        names = namespaces.get(key.namespace)
        if names is None:
            names = namespaces[key.namespace] = {}
        names[key.name] = obj
        self._by_key[key] = obj

    def remove(self, key: ObjectKey) -> None:
        """Forget the object at ``key`` (which must exist)."""
        namespaces = self._buckets[key.resource]
        self._generations[key.resource] += 1
        names = namespaces[key.namespace]
        del names[key.name]
        del self._by_key[key]
        if not names:
            # A namespace's last object is gone: keep no empty dict behind (namespaces
            # come and go in serve; their buckets must not pile up).
            del namespaces[key.namespace]

    def items(self) -> builtins.list[tuple[ObjectKey, ApiObject]]:
        """Every (key, object), sorted by key (for checks and dumps, not hot paths)."""
        return sorted(self._by_key.items(), key=lambda item: item[0])


def check_revision(key: ObjectKey, current: ApiObject, expected: int | None) -> None:
    """Raise ``RevisionConflictError`` unless ``expected`` is None or ``current``'s revision."""
    if expected is not None:
        found = object_revision(current)
        if found != expected:
            raise RevisionConflictError(
                f"{key}: expected revision {expected}, found {found}", current=found
            )
