"""``HttpClient``: the ``Client`` protocol over HTTP, against any Kubernetes API server.

What it is: a synchronous client (``httpx``) for kubeprio's own API server
(``apiserver.http``) or a real cluster, with the same verbs and types as the in-process
``ApiService``, so a scheduler or controller runs unchanged in a separate process
(docs/design.md, "One system, three drivers"). URLs come from the resource table
(``api.kinds``), bodies from ``api.serialization``.

Errors: a failed request raises the ``api.errors.StatusError`` subclass the server's
``Status`` body names (``errors.from_status``), the same class ``ApiService`` raises
in-process; a body that is not a Status becomes a ``StatusError`` with the HTTP code and
the text. Transport failures are wrapped in ``HttpClientError``. ``Warning`` headers
(admission warnings) go to ``on_warning``.

Watches: ``HttpWatch`` keeps a streaming response open. ``poll`` never waits longer
than ``poll_timeout`` (default 50 ms): it returns the events that arrived. A read that
times out ends httpx's stream, so the next ``poll`` resumes the watch from the last
resourceVersion seen (bookmarks keep it fresh), which is how watches are meant to be
resumed; a 410 from the server closes the watch (relist, then watch again). No thread is
started; ``events(timeout)`` is a blocking iterator for scripts and tests.

This and ``apiserver.http`` are the only modules that import an HTTP library.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

import httpx

from kubeprio.api import errors, kinds
from kubeprio.api.apps import Scale
from kubeprio.api.core import Binding, Pod
from kubeprio.api.meta import DeleteOptions, Status
from kubeprio.api.model import JsonDict
from kubeprio.api.patch import PatchType
from kubeprio.api.policy import Eviction
from kubeprio.api.serialization import DecodeError, from_dict, to_dict
from kubeprio.client.protocol import (
    DeleteRequest,
    ObjectList,
    WatchEvent,
    WatchEventType,
)
from kubeprio.errors import KubeprioError

T = TypeVar("T")

JSON = "application/json"
_LIST_PARAMS = frozenset({"labelSelector", "fieldSelector"})


class HttpClientError(KubeprioError):
    """The server could not be reached or answered something that is not HTTP/JSON."""


def collection_path(info: kinds.ResourceInfo, namespace: str | None) -> str:
    """``/api/v1/namespaces/<ns>/pods`` (or all namespaces / cluster-scoped)."""
    prefix = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    if info.namespaced and namespace:
        return f"{prefix}/namespaces/{namespace}/{info.plural}"
    return f"{prefix}/{info.plural}"


def object_path(info: kinds.ResourceInfo, name: str, namespace: str | None) -> str:
    """``/api/v1/namespaces/<ns>/pods/<name>``."""
    return f"{collection_path(info, namespace)}/{name}"


def status_error(code: int, text: str) -> errors.StatusError:
    """Rebuild the ``StatusError`` of an error response (a Status body, or plain text)."""
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        if not body.get("metadata"):
            # Servers always send ``metadata: {}``; it carries nothing for an error.
            body = {key: value for key, value in body.items() if key != "metadata"}
        try:
            return errors.from_status(from_dict(Status, body))
        except DecodeError:
            pass
    error_cls: type[errors.StatusError] = errors.StatusError
    for cls in errors.StatusError.__subclasses__():
        if cls.code == code:
            error_cls = cls
            break
    return error_cls.build(text.strip() or f"HTTP {code}", code=code)


def parse_warning(value: str) -> str | None:
    """The text of a ``299 - "..."`` warning header value, unescaped."""
    value = value.strip()
    prefix = '299 - "'
    if not value.startswith(prefix):
        return None
    text: list[str] = []
    escaped = False
    for ch in value[len(prefix) :]:
        if escaped:
            text.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            return "".join(text)
        else:
            text.append(ch)
    return None


class HttpClient:
    """The ``Client`` protocol over HTTP.

    ``base_url`` is the server (``https://127.0.0.1:6443``); ``token`` a bearer token;
    ``verify`` a CA bundle path, ``True`` or ``False`` (httpx semantics).
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        verify: str | bool = True,
        timeout: float = 30.0,
        on_warning: Callable[[str], None] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Accept": JSON, "User-Agent": "kubeprio"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=base_url,
            headers=headers,
            verify=verify,
            timeout=timeout,
            transport=transport,
        )
        self.on_warning = on_warning

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    # --- transport -------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: object = None,
        content_type: str = JSON,
    ) -> JsonDict:
        """Send one request; return the JSON body or raise the server's ``StatusError``."""
        content = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": content_type} if content is not None else {}
        try:
            response = self._http.request(
                method, path, params=params, content=content, headers=headers
            )
        except httpx.HTTPError as exc:
            raise HttpClientError(f"{method} {path}: {exc}") from exc
        self._warn(response)
        if response.status_code >= 400:
            raise status_error(response.status_code, response.text)
        try:
            data = response.json()
        except ValueError as exc:
            raise HttpClientError(f"{method} {path}: response is not JSON") from exc
        if not isinstance(data, dict):
            raise HttpClientError(f"{method} {path}: response is not a JSON object")
        return data

    def _warn(self, response: httpx.Response) -> None:
        if self.on_warning is None:
            return
        for value in response.headers.get_list("warning"):
            text = parse_warning(value)
            if text is not None:
                self.on_warning(text)

    # --- Client protocol --------------------------------------------------------------------

    def get(self, kind: type[T], name: str, namespace: str | None = None) -> T:
        """Return one object."""
        info = kinds.for_model(kind)
        return from_dict(kind, self.request("GET", object_path(info, name, namespace)))

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
        """List objects."""
        info = kinds.for_model(kind)
        params: dict[str, str] = {}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        if limit:
            params["limit"] = str(limit)
        if continue_token:
            params["continue"] = continue_token
        data = self.request("GET", collection_path(info, namespace), params=params)
        metadata = data.get("metadata") or {}
        items = [from_dict(kind, item) for item in data.get("items") or []]
        return ObjectList(
            items,
            str(metadata.get("resourceVersion") or ""),
            metadata.get("continue") or None,
            metadata.get("remainingItemCount"),
        )

    def watch(
        self,
        kind: type[T],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> HttpWatch[T]:
        """Follow changes (with no resourceVersion: current objects first, as ADDED)."""
        info = kinds.for_model(kind)
        params = {"watch": "true", "allowWatchBookmarks": "true"}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        return HttpWatch(
            self._http,
            kind,
            collection_path(info, namespace),
            params,
            resource_version=resource_version,
        )

    def create(self, obj: T, *, dry_run: bool = False) -> T:
        """Create an object."""
        info = kinds.for_object(obj)
        params = {"dryRun": "All"} if dry_run else None
        path = collection_path(info, obj.metadata.namespace)  # type: ignore[attr-defined]
        return from_dict(type(obj), self.request("POST", path, params=params, body=to_dict(obj)))

    def update(self, obj: T, *, dry_run: bool = False) -> T:
        """Replace an object."""
        return self._put(obj, "", dry_run=dry_run)

    def update_status(self, obj: T) -> T:
        """Replace an object's status."""
        return self._put(obj, "/status", dry_run=False)

    def _put(self, obj: T, suffix: str, *, dry_run: bool) -> T:
        info = kinds.for_object(obj)
        metadata = obj.metadata  # type: ignore[attr-defined]
        path = object_path(info, metadata.name or "", metadata.namespace) + suffix
        params = {"dryRun": "All"} if dry_run else None
        return from_dict(type(obj), self.request("PUT", path, params=params, body=to_dict(obj)))

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
        """Patch an object or a subresource."""
        info = kinds.for_model(kind)
        path = object_path(info, name, namespace)
        if subresource:
            path += f"/{subresource}"
        params = {"fieldManager": "kubeprio"} if patch_type is PatchType.APPLY_PATCH else None
        data = self.request("PATCH", path, params=params, body=patch, content_type=patch_type.value)
        return from_dict(kind, data)

    def delete(
        self,
        kind: type[T],
        name: str,
        namespace: str | None = None,
        *,
        options: DeleteRequest | None = None,
    ) -> T:
        """Delete an object; return its state (a stub with name and uid once it is gone)."""
        info = kinds.for_model(kind)
        options = options or DeleteRequest()
        body = to_dict(
            DeleteOptions(
                api_version="v1",
                kind="DeleteOptions",
                grace_period_seconds=options.grace_period_seconds,
                preconditions=options.preconditions,
                propagation_policy=options.propagation_policy,
                dry_run=("All",) if options.dry_run else None,
            )
        )
        data = self.request("DELETE", object_path(info, name, namespace), body=body)
        if data.get("kind") == "Status":
            details = data.get("details") or {}
            stub = {"metadata": {"name": name, "namespace": namespace, "uid": details.get("uid")}}
            return from_dict(kind, stub)
        return from_dict(kind, data)

    def bind(self, binding: Binding) -> None:
        """``pods/binding``."""
        info = kinds.for_model(Pod)
        metadata = binding.metadata
        path = object_path(info, metadata.name or "", metadata.namespace) + "/binding"
        self.request("POST", path, body=to_dict(binding))

    def evict(self, eviction: Eviction) -> None:
        """``pods/eviction``."""
        info = kinds.for_model(Pod)
        metadata = eviction.metadata
        path = object_path(info, metadata.name or "", metadata.namespace) + "/eviction"
        self.request("POST", path, body=to_dict(eviction))

    def get_scale(self, kind: type[object], name: str, namespace: str | None = None) -> Scale:
        """GET ``<kind>/scale``."""
        path = object_path(kinds.for_model(kind), name, namespace) + "/scale"
        return from_dict(Scale, self.request("GET", path))

    def update_scale(self, kind: type[object], scale: Scale) -> Scale:
        """PUT ``<kind>/scale``."""
        metadata = scale.metadata
        path = object_path(kinds.for_model(kind), metadata.name or "", metadata.namespace)
        return from_dict(Scale, self.request("PUT", path + "/scale", body=to_dict(scale)))


class HttpWatch(Generic[T]):
    """A watch over a streaming response; ``poll`` waits at most ``poll_timeout`` seconds."""

    def __init__(
        self,
        http: httpx.Client,
        kind: type[T],
        path: str,
        params: dict[str, str],
        *,
        resource_version: str | None,
        poll_timeout: float = 0.05,
    ) -> None:
        self._http = http
        self._kind = kind
        self._path = path
        self._params = params
        self._resource_version = resource_version or ""
        self.poll_timeout = poll_timeout
        self._response: httpx.Response | None = None
        self._lines: Iterator[str] | None = None
        self._buffer = ""
        self._closed = False
        self._listener: Callable[[], None] | None = None
        self._pending: list[WatchEvent[T]] = []
        if not self._resource_version:
            self._initial_list()

    def _initial_list(self) -> None:
        """List first, so a resumed stream never replays the initial ADDED events."""
        list_params = {k: v for k, v in self._params.items() if k in _LIST_PARAMS}
        try:
            response = self._http.get(self._path, params=list_params)
        except httpx.HTTPError as exc:
            raise HttpClientError(f"list {self._path}: {exc}") from exc
        if response.status_code >= 400:
            raise status_error(response.status_code, response.text)
        data = response.json()
        for item in data.get("items") or []:
            obj = from_dict(self._kind, item)
            version = (item.get("metadata") or {}).get("resourceVersion") or 0
            self._pending.append(WatchEvent(WatchEventType.ADDED, obj, int(version)))
        self._resource_version = str((data.get("metadata") or {}).get("resourceVersion") or "")

    def _open(self, read_timeout: float) -> None:
        params = dict(self._params)
        if self._resource_version:
            params["resourceVersion"] = self._resource_version
        timeout = httpx.Timeout(30.0, read=read_timeout)
        request = self._http.build_request("GET", self._path, params=params, timeout=timeout)
        try:
            response = self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise HttpClientError(f"watch {self._path}: {exc}") from exc
        if response.status_code >= 400:
            text = response.read().decode(errors="replace")
            response.close()
            raise status_error(response.status_code, text)
        self._response = response
        self._lines = response.iter_text()

    def _drop_stream(self) -> None:
        if self._response is not None:
            self._response.close()
        self._response = None
        self._lines = None

    def _read(self, read_timeout: float) -> list[str]:
        """Read text until a read times out (or the server ends the stream)."""
        if self._lines is None:
            self._open(read_timeout)
        assert self._lines is not None
        chunks: list[str] = []
        try:
            for chunk in self._lines:
                chunks.append(chunk)
                if chunk.endswith("\n"):
                    break
        except httpx.ReadTimeout:
            self._drop_stream()
        except httpx.HTTPError:
            self._drop_stream()
            self._closed = True
        else:
            if not chunks:  # the server ended the stream (timeoutSeconds or shutdown)
                self._drop_stream()
        self._buffer += "".join(chunks)
        lines, _, self._buffer = self._buffer.rpartition("\n")
        return [line for line in lines.split("\n") if line.strip()] if lines else []

    def _decode(self, line: str) -> WatchEvent[T] | None:
        event = json.loads(line)
        event_type = WatchEventType(event["type"])
        obj = event.get("object") or {}
        if event_type is WatchEventType.ERROR:
            self._closed = True
            self._drop_stream()
            return None
        metadata = obj.get("metadata") or {}
        version = str(metadata.get("resourceVersion") or "")
        if version:
            self._resource_version = version
        if event_type is WatchEventType.BOOKMARK:
            return None
        return WatchEvent(event_type, from_dict(self._kind, obj), int(version or 0))

    def poll(self) -> list[WatchEvent[T]]:
        """The events that arrived, oldest first; waits at most ``poll_timeout``."""
        events, self._pending = self._pending, []
        if self._closed:
            return events
        for line in self._read(self.poll_timeout):
            event = self._decode(line)
            if event is not None:
                events.append(event)
            if self._closed:
                break
        return events

    def events(self, timeout: float) -> Iterator[WatchEvent[T]]:
        """Blocking iterator: yield events for up to ``timeout`` seconds (scripts, tests)."""
        deadline = time.monotonic() + timeout
        while not self._closed and time.monotonic() < deadline:
            yield from self.poll()

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Accepted for protocol compatibility: an HTTP watch cannot wake anyone; poll it."""
        self._listener = listener

    @property
    def notifies(self) -> bool:
        """Events arrive only when polled."""
        return False

    def close(self) -> None:
        """Stop the watch."""
        self._closed = True
        self._drop_stream()

    @property
    def closed(self) -> bool:
        """Whether the watch ended (closed, or the server answered 410): relist then."""
        return self._closed
