"""Calling one admission webhook: where it listens, the POST, and what failures read like.

Mirrors v1.32's ``staging/src/k8s.io/apiserver/pkg/util/webhook`` (``ClientManager.HookClient``,
``ErrCallingWebhook``) and the ``callHook`` halves of the two dispatchers:

* A ``url`` webhook is posted at that URL; a ``service`` webhook at
  ``https://NAME.NAMESPACE.svc:PORT/PATH``, its TLS server name ``NAME.NAMESPACE.svc``, the
  connection going where the service resolves. Both get ``?timeout=Ns`` (the webhook's
  ``timeoutSeconds``), which upstream adds for the webhook's own deadline.
* Service resolution is upstream's endpoint routing (``ResolveEndpoint``, what
  kube-apiserver does with ``--enable-aggregator-routing``): the Service must exist
  (``service "x" not found``), have a port equal to the reference's (``no service port 443
  found for service "x"``), and its Endpoints an address for that port's name (``no
  endpoints available for service "x"``); kubeprio takes the first such address where
  upstream picks one at random. An ExternalName Service dials its external name, as
  upstream's cluster-IP resolver does. kubeprio's pods are simulated, so an address of a
  pod-backed Service answers nothing: the call fails (after its timeout) like a webhook
  whose pods are down. A Service without a selector whose Endpoints name a real address
  (``127.0.0.1``) reaches a webhook running outside.
* A call that fails is ``ErrCallingWebhook``: ``failed calling webhook "NAME": REASON``,
  where REASON is ``failed to call webhook: Post "URL": ...`` (connection refused,
  ``context deadline exceeded``, TLS errors), the answer's status, ``received invalid
  webhook response: ...`` or ``could not create admission objects: ...``. The
  dispatchers decide with ``failurePolicy`` what it means.

A call is two halves: ``WebhookClient.prepare`` builds the review and resolves the
target on the event loop (it reads listers), ``perform`` posts it and checks the answer
(network only, so ``kubeprio serve`` runs it on a worker thread while the server goes on
serving: ``admission.webhookdeferral``). The HTTPS itself is a ``WebhookCaller`` the
composition root hands in (``kubeprio serve``: ``serve.webhookclient``); nothing here
does I/O.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from kubeprio.admission.chain import AdmissionRequest
from kubeprio.admission.webhookmatching import Invocation
from kubeprio.admission.webhookreview import (
    InvalidResponseError,
    ReviewResponse,
    build_review,
    review_version,
    verify_response,
)
from kubeprio.api import errors
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.gotext import go_quote
from kubeprio.api.service import Service
from kubeprio.api.webhookconfiguration import (
    DEFAULT_SERVICE_PORT,
    DEFAULT_TIMEOUT_SECONDS,
    AnyWebhook,
)


@dataclasses.dataclass(frozen=True, slots=True)
class WebhookTarget:
    """Where to POST: the URL (as error messages show it), the address to connect to,
    the TLS server name, and the CA bundle to trust (system roots when empty)."""

    url: str
    host: str
    port: int
    server_name: str
    path: str
    ca_bundle: bytes


class TransportError(Exception):
    """A POST that got no answer; the message is Go's error after ``Post "URL": ``."""


@dataclasses.dataclass(frozen=True, slots=True)
class HttpAnswer:
    """A webhook's HTTP answer."""

    status: int
    content_type: str
    body: bytes


class WebhookCaller(Protocol):
    """Posts a JSON body over HTTPS (``serve.webhookclient.HttpsWebhookCaller``)."""

    def post(self, target: WebhookTarget, body: bytes, timeout: float) -> HttpAnswer:
        """POST ``body``; raise ``TransportError`` when there is no answer."""
        ...


class CallingError(Exception):
    """Upstream's ``ErrCallingWebhook``: the webhook could not be called (or answered
    nonsense); ``failurePolicy`` decides whether the request fails."""

    def __init__(self, webhook_name: str, reason: str) -> None:
        super().__init__(f"failed calling webhook {go_quote(webhook_name)}: {reason}")
        self.webhook_name = webhook_name
        self.reason = reason


class _ServiceLister(Protocol):
    def get(self, name: str, namespace: str | None = None) -> Service | None: ...


