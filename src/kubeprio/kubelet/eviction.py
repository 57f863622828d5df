"""Node-pressure eviction: signals, thresholds, pod ranking and messages (pure functions).

Mirrors ``pkg/kubelet/eviction/helpers.go`` and ``api/types.go`` for the signals a
simulated node can observe: memory (``memory.available``,
``allocatableMemory.available``) and disk (``nodefs.available``, ``imagefs.available``,
one filesystem: the node's ``ephemeral-storage``). Inode and PID signals need data the
simulation does not have and are not modelled.

* Thresholds parse like the kubelet's ``--eviction-hard``/``--eviction-soft`` flags
  (``ParseThresholdConfig``); a percentage is a float32 fraction of capacity, as upstream.
* Ranking (``rankMemoryPressure``, ``rankDiskPressureFunc``) orders pods for eviction:
  usage above requests first (pods without stats first of all), then lower priority,
  then the larger usage above requests. QoS class is not a key. Python's sort is
  stable, so exact ties keep the caller's order (upstream's is unstable: no order).
* ``eviction_message`` builds the status message and event text word for word.
* ``is_critical_pod`` (``pkg/kubelet/types/pod_update.go``): static, mirror, or
  priority >= 2000000000. The eviction manager never evicts those.

Who uses this: ``kubelet.evictionmanager`` (the stateful synchronize loop). Pure: no
I/O, no clock.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import Container, Pod, is_mirror_pod
from kubeprio.api.gofloat import float32
from kubeprio.api.quantity import Quantity, QuantityError, QuantityFormat, parse_quantity
from kubeprio.api.resources import EPHEMERAL_STORAGE, MEMORY, pod_requests
from kubeprio.api.scheduling import SYSTEM_CRITICAL_PRIORITY
from kubeprio.errors import KubeprioError

REASON_EVICTED: Final = "Evicted"
NODE_LOW_MESSAGE_FMT: Final = "The node was low on resource: {}. "
NODE_CONDITION_MESSAGE_FMT: Final = "The node had condition: {}. "
THRESHOLD_MET_MESSAGE_FMT: Final = "Threshold quantity: {}, available: {}. "
CONTAINER_MESSAGE_FMT: Final = (
    "Container {} was using {}, request is {}, has larger consumption of {}. "
)

CONFIG_SOURCE_ANNOTATION: Final = "kubernetes.io/config.source"
API_SERVER_SOURCE: Final = "api"

NODE_MEMORY_PRESSURE: Final = "MemoryPressure"
NODE_DISK_PRESSURE: Final = "DiskPressure"


class Signal(enum.StrEnum):
    """Eviction signals a simulated node observes (``evictionapi.Signal``)."""

    MEMORY_AVAILABLE = "memory.available"
    ALLOCATABLE_MEMORY_AVAILABLE = "allocatableMemory.available"
    NODEFS_AVAILABLE = "nodefs.available"
    IMAGEFS_AVAILABLE = "imagefs.available"


SIGNAL_RESOURCE: Final[Mapping[Signal, str]] = {
    Signal.MEMORY_AVAILABLE: MEMORY,
    Signal.ALLOCATABLE_MEMORY_AVAILABLE: MEMORY,
    Signal.NODEFS_AVAILABLE: EPHEMERAL_STORAGE,
    Signal.IMAGEFS_AVAILABLE: EPHEMERAL_STORAGE,
}
"""``signalToResource``: what evicting a pod reclaims for each signal."""

SIGNAL_CONDITION: Final[Mapping[Signal, str]] = {
    Signal.MEMORY_AVAILABLE: NODE_MEMORY_PRESSURE,
    Signal.ALLOCATABLE_MEMORY_AVAILABLE: NODE_MEMORY_PRESSURE,
    Signal.NODEFS_AVAILABLE: NODE_DISK_PRESSURE,
    Signal.IMAGEFS_AVAILABLE: NODE_DISK_PRESSURE,
}
"""``signalToNodeCondition``."""

DEFAULT_EVICTION_HARD: Final[Mapping[str, str]] = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "imagefs.available": "15%",
}
"""Upstream's Linux ``evictionHard`` defaults, less the inode signals we cannot observe."""

