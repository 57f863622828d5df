"""The listers behind PodTopologySpread's default selector (upstream ``helper.DefaultSelector``).

Upstream's plugin holds Service, ReplicationController, ReplicaSet and StatefulSet
listers (``setListers`` in ``podtopologyspread/plugin.go``) and, for a pod without its
own constraints, builds the selector of the system default constraints from the
Services selecting the pod (``helper.GetPodServices``) and its controlling owner. This
module keeps the four informers and answers the plugin's two questions:

* ``owner_selector``: a controller's ``spec.selector`` by (kind, namespace, name), an
  O(1) cache lookup;
* ``service_selectors``: the selectors of the Services in a namespace that select a
  pod's labels. Upstream lists every Service of the namespace; here Services are indexed
  by the first (smallest) key of their selector and its value, so a pod only looks at
  the buckets of its own labels, O(pod labels + Services sharing one of those pairs).
  A Service with no selector selects nothing, and one with an empty selector selects
  every pod but adds no label, so neither is indexed: the selector comes out the same.

``selected_by_service`` tells the scheduling cycle that a pod with no controller still
gets default spreading (so it leaves the fast path). Upstream registers no Service or
controller events for PodTopologySpread (its default constraints are ScheduleAnyway and
never make a pod unschedulable), so these informers requeue nothing.

Driven by ``scheduler.setup``, which starts the informers with the scheduler's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.api.apps import ReplicaSet
from kubeprio.api.meta import LabelSelector
from kubeprio.api.replicationcontroller import KIND as RC_KIND
from kubeprio.api.replicationcontroller import ReplicationController, label_selector_of
from kubeprio.api.service import Service
from kubeprio.api.statefulset import StatefulSet
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import Client

SELECTOR_PAIR_INDEX: Final = "selector-first-pair"
"""Service index: ``namespace/key=value`` of the first key of a non-empty selector."""


def _pair_key(namespace: str, key: str, value: str) -> str:
    return f"{namespace}/{key}={value}"


def by_first_selector_pair(service: Service) -> list[str]:
    """The index value of a Service: its namespace and first selector pair, if any."""
    selector = service.spec.selector if service.spec is not None else None
    if not selector:
        return []
    key = min(selector)
    return [_pair_key(service.metadata.namespace or "", key, selector[key])]


class SpreadListers:
    """Services, ReplicationControllers, ReplicaSets and StatefulSets, as
    ``DefaultSelector`` reads them."""

    def __init__(self, client: Client) -> None:
        self.services: Informer[Service] = Informer(client, Service)
        self.services.add_index(SELECTOR_PAIR_INDEX, by_first_selector_pair)
        self.replication_controllers: Informer[ReplicationController] = Informer(
            client, ReplicationController
        )
        self.replicasets: Informer[ReplicaSet] = Informer(client, ReplicaSet)
        self.statefulsets: Informer[StatefulSet] = Informer(client, StatefulSet)

    @property
    def informers(self) -> tuple[Informer[Any], ...]:
        return (
            self.services,
            self.replication_controllers,
            self.replicasets,
            self.statefulsets,
        )

    def owner_selector(
        self, api_version: str, kind: str, namespace: str, name: str
    ) -> LabelSelector | None:
        """The ``spec.selector`` of a pod's controller (an RC's map as ``matchLabels``,
        as ``SelectorFromSet``), or None when the cache has no such object."""
        if kind == "ReplicaSet":
            replicaset = self.replicasets.get(name, namespace)
            spec = replicaset.spec if replicaset is not None else None
            return spec.selector if spec is not None else None
        if kind == "StatefulSet":
            statefulset = self.statefulsets.get(name, namespace)
            if statefulset is None or statefulset.spec is None:
                return None
            return statefulset.spec.selector
        if kind == RC_KIND:
            rc = self.replication_controllers.get(name, namespace)
            return label_selector_of(rc) if rc is not None else None
        return None

    def service_selectors(
        self, namespace: str, labels: Mapping[str, str]
    ) -> Sequence[Mapping[str, str]]:
        """``GetPodServices``' selectors: every non-empty Service selector in
        ``namespace`` whose pairs all appear in ``labels`` (sorted by Service name)."""
        found: list[tuple[str, Mapping[str, str]]] = []
        for key, value in labels.items():
            for service in self.services.by_index(
                SELECTOR_PAIR_INDEX, _pair_key(namespace, key, value)
            ):
                selector = service.spec.selector if service.spec is not None else None
                if selector and all(labels.get(k) == v for k, v in selector.items()):
                    found.append((service.metadata.name or "", selector))
        found.sort(key=lambda entry: entry[0])
        return [selector for _name, selector in found]

    def selected_by_service(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether a Service with a non-empty selector selects these labels."""
        return bool(labels) and bool(self.service_selectors(namespace, labels))
