"""A removed node keeps its pods until their deletions arrive (upstream ghost nodes).

Upstream ``pkg/scheduler/backend/cache/cache.go`` ``RemoveNode``: "We remove NodeInfo
for this node only if there aren't any pods on this node. We can't do it
unconditionally, because notifications about pods are delivered in a different watch";
the ghost is skipped from snapshots, and ``removePod`` drops it with its last pod. A
Node re-created under the same name before then finds those pods still accounted
(``AddNode`` reuses the NodeInfo).
"""

from __future__ import annotations

from kubeprio.scheduler.cache import Cache
from tests.builders import node, pod


def _cache_with_pod_on_n1() -> Cache:
    cache = Cache()
    cache.add_node(node("n1").allocatable(cpu="4", memory="8Gi", pods="10").build())
    cache.add_node(node("n2").allocatable(cpu="4", memory="8Gi", pods="10").build())
    cache.add_pod(pod("p").uid("p").requests(cpu="3").on("n1").build())
    return cache


def test_removed_node_with_pods_leaves_the_snapshot_but_keeps_its_pods() -> None:
    cache = _cache_with_pod_on_n1()
    cache.remove_node("n1")
    assert [info.name for info in cache.node_infos()] == ["n2"]
    assert cache.table.names == ["n2"]
    ghost = cache.node_info("n1")
    assert ghost is not None
    assert ghost.node is None
    assert [p.uid for p in ghost.pods] == ["p"]


def test_node_recreated_before_its_pods_are_deleted_still_counts_them() -> None:
    cache = _cache_with_pod_on_n1()
    cache.remove_node("n1")
    cache.add_node(node("n1").allocatable(cpu="4", memory="8Gi", pods="10").build())
    info = cache.node_info("n1")
    assert info is not None
    assert info.requested.get("cpu") == 3000
    # The node joins the order again at the end, and its table row carries the usage.
    assert cache.table.names == ["n2", "n1"]
    assert int(cache.table.req_cpu[1]) == 3000
    assert int(cache.table.pods[1]) == 1


def test_last_pod_deletion_drops_the_ghost() -> None:
    cache = _cache_with_pod_on_n1()
    cache.remove_node("n1")
    cache.remove_pod(pod("p").uid("p").on("n1").build())
    assert cache.node_info("n1") is None
    assert cache.pod_count() == 0
    cache.add_node(node("n1").allocatable(cpu="4", memory="8Gi", pods="10").build())
    info = cache.node_info("n1")
    assert info is not None
    assert not info.pods
    assert cache.table.names == ["n2", "n1"]


def test_removed_node_without_pods_is_forgotten_at_once() -> None:
    cache = Cache()
    cache.add_node(node("n1").allocatable(cpu="4").build())
    cache.remove_node("n1")
    assert cache.node_info("n1") is None
    assert cache.node_infos() == []


def test_a_status_write_swaps_the_object_and_a_relabel_re_adds_it() -> None:
    """Upstream ``UpdatePod`` removes and re-adds; a write that changes nothing the node
    accounts for (the kubelet's status) only moves the newer object to the end of the
    node's list (``test_preemption_ties`` checks the order), with the sums unchanged."""
    import dataclasses

    from kubeprio.api.core import PodStatus
    from kubeprio.scheduler.victimtable import start_nanos

    cache = _cache_with_pod_on_n1()
    info = cache.node_info("n1")
    assert info is not None
    requested = dict(info.requested)
    stored = info.pods[0].pod
    running = dataclasses.replace(stored, status=PodStatus(phase="Running"))
    cache.update_pod(running)
    assert info.pods[0].pod is running
    assert dict(info.requested) == requested
    assert cache.victims.pods[cache.victims._where["p"][1].slot].pod is running
    started = dataclasses.replace(
        running, status=PodStatus(phase="Running", start_time="2026-01-01T00:00:05Z")
    )
    cache.update_pod(started)  # the start time orders victims: the entry is re-sorted
    (_, entry) = cache.victims._where["p"]
    assert entry.start == start_nanos(info.pods[0])
    assert info.pods[0].pod is started
    relabelled = dataclasses.replace(
        started, metadata=dataclasses.replace(started.metadata, labels={"app": "x"})
    )
    cache.update_pod(relabelled)
    assert [p.pod for p in info.pods] == [relabelled]
    assert dict(info.requested) == requested


def test_a_deletion_mark_moves_the_pod_behind_its_equals() -> None:
    """Upstream ``cacheImpl.updatePod`` removes the old pod and adds the new one, so a pod
    that becomes terminating goes behind the node's other pods: among victims of equal
    priority and start time it is reprieved last, so preemption picks it (and skips it,
    being deleted already) instead of evicting a healthy twin. Its resources stay
    accounted until its delete arrives."""
    import dataclasses

    cache = Cache()
    cache.add_node(node("n1").allocatable(cpu="4", memory="8Gi", pods="10").build())
    for name in ("a", "b"):
        cache.add_pod(pod(name).uid(name).priority(1).requests(cpu="1").on("n1").build())
    info = cache.node_info("n1")
    assert info is not None
    stored = info.pods[0].pod
    marked = dataclasses.replace(
        stored,
        metadata=dataclasses.replace(stored.metadata, deletion_timestamp="2026-01-01T00:00:00Z"),
    )
    cache.update_pod(marked)
    assert [p.uid for p in info.pods] == ["b", "a"]
    assert info.pods[1].pod is marked
    assert info.requested.get("cpu") == 2000
    row = cache.victims.count[cache.table.index["n1"]]
    order = sorted(cache.victims._where.items(), key=lambda item: item[1][1].seq)
    assert [uid for uid, _ in order] == ["b", "a"]
    assert int(row) == 2
