"""The victim table and the nominated load stay equal to what they index.

``VictimTable`` rows must list each node's pods in upstream's victim order —
``util.MoreImportantPod`` (higher priority, then earlier start; no start time counts as
now) with ties in ``NodeInfo.pods`` order, the stable order ``SelectVictimsOnNode`` sorts
— through every cache change (adds, updates that move a pod to the end of its node's
list, removals, assumed pods confirmed or forgotten, nodes arriving after their pods and
nodes removed). ``NominatedLoad`` must equal the sums upstream's
``addGENominatedPods`` would add for any incoming priority.
"""

from __future__ import annotations

import dataclasses

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubeprio.api.core import Pod
from kubeprio.clock import rfc3339
from kubeprio.scheduler.cache import Cache
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nominatedload import NominatedLoad
from kubeprio.scheduler.nominator import NominatingInfo, Nominator
from kubeprio.scheduler.preemption import pod_start_nanos
from kubeprio.scheduler.victimtable import INT64_MAX, NO_START, PRIO, SLOT, STARTLESS
from tests.builders import node, pod
from tests.conftest import EPOCH

Op = tuple[str, int, int, int]
OPS = st.tuples(
    st.sampled_from(["add", "add", "add", "update", "remove", "assume", "forget", "node", "drop"]),
    st.integers(0, 11),
    st.integers(0, 4),
    st.integers(0, 3),
)


def _pod(i: int, node_index: int, priority: int, start: int | None, namespace: str) -> Pod:
    built = (
        pod(f"p{i}", namespace)
        .uid(f"uid-{i}")
        .priority(priority)
        .requests(cpu=f"{100 * (i % 5 + 1)}m", memory="100")
        .on(f"n{node_index}")
        .build()
    )
    if start is None:
        return built
    status = dataclasses.replace(built.status or _empty_status(), start_time=rfc3339(EPOCH + start))
    return dataclasses.replace(built, status=status)


def _empty_status() -> object:
    from kubeprio.api.core import PodStatus

    return PodStatus()


def check_table(cache: Cache) -> None:
    table = cache.table
    victims = cache.victims
    namespaces: dict[str, int] = {}
    # Every pod on a node the cache holds, placeholders (no Node yet) included.
    for holder in cache._nodes.values():
        for info in holder.pods:
            namespace = info.pod.metadata.namespace or ""
            namespaces[namespace] = namespaces.get(namespace, 0) + 1
    for node_info in cache.node_infos():
        row = table.index[node_info.name]
        position = {id(p): i for i, p in enumerate(node_info.pods)}
        expected = sorted(
            node_info.pods,
            key=lambda p: (-p.priority, pod_start_nanos(p.pod, INT64_MAX), position[id(p)]),
        )
        count = int(victims.count[row])
        slots = victims.data[SLOT, :count, row].tolist()
        assert [victims.pod(slot) for slot in slots] == expected
        assert victims.data[PRIO, :count, row].tolist() == [p.priority for p in expected]
        starts = [pod_start_nanos(p.pod, STARTLESS) for p in expected]
        assert int(victims.startless[row]) == starts.count(STARTLESS)
        started = [s for s in starts if s != STARTLESS]
        assert int(victims.latest_start[row]) == (max(started) if started else NO_START)
    assert victims.namespace_pods == namespaces


class _UpstreamOrder:
    """Upstream's ``NodeInfo.Pods`` order per node name: ``AddPod`` appends,
    ``removeFromSlice`` moves the last pod into the hole, ``updatePod`` removes then adds."""

    def __init__(self) -> None:
        self.nodes: dict[str, list[str]] = {}

    def add(self, node_name: str, uid: str) -> None:
        for name, pods in list(self.nodes.items()):
            if uid in pods:
                # Still held by a ghost node the test forgot: the cache updates it.
                self.remove(name, uid)
        self.nodes.setdefault(node_name, []).append(uid)

    def remove(self, node_name: str, uid: str) -> None:
        pods = self.nodes[node_name]
        index = pods.index(uid)
        pods[index] = pods[-1]
        pods.pop()
        if not pods:
            del self.nodes[node_name]

    def update(self, node_name: str, uid: str) -> None:
        self.remove(node_name, uid)
        self.add(node_name, uid)


