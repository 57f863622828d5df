"""Node-pressure eviction end to end: the kubelet evicts as ``eviction_manager.go`` does.

One pod per pass; hard thresholds use a 1 s grace override (2 s at the runtime);
evicted pods are Failed with reason ``Evicted``, upstream's message, a
``DisruptionTarget`` condition (``TerminationByKubelet``) and a Warning ``Evicted``
event; critical pods (priority >= 2000000000, static, mirror) are never evicted; the
node reports ``MemoryPressure``/``DiskPressure`` until 5 min after the last breach.
"""

from __future__ import annotations

from kubeprio.api import annotations
from kubeprio.api.core import PHASE_FAILED, PHASE_RUNNING, Node, Pod
from tests.builders import node, pod
from tests.unit.kubelet.conftest import Cluster, bind, events

MEMORY_NODE = node("n1").allocatable(cpu="8", memory="1Gi", pods="20")


def hog(name: str, *, priority: int = 0, request: str = "100Mi", usage: str) -> Pod:
    builder = pod(name).priority(priority).annotate(annotations.USAGE, f"memory={usage}")
    if request:
        builder = builder.requests(memory=request)
    return builder.build()


def condition(cluster: Cluster, type_: str) -> str | None:
    current = cluster.api.get(Node, "n1")
    for c in (current.status.conditions if current.status else None) or ():
        if c.type == type_:
            return c.status
    return None


def test_memory_pressure_evicts_the_pod_most_over_its_request_at_lower_priority(
    cluster: Cluster,
) -> None:
    cluster.kubelet("n1", node=MEMORY_NODE.build())
    cluster.run(hog("high", priority=1000, usage="450Mi"))
    cluster.run(hog("low", priority=0, usage="500Mi"))
    victim = cluster.pod("low")
    assert victim is not None
    status = victim.status
    assert status is not None
    message = (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 74Mi. "
        "Container c was using 500Mi, request is 100Mi, has larger consumption of memory. "
    )
    assert (status.phase, status.reason, status.message) == (PHASE_FAILED, "Evicted", message)
    disruption = next(c for c in status.conditions or () if c.type == "DisruptionTarget")
    assert (disruption.status, disruption.reason, disruption.message) == (
        "True",
        "TerminationByKubelet",
        message,
    )
    evicted = [e for e in events(cluster.api, name="low") if e.reason == "Evicted"]
    assert [(e.type, e.message) for e in evicted] == [("Warning", message)]
    assert cluster.pod("high").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert condition(cluster, "MemoryPressure") == "True"
    node_events = {(e.reason, e.message) for e in events(cluster.api, kind="Node")}
    assert ("EvictionThresholdMet", "Attempting to reclaim memory") in node_events
    assert ("NodeHasInsufficientMemory", "Node n1 status is now: NodeHasInsufficientMemory") in (
        node_events
    )


def test_one_pod_per_pass_and_the_next_pass_follows_the_victims_exit(cluster: Cluster) -> None:
    kubelet = cluster.kubelet("n1", node=MEMORY_NODE.build())
    for name, usage in (("a", "400Mi"), ("b", "350Mi"), ("c", "300Mi")):
        bind(cluster.api, cluster.api.create(hog(name, usage=usage)), "n1")
    cluster.driver.settle()
    phases = {n: cluster.pod(n).status.phase for n in "abc"}  # type: ignore[union-attr]
    assert phases == {"a": PHASE_FAILED, "b": PHASE_RUNNING, "c": PHASE_RUNNING}
    # 400+350+300 = 1050Mi > 1Gi; after "a" exits (2 s later) 650Mi leave 374Mi: enough.
    assert [p.metadata.name for p in kubelet.running()] == ["a", "b", "c"]
    cluster.advance(2)
    assert [p.metadata.name for p in kubelet.running()] == ["b", "c"]
    assert cluster.pod("b").status.phase == PHASE_RUNNING  # type: ignore[union-attr]


def test_pressure_persists_so_the_next_pod_goes_after_the_first_exits(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=MEMORY_NODE.build())
    for name, usage in (("a", "600Mi"), ("b", "400Mi"), ("c", "100Mi")):
        bind(cluster.api, cluster.api.create(hog(name, usage=usage, request="")), "n1")
    cluster.driver.settle()
    assert [n for n in "abc" if cluster.pod(n).status.reason == "Evicted"] == ["a"]  # type: ignore[union-attr]
    cluster.advance(1.99)
    assert [n for n in "abc" if cluster.pod(n).status.reason == "Evicted"] == ["a"]  # type: ignore[union-attr]
    cluster.advance(0.01)
    # 500Mi left: 524Mi available, no pressure; nothing else is evicted.
    assert [n for n in "abc" if cluster.pod(n).status.reason == "Evicted"] == ["a"]  # type: ignore[union-attr]


