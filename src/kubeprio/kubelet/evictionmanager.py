"""The eviction manager's control loop: observe, decide pressure, pick at most one victim.

Mirrors ``managerImpl.synchronize`` in ``pkg/kubelet/eviction/eviction_manager.go``:

1. observe the signals (``observe``) and find the thresholds met, plus those met
   before whose minimum reclaim is not yet satisfied;
2. remember when each threshold was first met; a soft threshold acts only after its
   grace period;
3. node conditions (``MemoryPressure``, ``DiskPressure``) hold while a threshold is
   met and for ``pressure_transition_period`` (default 5 min) after;
4. if any threshold acts: reclaim the resource of the highest-priority one (memory
   first), rank the active pods for it and evict the first that is not critical; at
   most one pod per pass. A hard threshold overrides the pod's grace period with 1 s,
   a soft one with ``max_pod_grace_period``.

Timing (``Start``): a pass every ``monitoring_interval`` (10 s); after an eviction the
next pass runs as soon as the victim is gone (``waitForPodsCleanup``, at most 30 s).
``EvictionManager`` holds that state; ``kubelet.Kubelet`` feeds it pods and applies its
decisions. No I/O here; time is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from kubeprio.api.core import Pod
from kubeprio.kubelet import eviction
from kubeprio.kubelet.eviction import Observation, Signal, Threshold

IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS: Final = 1
DEFAULT_MONITORING_INTERVAL: Final = 10.0
DEFAULT_PRESSURE_TRANSITION_PERIOD: Final = 300.0
POD_CLEANUP_TIMEOUT: Final = 30.0


@dataclass(frozen=True, slots=True)
class EvictionConfig:
    """The kubelet's eviction settings (``evictionHard``, ``evictionSoft``, ...)."""

    thresholds: tuple[Threshold, ...] = field(default_factory=eviction.parse_thresholds)
    pressure_transition_period: float = DEFAULT_PRESSURE_TRANSITION_PERIOD
    max_pod_grace_period: int = 0
    monitoring_interval: float = DEFAULT_MONITORING_INTERVAL


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """What the node uses, in bytes: for ``observe``."""

    memory_capacity: int
    memory_allocatable: int
    memory_working_set: int
    pods_memory_working_set: int
    fs_capacity: int | None
    fs_used: int


def observe(usage: NodeUsage) -> dict[Signal, Observation]:
    """``makeSignalObservations`` for a simulated node with one filesystem.

    ``memory.available`` is capacity minus the node's working set;
    ``allocatableMemory.available`` is allocatable minus the pods' working set; the
    node filesystem serves as nodefs and imagefs alike (no dedicated image disk).
    """
    found: dict[Signal, Observation] = {}
    # A node that declares no memory (or disk) has nothing to observe for it.
    if usage.memory_capacity:
        found[Signal.MEMORY_AVAILABLE] = Observation(
            usage.memory_capacity - usage.memory_working_set, usage.memory_capacity
        )
    if usage.memory_allocatable:
        found[Signal.ALLOCATABLE_MEMORY_AVAILABLE] = Observation(
            usage.memory_allocatable - usage.pods_memory_working_set, usage.memory_allocatable
        )
    if usage.fs_capacity:
        fs = Observation(usage.fs_capacity - usage.fs_used, usage.fs_capacity)
        found[Signal.NODEFS_AVAILABLE] = fs
        found[Signal.IMAGEFS_AVAILABLE] = fs
    return found


@dataclass(frozen=True, slots=True)
class Eviction:
    """The manager's decision: evict ``pod`` with ``grace_period`` and ``message``."""

    pod: Pod
    resource: str
    message: str
    grace_period: int


@dataclass(frozen=True, slots=True)
class PassResult:
    """What one pass decided: node conditions, the resource to reclaim, the victim."""

    node_conditions: tuple[str, ...]
    reclaiming: str | None = None
    eviction: Eviction | None = None
    skipped_critical: tuple[Pod, ...] = ()


class EvictionManager:
    """State of ``managerImpl`` between passes."""

    def __init__(self, config: EvictionConfig | None = None) -> None:
        self.config = config or EvictionConfig()
        self.node_conditions: tuple[str, ...] = ()
        self._first_observed: dict[Threshold, float] = {}
        self._conditions_last_observed: dict[str, float] = {}
        self._thresholds_met: list[Threshold] = []

    def synchronize(
        self,
        now: float,
        observations: Mapping[Signal, Observation],
        active_pods: Callable[[], Sequence[Pod]],
        stats: eviction.StatsFunc,
        *,
        can_evict: Callable[[Pod], bool] | None = None,
    ) -> PassResult:
        """One ``synchronize`` pass at ``now``; ``active_pods()`` lists candidates, sorted.

        ``active_pods`` is called only when a threshold acts, so a quiet pass costs
        nothing but the threshold comparisons.
        """
        config = self.config
        met = eviction.thresholds_met(config.thresholds, observations)
        if self._thresholds_met:
            unresolved = eviction.thresholds_met(
                self._thresholds_met, observations, enforce_min_reclaim=True
            )
            met.extend(t for t in unresolved if t not in met)
        first_observed = {t: self._first_observed.get(t, now) for t in met}
        conditions_now = eviction.node_conditions(met)
        last_observed = dict(self._conditions_last_observed)
        for condition in conditions_now:
            last_observed[condition] = now
        conditions = tuple(
            c
            for c in (eviction.NODE_MEMORY_PRESSURE, eviction.NODE_DISK_PRESSURE)
            if c in last_observed and now - last_observed[c] < config.pressure_transition_period
        )
        acting = [t for t in met if now - first_observed[t] >= t.grace_period]
        self._first_observed = first_observed
        self._conditions_last_observed = last_observed
        self.node_conditions = conditions
        self._thresholds_met = acting
        if not acting:
            return PassResult(conditions)
        ordered = eviction.eviction_order(acting)
        to_reclaim = ordered[0]
        resource = eviction.SIGNAL_RESOURCE[to_reclaim.signal]
        candidates = active_pods()
        if not candidates:
            return PassResult(conditions, resource)
        grace = (
            IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS
            if to_reclaim.hard
            else config.max_pod_grace_period
        )
        skipped: list[Pod] = []
        for pod in eviction.rank_for(to_reclaim.signal, candidates, stats):
            if eviction.is_critical_pod(pod) or (can_evict is not None and not can_evict(pod)):
                skipped.append(pod)
                continue
            message = eviction.eviction_message(resource, pod, stats, ordered, observations)
            return PassResult(
                conditions, resource, Eviction(pod, resource, message, grace), tuple(skipped)
            )
        return PassResult(conditions, resource, None, tuple(skipped))

    @property
    def quiet(self) -> bool:
        """No threshold met, no pressure reported: a pass below thresholds changes nothing."""
        return not self.node_conditions and not self._first_observed

    def pressure_ends_at(self) -> float | None:
        """When the last reported condition lapses if no threshold is met again."""
        if not self.node_conditions:
            return None
        return (
            max(self._conditions_last_observed[c] for c in self.node_conditions)
            + self.config.pressure_transition_period
        )

    def soft_threshold_due(self) -> float | None:
        """The earliest time a met soft threshold's grace period ends, if one is pending."""
        due = [
            at + t.grace_period
            for t, at in self._first_observed.items()
            if t.grace_period > 0 and t not in self._thresholds_met
        ]
        return min(due) if due else None
