"""Defaulting of Services, Endpoints and EndpointSlices, as the API server fills them in.

Mirrors ``SetDefaults_Service`` and ``SetDefaults_Endpoints`` of
``pkg/apis/core/v1/defaults.go`` and ``SetDefaults_EndpointPort`` of
``pkg/apis/discovery/v1/defaults.go``:

* a Service's ``type`` is ClusterIP and its ``sessionAffinity`` None (which drops any
  ``sessionAffinityConfig``; ClientIP gets a 10800 s timeout when none is given);
* each port's ``protocol`` is TCP and its ``targetPort`` its ``port`` (when unset, 0 or "");
* ``externalTrafficPolicy`` is Cluster for externally-accessible Services,
  ``internalTrafficPolicy`` Cluster for ClusterIP, NodePort and LoadBalancer, and a
  LoadBalancer gets ``allocateLoadBalancerNodePorts: true``;
* Endpoints ports and EndpointSlice ports default to TCP (a slice port's name to "").

``ipFamilies``/``ipFamilyPolicy`` and cluster IPs are the registry's
(``apiserver.serviceregistry``), not defaulting. Idempotent. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.model import evolve
from kubeprio.api.service import (
    AFFINITY_CLIENT_IP,
    AFFINITY_NONE,
    SERVICE_TYPE_CLUSTER_IP,
    SERVICE_TYPE_LOAD_BALANCER,
    SERVICE_TYPE_NODE_PORT,
    TRAFFIC_POLICY_CLUSTER,
    Service,
    ServicePort,
    ServiceSpec,
    externally_accessible,
)

PROTOCOL_TCP: Final = "TCP"
DEFAULT_CLIENT_IP_AFFINITY_SECONDS: Final = 10800
"""``DefaultClientIPServiceAffinitySeconds``: three hours."""


def _default_port(port: ServicePort) -> ServicePort:
    changes: dict[str, Any] = {}
    if not port.protocol:
        changes["protocol"] = PROTOCOL_TCP
    if port.target_port in (None, 0, ""):
        changes["target_port"] = port.port or 0
    return evolve(port, **changes) if changes else port


def _affinity_config(spec: ServiceSpec, affinity: str) -> dict[str, Any] | None:
    """The ``extra`` after the session-affinity rules, or None when unchanged."""
    config = spec.extra.get("sessionAffinityConfig")
    if affinity == AFFINITY_NONE and "sessionAffinityConfig" in spec.extra:
        return {k: v for k, v in spec.extra.items() if k != "sessionAffinityConfig"}
    if affinity == AFFINITY_CLIENT_IP:
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            timeout = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_AFFINITY_SECONDS}}
            return {**spec.extra, "sessionAffinityConfig": timeout}
    return None


def default_service(service: Service) -> Service:
    """``SetDefaults_Service``."""
    spec = service.spec or ServiceSpec()
    changes: dict[str, Any] = {}
    affinity = spec.session_affinity or AFFINITY_NONE
    if spec.session_affinity != affinity:
        changes["session_affinity"] = affinity
    extra = _affinity_config(spec, affinity)
    if extra is not None:
        changes["extra"] = extra
    service_type = spec.type or SERVICE_TYPE_CLUSTER_IP
    if spec.type != service_type:
        changes["type"] = service_type
    if spec.ports:
        ports = tuple(_default_port(port) for port in spec.ports)
        if ports != spec.ports:
            changes["ports"] = ports
    spec = evolve(spec, **changes) if changes else spec
    changes = {}
    if externally_accessible(spec) and not spec.external_traffic_policy:
        changes["external_traffic_policy"] = TRAFFIC_POLICY_CLUSTER
    if spec.internal_traffic_policy is None and service_type in (
        SERVICE_TYPE_NODE_PORT,
        SERVICE_TYPE_LOAD_BALANCER,
        SERVICE_TYPE_CLUSTER_IP,
    ):
        changes["internal_traffic_policy"] = TRAFFIC_POLICY_CLUSTER
    if (
        service_type == SERVICE_TYPE_LOAD_BALANCER
        and spec.allocate_load_balancer_node_ports is None
    ):
        changes["allocate_load_balancer_node_ports"] = True
    if changes:
        spec = evolve(spec, **changes)
    return service if spec is service.spec else evolve(service, spec=spec)


def default_endpoints(endpoints: Endpoints) -> Endpoints:
    """``SetDefaults_Endpoints``: subset ports default to TCP."""
    subsets = tuple(
        evolve(
            subset,
            ports=tuple(
                port if port.protocol else evolve(port, protocol=PROTOCOL_TCP)
                for port in subset.ports
            ),
        )
        if subset.ports and any(not port.protocol for port in subset.ports)
        else subset
        for subset in endpoints.subsets or ()
    )
    if endpoints.subsets is None or subsets == endpoints.subsets:
        return endpoints
    return evolve(endpoints, subsets=subsets)


def default_endpoint_slice(slice_: EndpointSlice) -> EndpointSlice:
    """``SetDefaults_EndpointPort``: a port's name defaults to "" and its protocol to TCP."""
    if not slice_.ports or all(p.name is not None and p.protocol for p in slice_.ports):
        return slice_
    ports = tuple(
        evolve(port, name=port.name or "", protocol=port.protocol or PROTOCOL_TCP)
        for port in slice_.ports
    )
    return evolve(slice_, ports=ports)