class _EndpointsLister(Protocol):
    def get(self, name: str, namespace: str | None = None) -> Endpoints | None: ...


# --- where a webhook listens ---------------------------------------------------------------------


def _resolve_service(
    services: _ServiceLister, endpoints: _EndpointsLister, namespace: str, name: str, port: int
) -> tuple[str, int]:
    """``ResolveEndpoint`` (ExternalName as ``ResolveCluster``); ``TransportError`` texts."""
    service = services.get(name, namespace)
    if service is None:
        raise TransportError(f"service {go_quote(name)} not found")
    spec = service.spec
    service_type = (spec.type if spec is not None else None) or "ClusterIP"
    if service_type == "ExternalName":
        return (spec.external_name if spec is not None else None) or "", port
    if service_type not in ("ClusterIP", "NodePort", "LoadBalancer"):
        raise TransportError(f"unsupported service type {go_quote(service_type)}")
    service_port = next((p for p in (spec.ports if spec else None) or () if p.port == port), None)
    if service_port is None:
        raise TransportError(f"no service port {port} found for service {go_quote(name)}")
    found = endpoints.get(name, namespace)
    if found is None:
        raise TransportError(f"endpoints {go_quote(name)} not found")
    port_name = service_port.name or ""
    for subset in found.subsets or ():
        for endpoint_port in subset.ports or ():
            if (endpoint_port.name or "") == port_name and subset.addresses:
                return subset.addresses[0].ip or "", endpoint_port.port or 0
    raise TransportError(f"no endpoints available for service {go_quote(name)}")


def target_of(webhook: AnyWebhook) -> WebhookTarget:
    """The URL and TLS name of a webhook (before any service is resolved)."""
    config = webhook.client_config
    assert config is not None
    timeout = webhook.timeout_seconds or DEFAULT_TIMEOUT_SECONDS
    if config.url is not None:
        scheme, _, rest = config.url.partition("://")
        authority, slash, path = rest.partition("/")
        host, _, port_text = authority.rpartition(":") if ":" in authority else (authority, "", "")
        host = host.strip("[]")
        port = int(port_text) if port_text.isdigit() else 443
        full_path = f"{slash}{path}" or "/"
        return WebhookTarget(
            url=f"{scheme}://{authority}{full_path}?timeout={timeout}s",
            host=host,
            port=port,
            server_name=host,
            path=f"{full_path}?timeout={timeout}s",
            ca_bundle=config.ca_bundle or b"",
        )
    service = config.service
    assert service is not None
    port = service.port if service.port is not None else DEFAULT_SERVICE_PORT
    server_name = f"{service.name}.{service.namespace}.svc"
    path = service.path or "/"
    return WebhookTarget(
        url=f"https://{server_name}:{port}{path}?timeout={timeout}s",
        host=server_name,
        port=port,
        server_name=server_name,
        path=f"{path}?timeout={timeout}s",
        ca_bundle=config.ca_bundle or b"",
    )


# --- one call ------------------------------------------------------------------------------------


def _answer_error(answer: HttpAnswer) -> str:
    """A non-2xx answer as client-go reports it: a Status body's message, else
    ``NewGenericServerResponse``'s text for the code."""
    try:
        decoded = json.loads(answer.body)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status" and decoded.get("status"):
        return str(decoded.get("message") or "")
    server_message = "unknown"
    if answer.content_type.startswith("text/plain"):
        server_message = answer.body.decode("utf-8", "replace").strip()
    code = answer.status
    fixed = {
        400: "the server rejected our request for an unknown reason",
        401: "the server has asked for the client to provide credentials",
        403: "forbidden: the server does not allow access to the requested resource",
        404: "the server could not find the requested resource",
        405: "the server does not allow this method on the requested resource",
        422: errors.UNPROCESSABLE_TEXT,
        429: "the server has received too many requests and has asked us to try again later",
        503: "the server is currently unable to handle the request",
        504: (
            "the server was unable to return a response in the time allotted, but may "
            "still be processing the request"
        ),
    }
    if code in fixed:
        return fixed[code]
    if code >= 500:
        return (
            f"an error on the server ({go_quote(server_message)}) has prevented the request "
            "from succeeding"
        )
    return f"the server responded with the status code {code} but did not return more information"


