"""Nominated pods counted in the fast path's fit check (``nominatedload``, ``fastpath``).

Upstream ``RunFilterPluginsWithNominatedPods`` adds the pods nominated to a node with a
priority at least the incoming pod's before NodeResourcesFit runs (semantics §5). The
fast path counts them either by adding their requests to each row's usage or, when every
nominated pod counts, by checking against the room they leave (allocatable less their
requests). Both must admit exactly the same rows, and the room must follow every
nomination and every allocatable change.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio.scheduler.cache import Cache
from kubeprio.scheduler.fastpath import FastPath
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nominatedload import NominatedLoad
from tests.builders import node, pod

CPUS = ("1", "2", "4")
REQUESTS = ("0", "100m", "900m", "1", "3")


def _cluster(allocatable_cpus: list[str]) -> tuple[Cache, NominatedLoad, FastPath]:
    cache = Cache()
    for i, cpu in enumerate(allocatable_cpus):
        cache.add_node(node(f"n{i}").allocatable(cpu=cpu, memory="4Gi", pods="3").build())
    return cache, NominatedLoad(cache.table), FastPath(cache.table)


def _pod(name: str, cpu: str, priority: int = 0, node_name: str | None = None) -> PodInfo:
    builder = pod(name).uid(name).priority(priority).requests(cpu=cpu, memory="1Gi")
    return PodInfo.of((builder.on(node_name) if node_name else builder).build())


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_room_admits_exactly_the_rows_of_added_requests(data: st.DataObject) -> None:
    cpus = data.draw(st.lists(st.sampled_from(CPUS), min_size=1, max_size=12), label="nodes")
    cache, load_index, fast = _cluster(cpus)
    for i in range(len(cpus)):
        for j in range(data.draw(st.integers(0, 2), label=f"bound on n{i}")):
            cpu = data.draw(st.sampled_from(REQUESTS), label="bound cpu")
            cache.add_pod(_pod(f"b{i}-{j}", cpu, node_name=f"n{i}").pod)
    for k in range(data.draw(st.integers(1, 6), label="nominated")):
        target = data.draw(st.integers(0, len(cpus) - 1), label="nominated to")
        cpu = data.draw(st.sampled_from(REQUESTS), label="nominated cpu")
        load_index.nominated(_pod(f"nom-{k}", cpu, priority=10), f"n{target}")
    incoming = _pod("incoming", data.draw(st.sampled_from(REQUESTS), label="incoming cpu"))
    load = load_index.load(incoming.priority, incoming.uid)
    assert load is not None
    assert load.room is not None  # every nominated pod outranks the incoming one
    added = dataclasses.replace(load, room=None)
    size = cache.table.size
    assert fast._feasible(incoming, 0, size, load).tolist() == (
        fast._feasible(incoming, 0, size, added).tolist()
    )


def test_room_follows_nominations_and_allocatable_changes() -> None:
    cache, load_index, fast = _cluster(["4", "4"])
    incoming = _pod("incoming", "2")
    load_index.nominated(_pod("big", "3", priority=10), "n0")
    load = load_index.load(0, incoming.uid)
    assert load is not None
    assert fast._feasible(incoming, 0, 2, load).tolist() == [False, True]
    # The nomination moves: the room of both rows follows.
    load_index.nominated(_pod("big", "3", priority=10), "n1")
    load = load_index.load(0, incoming.uid)
    assert load is not None
    assert fast._feasible(incoming, 0, 2, load).tolist() == [True, False]
    # n0 shrinks to 1 CPU: its room shrinks with it although no nomination changed.
    cache.update_node(node("n0").allocatable(cpu="1", memory="4Gi", pods="3").build())
    load = load_index.load(0, incoming.uid)
    assert load is not None
    assert fast._feasible(incoming, 0, 2, load).tolist() == [False, False]
    load_index.unnominated("big")
    assert load_index.load(0, incoming.uid) is None


def test_lower_priority_nominations_leave_no_room_shortcut() -> None:
    """A nominated pod of lower priority than the incoming one does not count (upstream
    adds only pods with priority >= the incoming pod's), so the load is computed per pod."""
    _, load_index, fast = _cluster(["4"])
    load_index.nominated(_pod("low", "3", priority=1), "n0")
    incoming = _pod("incoming", "2", priority=5)
    load = load_index.load(incoming.priority, incoming.uid)
    assert load is not None
    assert load.room is None
    assert fast._feasible(incoming, 0, 1, load).tolist() == [True]
