"""core/v1 Service: a stable virtual IP (and optional node ports) in front of a pod selector.

Mirrors ``k8s.io/api/core/v1/types.go`` (``Service``, ``ServiceSpec``, ``ServicePort``,
``ServiceStatus``, ``LoadBalancerStatus``). The fields the API server defaults, validates,
allocates or prints are attributes; everything else (``sessionAffinityConfig``,
``trafficDistribution``, ``status.conditions``, an ingress's ``ipMode``, ...) stays in the
``extra`` of its level and round-trips unchanged. The service types and their allocation::

    ClusterIP     a cluster IP from the service range (or none: clusterIP "None", headless)
    NodePort      a cluster IP + a node port per port, from 30000-32767
    LoadBalancer  as NodePort, + status.loadBalancer (no cloud here: it stays <pending>)
    ExternalName  neither: a DNS alias (spec.externalName)

Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init, json_name

SERVICE_TYPE_CLUSTER_IP: Final = "ClusterIP"
SERVICE_TYPE_NODE_PORT: Final = "NodePort"
SERVICE_TYPE_LOAD_BALANCER: Final = "LoadBalancer"
SERVICE_TYPE_EXTERNAL_NAME: Final = "ExternalName"
CLUSTER_IP_NONE: Final = "None"
"""``clusterIP: None``: a headless Service (no virtual IP)."""
AFFINITY_NONE: Final = "None"
AFFINITY_CLIENT_IP: Final = "ClientIP"
TRAFFIC_POLICY_CLUSTER: Final = "Cluster"
TRAFFIC_POLICY_LOCAL: Final = "Local"
IPV4: Final = "IPv4"
IPV6: Final = "IPv6"
SINGLE_STACK: Final = "SingleStack"
PREFER_DUAL_STACK: Final = "PreferDualStack"
REQUIRE_DUAL_STACK: Final = "RequireDualStack"

IntOrString = int | str
"""``intstr.IntOrString``: a port number or a named container port."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ServicePort:
    """One port of a Service: its number, protocol, target in the pods and node port."""

    name: str | None = None
    protocol: str | None = None
    app_protocol: str | None = None
    port: Int32 | None = None
    target_port: IntOrString | None = None
    node_port: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceSpec:
    """``spec`` of a Service."""

    ports: tuple[ServicePort, ...] | None = None
    selector: Mapping[str, str] | None = None
    cluster_ip: str | None = json_name("clusterIP")
    cluster_ips: tuple[str, ...] | None = json_name("clusterIPs")
    type: str | None = None
    external_ips: tuple[str, ...] | None = json_name("externalIPs")
    session_affinity: str | None = None
    load_balancer_ip: str | None = json_name("loadBalancerIP")
    load_balancer_source_ranges: tuple[str, ...] | None = None
    external_name: str | None = None
    external_traffic_policy: str | None = None
    health_check_node_port: Int32 | None = None
    publish_not_ready_addresses: bool | None = None
    ip_families: tuple[str, ...] | None = None
    ip_family_policy: str | None = None
    allocate_load_balancer_node_ports: bool | None = None
    load_balancer_class: str | None = None
    internal_traffic_policy: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadBalancerIngress:
    """An address of a load balancer: an IP or a host name."""

    ip: str | None = None
    hostname: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadBalancerStatus:
    """``status.loadBalancer``: the ingress points of the load balancer, once it exists."""

    ingress: tuple[LoadBalancerIngress, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceStatus:
    """``status`` of a Service."""

    load_balancer: LoadBalancerStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Service:
    """A v1 Service."""

    api_version: str | None = "v1"
    kind: str | None = "Service"
    metadata: ObjectMeta = ObjectMeta()
    spec: ServiceSpec | None = None
    status: ServiceStatus | None = None
    extra: JsonDict = extra_field()


def is_headless(spec: ServiceSpec) -> bool:
    """``isHeadlessService``: exactly one cluster IP, and it is ``None``."""
    return tuple(spec.cluster_ips or ()) == (CLUSTER_IP_NONE,)


def externally_accessible(spec: ServiceSpec) -> bool:
    """``ExternallyAccessible``: NodePort, LoadBalancer, or ClusterIP with external IPs."""
    return spec.type in (SERVICE_TYPE_NODE_PORT, SERVICE_TYPE_LOAD_BALANCER) or (
        spec.type == SERVICE_TYPE_CLUSTER_IP and bool(spec.external_ips)
    )


def needs_health_check(spec: ServiceSpec) -> bool:
    """``NeedsHealthCheck``: a LoadBalancer whose external traffic policy is Local."""
    return (
        spec.type == SERVICE_TYPE_LOAD_BALANCER
        and spec.external_traffic_policy == TRAFFIC_POLICY_LOCAL
    )


def wants_node_ports(spec: ServiceSpec) -> bool:
    """NodePort and LoadBalancer Services get node ports (``shouldAllocateNodePorts``)."""
    if spec.type == SERVICE_TYPE_NODE_PORT:
        return True
    return (
        spec.type == SERVICE_TYPE_LOAD_BALANCER
        and spec.allocate_load_balancer_node_ports is not False
    )
