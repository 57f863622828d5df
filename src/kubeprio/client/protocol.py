"""The ``Client`` and ``Watch`` protocols: the only way components reach the cluster.

The scheduler, kubelets and controllers are written against ``Client``. Two things
satisfy it structurally: ``apiserver.service.ApiService`` (in-process: simulate, serve,
tests) and ``client.http.HttpClient`` (a remote API server). A component therefore
behaves identically in every mode (docs/design.md, "One system, three drivers").

Kinds are named by their model class (``client.get(Pod, "web-1", "default")``); the
resource table in ``api.kinds`` maps the class to its URL and scope. Calls are
synchronous and non-blocking; a ``Watch`` is drained with ``poll``. Failures raise the
``api.errors.StatusError`` subclasses a real API server would answer with.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from kubeprio.api.apps import Scale
from kubeprio.api.core import Binding
from kubeprio.api.meta import Preconditions
from kubeprio.api.patch import PatchType
from kubeprio.api.policy import Eviction
from kubeprio.frozen import fast_init

__all__ = ["PatchType"]  # re-exported: callers of patch() name the type from here

T = TypeVar("T")


class WatchEventType(enum.StrEnum):
    """Watch event types on the wire."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"


@dataclasses.dataclass(frozen=True, slots=True)
class ObjectList(Generic[T]):
    """The answer to a list: items sorted by namespace/name and the revision they reflect."""

    items: list[T]
    resource_version: str
    continue_token: str | None = None
    remaining_item_count: int | None = None


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class WatchEvent(Generic[T]):
    """One watch event; ``revision`` is the object's resourceVersion as an int."""

    type: WatchEventType
    object: T
    revision: int


class Watch(Protocol[T]):
    """A stream of events, drained without blocking."""

    def poll(self) -> list[WatchEvent[T]]:
        """Return and forget the pending events, oldest first."""
        ...

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` whenever events become pending."""
        ...

    @property
    def notifies(self) -> bool:
        """Whether the listener is called for every event (and on close) without polling.

        In-process watches do; a watch over HTTP only learns of events when polled.
        Informers skip polling a notifying watch that has not called them since.
        """
        ...

    def close(self) -> None:
        """Stop the stream."""
        ...

    @property
    def closed(self) -> bool:
        """Whether the stream ended (closed by either side); relist and rewatch then."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class DeleteRequest:
    """Options of a delete (``DeleteOptions`` on the wire)."""

    grace_period_seconds: int | None = None
    preconditions: Preconditions | None = None
    propagation_policy: str | None = None
    dry_run: bool = False


class Client(Protocol):
    """Kubernetes API verbs over typed objects."""

    def get(self, kind: type[T], name: str, namespace: str | None = None) -> T:
        """Return one object or raise ``NotFoundError``."""
        ...

    def list(
        self,
        kind: type[T],
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList[T]:
        """List objects (all namespaces when ``namespace`` is None)."""
        ...

    def watch(
        self,
        kind: type[T],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Watch[T]:
        """Follow changes after ``resource_version`` (``None``/``"0"``: current objects first)."""
        ...

    def create(self, obj: T, *, dry_run: bool = False) -> T:
        """Create an object through defaulting, admission and validation."""
        ...

    def update(self, obj: T, *, dry_run: bool = False) -> T:
        """Replace an object (compare-and-swap on its resourceVersion when set)."""
        ...

    def update_status(self, obj: T) -> T:
        """Replace only the status of an object (the ``/status`` subresource)."""
        ...

    def patch(
        self,
        kind: type[T],
        name: str,
        patch: object,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE_PATCH,
        subresource: str | None = None,
    ) -> T:
        """Patch an object (or its ``status`` subresource)."""
        ...

    def delete(
        self,
        kind: type[T],
        name: str,
        namespace: str | None = None,
        *,
        options: DeleteRequest | None = None,
    ) -> T:
        """Delete (gracefully for bound pods); return the object's state after the call."""
        ...

    def bind(self, binding: Binding) -> None:
        """``pods/binding``: assign a pending pod to a node."""
        ...

    def evict(self, eviction: Eviction) -> None:
        """``pods/eviction``: delete a pod unless a PodDisruptionBudget forbids it (429)."""
        ...

    def get_scale(self, kind: type[object], name: str, namespace: str | None = None) -> Scale:
        """``<kind>/scale``: a workload's autoscaling/v1 ``Scale`` (404 for a kind without
        one)."""
        ...

    def update_scale(self, kind: type[object], scale: Scale) -> Scale:
        """PUT ``<kind>/scale``: set the workload's replicas (its resourceVersion, when the
        Scale carries one, is a precondition: 409 Conflict)."""
        ...
