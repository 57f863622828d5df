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
* **PersistentVolumeClaims** (``pvcEvaluator``, ``persistent_volume_claims.go``):
  ``count/persistentvolumeclaims`` and ``persistentvolumeclaims`` 1, ``requests.storage``
  the claim's ``spec.resources.requests.storage`` rounded up to a whole byte (or
  ``status.allocatedResources.storage`` when larger: ``RecoverVolumeExpansionFailure``,
  beta and on in v1.32); with a storage class (``GetPersistentVolumeClaimClass``: the
  beta annotation, then ``storageClassName``) the same two again as
  ``<class>.storageclass.storage.k8s.io/persistentvolumeclaims`` and
  ``.../requests.storage``. A quota names any class by that suffix. Claims are charged on
  update too (a resize or a class set later costs more).
* **Events** are not counted at all (upstream's ``DefaultIgnoredResources``).

None of these evaluators knows a quota scope (``MatchesNoScopeFunc``): a quota with
scopes or a scope selector never tracks them. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.persistentvolume import STORAGE, PersistentVolumeClaim, claim_class
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
PERSISTENT_VOLUME_CLAIMS: Final = "persistentvolumeclaims"
REQUESTS_STORAGE: Final = "requests.storage"
CLAIM_RESOURCES: Final = (PERSISTENT_VOLUME_CLAIMS, REQUESTS_STORAGE)
"""``pvcResources``: what a claim charges, also per storage class."""
STORAGE_CLASS_SUFFIX: Final = ".storageclass.storage.k8s.io/"
"""``storageClassSuffix``: ``gold.storageclass.storage.k8s.io/requests.storage``."""
_NANO: Final = 10**9
IGNORED: Final = frozenset({("", "events")})
"""Resources quota never counts (``install.DefaultIgnoredResources``)."""


COUNT_PREFIX: Final = "count/"
"""``ResourceObjectCountPrefix``: object count quota names start with it."""


def count_name(info: ResourceInfo) -> str:
    """``ObjectCountQuotaResourceNameFor``: ``count/<resource>``, with ``.<group>`` outside core."""
    return f"count/{info.plural}.{info.group}" if info.group else f"count/{info.plural}"


def is_ignored(info: ResourceInfo) -> bool:
    """Whether quota leaves this kind alone (events)."""
    return (info.group, info.plural) in IGNORED


def is_service(info: ResourceInfo) -> bool:
    """Whether ``info`` is core/v1 Services (the one non-pod evaluator with more than counts)."""
    return info.model is Service


def is_claim(info: ResourceInfo) -> bool:
    """Whether ``info`` is core/v1 PersistentVolumeClaims."""
    return info.model is PersistentVolumeClaim


def charged_on_update(info: ResourceInfo) -> bool:
    """Whether an update can change what an object of the kind charges (the evaluator
    ``Handles`` updates): Services and claims."""
    return is_service(info) or is_claim(info)


def by_storage_class(storage_class: str, resource: str) -> str:
    """``V1ResourceByStorageClass``: ``<class>.storageclass.storage.k8s.io/<resource>``."""
    return f"{storage_class}{STORAGE_CLASS_SUFFIX}{resource}"


def covers(info: ResourceInfo, name: str) -> bool:
    """Whether the kind's evaluator tracks the quota resource ``name``
    (``MatchingResources``): its fixed names, and for claims any storage class's."""
    if name in resource_names(info):
        return True
    return is_claim(info) and any(
        name.endswith(STORAGE_CLASS_SUFFIX + resource) for resource in CLAIM_RESOURCES
    )


def resource_names(info: ResourceInfo) -> frozenset[str]:
    """The quota names the kind's evaluator tracks (``MatchingResources`` of every name)."""
    if is_ignored(info):
        return frozenset()
    names = {count_name(info)}
    if is_service(info):
        names |= {SERVICES, SERVICES_NODE_PORTS, SERVICES_LOAD_BALANCERS}
    elif is_claim(info):
        names |= set(CLAIM_RESOURCES)
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


def _round_up(amount: Quantity) -> Quantity:
    """``RoundUp(0)``: a fraction of a byte counts as a whole one (issue 94313); a whole
    amount is returned as it is, keeping its text."""
    whole = -(-amount.nanos // _NANO) * _NANO
    return amount if whole == amount.nanos else Quantity(whole, amount.format)


def claim_storage(claim: PersistentVolumeClaim) -> Quantity | None:
    """``getStorageUsage``: the requested storage, or the allocated storage when larger."""
    spec_resources = claim.spec.resources if claim.spec else None
    requested = (spec_resources.requests if spec_resources else None) or {}
    if STORAGE not in requested:
        return None
    result = _round_up(requested[STORAGE])
    allocated = (claim.status.allocated_resources if claim.status else None) or {}
    if STORAGE in allocated and allocated[STORAGE] > result:
        result = _round_up(allocated[STORAGE])
    return result


def claim_usage(claim: PersistentVolumeClaim) -> Usage:
    """``pvcEvaluator.Usage``."""
    usage: Usage = {PERSISTENT_VOLUME_CLAIMS: ONE, f"count/{PERSISTENT_VOLUME_CLAIMS}": ONE}
    storage_class = claim_class(claim)
    if storage_class:
        usage[by_storage_class(storage_class, PERSISTENT_VOLUME_CLAIMS)] = ONE
    storage = claim_storage(claim)
    if storage is not None:
        usage[REQUESTS_STORAGE] = storage
        if storage_class:
            usage[by_storage_class(storage_class, REQUESTS_STORAGE)] = storage
    return usage


def object_usage(info: ResourceInfo, obj: Any) -> Usage:
    """What one object of a non-pod kind charges (nothing for an ignored kind)."""
    if is_ignored(info):
        return {}
    if is_service(info) and isinstance(obj, Service):
        return service_usage(obj)
    if isinstance(obj, PersistentVolumeClaim):
        return claim_usage(obj)
    return dict.fromkeys(resource_names(info), ONE)
