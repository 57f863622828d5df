"""The resource metrics API: ``metrics.k8s.io/v1beta1`` pods and nodes, as metrics-server serves them.

What it is: the read-only REST storage of the two kinds ``kubectl top`` reads, with
metrics-server's rules (``pkg/api/pod.go``, ``node.go``, ``filter.go``) and the generic API
server's around them (``handlers/get.go``), computed on request from the stored pods and
nodes (``apiserver.resourceusage`` has the numbers):

* ``GET .../namespaces/<ns>/pods`` (or ``/pods`` across namespaces): a ``PodMetricsList``
  of the running pods that match ``labelSelector`` and ``fieldSelector``, sorted by
  namespace and name, with ``metadata: {}`` (no resourceVersion, no paging: ``limit`` is
  ignored, as metrics-server's lister ignores it);
* ``GET .../namespaces/<ns>/pods/<name>``: one ``PodMetrics``. A pod that does not exist or
  does not run is the pod lister's 404 ``pods "x" not found``; a running pod whose node
  cannot be scraped is metrics-server's ``podmetrics.metrics.k8s.io "ns/x" not found``;
* ``GET .../nodes`` and ``.../nodes/<name>``: ``NodeMetrics`` of every node whose kubelet
  answers, sorted by name; an unknown node is the node lister's ``node "x" not found`` (the
  generated lister names the resource in the singular), a node that does not answer
  ``nodemetrics.metrics.k8s.io "x" not found``;
* field selectors may name ``metadata.name`` and ``metadata.namespace`` only (the default
  field label conversion of a kind that registers none): anything else is a 400 ``"spec.nodeName"
  is not a known field selector: only "metadata.name", "metadata.namespace"``;
* ``?watch=true`` is 405 ``watch is not supported on resources of kind
  "pods.metrics.k8s.io"`` (``NewMethodNotSupported``: the storage is no Watcher); any method
  but GET is the 405 the router answers for a route without it;
* a Table ``Accept`` gets metrics-server's Table (``apiserver.resourcemetricstable``).

Performance: a namespace's pods are read from the store's namespace bucket, a node's from
``pods_on_node`` (``kubeprio serve`` passes the control plane's informer index of pods by
``spec.nodeName``); without one, a node request groups the stored pods once. Nothing runs
on the scheduling path: the work is done per request.

Who drives it: ``apiserver.rest`` for every request below ``/apis/metrics.k8s.io/v1beta1``
(after authorization). Rules: no HTTP library; reads only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, TypeVar, cast

from kubeprio.api import errors, kinds
from kubeprio.api.core import Node, Pod
from kubeprio.api.model import JsonDict
from kubeprio.api.podusage import answering, is_running, node_answers
from kubeprio.api.resourcemetrics import API_VERSION, GROUP, NodeMetrics, PodMetrics
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver import resourcemetricstable, resourceusage, status
from kubeprio.apiserver.metaselection import ObjectFilter, meta_selection
from kubeprio.apiserver.negotiation import flag, negotiate
from kubeprio.apiserver.routes import Target
from kubeprio.apiserver.tables import IncludeObject
from kubeprio.clock import Clock
from kubeprio.store.errors import KeyNotFoundError
from kubeprio.store.interface import KeyPrefix, ObjectKey, Store

T = TypeVar("T")

PodsOnNode = Callable[[str], Sequence[Pod]]
"""The pods bound to a node (any phase), from an index kept elsewhere."""

MODELS: Final = frozenset(info.model for info in kinds.RESOURCE_METRICS)
"""The metrics kinds' models (``apiserver.rest`` routes their requests here)."""