UNOBSERVED_SIGNALS: Final = frozenset(
    {
        "nodefs.inodesFree",
        "imagefs.inodesFree",
        "containerfs.available",
        "containerfs.inodesFree",
        "pid.available",
    }
)
"""Valid upstream signals a simulated node never observes: accepted and never met."""


class ThresholdError(KubeprioError, ValueError):
    """An eviction threshold statement that does not parse (upstream's texts)."""


@dataclass(frozen=True, slots=True)
class ThresholdValue:
    """A threshold amount: an absolute quantity or a fraction of capacity."""

    quantity: Quantity | None = None
    percentage: float = 0.0

    def amount(self, capacity: int) -> Quantity:
        """The threshold for ``capacity`` (upstream ``GetThresholdQuantity``)."""
        if self.quantity is not None:
            return self.quantity
        return Quantity.from_int(int(float(capacity) * self.percentage), QuantityFormat.BINARY_SI)


@dataclass(frozen=True, slots=True)
class Threshold:
    """``evictionapi.Threshold``: ``signal < value``; hard when ``grace_period`` is 0."""

    signal: Signal
    value: ThresholdValue
    grace_period: float = 0.0
    min_reclaim: ThresholdValue | None = None

    @property
    def hard(self) -> bool:
        """``isHardEvictionThreshold``."""
        return self.grace_period == 0


def _parse_value(signal: str, text: str) -> ThresholdValue | None:
    """``parseThresholdStatement``: None for 0% and 100% (ignored thresholds)."""
    if text.endswith("%"):
        if text in ("0%", "100%"):
            return None
        try:
            percentage = float32(float(text.rstrip("%")) / 100)
        except ValueError:
            raise ThresholdError(
                f'strconv.ParseFloat: parsing "{text.rstrip("%")}": invalid syntax'
            ) from None
        if percentage < 0:
            raise ThresholdError(f"eviction percentage threshold {signal} must be >= 0%: {text}")
        if percentage > 1:
            raise ThresholdError(f"eviction percentage threshold {signal} must be <= 100%: {text}")
        return ThresholdValue(percentage=percentage)
    try:
        quantity = parse_quantity(text)
    except QuantityError as exc:
        raise ThresholdError(str(exc)) from exc
    if quantity.sign() <= 0:
        raise ThresholdError(f"eviction threshold {signal} must be positive: {quantity}")
    return ThresholdValue(quantity=quantity)


def _signal(name: str) -> Signal | None:
    """The modelled signal ``name``; None for a valid upstream signal we cannot observe."""
    try:
        return Signal(name)
    except ValueError:
        if name in UNOBSERVED_SIGNALS:
            return None
        raise ThresholdError(f"unsupported eviction signal {name}") from None


def parse_thresholds(
    hard: Mapping[str, str] | None = None,
    *,
    soft: Mapping[str, str] | None = None,
    soft_grace_periods: Mapping[str, float] | None = None,
    min_reclaim: Mapping[str, str] | None = None,
    enforce_node_allocatable: bool = True,
) -> tuple[Threshold, ...]:
    """``ParseThresholdConfig``: hard thresholds, then soft ones, then the allocatable copy.

    ``hard`` defaults to ``DEFAULT_EVICTION_HARD``. With ``enforce_node_allocatable``
    (the kubelet's default ``enforceNodeAllocatable: [pods]``) a hard
    ``memory.available`` threshold is copied to ``allocatableMemory.available``.
    Statements are taken in signal order (upstream iterates a Go map: no order).
    """
    hard = DEFAULT_EVICTION_HARD if hard is None else hard
    soft = soft or {}
    grace = soft_grace_periods or {}
    reclaims: dict[Signal, ThresholdValue] = {}
    for name, text in sorted((min_reclaim or {}).items()):
        signal = _signal(name)
        value = _parse_value(name, text)
        if signal is not None and value is not None:
            reclaims[signal] = value
    results: list[Threshold] = []
    for statements, is_soft in ((hard, False), (soft, True)):
        for signal in Signal:
            if signal.value not in statements:
                continue
            value = _parse_value(signal.value, statements[signal.value])
            if value is None:
                continue
            period = 0.0
            if is_soft:
                if signal.value not in grace:
                    raise ThresholdError(
                        f"grace period must be specified for the soft eviction threshold {signal.value}"
                    )
                period = float(grace[signal.value])
            results.append(Threshold(signal, value, period, reclaims.get(signal)))
        for name in statements:
            _signal(name)  # reject unknown signals even if listed out of order
    if enforce_node_allocatable:
        results.extend(
            Threshold(Signal.ALLOCATABLE_MEMORY_AVAILABLE, t.value, 0.0, t.min_reclaim)
            for t in list(results)
            if t.signal is Signal.MEMORY_AVAILABLE and t.hard
        )
    return tuple(results)


