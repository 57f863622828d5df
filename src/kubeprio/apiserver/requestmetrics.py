"""The API server's request counters, labelled as kube-apiserver labels them.

What it is: the values behind ``apiserver_request_total`` and
``apiserver_request_duration_seconds`` (upstream
``staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go``), and the rules that
turn a request into their labels:

* ``verb`` (``MonitorRequest``'s ``cleanVerb(CanonicalVerb(...))``): the upper-case HTTP
  method; a GET is ``LIST`` unless its scope is ``resource`` or empty, and ``WATCH`` with
  ``?watch=true``; a PATCH with ``Content-Type: application/apply-patch+yaml`` is
  ``APPLY``; any request for ``log``, ``exec``, ``attach``, ``portforward`` or ``proxy``
  is ``CONNECT``; an unknown method is ``other``. A create is ``POST`` and a delete of a
  collection ``DELETE``, as upstream reports them.
* ``scope`` (the installer's ``requestScope``): ``resource`` for a named object (its
  subresources included) and for every POST, ``namespace`` for a collection in a
  namespace, ``cluster`` otherwise (cluster-scoped kinds, lists across namespaces).
* ``dry_run`` (``cleanDryRun``): the sorted, de-duplicated ``dryRun`` values joined by
  commas, ``invalid`` if one is not ``All``, empty without any.
* ``group``, ``version``, ``resource``, ``subresource`` from the URL; ``component``
  ``apiserver``; ``code`` the status code answered.

Which requests count: as upstream, those that reach a handler. Resource requests are
counted once authenticated and authorized (upstream refuses those in filters before
``InstrumentRouteFunc``), including the ones that fail inside (404 for a missing object,
403 from admission, 422); a path nobody serves is not counted. The root health checks
(``/healthz``, ``/livez``, ``/readyz``: verb ``GET``, subresource the path, every other
label empty, as ``healthz.InstallPathHandler`` instruments them) and aggregated
discovery (``/api``, ``/apis``: component ``apiserver``) count too. Requests that
in-process components make through ``ApiService`` (the scheduler's bindings, the
kubelets' status writes) are calls, not HTTP requests, and are not counted.

Who drives it: ``apiserver.http`` calls ``RequestMetrics.observe`` once per answered
request; ``serve.metrics`` reads ``totals`` and ``durations`` at scrape time. No I/O,
no clock: the caller measures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from kubeprio.apiserver.negotiation import flag
from kubeprio.apiserver.routes import Target
from kubeprio.histogram import Histogram

COMPONENT: Final = "apiserver"
"""``metrics.APIServerComponent``."""
APPLY_PATCH_TYPE: Final = "application/apply-patch+yaml"
CONNECT_SUBRESOURCES: Final = frozenset({"log", "exec", "portforward", "attach", "proxy"})
"""Upstream ``validConnectRequests``."""
VALID_VERBS: Final = frozenset(
    {
        "APPLY",
        "CONNECT",
        "CREATE",
        "DELETE",
        "DELETECOLLECTION",
        "GET",
        "LIST",
        "PATCH",
        "POST",
        "PROXY",
        "PUT",
        "UPDATE",
        "WATCH",
        "WATCHLIST",
    }
)
"""Upstream ``validRequestMethods``; anything else is reported as ``other``."""
OTHER_VERB: Final = "other"
DURATION_BUCKETS: Final = (
    0.005,
    0.025,
    0.05,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2.0,
    3.0,
    4.0,
    5.0,
    6.0,
    8.0,
    10.0,
    15.0,
    20.0,
    30.0,
    45.0,
    60.0,
)
"""``apiserver_request_duration_seconds``'s buckets (tuned upstream for the latency SLOs)."""
SCOPE_RESOURCE: Final = "resource"
SCOPE_NAMESPACE: Final = "namespace"
SCOPE_CLUSTER: Final = "cluster"


class RequestLabels(NamedTuple):
    """The labels of ``apiserver_request_duration_seconds`` (``_total`` adds ``code``)."""

    verb: str
    dry_run: str
    group: str
    version: str
    resource: str
    subresource: str
    scope: str
    component: str


def request_scope(method: str, target: Target) -> str:
    """The installer's ``requestScope`` of the route ``target`` was served by."""
    if target.name or method == "POST":
        return SCOPE_RESOURCE
    if target.info.namespaced and target.namespace is not None:
        return SCOPE_NAMESPACE
    return SCOPE_CLUSTER


def reported_verb(
    method: str,
    *,
    scope: str,
    subresource: str,
    query: Mapping[str, str],
    content_type: str,
) -> str:
    """Upstream ``cleanVerb(CanonicalVerb(method, scope), ...)``."""
    verb = method.upper()
    if verb in ("GET", "HEAD"):
        verb = "LIST" if scope not in (SCOPE_RESOURCE, "") else "GET"
    if method.upper() in ("GET", "LIST") and flag(query, "watch"):
        verb = "WATCH"
    if verb == "PATCH" and content_type == APPLY_PATCH_TYPE:
        verb = "APPLY"
    if subresource in CONNECT_SUBRESOURCES:
        verb = "CONNECT"
    return verb if verb in VALID_VERBS else OTHER_VERB


def dry_run_label(values: Sequence[str]) -> str:
    """Upstream ``cleanDryRun``: ``""``, ``All`` or ``invalid``."""
    if not values:
        return ""
    if any(value != "All" for value in values):
        return "invalid"
    return ",".join(sorted(set(values)))


def resource_labels(
    method: str,
    target: Target,
    *,
    version: str,
    query: Mapping[str, str],
    dry_run: Sequence[str],
    content_type: str,
) -> RequestLabels:
    """The labels of a resource request (``InstrumentRouteFunc`` with ``MonitorRequest``)."""
    scope = request_scope(method, target)
    verb = reported_verb(
        method,
        scope=scope,
        subresource=target.subresource,
        query=query,
        content_type=content_type,
    )
    return RequestLabels(
        verb=verb,
        dry_run=dry_run_label(dry_run),
        group=target.info.group,
        version=version,
        resource=target.info.plural,
        subresource=target.subresource,
        scope=scope,
        component=COMPONENT,
    )


def path_labels(path: str, *, component: str) -> RequestLabels:
    """The labels of an instrumented non-resource path (health roots, aggregated
    discovery): ``GET``, the path as subresource, the rest empty but ``component``."""
    return RequestLabels("GET", "", "", "", "", path, "", component)


HEALTH_COMPONENT: Final = ""
"""``healthz.InstallPathHandler`` instruments its roots with an empty component."""
DISCOVERY_COMPONENT: Final = COMPONENT


class RequestMetrics:
    """Answered requests by labels and code, and their durations by labels."""

    __slots__ = ("durations", "totals")

    def __init__(self) -> None:
        self.totals: dict[tuple[RequestLabels, int], int] = {}
        """``(labels, code)`` -> requests (``apiserver_request_total``)."""
        self.durations: dict[RequestLabels, Histogram] = {}
        """``labels`` -> durations (``apiserver_request_duration_seconds``)."""

    def observe(self, labels: RequestLabels, code: int, seconds: float) -> None:
        """Count one answered request (upstream ``MonitorRequest``)."""
        key = (labels, code)
        self.totals[key] = self.totals.get(key, 0) + 1
        histogram = self.durations.get(labels)
        if histogram is None:
            histogram = self.durations[labels] = Histogram(DURATION_BUCKETS)
        histogram.observe(seconds)
