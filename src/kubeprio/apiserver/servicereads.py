"""``ServiceReads``: the reads of ``ApiService``: get, list and watch.

Lists filter by label and field selectors and page with ``limit``/``continue`` (the rules
need no store access and live in ``apiserver.listing``); a watch from no (or ``"0"``)
resourceVersion starts with the current objects as ADDED, one from a compacted revision
is a 410 Gone, and its events are filtered by the same selectors (``apiserver.watch``).

Who drives it: ``ApiService`` (``apiserver.service``) is built on it; the REST handlers,
informers of in-process components and the subresources read through it.
"""

from __future__ import annotations

from typing import TypeVar, cast

from kubeprio.api import errors, kinds
from kubeprio.api.meta import ApiObject
from kubeprio.apiserver import listing, watch
from kubeprio.apiserver.servicecore import ServiceCore
from kubeprio.client.protocol import ObjectList
from kubeprio.store.errors import RevisionCompactedError
from kubeprio.store.interface import KeyPrefix

T = TypeVar("T")


class ServiceReads(ServiceCore):
    """Get, list and watch stored objects."""

    def get(self, kind: type[T], name: str, namespace: str | None = None) -> T:
        """Return one object."""
        info = kinds.for_model(kind)
        return cast(T, self._get_key(info, self._key(info, name, namespace)))

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
        """List objects, filtered, optionally a page at a time (``limit``/``continue``)."""
        info = kinds.for_model(kind)
        matches = listing.object_filter(info, label_selector, field_selector)
        items, revision = self.store.list(
            KeyPrefix(info.plural, namespace if info.namespaced else None)
        )
        if matches is not None:
            items = [obj for obj in items if matches(obj)]
        start_after: tuple[str, str] | None = None
        if continue_token:
            start_after, revision = listing.decode_continue(continue_token)
            items = [
                obj
                for obj in items
                if ((obj.metadata.namespace or ""), (obj.metadata.name or "")) > start_after
            ]
        next_token: str | None = None
        remaining: int | None = None
        if limit and limit > 0 and len(items) > limit:
            last = items[limit - 1]
            next_token = listing.encode_continue(
                (last.metadata.namespace or "", last.metadata.name or ""), revision
            )
            remaining = len(items) - limit
            items = items[:limit]
        return ObjectList(cast(list[T], items), str(revision), next_token, remaining)

    def watch(
        self,
        kind: type[T],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> watch.ServiceWatch:
        """Watch changes; with no (or ``"0"``) resourceVersion, current objects come first as ADDED."""
        info = kinds.for_model(kind)
        matches = listing.object_filter(info, label_selector, field_selector)
        prefix = KeyPrefix(info.plural, namespace if info.namespaced else None)
        initial: list[ApiObject] = []
        if resource_version in (None, "", "0"):
            items, since = self.store.list(prefix)
            initial = [obj for obj in items if matches is None or matches(obj)]
        else:
            try:
                since = int(resource_version)
            except ValueError:
                raise errors.bad_request(
                    f"invalid resource version: {resource_version!r}"
                ) from None
        try:
            store_watch = self.store.watch(prefix, since)
        except RevisionCompactedError as exc:
            raise errors.gone(str(exc)) from exc
        return watch.ServiceWatch(store_watch, initial, matches)
