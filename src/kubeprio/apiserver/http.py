"""The ASGI HTTP adapter: Kubernetes REST over ``ApiService``, for kubectl and client libraries.

What it is: ``create_app(service)`` returns a Starlette application serving

* ``/version`` (and ``/version/``), ``/api``, ``/apis`` (aggregated discovery when asked
  for ``v=v2``, legacy otherwise), ``/api/v1`` and ``/apis/<g>/<v>`` (legacy resource
  lists), ``/apis/<g>`` (``APIGroup``) -- ``apiserver.discovery``;
* ``/openapi/v3`` and ``/openapi/v3/<gv>`` -- ``apiserver.openapi``;
* ``/healthz``, ``/livez``, ``/readyz`` and ``/<endpoint>/<check>`` -- ``apiserver.health``;
* ``/metrics`` -- the Prometheus text the ``metrics`` renderer it is given writes (404
  without one);
* ``/.well-known/openid-configuration`` and ``/openid/v1/jwks`` -- the service account
  issuer's discovery documents (``apiserver.issuerdiscovery``; 404 until set);
* every resource path of the resource table -- ``apiserver.routes`` resolves it,
  ``apiserver.rest`` serves it; watches stream as chunked newline-delimited JSON.

This module only translates between HTTP and those modules: it reads the request (path,
query, ``Accept``, ``Content-Type``, body), asks the authenticators who is calling (the
TLS client certificate first, then the headers; every path, discovery included: 401
without credentials), applies ``Impersonate-*`` headers
(``apiserver.impersonation``), and asks the authorizer whether the caller may make a
resource request (``apiserver.authz``), writes
JSON with ``Content-Type: application/json`` (kubectl refuses success bodies of any other
type), ``Warning: 299 - "..."`` headers for admission warnings, and error ``Status``
bodies (``apiserver.status``). It is the only module of the API server that imports the
HTTP framework (an import-linter contract).

Who drives it: an ASGI server (uvicorn in ``kubeprio serve`` and in the e2e tests),
Starlette's ``TestClient`` in unit tests. Handlers are ``async`` and call ``ApiService``
synchronously on the event loop: the service and its store are not thread-safe, and the
real-time driver of ``kubeprio serve`` runs the scheduler and kubelets on the same loop.
A write that must wait on admission webhooks is run by ``apiserver.webhookwaits``: the
calls wait on worker threads between synchronous attempts of the write.
A watch waits on the store watch's listener and wakes with ``call_soon_threadsafe``; its
bookmarks and ``timeoutSeconds`` use the event loop's monotonic timer, and request
durations (``apiserver.requestmetrics``) ``time.perf_counter``: the places this package
measures time without the injected clock (AGE cells use ``clock``). A counted request is
observed once answered; a watch or followed log, when its stream ends (upstream's
handler returns then too).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Final

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kubeprio.admission.chain import UserInfo
from kubeprio.api import errors, kinds
from kubeprio.api.componentstatus import ComponentCondition
from kubeprio.api.core import Pod
from kubeprio.api.flowcontrol import HEADER_FLOW_SCHEMA_UID, HEADER_PRIORITY_LEVEL_UID
from kubeprio.api.model import JsonDict
from kubeprio.apiserver import (
    authz,
    componentstatus,
    discovery,
    flowclassifier,
    health,
    impersonation,
    issuerdiscovery,
    openapi,
    podlogs,
    requestmetrics,
    status,
)
from kubeprio.apiserver.crrest import CustomResourceRest
from kubeprio.apiserver.customquota import CustomResourceCounts
from kubeprio.apiserver.customresources import CustomResourceRegistry
from kubeprio.apiserver.groupcommit import GroupCommit
from kubeprio.apiserver.requestmetrics import RequestLabels, RequestMetrics
from kubeprio.apiserver.resourcelane import ResourceLane
from kubeprio.apiserver.resourcemetrics import PodsOnNode
from kubeprio.apiserver.rest import DEFAULT_WATCH_TIMEOUT, RestHandler
from kubeprio.apiserver.restdecoding import JSON_TYPE
from kubeprio.apiserver.restmessages import LogFollow, Reply, RestRequest, TextReply
from kubeprio.apiserver.routes import RouteTable, Target, split_path
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.tokenrequest import TokenIssuer
from kubeprio.apiserver.tokenreview import TokenReviewAuthenticator
from kubeprio.apiserver.watchstream import WatchStream
from kubeprio.apiserver.webhookwaits import WebhookWaits
from kubeprio.clock import Clock
from kubeprio.store.errors import KeyNotFoundError
from kubeprio.store.interface import ObjectKey

FLOW_SCHEMA_HEADER: Final = HEADER_FLOW_SCHEMA_UID.lower().encode()
PRIORITY_LEVEL_HEADER: Final = HEADER_PRIORITY_LEVEL_UID.lower().encode()
TEXT_TYPE: Final = "text/plain"
"""``pods/log`` answers (upstream's log REST produces text/plain)."""
FOLLOW_POLL_SECONDS: Final = 0.5
"""How often a followed log checks whether its container still runs."""
DEFAULT_BOOKMARK_INTERVAL: Final = 60.0
"""Upstream sends a bookmark about once a minute to watchers that allow them."""

Authenticator = Callable[[Mapping[str, str]], UserInfo | None]
"""Maps request headers to the caller; ``None`` means unauthenticated (401)."""
CertAuthenticator = Callable[[Sequence[str]], UserInfo | None]
"""Maps a TLS client certificate chain (PEM, the client's first) to the caller, or None."""
MetricsRenderer = Callable[[], tuple[bytes, str]]
"""Writes the ``/metrics`` page: its body and ``Content-Type``."""

RESOURCE_METHODS: Final = ["GET", "POST", "PUT", "PATCH", "DELETE"]
HEALTH_PATHS: Final = tuple(f"/{endpoint}" for endpoint in health.ENDPOINTS)
LOG: Final = logging.getLogger("kubeprio.apiserver")
IMPERSONATE_PREFIX: Final = impersonation.HEADER_PREFIX.encode("latin-1")
"""The raw (bytes) form of the impersonation headers' prefix, checked on every request."""
HEALTH_PROBE_KEY: Final = ObjectKey("namespaces", "", "default")
"""What the ``etcd`` health check reads (found or not, the store answered)."""


def _dumps(body: JsonDict | orjson.Fragment) -> bytes:
    return orjson.dumps(body)


def json_response(
    body: JsonDict | orjson.Fragment,
    code: int = 200,
    *,
    warnings: tuple[str, ...] = (),
    content_type: str = JSON_TYPE,
) -> Response:
    """A JSON response with ``Warning`` headers."""
    response = Response(_dumps(body), status_code=code, media_type=content_type)
    # Each text once, as upstream's warning recorder (``filters/warning.go``) keeps them.
    for text in dict.fromkeys(warnings):
        response.headers.append("Warning", status.warning_header(text))
    return response


def error_response(error: errors.StatusError) -> Response:
    """A Status error body with its HTTP code."""
    return json_response(
        status.error_body(error), status.error_code(error), warnings=error.warnings
    )


Handler = Callable[["KubeApp", Request], Awaitable[Response]]


def _non_resource_path(handler: Handler) -> Handler:
    """A handler of a path outside the resource tree, run once ``KubeApp._non_resource``
    has authenticated and authorized the request (a refusal is answered as a Status)."""

    @functools.wraps(handler)
    async def checked(app: KubeApp, request: Request) -> Response:
        try:
            app._non_resource(request)
        except errors.StatusError as exc:
            return error_response(exc)
        return await handler(app, request)

    return checked


class KubeApp:
    """The request handlers of one app (a class so the routes share the service)."""

    def __init__(
        self,
        service: ApiService,
        *,
        clock: Clock,
        authenticator: Authenticator | None,
        authorizer: authz.ReviewingAuthorizer | None,
        watch_timeout: float,
        bookmark_interval: float,
        request_metrics: RequestMetrics | None = None,
        metrics: MetricsRenderer | None = None,
        token_issuer: TokenIssuer | None = None,
        token_reviewer: TokenReviewAuthenticator | None = None,
        pods_on_node: PodsOnNode | None = None,
        cert_authenticator: CertAuthenticator | None = None,
    ) -> None:
        self.service = service
        self.cert_authenticator = cert_authenticator
        self.request_metrics = request_metrics or RequestMetrics()
        self.metrics_renderer = metrics
        # Set by serve once the listening address (the default JWKS URI's host) is known.
        self.issuer_discovery: issuerdiscovery.IssuerDiscovery | None = None
        # No authorizer: everything is allowed (one place decides that, not each caller).
        self.authorizer: authz.ReviewingAuthorizer = authorizer or authz.AllowAll()
        self.rest = RestHandler(
            service,
            clock=clock,
            watch_timeout=watch_timeout,
            reviewer=self.authorizer,
            token_issuer=token_issuer,
            token_reviewer=token_reviewer,
            pods_on_node=pods_on_node,
            components=lambda: self.component_probes,
        )
        # What ``componentstatuses`` lists, in order: kubeprio's store under upstream's
        # ``etcd-0``; ``kubeprio serve`` puts its scheduler and controller probes first.
        self.component_probes: dict[str, componentstatus.Probe] = {"etcd-0": self._etcd_probe}
        # Set by serve's APF configuration controller (apiserver.flowcontrolconfig).
        self.flow_classifier: flowclassifier.FlowClassifier | None = None
        # Set by serve when admission webhooks run: writes then wait on them off the
        # event loop (apiserver.webhookwaits); without it a write is one plain call.
        self.webhook_waits: WebhookWaits | None = None
        self.group_commit: GroupCommit | None = None
        """Set by ``kubeprio serve``: writes share a COMMIT per loop turn, and no response
        starts before the writes made so far are durable (``apiserver.groupcommit``)."""
        self.routes = RouteTable(kinds.SERVED)
        # The custom resources of Established CRDs (apiserver.customresources).
        self.custom = CustomResourceRegistry(service.store)
        # Their object counts, for the quota controller (apiserver.customquota).
        self.custom_counts = CustomResourceCounts(self.custom, service.store)
        self.custom_rest = CustomResourceRest(
            service, clock=clock, watch_timeout=watch_timeout, counts=self.custom_counts
        )
        self.authenticator = authenticator
        self.streams: dict[WatchStream, Callable[[], None]] = {}
        self._closing = False
        self.bookmark_interval = bookmark_interval
        self.openapi_docs = openapi.documents(kinds.SERVED)
        self.openapi_index = _dumps(openapi.index(self.openapi_docs))
        self.health_checks = {
            endpoint: health.checks_for(
                endpoint, store_failure=self._store_failure, shutting_down=lambda: self._closing
            )
            for endpoint in health.ENDPOINTS
        }

    # --- plumbing --------------------------------------------------------------------------

    def _cert_user(self, request: Request) -> UserInfo | None:
        """The caller named by the connection's client certificate (the ASGI TLS
        extension), asked first as upstream's union asks x509 first."""
        if self.cert_authenticator is None:
            return None
        tls = (request.scope.get("extensions") or {}).get("tls") or {}
        chain = tls.get("client_cert_chain")
        return self.cert_authenticator(chain) if chain else None

    def _served(self) -> tuple[kinds.ResourceInfo, ...]:
        """The static resource table plus the served custom resources."""
        return kinds.SERVED + self.custom.served()

    def _group_version_resources(self, group_version: str) -> list[kinds.ResourceInfo] | None:
        static = self.routes.group_versions.get(group_version)
        if static is not None:
            return list(static.values())
        custom = self.custom.routes().group_versions.get(group_version)
        return list(custom.values()) if custom is not None else None

    def _user(self, request: Request) -> UserInfo | None:
        user = None
        if self.authenticator is not None:
            user = self._cert_user(request) or self.authenticator(request.headers)
            if user is None:
                raise errors.UnauthorizedError.build("Unauthorized")
        headers = request.headers.raw
        if any(name.startswith(IMPERSONATE_PREFIX) for name, _ in headers):
            pairs = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in headers]
            user = impersonation.impersonate(user, pairs, self.authorizer)
        return user

    def _non_resource(self, request: Request) -> None:
        """Authenticate, then authorize the request's path as a non-resource request:
        discovery and health for every user, any other path for admins only. As upstream
        authorizes before routing, a tenant asking for an unknown path gets 403, not 404."""
        user = self._user(request)
        if user is None:
            return
        self._admit(request, authz.non_resource_attributes(user, request.method, request.url.path))

    def _authorize(self, user: UserInfo | None, request: Request, target: Target) -> None:
        if user is not None:
            self._admit(
                request, authz.attributes(user, request.method, target, request.query_params)
            )

    def _admit(self, request: Request, attrs: authz.Attributes) -> None:
        """Note the request for priority and fairness (``FlowHeaders``), then authorize
        it: upstream's filter classifies before the authorization filter answers, so a
        403 carries the headers too."""
        request.state.flow = attrs
        self._check(attrs)

    def flow_headers(self, attrs: authz.Attributes) -> list[tuple[bytes, bytes]]:
        """The ``X-Kubernetes-PF-*`` headers of a classified request (none before a
        configuration is set, or for a long-running request the filter lets by)."""
        classifier = self.flow_classifier
        if classifier is None or flowclassifier.bypasses_filter(attrs):
            return []
        found = classifier.classify(attrs)
        return [
            (FLOW_SCHEMA_HEADER, found.flow_schema_uid.encode()),
            (PRIORITY_LEVEL_HEADER, found.priority_level_uid.encode()),
        ]

    def _check(self, attrs: authz.Attributes) -> None:
        """Raise upstream's 403 unless the authorizer allows ``attrs``."""
        if not self.authorizer.authorize(attrs):
            raise authz.forbidden(attrs)

    def close_watches(self) -> None:
        """End every open watch stream and followed log (server shutdown): clients see
        the stream close."""
        self._closing = True
        for stream, wake in list(self.streams.items()):
            stream.close()
            wake()

    # --- discovery -------------------------------------------------------------------------

    @_non_resource_path
    async def version(self, request: Request) -> Response:
        """``/version``: reports minor "32" (the kubectl dispatcher picks kubectl 1.32)."""
        return json_response(discovery.VERSION_INFO)

    def _store_failure(self) -> str | None:
        # A real read, as upstream's etcd check reads a key: a closed store, or a SQLite
        # store made unusable by a failed commit, answers with StorageFailureError.
        try:
            self.service.store.get(HEALTH_PROBE_KEY)
        except KeyNotFoundError:
            pass
        except Exception as exc:  # any other failure of the store is an unhealthy store
            return str(exc) or type(exc).__name__
        return None

    def _etcd_probe(self) -> ComponentCondition:
        # Upstream's EtcdServer.DoServerCheck: ``ok``, or no message and the error.
        failure = self._store_failure()
        return (
            componentstatus.healthy() if failure is None else componentstatus.unreachable(failure)
        )

    @_non_resource_path
    async def health(self, request: Request) -> Response:
        """``/healthz``, ``/livez``, ``/readyz`` and their single checks (``apiserver.health``)."""
        endpoint = request.url.path.strip("/").split("/", 1)[0]
        checks = self.health_checks[endpoint]
        name = request.path_params.get("check")
        if name is None:
            started = time.perf_counter()
            query = {key: request.query_params.getlist(key) for key in request.query_params}
            found = health.answer(endpoint, checks, query)
            labels = requestmetrics.path_labels(
                f"/{endpoint}", component=requestmetrics.HEALTH_COMPONENT
            )
            self._observe(labels, found.status, started)
        else:
            one = health.answer_one(checks, name)
            if one is None:
                return error_response(status.path_not_found())
            found = one
        for failure in found.failures:
            LOG.warning("%s: %s", endpoint, failure)
        return Response(
            found.body.encode(),
            status_code=found.status,
            media_type="text/plain; charset=utf-8",
            headers={"X-Content-Type-Options": "nosniff"},
        )

    @_non_resource_path
    async def api(self, request: Request) -> Response:
        """``/api``: aggregated (v2 when asked) or ``APIVersions``."""
        if discovery.wants_aggregated(request.headers.get("accept", "")):
            return self._aggregated(core=True)
        return json_response(discovery.api_versions())

    @_non_resource_path
    async def apis(self, request: Request) -> Response:
        """``/apis``: aggregated (v2 when asked) or ``APIGroupList``."""
        if discovery.wants_aggregated(request.headers.get("accept", "")):
            return self._aggregated(core=False)
        return json_response(discovery.api_group_list(self._served()))

    def _aggregated(self, *, core: bool) -> Response:
        """Aggregated discovery, counted as upstream's instrumented handler counts it."""
        started = time.perf_counter()
        response = json_response(
            discovery.aggregated(self._served(), core=core),
            content_type=discovery.AGGREGATED_CONTENT_TYPE,
        )
        labels = requestmetrics.path_labels(
            "/api" if core else "/apis", component=requestmetrics.DISCOVERY_COMPONENT
        )
        self._observe(labels, response.status_code, started)
        return response

    @_non_resource_path
    async def metrics(self, request: Request) -> Response:
        """``/metrics``: the renderer's Prometheus text (404 when the app has none)."""
        if self.metrics_renderer is None:
            return error_response(status.path_not_found())
        body, content_type = self.metrics_renderer()
        # Set as a header: a media type would be given a second charset.
        return Response(body, headers={"Content-Type": content_type})

    @_non_resource_path
    async def issuer_metadata(self, request: Request) -> Response:
        """The OIDC configuration or the JWKS (404 while the app has none), with upstream's
        content types and ``Cache-Control`` (``pkg/routes/openidmetadata.go``)."""
        found = self.issuer_discovery
        if found is None:
            return error_response(status.path_not_found())
        if request.url.path.rstrip("/") == issuerdiscovery.JWKS_PATH:
            body, content_type = found.keyset_json, issuerdiscovery.JWKS_CONTENT_TYPE
        else:
            body, content_type = found.config_json, issuerdiscovery.CONFIG_CONTENT_TYPE
        headers = {"Cache-Control": issuerdiscovery.CACHE_CONTROL, "Content-Type": content_type}
        return Response(body, headers=headers)

    @_non_resource_path
    async def openapi_root(self, request: Request) -> Response:
        """``/openapi/v3``."""
        custom = self.custom.openapi_documents()
        if not custom:
            return Response(self.openapi_index, media_type=JSON_TYPE)
        return Response(
            _dumps(openapi.index({**self.openapi_docs, **custom})), media_type=JSON_TYPE
        )

    @_non_resource_path
    async def openapi_doc(self, request: Request) -> Response:
        """``/openapi/v3/<gv>``."""
        path = request.path_params["path"].strip("/")
        body = self.openapi_docs.get(path) or self.custom.openapi_documents().get(path)
        if body is None:
            return error_response(status.path_not_found())
        return Response(body, media_type=JSON_TYPE)

    # --- resources -------------------------------------------------------------------------

    async def core(self, request: Request) -> Response:
        """Everything below ``/api/v1``."""
        return await self._resource(request, "v1", request.path_params.get("rest", ""))

    async def group(self, request: Request) -> Response:
        """Everything below ``/apis/<group>[/<version>]``."""
        group = request.path_params["group"]
        version = request.path_params.get("version", "")
        if not version:
            try:
                self._non_resource(request)
            except errors.StatusError as exc:
                return error_response(exc)
            versions = [
                gv.split("/", 1)[1]
                for gv in [*self.routes.group_versions, *self.custom.routes().group_versions]
                if gv.startswith(f"{group}/")
            ]
            if not versions or request.method != "GET":
                return error_response(status.path_not_found())
            return json_response(discovery.api_group(group, versions))
        return await self._resource(
            request, f"{group}/{version}", request.path_params.get("rest", "")
        )

    async def _resource(self, request: Request, group_version: str, rest: str) -> Response:
        """Answer a request below a group version, counting it once it got past
        authorization (``apiserver.requestmetrics``)."""
        started = time.perf_counter()
        counted: list[RequestLabels] = []
        response = await self._answer_resource(request, group_version, rest, counted)
        if not counted:
            return response
        labels = counted[0]
        if isinstance(response, StreamingResponse):
            response.body_iterator = self._counted_stream(
                response.body_iterator, labels, response.status_code, started
            )
        else:
            self._observe(labels, response.status_code, started)
        return response

    def _observe(self, labels: RequestLabels, code: int, started: float) -> None:
        self.request_metrics.observe(labels, code, time.perf_counter() - started)

    async def _counted_stream(
        self,
        chunks: AsyncIterable[str | bytes | memoryview],
        labels: RequestLabels,
        code: int,
        started: float,
    ) -> AsyncIterator[str | bytes | memoryview]:
        """A watch or followed log: counted when it ends, however it ends."""
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            self._observe(labels, code, started)

    async def _answer_resource(
        self, request: Request, group_version: str, rest: str, counted: list[RequestLabels]
    ) -> Response:
        try:
            segments = split_path(rest)
            if not segments:
                # A group version's resource list is discovery: a non-resource request.
                self._non_resource(request)
                resources = self._group_version_resources(group_version)
                if resources is None or request.method != "GET":
                    raise status.path_not_found()
                return json_response(discovery.resource_list(group_version, resources))
            user = self._user(request)
            target = self.routes.resolve(group_version, segments) or self.custom.routes().resolve(
                group_version, segments
            )
            if target is None:
                # Upstream authorizes before it routes: a refused user learns nothing
                # about which resources exist (403), an allowed one gets the 404.
                if user is not None:
                    self._admit(
                        request,
                        authz.path_attributes(
                            user, request.method, group_version, segments, request.query_params
                        ),
                    )
                raise status.path_not_found()
            self._authorize(user, request, target)
            counted.append(
                requestmetrics.resource_labels(
                    request.method,
                    target,
                    version=group_version.rpartition("/")[2],
                    query=request.query_params,
                    dry_run=request.query_params.getlist("dryRun"),
                    content_type=request.headers.get("content-type", ""),
                )
            )
            body = await request.body()
            rest_request = RestRequest(
                method=request.method,
                target=target,
                query=dict(request.query_params),
                accept=request.headers.get("accept", ""),
                content_type=request.headers.get("content-type", ""),
                body=body,
                user=user,
            )
            custom = self.custom.version_of(target)
            reply: Reply | WatchStream | TextReply | LogFollow
            if custom is not None:
                reply = await self._handle(
                    request.method, functools.partial(self.custom_rest.handle, rest_request, custom)
                )
            else:
                reply = await self._handle(
                    request.method, functools.partial(self.rest.handle, rest_request)
                )
        except errors.StatusError as exc:
            return error_response(exc)
        if isinstance(reply, WatchStream):
            return StreamingResponse(
                self._stream(reply),
                media_type=JSON_TYPE,
                headers={"Cache-Control": "no-cache, private"},
            )
        if isinstance(reply, TextReply):
            # Set as a header: a media type would gain "; charset=utf-8".
            return Response(reply.body, headers={"Content-Type": TEXT_TYPE})
        if isinstance(reply, LogFollow):
            return StreamingResponse(self._follow(reply), headers={"Content-Type": TEXT_TYPE})
        return self._reply(reply)

    async def _handle(
        self, method: str, handle: Callable[[], Reply | WatchStream | TextReply | LogFollow]
    ) -> Reply | WatchStream | TextReply | LogFollow:
        """Serve a request; a write with webhooks to wait on lets the loop run meanwhile."""
        if method == "GET":
            return handle()
        if self.group_commit is not None:
            handle = functools.partial(self.group_commit.run, handle)
        if self.webhook_waits is None:
            return handle()
        return await self.webhook_waits.run(handle)

    async def _follow(self, follow: LogFollow) -> AsyncIterator[bytes]:
        """A followed log: open while the container runs (it prints nothing, so no chunk
        is ever sent), closed when it stops, when its pod goes, or at shutdown."""
        while not self._closing and self._still_running(follow):
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
        nothing_logged: tuple[bytes, ...] = ()
        for chunk in nothing_logged:
            yield chunk

    def _still_running(self, follow: LogFollow) -> bool:
        try:
            pod = self.service.get(Pod, follow.name, follow.namespace)
        except errors.NotFoundError:
            return False
        return pod.metadata.uid == follow.uid and podlogs.is_running(pod, follow.container)

    def _reply(self, reply: Reply) -> Response:
        return json_response(reply.body, reply.code, warnings=reply.warnings)

    async def _stream(self, stream: WatchStream) -> AsyncIterator[bytes]:
        """Pump a watch: drain, wait for the listener, bookmark, stop at the timeout."""
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def listener() -> None:
            # Writes may come from another thread in the serve driver: hop onto the loop.
            loop.call_soon_threadsafe(wake.set)

        stream.set_listener(listener)
        self.streams[stream] = listener
        deadline = loop.time() + stream.timeout
        next_bookmark = loop.time() + self.bookmark_interval
        try:
            while True:
                wake.clear()
                chunk = stream.drain()
                if chunk:
                    yield chunk
                if stream.closed:
                    return
                now = loop.time()
                if now >= deadline:
                    return
                if stream.bookmarks and now >= next_bookmark:
                    yield stream.bookmark()
                    next_bookmark = now + self.bookmark_interval
                wait = deadline - now
                if stream.bookmarks:
                    wait = min(wait, max(next_bookmark - now, 0.0))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout=wait)
        finally:
            self.streams.pop(stream, None)
            stream.close()

    @_non_resource_path
    async def not_found(self, request: Request) -> Response:
        """Any other path: upstream's 404 Status (401 first for an unauthenticated caller)."""
        return error_response(status.path_not_found())


