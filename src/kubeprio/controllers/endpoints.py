"""The endpoints controller: every selecting Service's Endpoints and EndpointSlice, kept current.

Mirrors ``pkg/controller/endpoint/endpoints_controller.go`` (``syncService``) and, for the
discovery.k8s.io/v1 form ``kubectl describe service`` reads,
``pkg/controller/endpointslice`` with ``staging/src/k8s.io/endpointslice`` (``reconciler.go``):

* a Service with a ``selector`` (not ExternalName) gets an Endpoints object of its name:
  the pods in its namespace the selector matches that have an IP and are not terminal —
  Ready ones in ``addresses``, the others in ``notReadyAddresses`` (all in ``addresses``
  with ``publishNotReadyAddresses``), terminating ones left out — grouped by the ports
  they resolve (a named ``targetPort`` is looked up among the pod's container ports; a
  pod without it is left out of that port), labelled with the Service's labels;
* and EndpointSlices labelled ``kubernetes.io/service-name`` and
  ``endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io``, owned by
  the Service, one per port group (``<service>-<random>``; one without endpoints or ports
  when no pod matches), each endpoint with its ``ready``/``serving``/``terminating``
  conditions (terminating pods stay, not ready), node and pod reference;
* a Service without selector (``default/kubernetes``) is left to whoever writes its
  endpoints; when a Service goes away its Endpoints and slices are deleted.

Upstream runs two controllers; here one reconcile writes both objects (the same
objects upstream's two write), and a slice is not split at 100 endpoints. Event-driven:
a Service change queues it; a pod change queues the Services of the pod's namespace whose
selector matches its old or new labels (``GetPodServiceMemberships``); a reconcile reads
the pods of one namespace from the informer's index (``podLister.Pods(ns).List``), as
upstream. Writes only what differs. Driven like every controller (``controllers.base``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import PHASE_FAILED, PHASE_SUCCEEDED, ObjectReference, Pod
from kubeprio.api.discovery import (
    ADDRESS_TYPE_IPV4,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    Endpoint,
    EndpointConditions,
    EndpointSlice,
)
from kubeprio.api.discovery import EndpointPort as SlicePort
from kubeprio.api.endpoints import EndpointAddress, EndpointPort, Endpoints, EndpointSubset
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.service import (
    SERVICE_TYPE_EXTERNAL_NAME,
    Service,
    ServicePort,
    ServiceSpec,
    is_headless,
)
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers import podutil
from kubeprio.controllers.base import (
    NAMESPACE_INDEX,
    Controller,
    by_namespace,
    object_key,
    split_key,
)

CONTROLLER_NAME: Final = "endpointslice-controller.k8s.io"
"""``endpointslice.kubernetes.io/managed-by`` of the slices this controller owns."""
HEADLESS_LABEL: Final = "service.kubernetes.io/headless"
_SERVICE_INDEX: Final = "service"
"""Slices by ``namespace/service name``."""

PortKey = tuple[tuple[str, int, str, str | None], ...]
"""The ports a pod serves for a Service: (name, number, protocol, appProtocol) each."""


def selects(service: Service, labels: Mapping[str, str] | None) -> bool:
    """Whether the Service's selector matches these pod labels (a nil selector selects none)."""
    selector = (service.spec or ServiceSpec()).selector
    if selector is None:
        return False
    have = labels or {}
    return all(have.get(key) == value for key, value in selector.items())


def find_port(pod: Pod, port: ServicePort) -> int | None:
    """``podutil.FindPort``: a numeric target as is, a named one among the container ports."""
    target = port.target_port if port.target_port is not None else port.port
    if isinstance(target, int):
        return target
    for container in (pod.spec.containers if pod.spec else None) or ():
        for container_port in container.ports or ():
            if container_port.name == target and (container_port.protocol or "TCP") == (
                port.protocol or "TCP"
            ):
                return container_port.container_port
    return None


def _pod_ref(pod: Pod) -> ObjectReference:
    meta = pod.metadata
    return ObjectReference(kind="Pod", namespace=meta.namespace, name=meta.name, uid=meta.uid)


def _endpoint_view(pod: Pod) -> tuple[object, ...]:
    """Everything ``reconcile`` reads from a pod that an update may change."""
    return (
        pod.metadata.labels,
        _ip(pod),
        podutil.phase(pod),
        podutil.is_pod_ready(pod),
        pod.metadata.deletion_timestamp,
        pod.spec.node_name if pod.spec else None,
    )


def _ip(pod: Pod) -> str:
    return (pod.status.pod_ip if pod.status else None) or ""