class ResourceMetricsApi:
    """Serves ``metrics.k8s.io/v1beta1`` from a store (see the module docstring)."""

    def __init__(
        self, store: Store, *, clock: Clock, pods_on_node: PodsOnNode | None = None
    ) -> None:
        self._store = store
        self._clock = clock
        self._pods_on_node = pods_on_node

    def handle(
        self, method: str, target: Target, query: Mapping[str, str], accept: str
    ) -> JsonDict:
        """Answer one request; raise ``StatusError`` for failures."""
        if method != "GET":
            raise status.method_not_allowed()
        output = negotiate(accept)
        if target.is_collection:
            # Pods and nodes alike: only the metadata getters are asked.
            matches = meta_selection(query, PodMetrics)
            if flag(query, "watch"):
                raise status.method_not_supported(target.info.plural, GROUP, "watch")
            items: list[PodMetrics] | list[NodeMetrics]
            if target.info.model is PodMetrics:
                items = self.list_pods(target.namespace, matches)
            else:
                items = self.list_nodes(matches)
            if output.table:
                return resourcemetricstable.build_table(
                    items, include=_include(query), api_version=output.table_api_version
                )
            return {
                "kind": f"{target.info.kind}List",
                "apiVersion": API_VERSION,
                "metadata": {},
                "items": [to_dict(item) for item in items],
            }
        item: PodMetrics | NodeMetrics
        if target.info.model is PodMetrics:
            item = self.get_pod(target.namespace or "", target.name)
        else:
            item = self.get_node(target.name)
        if output.table:
            return resourcemetricstable.build_table(
                [item], include=_include(query), api_version=output.table_api_version
            )
        return to_dict(item)

    # --- reading the cluster ---------------------------------------------------------------

    def _stored(self, kind: type[T], resource: str, namespace: str, name: str) -> T | None:
        try:
            found = self._store.get(ObjectKey(resource, namespace, name))
        except KeyNotFoundError:
            return None
        assert isinstance(found, kind)
        return found

    def _listed(self, kind: type[T], resource: str, namespace: str | None) -> list[T]:
        """The stored objects of a resource (a namespace's bucket when one is named)."""
        found, _ = self._store.list(KeyPrefix(resource, namespace))
        return cast(list[T], found)

    def _node(self, name: str) -> Node | None:
        return self._stored(Node, "nodes", "", name)

    def _scraped(self) -> Callable[[str], bool]:
        """Whether a node's kubelet answers, memoised for one request."""
        return answering(self._node)

    def _pods_on_node_lookup(self) -> PodsOnNode:
        if self._pods_on_node is not None:
            return self._pods_on_node
        # No index to ask: group the stored pods once for this request.
        by_node: dict[str, list[Pod]] = {}
        for pod in self._listed(Pod, "pods", None):
            if pod.spec is not None and pod.spec.node_name:
                by_node.setdefault(pod.spec.node_name, []).append(pod)
        return lambda name: by_node.get(name, ())

    # --- pods ------------------------------------------------------------------------------

    def list_pods(self, namespace: str | None, matches: ObjectFilter) -> list[PodMetrics]:
        """The metrics of the running, scraped pods ``matches`` selects (namespace, name order)."""
        scraped = self._scraped()
        now = self._clock.now()
        return [
            resourceusage.pod_metrics(pod, now=now)
            for pod in self._listed(Pod, "pods", namespace)
            if is_running(pod) and matches(pod) and scraped(_node_name(pod))
        ]

    def get_pod(self, namespace: str, name: str) -> PodMetrics:
        """One pod's metrics, or metrics-server's 404s (see the module docstring)."""
        pod = self._stored(Pod, "pods", namespace, name)
        if pod is None or not is_running(pod):
            # metrics-server's pod lister holds only running pods: its own 404.
            raise errors.not_found("pods", "", name)
        if not self._scraped()(_node_name(pod)):
            raise errors.not_found("podmetrics", GROUP, f"{namespace}/{name}")
        return resourceusage.pod_metrics(pod, now=self._clock.now())

    # --- nodes -----------------------------------------------------------------------------

    def list_nodes(self, matches: ObjectFilter) -> list[NodeMetrics]:
        """The metrics of the scraped nodes ``matches`` selects, by name."""
        selected = [
            node
            for node in self._listed(Node, "nodes", None)
            if matches(node) and node_answers(node)
        ]
        if not selected:
            return []
        return self._node_metrics(selected, self._pods_on_node_lookup())

    def get_node(self, name: str) -> NodeMetrics:
        """One node's metrics, or the 404s of the module docstring."""
        node = self._node(name)
        if node is None:
            # client-go's generated node lister: NewNotFound(v1.Resource("node"), name).
            raise errors.not_found("node", "", name)
        if not node_answers(node):
            raise errors.not_found("nodemetrics", GROUP, name)
        (metrics,) = self._node_metrics([node], self._pods_on_node_lookup())
        return metrics

    def _node_metrics(self, nodes: Iterable[Node], pods_on_node: PodsOnNode) -> list[NodeMetrics]:
        now = self._clock.now()
        return [
            resourceusage.node_metrics(
                node,
                (p for p in pods_on_node(node.metadata.name or "") if is_running(p)),
                now=now,
            )
            for node in nodes
        ]


def _node_name(pod: Pod) -> str:
    return (pod.spec.node_name if pod.spec else None) or ""


def _include(query: Mapping[str, str]) -> IncludeObject:
    value = query.get("includeObject") or IncludeObject.METADATA.value
    try:
        return IncludeObject(value)
    except ValueError:
        raise errors.bad_request(f"unsupported includeObject value {value!r}") from None