def _run_ops(ops: list[Op], cache: Cache, order: _UpstreamOrder) -> None:
    """Apply ``ops`` to ``cache`` (and to ``order``), checking the table after each."""
    known: dict[int, Pod] = {}
    assumed: dict[int, PodInfo] = {}
    nodes_added: set[int] = set()
    for action, a, b, c in ops:
        if action == "node":
            cache.add_node(node(f"n{b}").resources({"cpu": "4", "pods": "110"}).build())
            nodes_added.add(b)
        elif action == "drop" and b in nodes_added:
            cache.remove_node(f"n{b}")
            nodes_added.discard(b)
            # The node's pods stay in the cache (upstream keeps a deleted node's info
            # while it holds pods) until their own deletions arrive.
            if cache.node_info(f"n{b}") is None and f"n{b}" not in cache._nodes:
                order.nodes.pop(f"n{b}", None)
        elif action == "add" and a not in known and a not in assumed:
            start = None if c == 0 else 10 * c
            known[a] = _pod(a, b, [-1, 0, 0, 5, 100][b], start, ["x", "y"][a % 2])
            cache.add_pod(known[a])
            order.add(f"n{b}", f"uid-{a}")
        elif action == "update" and a in known:
            current = known[a]
            status = dataclasses.replace(
                current.status or _empty_status(), start_time=rfc3339(EPOCH + 7 * c)
            )
            known[a] = dataclasses.replace(current, status=status)
            cache.update_pod(known[a])
            order.update(current.spec.node_name or "", f"uid-{a}")  # type: ignore[union-attr]
        elif action == "remove" and a in known:
            gone = known.pop(a)
            cache.remove_pod(gone)
            order.remove(gone.spec.node_name or "", f"uid-{a}")  # type: ignore[union-attr]
        elif action == "assume" and a not in known and a not in assumed:
            assumed[a] = PodInfo.of(_pod(a, b, [0, 5, 5, 10, 1][c], None, "x"))
            cache.assume_pod(assumed[a], f"n{b}")
            order.add(f"n{b}", f"uid-{a}")
        elif action == "forget" and a in assumed:
            info = assumed.pop(a)
            node_name = info.pod.spec.node_name or ""  # type: ignore[union-attr]
            if c % 2:
                cache.forget_pod(info)
                order.remove(node_name, f"uid-{a}")
            else:
                # The binding arrives: the assumed pod is confirmed, with a start time now.
                confirmed = _pod(a, int(node_name[1:]), info.priority, 3, "x")
                known[a] = confirmed
                cache.add_pod(confirmed)
                order.update(node_name, f"uid-{a}")
        check_table(cache)


@settings(max_examples=200, deadline=None)
@given(st.lists(OPS, max_size=60))
def test_rows_list_pods_in_victim_order_through_cache_changes(ops: list[Op]) -> None:
    """``SelectVictimsOnNode`` sorts a node's pods with ``util.MoreImportantPod``."""
    _run_ops(ops, Cache(), _UpstreamOrder())


@settings(max_examples=200, deadline=None)
@given(st.lists(OPS, max_size=60))
# A pod of a deleted node stays cached: it cannot be assumed again.
@example([("add", 5, 0, 0), ("node", 0, 0, 0), ("drop", 0, 0, 0), ("assume", 5, 0, 0)])
def test_node_pod_order_is_upstreams_through_cache_changes(ops: list[Op]) -> None:
    """Upstream ``NodeInfo.RemovePod`` (``removeFromSlice``) moves the node's last pod
    into the removed pod's place, and ``cacheImpl.updatePod`` (every update of a bound
    pod, and the confirmation of an assumed one) is ``removePod`` then ``addPod``. The
    order of ``NodeInfo.Pods`` is what ``SelectVictimsOnNode`` keeps for victims of equal
    priority and start, so which of two identical pods is evicted depends on it."""
    cache = Cache()
    order = _UpstreamOrder()
    _run_ops(ops, cache, order)
    held = {name: [p.uid for p in info.pods] for name, info in cache._nodes.items() if info.pods}
    assert held == order.nodes


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.integers(-1, 4), st.sampled_from([0, 5, 10, 100])),
        max_size=30,
    ),
    st.sampled_from([-5, 0, 5, 10, 1000]),
    st.integers(0, 9),
)
def test_nominated_load_equals_the_nominated_pods_upstream_adds(
    changes: list[tuple[int, int, int]], priority: int, own: int
) -> None:
    """``addGENominatedPods``: pods nominated to the node with priority >= the incoming
    pod's, the incoming pod itself excluded."""
    cache = Cache()
    for i in range(3):
        cache.add_node(node(f"n{i}").resources({"cpu": "4", "pods": "110"}).build())
    load = NominatedLoad(cache.table)
    nominator = Nominator()
    nominator.observer = load
    for index, target, pod_priority in changes:
        info = PodInfo.of(
            pod(f"q{index}")
            .uid(f"q-{index}")
            .priority(pod_priority)
            .requests(cpu=f"{index + 1}00m", memory=f"{index + 1}")
            .build()
        )
        # -1: clear; 3: a node the table does not have (yet).
        nominator.add_nominated_pod(info, NominatingInfo("" if target < 0 else f"n{target}"))
        if index == 9:
            cache.add_node(node("n3").resources({"cpu": "4", "pods": "110"}).build())
    got = load.load(priority, f"q-{own}")
    table = cache.table
    expected = {name: [0, 0, 0, 0] for name in table.names}
    for name in table.names:
        for other in nominator.nominated_pods_for_node(name):
            if other.priority >= priority and other.uid != f"q-{own}":
                sums = expected[name]
                sums[0] += other.requests.get("cpu", 0)
                sums[1] += other.requests.get("memory", 0)
                sums[3] += 1
    if got is None:
        assert not len(nominator)
        return
    for name, sums in expected.items():
        row = table.index[name]
        assert [int(got.cpu[row]), int(got.mem[row]), int(got.eph[row]), int(got.pods[row])] == (
            sums
        )