class EndpointsController(Controller):
    """Endpoints and EndpointSlices from Services and the pods they select."""

    name = "endpoint-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        services: Informer[Service],
        pods: Informer[Pod],
        endpoints: Informer[Endpoints],
        slices: Informer[EndpointSlice],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.services = services
        self.pods = pods
        self.endpoints = endpoints
        self.slices = slices
        pods.add_index(NAMESPACE_INDEX, by_namespace)
        services.add_index(NAMESPACE_INDEX, by_namespace)
        slices.add_index(
            _SERVICE_INDEX,
            lambda s: [
                f"{s.metadata.namespace}/{(s.metadata.labels or {}).get(LABEL_SERVICE_NAME, '')}"
            ],
        )
        services.add_handler(
            FuncHandler(
                on_add=lambda s: self.queue.add(object_key(s)),
                on_update=lambda _o, s: self.queue.add(object_key(s)),
                on_delete=lambda s: self.queue.add(object_key(s)),
            )
        )
        pods.add_handler(
            FuncHandler(
                on_add=lambda p: self._pod_changed(p, None),
                on_update=lambda old, new: self._pod_changed(new, old),
                on_delete=lambda p: self._pod_changed(p, None),
            )
        )

    def _pod_changed(self, pod: Pod, old: Pod | None) -> None:
        """Queue the Services selecting the pod, before or after the change; an update that
        changes nothing endpoints show queues nothing (``GetServicesToUpdateOnPodChange``)."""
        namespace = pod.metadata.namespace or ""
        selecting = [
            service
            for service in self.services.by_index(NAMESPACE_INDEX, namespace)
            if selects(service, pod.metadata.labels)
            or (old is not None and selects(service, old.metadata.labels))
        ]
        # Compared only when some Service cares: most pods are selected by none.
        if not selecting or (old is not None and _endpoint_view(old) == _endpoint_view(pod)):
            return
        for service in selecting:
            self.queue.add(object_key(service))

    # --- reconcile ---------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        """Write the Service's Endpoints and slices, or delete them when it is gone."""
        namespace, name = split_key(key)
        service = self.services.get(name, namespace)
        if service is None:
            self._delete_endpoints(namespace, name)
            for slice_ in self._owned_slices(namespace, name):
                self._delete_slice(slice_)
            return
        spec = service.spec or ServiceSpec()
        if spec.selector is None or spec.type == SERVICE_TYPE_EXTERNAL_NAME:
            return
        pods = [
            pod
            for pod in self.pods.by_index(NAMESPACE_INDEX, namespace)
            if selects(service, pod.metadata.labels)
            and _ip(pod)
            and podutil.phase(pod) not in (PHASE_SUCCEEDED, PHASE_FAILED)
        ]
        pods.sort(key=lambda p: (_ip(p), p.metadata.uid or ""))
        groups = self._port_groups(spec, pods)
        self._sync_endpoints(service, groups)
        self._sync_slices(service, groups)

    def _port_groups(self, spec: ServiceSpec, pods: Sequence[Pod]) -> dict[PortKey, list[Pod]]:
        """Pods grouped by the ports they resolve, in order of first appearance."""
        groups: dict[PortKey, list[Pod]] = {}
        for pod in pods:
            key: list[tuple[str, int, str, str | None]] = []
            for port in spec.ports or ():
                number = find_port(pod, port)
                if number is not None:
                    key.append((port.name or "", number, port.protocol or "TCP", port.app_protocol))
            groups.setdefault(tuple(key), []).append(pod)
        return groups

    # --- v1 Endpoints --------------------------------------------------------------------------

    def _labels(self, service: Service) -> dict[str, str]:
        labels = dict(service.metadata.labels or {})
        if is_headless(service.spec or ServiceSpec()):
            labels[HEADLESS_LABEL] = ""
        return labels

    def _sync_endpoints(self, service: Service, groups: Mapping[PortKey, list[Pod]]) -> None:
        meta = service.metadata
        publish = bool((service.spec or ServiceSpec()).publish_not_ready_addresses)
        subsets: list[EndpointSubset] = []
        for ports, pods in groups.items():
            ready: list[EndpointAddress] = []
            not_ready: list[EndpointAddress] = []
            for pod in pods:
                if pod.metadata.deletion_timestamp and not publish:
                    continue
                address = EndpointAddress(
                    ip=_ip(pod), node_name=pod.spec.node_name if pod.spec else None,
                    target_ref=_pod_ref(pod),
                )  # fmt: skip
                (ready if publish or podutil.is_pod_ready(pod) else not_ready).append(address)
            if not ready and not not_ready:
                continue
            subsets.append(
                EndpointSubset(
                    addresses=tuple(ready) or None,
                    not_ready_addresses=tuple(not_ready) or None,
                    ports=tuple(
                        EndpointPort(name=n or None, port=p, protocol=proto, app_protocol=app)
                        for n, p, proto, app in ports
                    )
                    or None,
                )
            )
        labels = self._labels(service)
        current = self.endpoints.get(meta.name or "", meta.namespace)
        if current is None:
            desired = Endpoints(
                metadata=ObjectMeta(name=meta.name, namespace=meta.namespace, labels=labels),
                subsets=tuple(subsets),
            )
            self.client.create(desired)
            return
        if (
            tuple(current.subsets or ()) == tuple(subsets)
            and (current.metadata.labels or {}) == labels
        ):
            return
        updated = evolve(
            current, subsets=tuple(subsets), metadata=evolve(current.metadata, labels=labels)
        )
        self.client.update(updated)

    def _delete_endpoints(self, namespace: str, name: str) -> None:
        if self.endpoints.get(name, namespace) is None:
            return
        try:
            self.client.delete(Endpoints, name, namespace)
        except errors.NotFoundError:
            return

    # --- discovery.k8s.io/v1 EndpointSlices ----------------------------------------------------

    def _owned_slices(self, namespace: str, name: str) -> list[EndpointSlice]:
        return [
            s
            for s in self.slices.by_index(_SERVICE_INDEX, f"{namespace}/{name}")
            if (s.metadata.labels or {}).get(LABEL_MANAGED_BY) == CONTROLLER_NAME
        ]

    def _slice_endpoints(self, pods: Sequence[Pod]) -> tuple[Endpoint, ...]:
        endpoints = []
        for pod in pods:
            terminating = bool(pod.metadata.deletion_timestamp)
            serving = podutil.is_pod_ready(pod)
            endpoints.append(
                Endpoint(
                    addresses=(_ip(pod),),
                    conditions=EndpointConditions(
                        ready=serving and not terminating, serving=serving, terminating=terminating
                    ),
                    node_name=pod.spec.node_name if pod.spec else None,
                    target_ref=_pod_ref(pod),
                )
            )
        return tuple(endpoints)

    def _sync_slices(self, service: Service, groups: Mapping[PortKey, list[Pod]]) -> None:
        meta = service.metadata
        labels = {
            **self._labels(service),
            LABEL_SERVICE_NAME: meta.name or "",
            LABEL_MANAGED_BY: CONTROLLER_NAME,
        }
        wanted: list[tuple[tuple[SlicePort, ...] | None, tuple[Endpoint, ...] | None]] = [
            (
                tuple(
                    SlicePort(name=n, port=p, protocol=proto, app_protocol=app)
                    for n, p, proto, app in ports
                ) or None,
                self._slice_endpoints(pods) or None,
            )
            for ports, pods in groups.items()
        ] or [(None, None)]  # fmt: skip
        existing = sorted(
            self._owned_slices(meta.namespace or "", meta.name or ""),
            key=lambda s: s.metadata.name or "",
        )
        kept: set[str] = set()
        owner = podutil.new_controller_ref(service)
        for ports, endpoints in wanted:
            # Slices hold dicts (``extra``): matched by equality, not hashing.
            current = next(
                (s for s in existing if s.ports == ports and s.metadata.name not in kept), None
            )
            if current is None:
                desired = EndpointSlice(
                    metadata=ObjectMeta(
                        generate_name=f"{meta.name}-", namespace=meta.namespace, labels=labels,
                        owner_references=(owner,),
                    ),
                    address_type=ADDRESS_TYPE_IPV4, endpoints=endpoints, ports=ports,
                )  # fmt: skip
                self.client.create(desired)
                continue
            kept.add(current.metadata.name or "")
            if current.endpoints == endpoints and (current.metadata.labels or {}) == labels:
                continue
            updated = evolve(
                current, endpoints=endpoints, metadata=evolve(current.metadata, labels=labels)
            )
            self.client.update(updated)
        for slice_ in existing:
            if (slice_.metadata.name or "") not in kept:
                self._delete_slice(slice_)

    def _delete_slice(self, slice_: EndpointSlice) -> None:
        try:
            self.client.delete(EndpointSlice, slice_.metadata.name or "", slice_.metadata.namespace)
        except errors.NotFoundError:
            return
