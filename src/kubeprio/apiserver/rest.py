"""The REST verbs over ``ApiService``: one request in, one reply (or a watch stream) out.

What it is: everything the HTTP adapter does between routing and writing bytes, kept free
of the HTTP library so it is easy to read and test. It mirrors upstream's handlers in
``staging/src/k8s.io/apiserver/pkg/endpoints/handlers`` (``create.go``, ``update.go``,
``patch.go``, ``delete.go``, ``get.go``/``watch.go``) for what kubectl and the Python
client send (shared/reference/kubectl-wire.md):

* bodies: JSON (YAML and Kubernetes protobuf, ``apiserver.protobuf``, accepted), strict
  field validation (``apiserver.fieldvalidation``),
  decode failures as 400 ``Pod in version "v1" cannot be handled as a Pod: ...``; the URL's
  namespace fills an empty ``metadata.namespace`` and a different one is a 400;
* create answers 201, ``dryRun=All`` writes nothing; update is PUT; PATCH takes the four
  content types, and an apply patch (``application/apply-patch+yaml``) of an absent object
  creates it (201); DELETE reads a ``DeleteOptions`` body whatever its content type and
  answers with the object (pods, or anything still terminating) or a success Status;
* subresources ``status``, ``pods/ephemeralcontainers`` (a Pod in and out, like
  ``status``), ``scale`` (autoscaling/v1 ``Scale``), ``pods/binding`` and
  ``pods/eviction`` (201 with a success Status), ``serviceaccounts/token`` (201 with the
  TokenRequest and its token, ``apiserver.tokenrequest``);
* reads as plain JSON or as a server-side ``Table`` (``apiserver.tables``);
* the read-only resource metrics (``metrics.k8s.io``), handed to ``apiserver.resourcemetrics``;
* the read-only ``componentstatuses``, handed to ``apiserver.componentstatus``.

The handler is assembled from parts, one concept each: ``restreads`` (GET, list, watch,
``pods/log``), ``restwrites`` (create, update, patch, delete, the self reviews),
``restsubresources`` (binding, eviction, token, scale); bodies are decoded by
``restdecoding``, and requests and replies are the values of ``restmessages``. This module
routes a request to its verb. Admission warnings travel in ``Reply.warnings`` (the adapter
writes ``Warning`` headers). Errors are raised as ``api.errors.StatusError``;
``apiserver.status`` renders them.

Who drives it: ``apiserver.http``. Rules: no HTTP imports; calls into ``ApiService``
synchronously (the adapter runs it on the event loop, never in worker threads).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from kubeprio.api import kinds
from kubeprio.api.errors import StatusError
from kubeprio.api.kinds import EPHEMERAL_CONTAINERS
from kubeprio.apiserver import (
    componentstatus,
    podstreams,
    resourcemetrics,
    reviews,
    status,
    tokenrequest,
    tokenreview,
)
from kubeprio.apiserver.authz import ReviewingAuthorizer
from kubeprio.apiserver.negotiation import flag
from kubeprio.apiserver.restmessages import LogFollow, Reply, RestRequest, TextReply, requalified
from kubeprio.apiserver.restsubresources import RestSubresources
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.watchstream import WatchStream
from kubeprio.clock import Clock

DEFAULT_WATCH_TIMEOUT: Final = 1800.0
"""Upstream's ``--min-request-timeout``: a watch without ``timeoutSeconds`` lasts this long."""


class RestHandler(RestSubresources):
    """Serves resource requests against one ``ApiService``."""

    def __init__(
        self,
        service: ApiService,
        *,
        clock: Clock,
        watch_timeout: float = DEFAULT_WATCH_TIMEOUT,
        reviewer: ReviewingAuthorizer,
        token_issuer: tokenrequest.TokenIssuer | None = None,
        token_reviewer: tokenreview.TokenReviewAuthenticator | None = None,
        pods_on_node: resourcemetrics.PodsOnNode | None = None,
        components: Callable[[], Mapping[str, componentstatus.Probe]] = dict,
    ) -> None:
        self.service = service
        self.clock = clock
        self.watch_timeout = watch_timeout
        self.reviewer = reviewer
        self.token_issuer = token_issuer
        self.token_reviewer = token_reviewer
        self.resource_metrics = resourcemetrics.ResourceMetricsApi(
            service.store, clock=clock, pods_on_node=pods_on_node
        )
        self.component_statuses = componentstatus.ComponentStatusApi(components)

    def handle(self, request: RestRequest) -> Reply | WatchStream | TextReply | LogFollow:
        """Serve one request; raise ``StatusError`` for failures."""
        if not request.target.info.storage_version:
            return self._dispatch(request)
        try:
            return self._dispatch(request)
        except StatusError as exc:
            # A version served by conversion names its own resource in errors.
            raise requalified(exc, request.target.info) from exc

    def _dispatch(self, request: RestRequest) -> Reply | WatchStream | TextReply | LogFollow:
        target = request.target
        method = request.method
        sub = target.subresource
        if target.info.model in reviews.MODELS:
            # Create-only and never stored: no object paths, no other verbs.
            if not target.is_collection:
                raise status.path_not_found()
            if method == "POST":
                return self.review(request)
            raise status.method_not_allowed()
        if target.info is kinds.LEGACY_BINDINGS:
            # Create-only, like the reviews; the pod is named by the body.
            if not target.is_collection or target.namespace is None:
                raise status.path_not_found()
            if method == "POST":
                return self.bind_legacy(request)
            raise status.method_not_allowed()
        if target.info.model in resourcemetrics.MODELS:
            # Computed on request and read-only (metrics.k8s.io, ``kubectl top``).
            return Reply(
                200,
                self.resource_metrics.handle(method, target, request.query, request.accept),
            )
        if target.info is kinds.COMPONENT_STATUSES:
            # Computed on request, read-only and deprecated (every answer warns).
            body = self.component_statuses.handle(method, target, request.query, request.accept)
            return Reply(200, body, warnings=componentstatus.WARNINGS)
        if sub == "":
            if target.is_collection:
                if method == "GET":
                    if flag(request.query, "watch"):
                        return self.watch(request)
                    return self.list_collection(request)
                if method == "POST" and (
                    target.namespace is not None or not target.info.namespaced
                ):
                    return self.create(request)
                if method == "DELETE":
                    return self.delete_collection(request)
            else:
                if method == "GET":
                    return self.get(request)
                if method == "PUT":
                    return self.update(request)
                if method == "PATCH":
                    return self.patch(request)
                if method == "DELETE":
                    return self.delete(request)
        elif sub in ("status", "approval", EPHEMERAL_CONTAINERS):
            # pods/ephemeralcontainers (and certificatesigningrequests/approval) read and
            # write a whole object, as status does.
            if method == "GET":
                return self.get(request)
            if method == "PUT":
                return self.update(request)
            if method == "PATCH":
                return self.patch(request)
        elif sub == "scale":
            if method == "GET":
                return self.get_scale(request)
            if method in ("PUT", "PATCH"):
                return self.write_scale(request)
        elif sub == "binding" and method == "POST":
            return self.bind(request)
        elif sub == "eviction" and method == "POST":
            return self.evict(request)
        elif sub == "token" and method == "POST":
            return self.create_token(request)
        elif sub == "log" and method == "GET":
            return self.logs(request)
        elif sub in podstreams.STREAMS and method in ("GET", "POST"):
            return self.stream(request)
        raise status.method_not_allowed()