@dataclass(frozen=True, slots=True)
class Observation:
    """``signalObservation``: what is available out of what capacity, in bytes."""

    available: int
    capacity: int


def thresholds_met(
    thresholds: Sequence[Threshold],
    observations: Mapping[Signal, Observation],
    *,
    enforce_min_reclaim: bool = False,
) -> list[Threshold]:
    """``thresholdsMet``: thresholds whose signal is below the threshold quantity."""
    met: list[Threshold] = []
    for threshold in thresholds:
        observed = observations.get(threshold.signal)
        if observed is None:
            continue
        quantity = threshold.value.amount(observed.capacity).nanos
        if enforce_min_reclaim and threshold.min_reclaim is not None:
            quantity += threshold.min_reclaim.amount(observed.capacity).nanos
        if quantity > observed.available * 10**9:
            met.append(threshold)
    return met


def eviction_order(thresholds: Sequence[Threshold]) -> list[Threshold]:
    """``byEvictionPriority``: memory signals first (stable otherwise)."""
    return sorted(thresholds, key=lambda t: SIGNAL_RESOURCE[t.signal] != MEMORY)


def node_conditions(thresholds: Sequence[Threshold]) -> list[str]:
    """``nodeConditions``: the pressure conditions the thresholds imply, first-seen order."""
    found: list[str] = []
    for threshold in thresholds:
        condition = SIGNAL_CONDITION[threshold.signal]
        if condition not in found:
            found.append(condition)
    return found


# --- pods: stats, criticality, ranking ------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContainerStats:
    """One container's usage: memory working set and ephemeral storage, in bytes."""

    name: str
    memory: int = 0
    ephemeral_storage: int = 0


@dataclass(frozen=True, slots=True)
class PodStats:
    """A pod's usage (the summary API's ``PodStats``), per container."""

    containers: tuple[ContainerStats, ...] = ()

    @property
    def memory(self) -> int:
        """The pod's memory working set."""
        return sum(c.memory for c in self.containers)

    @property
    def ephemeral_storage(self) -> int:
        """The pod's ephemeral-storage usage."""
        return sum(c.ephemeral_storage for c in self.containers)

    def usage(self, resource: str) -> int:
        """Usage of ``memory`` or ``ephemeral-storage``."""
        return self.memory if resource == MEMORY else self.ephemeral_storage


StatsFunc = Callable[[Pod], PodStats | None]
"""``statsFunc``: a pod's stats, or None when the node has none for it."""


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, 0 when unset."""
    return (pod.spec.priority if pod.spec else None) or 0


def is_static_pod(pod: Pod) -> bool:
    """A pod from a file or URL source (``kubernetes.io/config.source`` not ``api``)."""
    source = pod.metadata.annotation(CONFIG_SOURCE_ANNOTATION)
    return source is not None and source != API_SERVER_SOURCE


def is_critical_pod(pod: Pod) -> bool:
    """``IsCriticalPod``: static, mirror, or priority >= ``SystemCriticalPriority``."""
    if is_static_pod(pod) or is_mirror_pod(pod):
        return True
    priority = pod.spec.priority if pod.spec else None
    return priority is not None and priority >= SYSTEM_CRITICAL_PRIORITY


def _request(pod: Pod, resource: str) -> int:
    """``GetResourceRequestQuantity``: the pod's effective request, 0 when absent."""
    return pod_requests(pod.spec).get(resource, 0) if pod.spec else 0


def _cmp_bool(a: bool, b: bool) -> int:
    """``cmpBool``: true sorts before false."""
    if a == b:
        return 0
    return -1 if a else 1


