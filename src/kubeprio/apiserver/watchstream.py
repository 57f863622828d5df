"""A watch as the bytes of a chunked HTTP response: newline-delimited JSON events.

What it is: ``WatchStream`` turns a ``ServiceWatch`` into wire events, in upstream's
format (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go``)::

    {"type":"ADDED","object":{...}}\\n
    {"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12"}}}\\n
    {"type":"ERROR","object":{"kind":"Status",...,"reason":"Expired","code":410}}\\n

With a Table ``Accept`` every object is a one-row ``Table``; the column definitions go in
the first event only, as upstream's watch encoder does. The newline after each event is
required: the Python client splits the stream on it. A resourceVersion older than the
retained history answers with one ERROR event carrying a 410 ``Expired`` Status.

Who drives it: ``apiserver.http`` pumps it from an async response body (waking on the
listener, sending bookmarks on a timer, ending after ``timeoutSeconds``). This module is
synchronous and non-blocking: ``drain`` returns whatever is pending.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from kubeprio.api import errors
from kubeprio.api.encoded import json_fragment
from kubeprio.api.model import JsonDict
from kubeprio.apiserver import status, tables
from kubeprio.apiserver.negotiation import Output
from kubeprio.apiserver.watch import ServiceWatch
from kubeprio.clock import Clock


def encode_event(event_type: str, obj: JsonDict | orjson.Fragment) -> bytes:
    """One event line, compact JSON plus ``\\n``."""
    return orjson.dumps({"type": event_type, "object": obj}, option=orjson.OPT_APPEND_NEWLINE)


class WatchStream:
    """The events of one watch request, encoded; closing it stops the underlying watch."""

    def __init__(
        self,
        watch: ServiceWatch | None,
        *,
        model: type[Any],
        output: Output,
        clock: Clock,
        current_revision: Callable[[], int],
        include: tables.IncludeObject = tables.IncludeObject.METADATA,
        bookmarks: bool = False,
        timeout: float,
        error: errors.StatusError | None = None,
        encode: Callable[[Any], JsonDict | orjson.Fragment] | None = None,
        printer: tables.TablePrinter | None = None,
        kind: tuple[str, str] | None = None,
    ) -> None:
        self._watch = watch
        self._model = model
        self._output = output
        self._clock = clock
        self._current_revision = current_revision
        self._include = include
        self.bookmarks = bookmarks
        self.timeout = timeout
        self._pending_error = error
        # A version served by conversion encodes its objects converted (``restmessages.object_body``).
        self._encode = encode or json_fragment
        self._columns_sent = False
        # A custom resource's Table columns and (apiVersion, kind) for bookmarks.
        self._printer = printer
        self._kind = kind
        self._last_revision = 0

    @classmethod
    def failed(cls, error: errors.StatusError, *, model: type[Any], clock: Clock) -> WatchStream:
        """A stream that sends one ERROR event (410 Expired) and ends."""
        return cls(
            None,
            model=model,
            output=Output(),
            clock=clock,
            current_revision=lambda: 0,
            timeout=0.0,
            error=error,
        )

    def _encode_object(self, obj: Any) -> JsonDict | orjson.Fragment:
        if not self._output.table:
            return self._encode(obj)
        table = tables.build_table(
            self._model,
            [obj],
            now=self._clock.now(),
            resource_version=obj.metadata.resource_version,
            include=self._include,
            with_columns=not self._columns_sent,
            api_version=self._output.table_api_version,
            printer=self._printer,
        )
        self._columns_sent = True
        return table

    def drain(self) -> bytes:
        """Every pending event, encoded (empty when nothing is pending)."""
        if self._pending_error is not None:
            error, self._pending_error = self._pending_error, None
            return encode_event("ERROR", status.error_body(error))
        if self._watch is None:
            return b""
        chunks = []
        for event in self._watch.poll():
            self._last_revision = max(self._last_revision, event.revision)
            chunks.append(encode_event(event.type.value, self._encode_object(event.object)))
        return b"".join(chunks)

    def bookmark(self) -> bytes:
        """A BOOKMARK event at the store's current revision (upstream: watch cache RV)."""
        revision = str(max(self._current_revision(), self._last_revision))
        info_obj: JsonDict
        if self._output.table:
            info_obj = {
                "kind": "Table",
                "apiVersion": self._output.table_api_version,
                "metadata": {"resourceVersion": revision},
                "columnDefinitions": None,
                "rows": [],
            }
        else:
            if self._kind is not None:
                api_version, kind = self._kind
            else:
                template = self._model()
                api_version, kind = template.api_version, template.kind
            info_obj = {
                "kind": kind,
                "apiVersion": api_version,
                "metadata": {"resourceVersion": revision},
            }
        return encode_event("BOOKMARK", info_obj)

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Wake ``listener`` when events become pending."""
        if self._watch is not None:
            self._watch.set_listener(listener)

    @property
    def closed(self) -> bool:
        """Whether the stream has nothing more to send (the watch ended)."""
        if self._pending_error is not None:
            return False
        return self._watch is None or self._watch.closed

    def close(self) -> None:
        """Stop the underlying watch."""
        if self._watch is not None:
            self._watch.set_listener(None)
            self._watch.close()