class FlowHeaders:
    """ASGI middleware adding the priority-and-fairness headers to every response of a
    request ``KubeApp._admit`` noted (authenticated: a 401 has none, as upstream's
    authentication filter answers before the APF filter runs). Every response also
    waits here for the open write group's COMMIT (``apiserver.groupcommit``)."""

    def __init__(self, app: ASGIApp, kube: KubeApp) -> None:
        self.app = app
        self.kube = kube

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_flow(message: Message) -> None:
            if message["type"] == "http.response.start":
                group = self.kube.group_commit
                if group is not None and group.pending:
                    # What the response shows may be a write of the open group.
                    await group.durable()
                attrs = scope.get("state", {}).get("flow")
                if attrs is not None:
                    message["headers"] = [
                        *message.get("headers", ()),
                        *self.kube.flow_headers(attrs),
                    ]
            await send(message)

        await self.app(scope, receive, send_with_flow)


def create_app(
    service: ApiService,
    *,
    authenticator: Authenticator | None = None,
    authorizer: authz.ReviewingAuthorizer | None = None,
    clock: Clock | None = None,
    watch_timeout: float = DEFAULT_WATCH_TIMEOUT,
    bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
    request_metrics: RequestMetrics | None = None,
    metrics: MetricsRenderer | None = None,
    token_issuer: TokenIssuer | None = None,
    token_reviewer: TokenReviewAuthenticator | None = None,
    pods_on_node: PodsOnNode | None = None,
    cert_authenticator: CertAuthenticator | None = None,
) -> Starlette:
    """Build the ASGI app serving ``service``.

    ``authenticator`` maps request headers to a user (``None`` from it answers 401); without
    one every request acts as the system (no user). ``authorizer`` decides each resource
    request of an authenticated user (403 with upstream's text when it refuses). ``clock`` (default: the service's)
    dates AGE cells. ``watch_timeout`` bounds watches without ``timeoutSeconds``.
    ``request_metrics`` (a new one by default) counts the requests; ``metrics`` writes the
    ``/metrics`` page (none: 404).
    ``token_issuer`` signs the tokens of ``serviceaccounts/token`` (without one that
    subresource answers 404, as upstream without a service account issuer).
    ``token_reviewer`` answers TokenReviews (without one they come back unchanged).
    ``pods_on_node`` looks up the pods bound to a node for ``metrics.k8s.io`` NodeMetrics
    (an informer index in ``kubeprio serve``; without it a node request scans the pods).
    ``cert_authenticator`` maps a TLS client certificate to its user
    (``apiserver.x509authn``), asked before ``authenticator``.
    """
    app_state = KubeApp(
        service,
        clock=clock or service.clock,
        authenticator=authenticator,
        authorizer=authorizer,
        watch_timeout=watch_timeout,
        bookmark_interval=bookmark_interval,
        request_metrics=request_metrics,
        metrics=metrics,
        token_issuer=token_issuer,
        token_reviewer=token_reviewer,
        pods_on_node=pods_on_node,
        cert_authenticator=cert_authenticator,
    )
    resource_routes = [
        # The resource paths first, the longest (the object and collection paths) ahead:
        # nearly every request is one, and Starlette tries the routes in order, a regular
        # expression each (~2 us). No two of these match the same path and no other
        # route's path starts with /api/v1 or /apis/, so the order changes no match.
        Route("/api/v1/{rest:path}", app_state.core, methods=RESOURCE_METHODS),
        Route("/apis/{group}/{version}/{rest:path}", app_state.group, methods=RESOURCE_METHODS),
        Route("/api/v1", app_state.core, methods=RESOURCE_METHODS),
        Route("/apis/{group}", app_state.group, methods=RESOURCE_METHODS),
        # The aggregator serves a group's discovery at /apis/<group>/ too (UnlistedHandle of
        # groupPath+"/" in kube-aggregator's AddAPIService); the Python client's
        # AppsApi.get_api_group asks there.
        Route("/apis/{group}/", app_state.group, methods=RESOURCE_METHODS),
        Route("/apis/{group}/{version}", app_state.group, methods=RESOURCE_METHODS),
    ]
    routes = [
        *resource_routes,
        Route("/version", app_state.version, methods=["GET"]),
        Route("/version/", app_state.version, methods=["GET"]),
        *(Route(path, app_state.health, methods=["GET"]) for path in HEALTH_PATHS),
        *(
            Route(path + "/{check:path}", app_state.health, methods=["GET"])
            for path in HEALTH_PATHS
        ),
        Route("/metrics", app_state.metrics, methods=["GET"]),
        *(
            Route(path, app_state.issuer_metadata, methods=["GET"])
            for path in issuerdiscovery.SERVED_PATHS
        ),
        Route("/api", app_state.api, methods=["GET"]),
        Route("/api/", app_state.api, methods=["GET"]),
        Route("/apis", app_state.apis, methods=["GET"]),
        Route("/apis/", app_state.apis, methods=["GET"]),
        Route("/openapi/v3", app_state.openapi_root, methods=["GET"]),
        Route("/openapi/v3/", app_state.openapi_root, methods=["GET"]),
        Route("/openapi/v3/{path:path}", app_state.openapi_doc, methods=["GET"]),
        Route("/{path:path}", app_state.not_found, methods=RESOURCE_METHODS),
    ]
    app = Starlette(routes=routes)
    # Inside FlowHeaders (each add goes outside the previous one): the resource requests
    # skip Starlette's routing layers (apiserver.resourcelane).
    app.add_middleware(ResourceLane, routes=resource_routes)
    app.add_middleware(FlowHeaders, kube=app_state)
    app.router.redirect_slashes = False
    app.state.kube = app_state
    return app