def _cmp_priority(p1: Pod, p2: Pod) -> int:
    a, b = pod_priority(p1), pod_priority(p2)
    return (a > b) - (a < b)


def _ranker(resource: str, stats: StatsFunc) -> Callable[[Pod, Pod], int]:
    """``orderedBy(exceedRequests, priority, usage-above-request)`` for ``resource``."""

    def compare(p1: Pod, p2: Pod) -> int:
        s1, s2 = stats(p1), stats(p2)
        if s1 is None or s2 is None:
            # Pods without stats go first, and ties among them fall through to priority.
            result = _cmp_bool(s1 is None, s2 is None)
            if result:
                return result
            return _cmp_priority(p1, p2)
        exceeds1 = s1.usage(resource) > _request(p1, resource)
        exceeds2 = s2.usage(resource) > _request(p2, resource)
        result = _cmp_bool(exceeds1, exceeds2)
        if result:
            return result
        result = _cmp_priority(p1, p2)
        if result:
            return result
        above1 = s1.usage(resource) - _request(p1, resource)
        above2 = s2.usage(resource) - _request(p2, resource)
        return (above2 > above1) - (above2 < above1)

    return compare


def rank_memory_pressure(pods: Sequence[Pod], stats: StatsFunc) -> list[Pod]:
    """``rankMemoryPressure``: exceeds memory request, then priority, then usage - request."""
    return sorted(pods, key=functools.cmp_to_key(_ranker(MEMORY, stats)))


def rank_disk_pressure(pods: Sequence[Pod], stats: StatsFunc) -> list[Pod]:
    """``rankDiskPressureFunc`` (one filesystem): the same keys over ephemeral storage."""
    return sorted(pods, key=functools.cmp_to_key(_ranker(EPHEMERAL_STORAGE, stats)))


def rank_for(signal: Signal, pods: Sequence[Pod], stats: StatsFunc) -> list[Pod]:
    """The ranking function of ``signal`` (``buildSignalToRankFunc``)."""
    if SIGNAL_RESOURCE[signal] == MEMORY:
        return rank_memory_pressure(pods, stats)
    return rank_disk_pressure(pods, stats)


def _binary(amount: int) -> str:
    return str(Quantity.from_int(amount, QuantityFormat.BINARY_SI))


def _container_request(container: Container, resource: str) -> Quantity | None:
    requests = container.resources.requests if container.resources else None
    return None if requests is None else requests.get(resource)


def eviction_message(
    resource: str,
    pod: Pod,
    stats: StatsFunc,
    thresholds: Sequence[Threshold],
    observations: Mapping[Signal, Observation],
) -> str:
    """``evictionMessage``: why the pod was evicted, naming containers above their request."""
    message = NODE_LOW_MESSAGE_FMT.format(resource)
    for threshold in thresholds:
        if SIGNAL_RESOURCE[threshold.signal] != resource:
            continue
        observed = observations.get(threshold.signal)
        if observed is not None:
            quantity = threshold.value.amount(observed.capacity)
            message += THRESHOLD_MET_MESSAGE_FMT.format(
                quantity.canonicalize(), _binary(observed.available)
            )
            break
    pod_stats = stats(pod)
    if pod_stats is None or pod.spec is None:
        return message
    containers = [*(pod.spec.containers or ()), *(pod.spec.init_containers or ())]
    for container_stats in pod_stats.containers:
        for container in containers:
            if container.name != container_stats.name:
                continue
            request = _container_request(container, resource)
            request_nanos = request.nanos if request is not None else 0
            usage = (
                container_stats.memory if resource == MEMORY else container_stats.ephemeral_storage
            )
            if usage * 10**9 > request_nanos:
                message += CONTAINER_MESSAGE_FMT.format(
                    container.name,
                    _binary(usage),
                    request.canonicalize() if request is not None else "0",
                    resource,
                )
            break
    return message


def node_condition_message(conditions: Sequence[str]) -> str:
    """The admission rejection text under pressure: ``The node had condition: [A B]. ``."""
    return NODE_CONDITION_MESSAGE_FMT.format("[" + " ".join(conditions) + "]")
