"""``RestReads``: the read verbs of the REST handler: GET, list, watch, ``pods/log`` and
the pod streams.

Mirrors upstream's ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go`` and
``watch.go``: an object or a collection as plain JSON or as a server-side ``Table``
(``apiserver.tables``, ``includeObject``), lists with selectors and ``limit``/``continue``,
watches as a ``WatchStream`` (a 410 Gone becomes the stream's one ERROR event).
``pods/log`` follows ``apiserver.podlogs``; ``pods/exec``, ``attach`` and
``portforward`` are refused as ``apiserver.podstreams`` words it.

Who drives it: ``RestHandler`` (``apiserver.rest``) is built on it and dispatches here.
"""

from __future__ import annotations

from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.api.model import JsonDict
from kubeprio.apiserver import podlogs, podstreams, tables
from kubeprio.apiserver.negotiation import flag, integer, negotiate
from kubeprio.apiserver.restmessages import (
    LogFollow,
    Reply,
    RestRequest,
    TextReply,
    field_selector,
    object_body,
)
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.watchstream import WatchStream
from kubeprio.clock import Clock


class RestReads:
    """GET, list and watch over an ``ApiService``."""

    service: ApiService
    clock: Clock
    watch_timeout: float

    def _include(self, request: RestRequest) -> tables.IncludeObject:
        value = request.query.get("includeObject") or tables.IncludeObject.METADATA.value
        try:
            return tables.IncludeObject(value)
        except ValueError:
            raise errors.bad_request(f"unsupported includeObject value {value!r}") from None

    def get(self, request: RestRequest) -> Reply:
        """GET one object, as JSON or as a one-row Table."""
        target = request.target
        output = negotiate(request.accept)
        obj = self.service.get(target.info.model, target.name, target.namespace)
        if output.table:
            table = tables.build_table(
                target.info.model,
                [obj],
                now=self.clock.now(),
                resource_version=obj.metadata.resource_version,
                include=self._include(request),
                api_version=output.table_api_version,
            )
            return Reply(200, table)
        return Reply(200, object_body(target.info, obj))

    def list_collection(self, request: RestRequest) -> Reply:
        """GET a collection with selectors and ``limit``/``continue``."""
        target = request.target
        query = request.query
        output = negotiate(request.accept)
        result = self.service.list(
            target.info.model,
            target.namespace,
            label_selector=query.get("labelSelector") or None,
            field_selector=field_selector(target.info, query),
            limit=integer(query, "limit"),
            continue_token=query.get("continue") or None,
        )
        if output.table:
            table = tables.build_table(
                target.info.model,
                result.items,
                now=self.clock.now(),
                resource_version=result.resource_version,
                include=self._include(request),
                continue_token=result.continue_token,
                api_version=output.table_api_version,
            )
            return Reply(200, table)
        metadata: JsonDict = {"resourceVersion": result.resource_version}
        if result.continue_token:
            metadata["continue"] = result.continue_token
        if result.remaining_item_count is not None:
            metadata["remainingItemCount"] = result.remaining_item_count
        info = target.info
        return Reply(
            200,
            {
                "kind": f"{info.kind}List",
                "apiVersion": info.api_version,
                "metadata": metadata,
                "items": [object_body(info, item, remember=False) for item in result.items],
            },
        )

    def watch(self, request: RestRequest) -> WatchStream:
        """``?watch=true``: a stream of events after ``resourceVersion``."""
        target = request.target
        query = request.query
        output = negotiate(request.accept)
        timeout = integer(query, "timeoutSeconds")
        include = self._include(request)
        try:
            service_watch = self.service.watch(
                target.info.model,
                target.namespace,
                resource_version=query.get("resourceVersion") or None,
                label_selector=query.get("labelSelector") or None,
                field_selector=field_selector(target.info, query),
            )
        except errors.GoneError as exc:
            return WatchStream.failed(exc, model=target.info.model, clock=self.clock)
        return WatchStream(
            service_watch,
            model=target.info.model,
            output=output,
            clock=self.clock,
            current_revision=self.service.store.current_revision,
            include=include,
            bookmarks=flag(query, "allowWatchBookmarks"),
            timeout=float(timeout) if timeout and timeout > 0 else self.watch_timeout,
            encode=(lambda obj: object_body(target.info, obj))
            if target.info.storage_version
            else None,
        )

    def logs(self, request: RestRequest) -> TextReply | LogFollow:
        """``pods/log`` (see ``podlogs``): options first, then the pod, its container and
        what its kubelet would answer. Simulated containers print nothing."""
        target = request.target
        options = podlogs.parse_options(request.query, target.name)
        pod: Pod = self.service.get(Pod, target.name, target.namespace)
        container = podlogs.container_for(pod, options.container)
        if not (pod.spec and pod.spec.node_name):
            # Upstream's LogLocation: no node yet, an empty log.
            return TextReply(b"")
        podlogs.check_kubelet_answer(pod, container, previous=options.previous)
        if options.follow and not options.previous and podlogs.is_running(pod, container):
            return LogFollow(target.namespace or "", target.name, pod.metadata.uid or "", container)
        return TextReply(b"")

    def stream(self, request: RestRequest) -> Reply:
        """``pods/exec``, ``pods/attach``, ``pods/portforward`` (see ``podstreams``)."""
        target = request.target
        pod: Pod = self.service.get(Pod, target.name, target.namespace)
        container = request.query.get("container") or ""
        raise podstreams.refuse(pod, target.subresource or "", container)
