"""The reads of custom resources: get, list and watch, as JSON or as a Table.

What it is: the read half of v1.32's ``apiextensions-apiserver`` custom resource
handler: get one object (404 ``widgets.example.com "x" not found``), list a collection
with label selectors and the field selectors ``metadata.name`` and
``metadata.namespace``, watch from a ``resourceVersion`` (410 as an ERROR event once
compacted) or from the current state; each as the served version's JSON
(``apiserver.crwire``) or as a Table of its printer columns (``apiserver.crtables``).
``CustomResourceReads`` is the base of the writes (``apiserver.crwrites``), which read the
current object the same way.

Who drives it: ``apiserver.crrest``'s dispatch of ``apiserver.http``'s requests.
"""

from __future__ import annotations

from typing import Any

from kubeprio.api import errors
from kubeprio.api.apiextensions import CustomObject
from kubeprio.apiserver import listing, tables
from kubeprio.apiserver.crwire import versioned
from kubeprio.apiserver.customresources import CustomVersion
from kubeprio.apiserver.negotiation import flag, integer, negotiate
from kubeprio.apiserver.restmessages import Reply, RestRequest
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.watch import ServiceWatch
from kubeprio.apiserver.watchstream import WatchStream
from kubeprio.clock import Clock
from kubeprio.store.errors import KeyNotFoundError
from kubeprio.store.interface import ObjectKey


class CustomResourceReads:
    """Reads custom objects from the service's store."""

    def __init__(self, service: ApiService, *, clock: Clock, watch_timeout: float) -> None:
        self.service = service
        self.store = service.store
        self.clock = clock
        self.watch_timeout = watch_timeout

    def _key(self, found: CustomVersion, namespace: str | None, name: str) -> ObjectKey:
        return ObjectKey(found.store_resource, namespace or "", name)

    def _read(self, found: CustomVersion, namespace: str | None, name: str) -> CustomObject:
        try:
            obj = self.store.get(self._key(found, namespace, name))
        except KeyNotFoundError:
            raise errors.not_found(found.info.plural, found.info.group, name) from None
        assert isinstance(obj, CustomObject)
        return obj

    def _answer(
        self, request: RestRequest, found: CustomVersion, obj: CustomObject, code: int
    ) -> Reply:
        output = negotiate(request.accept)
        if output.table:
            return Reply(
                code,
                tables.build_table(
                    CustomObject,
                    [obj],
                    now=self.clock.now(),
                    resource_version=obj.metadata.resource_version,
                    api_version=output.table_api_version,
                    printer=found.printer,
                ),
            )
        return Reply(code, versioned(found, obj))

    def get(self, request: RestRequest, found: CustomVersion) -> Reply:
        """GET one object (or its ``status``)."""
        target = request.target
        return self._answer(request, found, self._read(found, target.namespace, target.name), 200)

    def list_collection(self, request: RestRequest, found: CustomVersion) -> Reply:
        """GET a collection with label and field selectors."""
        target = request.target
        query = request.query
        matches = listing.object_filter(
            target.info, query.get("labelSelector") or None, query.get("fieldSelector") or None
        )
        items, revision = self.store.list(found.prefix(target.namespace))
        selected = [obj for obj in items if matches is None or matches(obj)]
        output = negotiate(request.accept)
        if output.table:
            return Reply(
                200,
                tables.build_table(
                    CustomObject,
                    selected,
                    now=self.clock.now(),
                    resource_version=str(revision),
                    api_version=output.table_api_version,
                    printer=found.printer,
                ),
            )
        return Reply(
            200,
            {
                "apiVersion": found.info.api_version,
                "items": [versioned(found, obj) for obj in selected],  # type: ignore[arg-type]
                "kind": found.list_kind,
                "metadata": {"continue": "", "resourceVersion": str(revision)},
            },
        )

    def watch(self, request: RestRequest, found: CustomVersion) -> WatchStream:
        """``?watch=true`` from ``resourceVersion`` (or the current state, as ADDED events)."""
        target = request.target
        query = request.query
        matches = listing.object_filter(
            target.info, query.get("labelSelector") or None, query.get("fieldSelector") or None
        )
        prefix = found.prefix(target.namespace)
        since = query.get("resourceVersion") or ""
        initial: list[Any] = []
        if since in ("", "0"):
            initial, revision = self.store.list(prefix)
            initial = [obj for obj in initial if matches is None or matches(obj)]
        else:
            try:
                revision = int(since)
            except ValueError:
                raise errors.bad_request(f"invalid resource version: {since}") from None
        try:
            store_watch = self.store.watch(prefix, revision)
        except Exception as exc:  # RevisionCompactedError: 410 as an ERROR event
            if type(exc).__name__ != "RevisionCompactedError":
                raise
            return WatchStream.failed(errors.gone(str(exc)), model=CustomObject, clock=self.clock)
        timeout = integer(query, "timeoutSeconds")
        return WatchStream(
            ServiceWatch(store_watch, initial, matches),
            model=CustomObject,
            output=negotiate(request.accept),
            clock=self.clock,
            current_revision=self.store.current_revision,
            bookmarks=flag(query, "allowWatchBookmarks"),
            timeout=float(timeout) if timeout and timeout > 0 else self.watch_timeout,
            encode=lambda obj: versioned(found, obj),
            printer=found.printer,
            kind=(found.info.api_version, found.info.kind),
        )
