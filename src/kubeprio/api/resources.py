"""Effective pod resource requests and the QoS class, computed as upstream does.

* ``pod_requests`` mirrors ``k8s.io/component-helpers/resource`` ``PodRequests``: the sum
  of the app containers, the maximum with each init container (restartable "sidecar"
  init containers run alongside and accumulate), plus ``spec.overhead``.
* ``qos_class`` mirrors ``pkg/apis/core/helper/qos`` ``GetPodQOS`` (cpu and memory only).

Amounts are exact integers: ``cpu`` in millicores (upstream ``MilliValue``), everything
else in base units (``Value``, rounded up). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from kubeprio.api.core import Container, PodSpec
from kubeprio.api.quantity import Quantity
from kubeprio.api.selectors import validate_label_key

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"
QOS_GUARANTEED: Final = "Guaranteed"
QOS_BURSTABLE: Final = "Burstable"
QOS_BEST_EFFORT: Final = "BestEffort"
CONTAINER_RESTART_POLICY_ALWAYS: Final = "Always"

ResourceAmounts = dict[str, int]
"""Resource name -> exact integer amount (cpu in millicores, the rest in base units)."""


def amount(name: str, quantity: Quantity) -> int:
    """The integer amount of one resource: millicores for cpu, ``Value()`` otherwise."""
    return quantity.milli_value() if name == CPU else quantity.value()


def amounts(resources: Mapping[str, Quantity] | None) -> ResourceAmounts:
    """Convert a ResourceList into integer amounts."""
    if not resources:
        return {}
    return {name: amount(name, quantity) for name, quantity in resources.items()}


def _add(total: ResourceAmounts, more: Mapping[str, int]) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value


def _max(total: ResourceAmounts, other: Mapping[str, int]) -> None:
    for name, value in other.items():
        if value > total.get(name, 0) or name not in total:
            total[name] = max(value, total.get(name, value))


def _container_requests(
    container: Container, non_missing: Mapping[str, int] | None
) -> ResourceAmounts:
    resources = container.resources
    requests = amounts(resources.requests if resources is not None else None)
    if non_missing:
        # Only a request that is absent is defaulted: an explicit "0" stays 0 (upstream
        # checks the key, not the value).
        for name, value in non_missing.items():
            if name not in requests:
                requests[name] = value
    return requests


def pod_requests(spec: PodSpec, non_missing: Mapping[str, int] | None = None) -> ResourceAmounts:
    """The pod's effective requests (upstream ``PodRequests`` without pod-level resources).

    ``non_missing`` is upstream's ``PodResourcesOptions.NonMissingContainerRequests``:
    amounts assumed for every container (init containers included) that does not
    request that resource at all; the scheduler uses it for its "non-zero" requests.
    """
    requests: ResourceAmounts = {}
    for container in spec.containers or ():
        _add(requests, _container_requests(container, non_missing))
    restartable_init: ResourceAmounts = {}
    init_max: ResourceAmounts = {}
    for container in spec.init_containers or ():
        container_requests = _container_requests(container, non_missing)
        if container.restart_policy == CONTAINER_RESTART_POLICY_ALWAYS:
            # A sidecar keeps running next to the app containers and later init containers.
            _add(requests, container_requests)
            _add(restartable_init, container_requests)
            effective = dict(restartable_init)
        else:
            effective = dict(container_requests)
            _add(effective, restartable_init)
        _max(init_max, effective)
    _max(requests, init_max)
    _add(requests, amounts(spec.overhead))
    return requests


def _supported_qos(name: str) -> bool:
    return name in (CPU, MEMORY)


def _all_containers(spec: PodSpec) -> Iterable[Container]:
    yield from spec.containers or ()
    yield from spec.init_containers or ()


def qos_class(spec: PodSpec) -> str:
    """``Guaranteed``, ``Burstable`` or ``BestEffort`` (upstream ``GetPodQOS``)."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for container in _all_containers(spec):
        resources = container.resources
        for name, quantity in ((resources.requests if resources else None) or {}).items():
            if _supported_qos(name) and quantity.nanos > 0:
                requests[name] = requests.get(name, 0) + quantity.nanos
        found: set[str] = set()
        for name, quantity in ((resources.limits if resources else None) or {}).items():
            if _supported_qos(name) and quantity.nanos > 0:
                found.add(name)
                limits[name] = limits.get(name, 0) + quantity.nanos
        if not {CPU, MEMORY} <= found:
            guaranteed = False
    if not requests and not limits:
        return QOS_BEST_EFFORT
    if guaranteed:
        for name, value in requests.items():
            if limits.get(name) != value:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return QOS_GUARANTEED
    return QOS_BURSTABLE


# --- resource name classes (pkg/apis/core/v1/helper, pkg/scheduler/util) -------------------

HUGEPAGES_PREFIX: Final = "hugepages-"
ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
_QUOTA_PREFIX: Final = "requests."


def is_native_resource(name: str) -> bool:
    """Upstream ``IsNativeResource``: no domain, or a ``kubernetes.io/`` one."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """Upstream ``IsExtendedResourceName``: a domain-qualified, non-native resource.

    ``nvidia.com/gpu`` is one; ``cpu``, ``kubernetes.io/x`` and ``requests.x/y`` are not.
    The name must still be valid as a quota key (``requests.<name>`` a qualified name).
    """
    if is_native_resource(name) or name.startswith(_QUOTA_PREFIX):
        return False
    return not validate_label_key(_QUOTA_PREFIX + name)


def is_scalar_resource_name(name: str) -> bool:
    """Upstream ``schedutil.IsScalarResourceName``: extended, hugepages, prefixed native
    or attachable-volumes resources (the ones ``Resource.ScalarResources`` tracks)."""
    return (
        is_extended_resource_name(name)
        or name.startswith(HUGEPAGES_PREFIX)
        or "kubernetes.io/" in name
        or name.startswith(ATTACHABLE_VOLUMES_PREFIX)
    )