def test_critical_pods_are_never_evicted(cluster: Cluster) -> None:
    """Semantics §6.2: the manager skips critical pods and evicts the next ranked one."""
    cluster.kubelet("n1", node=MEMORY_NODE.build())
    cluster.run(hog("system", priority=2_000_000_000, usage="800Mi"))
    static = (
        pod("static-pod")
        .annotate("kubernetes.io/config.source", "file")
        .annotate(annotations.USAGE, "memory=100Mi")
        .build()
    )
    cluster.run(static)
    cluster.run(hog("user", priority=0, request="500Mi", usage="60Mi"))
    assert cluster.pod("system").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert cluster.pod("static-pod").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert cluster.pod("user").status.reason == "Evicted"  # type: ignore[union-attr]


def test_only_critical_pods_left_means_pressure_without_eviction(cluster: Cluster) -> None:
    kubelet = cluster.kubelet("n1", node=MEMORY_NODE.build())
    cluster.run(hog("system", priority=2_000_001_000, usage="1000Mi"))
    assert cluster.pod("system").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert condition(cluster, "MemoryPressure") == "True"
    assert kubelet.pressure.node_conditions == ("MemoryPressure",)


def test_pressure_condition_clears_after_the_transition_period(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=MEMORY_NODE.build())
    cluster.run(hog("big", usage="1000Mi"))
    assert condition(cluster, "MemoryPressure") == "True"
    cluster.advance(299)
    assert condition(cluster, "MemoryPressure") == "True"
    best_effort = cluster.run(pod("be").build())
    assert (
        best_effort.status.message == "Pod was rejected: The node had condition: [MemoryPressure]. "
    )  # type: ignore[union-attr]
    cluster.advance(1)
    assert condition(cluster, "MemoryPressure") == "False"
    reasons = [e.reason for e in events(cluster.api, kind="Node")]
    assert reasons[-1] == "NodeHasSufficientMemory"


def test_disk_pressure_uses_the_imagefs_threshold_on_a_single_filesystem(
    cluster: Cluster,
) -> None:
    """No dedicated image disk: ``imagefs.available<15%`` trips before ``nodefs<10%``."""
    cluster.kubelet(
        "n1",
        node=node("n1")
        .allocatable(cpu="8", memory="8Gi", pods="20", ephemeral_storage="10Gi")
        .build(),
    )
    cluster.run(pod("writer").annotate(annotations.USAGE, "ephemeral-storage=8704Mi").build())
    status = cluster.pod("writer").status
    assert status is not None
    assert status.reason == "Evicted"
    assert status.message == (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 1610612800, "
        "available: 1536Mi. Container c was using 8704Mi, request is 0, "
        "has larger consumption of ephemeral-storage. "
    )
    assert condition(cluster, "DiskPressure") == "True"


def test_no_usage_annotation_means_no_pressure_and_no_wakeups(cluster: Cluster) -> None:
    kubelet = cluster.kubelet("n1", node=MEMORY_NODE.build())
    for i in range(5):
        cluster.run(pod(f"p{i}").build())
    assert kubelet.next_wakeup() is None
    assert condition(cluster, "MemoryPressure") == "False"


def test_soft_threshold_waits_for_its_grace_period(cluster: Cluster) -> None:
    """A soft threshold acts once met for its grace period, with ``evictionMaxPodGracePeriod``."""
    from kubeprio.kubelet.eviction import parse_thresholds
    from kubeprio.kubelet.evictionmanager import EvictionConfig

    config = EvictionConfig(
        thresholds=parse_thresholds(
            {}, soft={"memory.available": "300Mi"}, soft_grace_periods={"memory.available": 60}
        ),
        max_pod_grace_period=10,
    )
    cluster.kubelet("n1", node=MEMORY_NODE.build(), eviction=config)
    cluster.run(hog("big", usage="800Mi"))
    assert cluster.pod("big").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert condition(cluster, "MemoryPressure") == "True"
    cluster.advance(59)
    assert cluster.pod("big").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    cluster.advance(1)
    assert cluster.pod("big").status.reason == "Evicted"  # type: ignore[union-attr]
    cluster.advance(9.99)
    assert [p.metadata.name for p in cluster.kubelets["n1"].running()] == ["big"]
    cluster.advance(0.01)
    assert cluster.kubelets["n1"].running() == []
