"""Kubelet pod admission: does a pod bound to this node get to start here?

Two admit handlers run, in the kubelet's order (``pkg/kubelet/kubelet.go`` registers
the eviction manager's first):

1. ``admit_under_pressure`` (``eviction_manager.go`` ``Admit``): under node pressure a
   non-critical pod is rejected with reason ``Evicted`` and ``The node had condition:
   [MemoryPressure]. ``; memory pressure alone lets through pods that are not
   BestEffort and BestEffort pods tolerating the ``memory-pressure`` taint.
2. ``fit_resources`` (``pkg/kubelet/lifecycle/predicate.go`` over the scheduler's
   ``noderesources.Fits``): the pod's requests must fit in the node's allocatable minus
   the requests of the pods already admitted. The first failing resource names the
   rejection: ``OutOfpods``, ``OutOfcpu``, ``OutOfmemory``, ``OutOfephemeral-storage``,
   ``OutOf<resource>``, with ``Node didn't have enough resource: cpu, requested: 800,
   used: 1500, capacity: 2000`` (cpu in millicores, the rest in units).

The node-affinity, node-name, host-port and NoExecute-taint predicates are the
scheduler's to enforce and are not re-checked here. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import Node, Pod, PodSpec, Toleration
from kubeprio.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    QOS_BEST_EFFORT,
    ResourceAmounts,
    amounts,
    qos_class,
)
from kubeprio.kubelet import eviction

INSUFFICIENT_RESOURCE_PREFIX: Final = "OutOf"
TAINT_NODE_MEMORY_PRESSURE: Final = "node.kubernetes.io/memory-pressure"
_STANDARD: Final = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True, slots=True)
class AdmitResult:
    """``PodAdmitResult``: admitted, or the reason and message of the rejection."""

    admit: bool
    reason: str = ""
    message: str = ""


ADMIT: Final = AdmitResult(True)


def node_allocatable(node: Node | None) -> ResourceAmounts:
    """The node's allocatable resources (its capacity when allocatable is not reported)."""
    status = node.status if node is not None else None
    if status is None:
        return {}
    return amounts(status.allocatable if status.allocatable is not None else status.capacity)


def node_capacity(node: Node | None) -> ResourceAmounts:
    """The node's capacity (its allocatable when capacity is not reported)."""
    status = node.status if node is not None else None
    if status is None:
        return {}
    return amounts(status.capacity if status.capacity is not None else status.allocatable)


def _is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: a fully qualified name outside ``kubernetes.io/``."""
    return "/" in name and not name.startswith(("kubernetes.io/", "requests."))


def _insufficient(name: str, requested: int, used: int, capacity: int) -> AdmitResult:
    reason = INSUFFICIENT_RESOURCE_PREFIX + name
    message = (
        f"Node didn't have enough resource: {name}, requested: {requested}, "
        f"used: {used}, capacity: {capacity}"
    )
    return AdmitResult(False, reason, message)


def fit_resources(
    requests: Mapping[str, int],
    *,
    allocatable: Mapping[str, int],
    used: Mapping[str, int],
    used_pods: int,
) -> AdmitResult:
    """``noderesources.Fits`` as the kubelet reports it: the first insufficient resource."""
    allowed_pods = allocatable.get(PODS, 0)
    if used_pods + 1 > allowed_pods:
        return _insufficient(PODS, 1, used_pods, allowed_pods)
    # Extended resources the node does not advertise are dropped first
    # (``removeMissingExtendedResources``): they may be cluster-level resources.
    wanted = {
        name: value
        for name, value in requests.items()
        if name != PODS and not (_is_extended(name) and name not in allocatable)
    }
    if not any(value for value in wanted.values()):
        return ADMIT
    for name in _STANDARD:
        value = wanted.get(name, 0)
        if value > 0 and value > allocatable.get(name, 0) - used.get(name, 0):
            return _insufficient(name, value, used.get(name, 0), allocatable.get(name, 0))
    for name in sorted(wanted):
        if name in _STANDARD:
            continue
        value = wanted[name]
        if value > allocatable.get(name, 0) - used.get(name, 0):
            return _insufficient(name, value, used.get(name, 0), allocatable.get(name, 0))
    return ADMIT


def _tolerates(toleration: Toleration, key: str, effect: str) -> bool:
    """``Toleration.ToleratesTaint`` for a taint with no value."""
    if toleration.effect and toleration.effect != effect:
        return False
    if toleration.key and toleration.key != key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and not toleration.value


def admit_under_pressure(pod: Pod, conditions: Sequence[str]) -> AdmitResult:
    """The eviction manager's admit handler under ``conditions`` (e.g. ``MemoryPressure``)."""
    if not conditions or eviction.is_critical_pod(pod):
        return ADMIT
    if list(conditions) == [eviction.NODE_MEMORY_PRESSURE]:
        spec = pod.spec or PodSpec()
        if qos_class(spec) != QOS_BEST_EFFORT:
            return ADMIT
        if any(
            _tolerates(t, TAINT_NODE_MEMORY_PRESSURE, "NoSchedule") for t in spec.tolerations or ()
        ):
            return ADMIT
    return AdmitResult(False, eviction.REASON_EVICTED, eviction.node_condition_message(conditions))


def add_amounts(total: dict[str, int], more: Mapping[str, int], sign: int = 1) -> None:
    """``total += sign * more``, resource by resource."""
    for name, value in more.items():
        total[name] = total.get(name, 0) + sign * value
