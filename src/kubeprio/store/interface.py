"""The ``Store`` protocol: a revisioned key-value model of API objects (kine's idea).

* Every write takes the next global revision; the stored object carries it as
  ``metadata.resourceVersion`` (set by the store, never by callers).
* ``update`` and ``delete`` are compare-and-swap on an expected revision
  (``RevisionConflictError`` when the object changed meanwhile).
* ``watch(prefix, since)`` replays retained events with a revision above ``since`` and
  then follows new ones; a revision older than the retained history raises
  ``RevisionCompactedError`` (HTTP 410 Gone).

Keys are ``ObjectKey(resource, namespace, name)``; cluster-scoped objects have namespace
``""``. Lists and watches select by ``KeyPrefix(resource, namespace)`` where a namespace of
``None`` means all namespaces. Objects are immutable models, so back-ends may hand out
the same instance they keep.

The store knows nothing of admission, validation or HTTP; ``apiserver.service`` drives it.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import NamedTuple, Protocol, TypeVar

from kubeprio.api.meta import ApiObject, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.frozen import fast_init

_O = TypeVar("_O")


class ObjectKey(NamedTuple):
    """Where an object lives: resource plural, namespace (``""`` if cluster-scoped), name."""

    resource: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.resource}/{self.namespace}/{self.name}"


class KeyPrefix(NamedTuple):
    """A set of keys: one resource, in one namespace or (``None``) all of them."""

    resource: str
    namespace: str | None = None

    def contains(self, key: ObjectKey) -> bool:
        """Whether ``key`` falls under this prefix."""
        return key.resource == self.resource and (
            self.namespace is None or key.namespace == self.namespace
        )


class EventType(enum.StrEnum):
    """Watch event types, as on the wire."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class StoreEvent:
    """One change: the object after it (for DELETED, its last state at the deletion revision).

    ``previous`` is the object before the change (None for ADDED), as etcd's ``prev_kv``:
    a filtered watch needs it to tell whether the object was visible before. Live events
    carry it; events replayed from a back-end's log may not (None), so it is not part of
    an event's identity.
    """

    type: EventType
    key: ObjectKey
    object: ApiObject
    revision: int
    previous: ApiObject | None = dataclasses.field(default=None, compare=False, repr=False)


class StoreWatch(Protocol):
    """A stream of events under a prefix. Non-blocking: ``poll`` drains what is pending."""

    def poll(self) -> list[StoreEvent]:
        """Return and forget the pending events, oldest first."""
        ...

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` (without arguments) whenever new events become pending."""
        ...

    def close(self) -> None:
        """Stop receiving events."""
        ...

    @property
    def closed(self) -> bool:
        """Whether the watch was closed (by the caller or by the store)."""
        ...


class Store(Protocol):
    """Revisioned storage of API objects; every back-end passes ``tests/contract``."""

    def current_revision(self) -> int:
        """The revision of the newest write (0 when empty)."""
        ...

    def get(self, key: ObjectKey) -> ApiObject:
        """Return the object at ``key`` or raise ``KeyNotFoundError``."""
        ...

    def list(self, prefix: KeyPrefix) -> tuple[list[ApiObject], int]:
        """Return the objects under ``prefix`` sorted by key, and the current revision."""
        ...

    def count(self, resource: str) -> int:
        """How many objects of ``resource`` (a plural) are stored, without listing them."""
        ...

    def generation(self, resource: str) -> int:
        """A number that moves whenever an object of ``resource`` is created, updated or
        deleted, and only then (this process's count, not a revision: caches of what is
        derived from a resource compare it instead of listing)."""
        ...

    def create(self, key: ObjectKey, obj: ApiObject) -> ApiObject:
        """Store a new object; raise ``KeyExistsError`` if the key is taken."""
        ...

    def update(self, key: ObjectKey, obj: ApiObject, *, expected_revision: int | None) -> ApiObject:
        """Replace the object; with ``expected_revision`` only if it still has that revision."""
        ...

    def delete(self, key: ObjectKey, *, expected_revision: int | None = None) -> ApiObject:
        """Remove the object and return its last state stamped with the deletion revision."""
        ...

    def watch(self, prefix: KeyPrefix, since_revision: int) -> StoreWatch:
        """Follow changes under ``prefix`` with a revision above ``since_revision``."""
        ...

    def compact(self, revision: int) -> None:
        """Forget history up to and including ``revision`` (capped at the current revision)."""
        ...

    def batch(self) -> AbstractContextManager[None]:
        """Group the writes made inside into one durable commit (a group commit).

        Reads see each write at once; watchers see the writes, in order, no later than
        the end of the batch, and a durable store makes them durable only there. For
        in-process callers whose writes nobody outside sees before the batch ends (the
        serve driver's components between two yields to the HTTP server); a write made
        inside a batch is acknowledged to a client only after the batch ends (serve's
        HTTP group commit, ``apiserver.groupcommit``). Batches nest (the outermost one
        commits).
        """
        ...

    def close(self) -> None:
        """Release resources; the store is unusable afterwards."""
        ...


def with_revision(obj: _O, revision: int) -> _O:
    """Return ``obj`` with ``metadata.resourceVersion`` set to ``revision``."""
    metadata: ObjectMeta = obj.metadata  # type: ignore[attr-defined]
    return evolve(obj, metadata=evolve(metadata, resource_version=str(revision)))


def object_revision(obj: ApiObject) -> int:
    """The revision an object was stored at (0 if it carries none)."""
    version = obj.metadata.resource_version
    return int(version) if version else 0
