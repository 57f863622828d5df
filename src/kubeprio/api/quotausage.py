"""What an object of any kind but Pod charges to a ResourceQuota (upstream's other evaluators).

Pods have their own evaluator (``api.quota``). Every other namespaced kind is counted as
upstream's quota registry counts it (``pkg/quota/v1/evaluator/core/registry.go``,
``services.go`` and the generic ``ObjectCountEvaluator`` of
``staging/src/k8s.io/apiserver/pkg/quota/v1/generic``):

* **Services** (``serviceEvaluator``): ``count/services`` and ``services`` 1;
  ``services.nodeports`` the number of ports of a NodePort or LoadBalancer Service (a
  LoadBalancer with ``allocateLoadBalancerNodePorts: false`` only the ports that name a
  node port), else 0; ``services.loadbalancers`` 1 for a LoadBalancer, else 0. Services
  are charged on update too (a type or port change can cost more).
* **ConfigMaps, Secrets, ResourceQuotas**: ``count/<resource>`` and its legacy alias
  (``configmaps``, ``secrets``, ``resourcequotas``) 1 each.
* **Any other kind**: ``count/<resource>`` (core group) or ``count/<resource>.<group>`` 1,
  on create only.
* **Events** are not counted at all (upstream's ``DefaultIgnoredResources``).

None of these evaluators knows a quota scope (``MatchesNoScopeFunc``): a quota with
scopes or a scope selector never tracks them. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.quantity import Quantity
from kubeprio.api.quota import ONE, ZERO, Usage
from kubeprio.api.service import (
    SERVICE_TYPE_LOAD_BALANCER,
    SERVICE_TYPE_NODE_PORT,
    Service,
    ServiceSpec,
)

SERVICES: Final = "services"
SERVICES_NODE_PORTS: Final = "services.nodeports"
SERVICES_LOAD_BALANCERS: Final = "services.loadbalancers"
LEGACY_ALIASES: Final = {
    "configmaps": "configmaps",
    "secrets": "secrets",
    "resourcequotas": "resourcequotas",
    "replicationcontrollers": "replicationcontrollers",
}
"""Core resources whose object count also goes by its old name (``legacyObjectCountAliases``)."""
IGNORED: Final = frozenset({("", "events")})
"""Resources quota never counts (``install.DefaultIgnoredResources``)."""


def count_name(info: ResourceInfo) -> str:
    """``ObjectCountQuotaResourceNameFor``: ``count/<resource>``, with ``.<group>`` outside core."""
    return f"count/{info.plural}.{info.group}" if info.group else f"count/{info.plural}"


def is_ignored(info: ResourceInfo) -> bool:
    """Whether quota leaves this kind alone (events)."""
    return (info.group, info.plural) in IGNORED


def is_service(info: ResourceInfo) -> bool:
    """Whether ``info`` is core/v1 Services (the one non-pod evaluator with more than counts)."""
    return info.model is Service


def resource_names(info: ResourceInfo) -> frozenset[str]:
    """The quota names the kind's evaluator tracks (``MatchingResources`` of every name)."""
    if is_ignored(info):
        return frozenset()
    names = {count_name(info)}
    if is_service(info):
        names |= {SERVICES, SERVICES_NODE_PORTS, SERVICES_LOAD_BALANCERS}
    elif not info.group and info.plural in LEGACY_ALIASES:
        names.add(LEGACY_ALIASES[info.plural])
    return frozenset(names)


def quota_service_type(service: Service) -> str:
    """``GetQuotaServiceType``: NodePort or LoadBalancer, the types quota prices; else ``""``."""
    kind = (service.spec or ServiceSpec()).type
    return kind if kind in (SERVICE_TYPE_NODE_PORT, SERVICE_TYPE_LOAD_BALANCER) else ""


def _quantity(count: int) -> Quantity:
    return Quantity.from_int(count)


def service_usage(service: Service) -> Usage:
    """``serviceEvaluator.Usage``."""
    spec = service.spec or ServiceSpec()
    ports = spec.ports or ()
    node_ports = ZERO
    load_balancers = ZERO
    if spec.type == SERVICE_TYPE_NODE_PORT:
        node_ports = _quantity(len(ports))
    elif spec.type == SERVICE_TYPE_LOAD_BALANCER:
        if spec.allocate_load_balancer_node_ports is False:
            # Node ports will not be allocated: only those asked for explicitly count.
            node_ports = _quantity(sum(1 for port in ports if port.node_port))
        else:
            node_ports = _quantity(len(ports))
        load_balancers = ONE
    return {
        "count/services": ONE,
        SERVICES: ONE,
        SERVICES_NODE_PORTS: node_ports,
        SERVICES_LOAD_BALANCERS: load_balancers,
    }


def object_usage(info: ResourceInfo, obj: Any) -> Usage:
    """What one object of a non-pod kind charges (nothing for an ignored kind)."""
    if is_ignored(info):
        return {}
    if is_service(info) and isinstance(obj, Service):
        return service_usage(obj)
    return dict.fromkeys(resource_names(info), ONE)
