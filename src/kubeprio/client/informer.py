"""Informers: list + watch into a local indexed cache, with event handlers.

An informer lists a kind once, then follows a watch from the list's revision. Nothing
happens in the background: the driver (``sim.engine`` or the serve loop) calls
``pump()``, which drains the watch, updates the cache and calls the handlers in event
order. If the watch ended (closed, or the server answered 410 Gone), ``pump`` relists
and reports the differences as add/update/delete, as client-go's reflector does.

A handler that raises keeps nothing from anyone, as in client-go's shared informer (the
indexer is updated before the listeners run, each listener on its own): the cache takes
every event of the batch, every other handler still gets every event in order, and the
failures come out of ``pump`` (or ``start``) afterwards, together, as one
``EventHandlerErrors``. What the driver does with it is its own rule (``sim.engine``
aborts the run, ``serve.driver`` logs it and goes on).

``Lister`` is the read side other layers may depend on (admission uses it too).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from kubeprio.api.errors import GoneError
from kubeprio.api.meta import ApiObject
from kubeprio.client.protocol import Client, Watch, WatchEventType

T = TypeVar("T", bound=ApiObject)
L = TypeVar("L")
E_contra = TypeVar("E_contra", contravariant=True)

CacheKey = tuple[str, str]
"""(namespace, name); namespace ``""`` for cluster-scoped objects."""

_NO_VALUES: list[str] = []
"""The index values of no object (shared, never mutated)."""


class EventHandlerErrors(ExceptionGroup[Exception]):
    """Event handlers raised while an informer applied a batch of events (or relisted).

    Raised after the batch: by then the cache holds every event and every other handler
    got each of them. Each failure carries a note naming the informer's kind and the
    callback; ``exceptions`` lists them in the order they happened.
    """


class Lister(Protocol[L]):
    """Read access to a set of objects."""

    def get(self, name: str, namespace: str | None = None) -> L | None:
        """Return the object or None."""
        ...

    def list(self, namespace: str | None = None) -> builtins.list[L]:
        """Return the objects (of one namespace, or all) sorted by namespace/name."""
        ...


def cache_key(obj: ApiObject) -> CacheKey:
    """The (namespace, name) of an object."""
    return (obj.metadata.namespace or "", obj.metadata.name or "")


class EventHandler(Protocol[E_contra]):
    """Callbacks for cache changes; any may be a no-op."""

    def on_add(self, obj: E_contra) -> None:
        """An object appeared."""
        ...

    def on_update(self, old: E_contra, new: E_contra) -> None:
        """An object changed."""
        ...

    def on_delete(self, obj: E_contra) -> None:
        """An object disappeared (its last known state)."""
        ...


class FuncHandler(Generic[T]):
    """An ``EventHandler`` from optional functions."""

    def __init__(
        self,
        on_add: Callable[[T], None] | None = None,
        on_update: Callable[[T, T], None] | None = None,
        on_delete: Callable[[T], None] | None = None,
    ) -> None:
        self._add = on_add
        self._update = on_update
        self._delete = on_delete

    def callbacks(
        self,
    ) -> tuple[
        Callable[[T], None] | None, Callable[[T, T], None] | None, Callable[[T], None] | None
    ]:
        """The add, update and delete functions (an informer calls them directly)."""
        return self._add, self._update, self._delete

    def on_add(self, obj: T) -> None:
        """Forward to the add function."""
        if self._add is not None:
            self._add(obj)

    def on_update(self, old: T, new: T) -> None:
        """Forward to the update function."""
        if self._update is not None:
            self._update(old, new)

    def on_delete(self, obj: T) -> None:
        """Forward to the delete function."""
        if self._delete is not None:
            self._delete(obj)


class Informer(Generic[T]):
    """A cache of one kind kept current from a list and a watch."""

    def __init__(
        self,
        client: Client,
        kind: type[T],
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> None:
        self._client = client
        self.kind = kind
        self._namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._cache: dict[CacheKey, T] = {}
        # Each handler's callbacks, in registration order, resolved once: a pod event
        # reaches a dozen handlers, and a FuncHandler's forwarding was a call per handler.
        self._on_add: list[Callable[[T], None]] = []
        self._on_update: list[Callable[[T, T], None]] = []
        self._on_delete: list[Callable[[T], None]] = []
        self._indexers: dict[str, Callable[[T], list[str]]] = {}
        self._indexes: dict[str, dict[str, dict[CacheKey, T]]] = {}
        self._indexed: dict[str, dict[CacheKey, list[str]]] = {}
        """Per index, the values each cached object is filed under: an update compares
        the new object's values with these instead of asking the index function about
        the old object again (half the index calls of every pod event)."""
        self._watch: Watch[T] | None = None
        self._resource_version = "0"
        self._started = False
        self._quiet = False
        """True while a notifying watch has delivered nothing since the last poll."""
        self._wakeups: list[Callable[[], None]] = []
        """Called whenever the informer stops being quiet (``client.informergroup``)."""
        self._failures: list[Exception] = []
        """What handlers raised during the current batch; raised together at its end."""

    # --- wiring ---------------------------------------------------------------------------

    def add_handler(self, handler: EventHandler[T]) -> None:
        """Register callbacks; objects already cached are replayed as adds."""
        # Exactly a FuncHandler: a subclass may override the forwarding.
        if isinstance(handler, FuncHandler) and type(handler) is FuncHandler:
            on_add, on_update, on_delete = handler.callbacks()
        else:
            on_add, on_update, on_delete = handler.on_add, handler.on_update, handler.on_delete
        if on_add is not None:
            self._on_add.append(on_add)
        if on_update is not None:
            self._on_update.append(on_update)
        if on_delete is not None:
            self._on_delete.append(on_delete)
        for key in sorted(self._cache):
            handler.on_add(self._cache[key])

    def add_index(self, name: str, index_fn: Callable[[T], list[str]]) -> None:
        """Maintain an index ``name``: value -> objects whose ``index_fn`` lists that value."""
        self._indexers[name] = index_fn
        index: dict[str, dict[CacheKey, T]] = {}
        indexed: dict[CacheKey, list[str]] = {}
        for key, obj in self._cache.items():
            values = indexed[key] = index_fn(obj) or _NO_VALUES
            for value in values:
                index.setdefault(value, {})[key] = obj
        self._indexes[name] = index
        self._indexed[name] = indexed

    def add_wakeup(self, wakeup: Callable[[], None]) -> None:
        """Call ``wakeup`` whenever a watch event (or the watch's end) arrives, so a driver
        pumping many informers can skip the quiet ones without asking each."""
        self._wakeups.append(wakeup)

    @property
    def quiet(self) -> bool:
        """True if ``pump`` would do nothing until a wakeup: a notifying watch that has
        delivered nothing since the last poll."""
        return self._quiet

    @property
    def has_synced(self) -> bool:
        """Whether the initial list has been loaded."""
        return self._started

    @property
    def resource_version(self) -> str:
        """The revision of the newest event seen."""
        return self._resource_version

    # --- driving --------------------------------------------------------------------------

    def start(self) -> None:
        """List, fill the cache (handlers see adds) and open the watch.

        Raises ``EventHandlerErrors`` if handlers raised, once every object is cached and
        every other handler saw it (the informer counts as started then)."""
        self._relist()
        self._started = True
        if self._failures:
            self._raise_failures()

    def pump(self) -> int:
        """Apply pending watch events; relist if the watch ended. Returns events handled.

        Raises ``EventHandlerErrors`` after the batch if any handler raised (the events
        are applied and delivered to the others all the same; the next pump goes on)."""
        if self._quiet:
            # The engine pumps every informer after every unit of work; most have
            # nothing new, and asking the watch costs more than this flag.
            return 0
        if not self._started:
            self.start()
        assert self._watch is not None
        # Cleared before polling: an event queued after the poll calls the listener.
        self._quiet = self._watch.notifies
        handled = 0
        events = self._watch.poll()
        for event in events:
            handled += 1
            if event.type is WatchEventType.ERROR:
                self._relist()
                break
            if event.type is WatchEventType.BOOKMARK:
                self._resource_version = str(event.revision)
                continue
            self._resource_version = str(event.revision)
            if event.type is WatchEventType.DELETED:
                self._remove(event.object)
            else:
                self._upsert(event.object)
        else:
            if self._watch.closed:
                # A closed watch calls nobody: the next pump must look again, and relist.
                self._quiet = False
                if not events:
                    self._relist()
        if self._failures:
            # Only now: the whole batch is in the cache and every other handler had it.
            self._raise_failures()
        return handled

    def stop(self) -> None:
        """Close the watch."""
        if self._watch is not None:
            self._watch.close()

    # --- reading ---------------------------------------------------------------------------

    def get(self, name: str, namespace: str | None = None) -> T | None:
        """Return a cached object or None."""
        return self._cache.get((namespace or "", name))

    def list(self, namespace: str | None = None) -> list[T]:
        """Return cached objects sorted by namespace/name."""
        keys = sorted(self._cache)
        if namespace is None:
            return [self._cache[k] for k in keys]
        return [self._cache[k] for k in keys if k[0] == namespace]

    def by_index(self, name: str, value: str) -> builtins.list[T]:
        """Return the cached objects filed under ``value`` in index ``name``, sorted."""
        bucket = self._indexes[name].get(value)
        if not bucket:
            return []
        return [bucket[k] for k in sorted(bucket)]

    def __len__(self) -> int:
        return len(self._cache)

    # --- internals --------------------------------------------------------------------------

    def _relist(self) -> None:
        if self._watch is not None:
            self._watch.close()
        while True:
            listed = self._client.list(
                self.kind,
                self._namespace,
                label_selector=self._label_selector,
                field_selector=self._field_selector,
            )
            try:
                self._watch = self._client.watch(
                    self.kind,
                    self._namespace,
                    resource_version=listed.resource_version,
                    label_selector=self._label_selector,
                    field_selector=self._field_selector,
                )
            except GoneError:
                continue
            break
        self._quiet = False
        self._watch.set_listener(self._on_pending)
        self._resource_version = listed.resource_version
        fresh = {cache_key(obj): obj for obj in listed.items}
        for key in sorted(set(self._cache) - set(fresh)):
            self._remove(self._cache[key])
        for key in sorted(fresh):
            self._upsert(fresh[key])

    def _on_pending(self) -> None:
        self._quiet = False
        for wakeup in self._wakeups:
            wakeup()

    def _upsert(self, obj: T) -> None:
        key = cache_key(obj)
        old = self._cache.get(key)
        if old is not None and old.metadata.resource_version == obj.metadata.resource_version:
            return
        self._cache[key] = obj
        self._reindex(key, obj)
        # An explicit iterator: a handler that raises leaves it at the next handler, so
        # the slow path goes on from there (the ``try`` costs nothing until one raises).
        if old is None:
            adds = iter(self._on_add)
            try:
                for on_add in adds:
                    on_add(obj)
            except Exception as exc:
                self._deliver_past_failure(exc, "add", adds, obj)
        else:
            updates = iter(self._on_update)
            try:
                for on_update in updates:
                    on_update(old, obj)
            except Exception as exc:
                self._deliver_past_failure(exc, "update", updates, old, obj)

    def _remove(self, obj: T) -> None:
        key = cache_key(obj)
        old = self._cache.pop(key, None)
        if old is None:
            return
        self._reindex(key, None)
        deletes = iter(self._on_delete)
        try:
            for on_delete in deletes:
                on_delete(obj)
        except Exception as exc:
            self._deliver_past_failure(exc, "delete", deletes, obj)

    def _deliver_past_failure(
        self, failure: Exception, callback: str, rest: Iterator[Callable[..., None]], *args: Any
    ) -> None:
        """Keep ``failure`` for the end of the batch and call the handlers after the one
        that raised, each on its own (one failing handler keeps no event from the others,
        as client-go's listeners each have their own buffer)."""
        self._note_failure(failure, callback)
        for handler in rest:
            try:
                handler(*args)
            except Exception as exc:
                self._note_failure(exc, callback)

    def _note_failure(self, failure: Exception, callback: str) -> None:
        failure.add_note(f"in an on_{callback} handler of the {self.kind.__name__} informer")
        self._failures.append(failure)

    def _raise_failures(self) -> None:
        failures, self._failures = self._failures, []
        count = len(failures)
        calls = "call" if count == 1 else "calls"
        raise EventHandlerErrors(
            f"{count} event handler {calls} failed in the {self.kind.__name__} informer", failures
        )

    def _reindex(self, key: CacheKey, new: T | None) -> None:
        """File ``key`` under ``new``'s values (``None``: removed); the values it was filed
        under are remembered per index (none while it was not cached)."""
        indexes = self._indexes
        for name, index_fn in self._indexers.items():
            index = indexes[name]
            indexed = self._indexed[name]
            old_values = indexed.get(key, _NO_VALUES)
            # An empty answer is kept as the shared empty list (most pods are filed
            # under no claim and no controller): no list per pod and index.
            new_values = (index_fn(new) or _NO_VALUES) if new is not None else _NO_VALUES
            if old_values != new_values:
                for value in old_values:
                    bucket = index.get(value)
                    if bucket is not None:
                        bucket.pop(key, None)
                        if not bucket:
                            del index[value]
            # Most updates (status writes) keep the indexed values: the new object then
            # only replaces the old one in its buckets (``by_index`` sorts the keys).
            if new is not None:
                indexed[key] = new_values
                for value in new_values:
                    bucket = index.get(value)
                    if bucket is None:
                        index[value] = {key: new}
                    else:
                        bucket[key] = new
            else:
                indexed.pop(key, None)