@dataclasses.dataclass(frozen=True, slots=True)
class PreparedCall:
    """One review ready to post: everything ``WebhookClient.perform`` needs, worked out
    on the event loop (the listers are read here), so that the post itself touches
    nothing but the network and can wait anywhere (``admission.webhookdeferral``)."""

    webhook_name: str
    uid: str
    version: str
    mutating: bool
    target: WebhookTarget
    timeout: float
    review: dict[str, Any]

    def deadline_error(self) -> CallingError:
        """The failure when ``timeoutSeconds`` pass without an answer (Go's context)."""
        return CallingError(
            self.webhook_name,
            f"failed to call webhook: Post {go_quote(self.target.url)}: context deadline exceeded",
        )


@dataclasses.dataclass(frozen=True, slots=True)
class WebhookClient:
    """Calls webhooks through ``caller``, resolving services through the listers."""

    caller: WebhookCaller
    services: _ServiceLister
    endpoints: _EndpointsLister
    new_uid: Callable[[], str] = lambda: str(uuid.uuid4())

    def call(
        self,
        invocation: Invocation,
        request: AdmissionRequest,
        encode: Callable[[object, Invocation], dict[str, Any] | None],
        *,
        mutating: bool,
    ) -> ReviewResponse:
        """Send the review and wait for the answer; raise ``CallingError`` when the call
        fails."""
        return self.perform(self.prepare(invocation, request, encode, mutating=mutating))

    def prepare(
        self,
        invocation: Invocation,
        request: AdmissionRequest,
        encode: Callable[[object, Invocation], dict[str, Any] | None],
        *,
        mutating: bool,
    ) -> PreparedCall:
        """Build the review and resolve where it goes; raise ``CallingError`` when it
        cannot be built or the service does not resolve."""
        webhook = invocation.webhook
        name = webhook.name or ""
        version = review_version(webhook)
        if version is None:
            raise CallingError(
                name,
                "could not create admission objects: webhook does not accept v1 or v1beta1 "
                "AdmissionReview",
            )
        uid = self.new_uid()
        review = build_review(
            uid=uid,
            version=version,
            invocation=invocation,
            request=request,
            obj=encode(request.obj, invocation),
            old_obj=encode(request.old_obj, invocation),
        )
        target = target_of(webhook)
        config = webhook.client_config
        if config is not None and config.service is not None:
            service = config.service
            try:
                host, port = _resolve_service(
                    self.services,
                    self.endpoints,
                    service.namespace or "",
                    service.name or "",
                    target.port,
                )
            except TransportError as exc:
                raise CallingError(
                    name, f"failed to call webhook: Post {go_quote(target.url)}: {exc}"
                ) from None
            target = dataclasses.replace(target, host=host, port=port)
        return PreparedCall(
            webhook_name=name,
            uid=uid,
            version=version,
            mutating=mutating,
            target=target,
            timeout=float(webhook.timeout_seconds or DEFAULT_TIMEOUT_SECONDS),
            review=review,
        )

    def perform(self, prepared: PreparedCall) -> ReviewResponse:
        """Post a prepared review and read the answer (blocking network I/O, nothing
        else: safe on a worker thread); raise ``CallingError`` when the call fails."""
        name = prepared.webhook_name
        target = prepared.target
        try:
            answer = self.caller.post(
                target, json.dumps(prepared.review).encode(), prepared.timeout
            )
        except TransportError as exc:
            raise CallingError(
                name, f"failed to call webhook: Post {go_quote(target.url)}: {exc}"
            ) from None
        if not 200 <= answer.status <= 206:
            raise CallingError(name, f"failed to call webhook: {_answer_error(answer)}")
        try:
            decoded = json.loads(answer.body)
        except ValueError as exc:
            raise CallingError(name, f"failed to call webhook: {exc}") from None
        try:
            return verify_response(
                decoded, uid=prepared.uid, version=prepared.version, mutating=prepared.mutating
            )
        except InvalidResponseError as exc:
            raise CallingError(name, f"received invalid webhook response: {exc}") from None
