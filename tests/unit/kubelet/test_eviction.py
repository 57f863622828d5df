"""Eviction ranking, thresholds and messages: pure functions, table-driven.

Tables mirror ``pkg/kubelet/eviction/helpers_test.go`` (``TestOrderedByMemory``,
``TestOrderedByPriorityMemory``, ``TestOrderedByPriorityDisk``,
``TestSortByEvictionPriority``) with the same pods, priorities, requests and usages.
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Pod
from kubeprio.api.quantity import parse_quantity
from kubeprio.kubelet import eviction
from kubeprio.kubelet.eviction import ContainerStats, Observation, PodStats, Signal
from tests.builders import pod

LOW, DEFAULT, HIGH = -1, 0, 1  # helpers_test.go lowPriority/defaultPriority/highPriority
MI = 1024 * 1024


def mem_pod(name: str, priority: int, request: str = "", limit: str = "") -> Pod:
    builder = pod(name).priority(priority)
    builder = builder.spec(containers=(builder.build().spec.containers[0].__class__(name=name),))  # type: ignore[index, union-attr]
    if request:
        builder = builder.requests(memory=request)
    if limit:
        builder = builder.limits(memory=limit)
    return builder.build()


def disk_pod(name: str, priority: int, request: str = "") -> Pod:
    builder = pod(name).priority(priority)
    builder = builder.spec(containers=(builder.build().spec.containers[0].__class__(name=name),))  # type: ignore[index, union-attr]
    if request:
        builder = builder.requests(ephemeral_storage=request)
    return builder.build()


def stats_of(usage: dict[str, tuple[int, int]]) -> eviction.StatsFunc:
    """Pod name -> (memory, ephemeral storage) in bytes; pods not listed have no stats."""

    def stats(p: Pod) -> PodStats | None:
        name = p.metadata.name or ""
        if name not in usage:
            return None
        memory, disk = usage[name]
        return PodStats((ContainerStats(name, memory, disk),))

    return stats


def names(pods: list[Pod]) -> list[str]:
    return [p.metadata.name or "" for p in pods]


def test_rank_memory_usage_above_request_TestOrderedByMemory() -> None:
    """Same priority: exceeding the request first, then the larger usage above it."""
    pods = [
        mem_pod("best-effort-high", DEFAULT),
        mem_pod("best-effort-low", DEFAULT),
        mem_pod("burstable-high", DEFAULT, "100Mi", "1Gi"),
        mem_pod("burstable-low", DEFAULT, "100Mi", "1Gi"),
        mem_pod("guaranteed-high", DEFAULT, "1Gi", "1Gi"),
        mem_pod("guaranteed-low", DEFAULT, "1Gi", "1Gi"),
    ]
    usage = {
        "best-effort-high": (500 * MI, 0),
        "best-effort-low": (300 * MI, 0),
        "burstable-high": (800 * MI, 0),
        "burstable-low": (300 * MI, 0),
        "guaranteed-high": (800 * MI, 0),
        "guaranteed-low": (200 * MI, 0),
    }
    ranked = eviction.rank_memory_pressure(pods, stats_of(usage))
    assert names(ranked) == [
        "burstable-high",
        "best-effort-high",
        "best-effort-low",
        "burstable-low",
        "guaranteed-high",
        "guaranteed-low",
    ]


PRIORITY_MEMORY = [
    ("above-requests-low-priority-high-usage", LOW, "", 500),
    ("above-requests-low-priority-low-usage", LOW, "", 50),
    ("above-requests-high-priority-high-usage", HIGH, "100Mi", 600),
    ("above-requests-high-priority-low-usage", HIGH, "100Mi", 150),
    ("below-requests-low-priority-high-usage", LOW, "1Gi", 800),
    ("below-requests-low-priority-low-usage", LOW, "1Gi", 200),
    ("below-requests-high-priority-high-usage", HIGH, "1Gi", 800),
    ("below-requests-high-priority-low-usage", HIGH, "1Gi", 200),
]


def test_rank_memory_exceeds_then_priority_then_usage_TestOrderedByPriorityMemory() -> None:
    pods = [mem_pod(name, prio, request) for name, prio, request, _ in reversed(PRIORITY_MEMORY)]
    usage = {name: (used * MI, 0) for name, _, _, used in PRIORITY_MEMORY}
    ranked = eviction.rank_memory_pressure(pods, stats_of(usage))
    assert names(ranked) == [name for name, *_ in PRIORITY_MEMORY]


PRIORITY_DISK = [
    ("above-requests-low-priority-high-usage", LOW, "", 700),
    ("above-requests-low-priority-low-usage", LOW, "", 350),
    ("above-requests-high-priority-high-usage", HIGH, "100Mi", 400),
    ("above-requests-high-priority-low-usage", HIGH, "100Mi", 150),
    ("below-requests-low-priority-high-usage", LOW, "1Gi", 800),
    ("below-requests-low-priority-low-usage", LOW, "1Gi", 200),
    ("below-requests-high-priority-high-usage", HIGH, "1Gi", 800),
    ("below-requests-high-priority-low-usage", HIGH, "1Gi", 200),
]


def test_rank_disk_exceeds_then_priority_then_usage_TestOrderedByPriorityDisk() -> None:
    pods = [disk_pod(name, prio, request) for name, prio, request, _ in reversed(PRIORITY_DISK)]
    usage = {name: (0, used * MI) for name, _, _, used in PRIORITY_DISK}
    ranked = eviction.rank_disk_pressure(pods, stats_of(usage))
    assert names(ranked) == [name for name, *_ in PRIORITY_DISK]


def test_pods_without_stats_are_ranked_first() -> None:
    """``exceedMemoryRequests``: "prioritize evicting the pod for which no stats were found"."""
    pods = [mem_pod("measured", LOW), mem_pod("unknown-high", HIGH), mem_pod("unknown-low", LOW)]
    ranked = eviction.rank_memory_pressure(pods, stats_of({"measured": (900 * MI, 0)}))
    assert names(ranked) == ["unknown-low", "unknown-high", "measured"]


def test_priority_is_not_a_reason_to_keep_a_pod_over_its_request() -> None:
    """Semantics §6.1: a pod within its requests goes after every pod above them."""
    pods = [mem_pod("within-low", LOW, "1Gi"), mem_pod("above-high", 1_000_000, "10Mi")]
    ranked = eviction.rank_memory_pressure(
        pods, stats_of({"within-low": (100 * MI, 0), "above-high": (20 * MI, 0)})
    )
    assert names(ranked) == ["above-high", "within-low"]


SORT_BY_EVICTION_PRIORITY = [
    ([], []),
    (
        [Signal.NODEFS_AVAILABLE, Signal.MEMORY_AVAILABLE],
        [Signal.MEMORY_AVAILABLE, Signal.NODEFS_AVAILABLE],
    ),
    (
        [Signal.NODEFS_AVAILABLE, Signal.ALLOCATABLE_MEMORY_AVAILABLE],
        [Signal.ALLOCATABLE_MEMORY_AVAILABLE, Signal.NODEFS_AVAILABLE],
    ),
]


@pytest.mark.parametrize(
    ("signals", "expected"),
    SORT_BY_EVICTION_PRIORITY,
    ids=["empty", "memory-first", "allocatable-memory-first"],
)
def test_memory_thresholds_are_reclaimed_first_TestSortByEvictionPriority(
    signals: list[Signal], expected: list[Signal]
) -> None:
    value = eviction.ThresholdValue(quantity=parse_quantity("1Mi"))
    ordered = eviction.eviction_order([eviction.Threshold(s, value) for s in signals])
    assert [t.signal for t in ordered] == expected


CRITICAL = [
    (pod("plain").build(), False),
    (pod("user-max").priority(1_000_000_000).build(), False),
    (pod("cluster-critical").priority(2_000_000_000).build(), True),
    (pod("node-critical").priority(2_000_001_000).build(), True),
    (pod("mirror").annotate("kubernetes.io/config.mirror", "abc").build(), True),
    (pod("static").annotate("kubernetes.io/config.source", "file").build(), True),
    (pod("api-source").annotate("kubernetes.io/config.source", "api").build(), False),
]


@pytest.mark.parametrize(
    ("candidate", "critical"), CRITICAL, ids=[p.metadata.name for p, _ in CRITICAL]
)
def test_critical_pods_pod_update_IsCriticalPod(candidate: Pod, critical: bool) -> None:
    assert eviction.is_critical_pod(candidate) is critical


def test_default_thresholds_and_allocatable_copy() -> None:
    """Linux ``evictionHard`` defaults; ``enforceNodeAllocatable: [pods]`` copies memory."""
    thresholds = eviction.parse_thresholds()
    assert [(t.signal.value, t.hard) for t in thresholds] == [
        ("memory.available", True),
        ("nodefs.available", True),
        ("imagefs.available", True),
        ("allocatableMemory.available", True),
    ]


def test_percentage_thresholds_are_float32_fractions_of_capacity() -> None:
    """``parsePercentage`` keeps a float32: 10% of 10Gi is 1073741840 bytes, not 1Gi."""
    (threshold,) = eviction.parse_thresholds({"nodefs.available": "10%"})
    amount = threshold.value.amount(10 * 1024 * MI)
    assert amount.value() == 1_073_741_840
    assert amount.canonicalize() == "1073741840"


PARSE_ERRORS = [
    ({"memory.available": "-1Mi"}, "eviction threshold memory.available must be positive: -1Mi"),
    (
        {"nodefs.available": "101%"},
        "eviction percentage threshold nodefs.available must be <= 100%: 101%",
    ),
    ({"bogus.signal": "1Mi"}, "unsupported eviction signal bogus.signal"),
]


@pytest.mark.parametrize(("hard", "message"), PARSE_ERRORS, ids=["negative", "over-100", "unknown"])
def test_bad_threshold_statements_are_refused(hard: dict[str, str], message: str) -> None:
    with pytest.raises(eviction.ThresholdError, match="^" + message.replace("%", "%") + "$"):
        eviction.parse_thresholds(hard)


def test_zero_and_full_percentages_are_ignored_and_unobservable_signals_accepted() -> None:
    thresholds = eviction.parse_thresholds(
        {"nodefs.available": "0%", "imagefs.available": "100%", "nodefs.inodesFree": "5%"},
        enforce_node_allocatable=False,
    )
    assert thresholds == ()


def test_soft_thresholds_need_a_grace_period() -> None:
    with pytest.raises(eviction.ThresholdError, match="grace period must be specified"):
        eviction.parse_thresholds({}, soft={"memory.available": "500Mi"})
    (soft,) = eviction.parse_thresholds(
        {}, soft={"memory.available": "500Mi"}, soft_grace_periods={"memory.available": 90}
    )
    assert (soft.hard, soft.grace_period) == (False, 90)


def test_thresholds_met_compares_available_against_the_threshold() -> None:
    (threshold,) = eviction.parse_thresholds(
        {"memory.available": "100Mi"}, enforce_node_allocatable=False
    )
    capacity = 1024 * MI
    assert eviction.thresholds_met(
        [threshold], {Signal.MEMORY_AVAILABLE: Observation(99 * MI, capacity)}
    ) == [threshold]
    assert (
        eviction.thresholds_met(
            [threshold], {Signal.MEMORY_AVAILABLE: Observation(100 * MI, capacity)}
        )
        == []
    )


MESSAGES = [
    (
        900 * MI,
        "100Mi",
        50 * MI,
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container c was using 900Mi, request is 100Mi, has larger consumption of memory. ",
    ),
    (
        3694056 * 1024,
        "100Mi",
        58472 * 1024,
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 58472Ki. "
        "Container c was using 3694056Ki, request is 100Mi, has larger consumption of memory. ",
    ),
    (
        50 * MI,
        "100Mi",
        50 * MI,
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ",
    ),
    (
        900 * MI,
        "",
        50 * MI,
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container c was using 900Mi, request is 0, has larger consumption of memory. ",
    ),
]


@pytest.mark.parametrize(
    ("usage", "requested", "available", "message"),
    MESSAGES,
    ids=["over-request", "kibibytes", "within-request", "no-request"],
)
def test_eviction_message_evictionMessage(
    usage: int, requested: str, available: int, message: str
) -> None:
    builder = pod("victim")
    if requested:
        builder = builder.requests(memory=requested)
    victim = builder.build()
    thresholds = eviction.parse_thresholds({"memory.available": "100Mi"})
    observations = {Signal.MEMORY_AVAILABLE: Observation(available, 1024 * MI)}
    stats = lambda p: PodStats((ContainerStats("c", usage, 0),))  # noqa: E731
    assert eviction.eviction_message("memory", victim, stats, thresholds, observations) == message
