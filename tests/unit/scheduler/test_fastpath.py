"""The vectorised fast path against the plugins it replaces, node by node.

``FastPath`` claims to compute, for plain pods under the default profile, exactly what
the general path computes by running every plugin on every node. Upstream's plugins
(mirrored in ``scheduler/plugins``) are the specification, so each test here runs the
real plugins through the real ``Framework`` on a random cluster and compares:

* ``FastPath.status_of`` with ``Framework.run_filter_plugins`` for every node (same
  code, same reasons, same plugin: upstream ``RunFilterPlugins`` stops at the first
  failing filter, in the default profile's order NodeUnschedulable, NodeName,
  TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, ...);
* ``FastPath.find`` with upstream ``findNodesThatPassFilters`` written out as a loop:
  nodes visited from ``nextStartNodeIndex`` with wrap-around, stopping once ``wanted``
  feasible nodes are found; ``processed`` is feasible + rejected (upstream
  ``schedule_one.go``), and nominated nodes go through
  ``RunFilterPluginsWithNominatedPods``;
* ``FastPath.score`` with ``RunPreScorePlugins`` + ``RunScorePlugins`` (weights 3
  TaintToleration, 1 NodeResourcesFit, 1 BalancedAllocation; the other default scorers
  skip plain pods), and each vectorised scorer with its plugin alone;
* the ``NodeTable`` rows with the ``NodeInfo``s they mirror after random cache changes.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeprio.admission.chain import AdmissionChain
from kubeprio.admission.defaulttolerationseconds import NOT_READY_TOLERATION, UNREACHABLE_TOLERATION
from kubeprio.api.core import (
    Affinity,
    NodeAffinity,
    Pod,
    PodAffinity,
    Toleration,
    TopologySpreadConstraint,
)
from kubeprio.api.meta import LabelSelector, OwnerReference
from kubeprio.api.quantity import parse_quantity
from kubeprio.apiserver.service import ApiService
from kubeprio.scheduler import fastpath
from kubeprio.scheduler.cache import Cache
from kubeprio.scheduler.framework import Code, CycleState, PodInfo, Status
from kubeprio.scheduler.nodetable import NodeTable
from kubeprio.scheduler.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubeprio.scheduler.plugins.noderesources.fit import Fit
from kubeprio.scheduler.plugins.tainttoleration import TaintToleration
from kubeprio.scheduler.scheduler import Scheduler
from kubeprio.scheduler.setup import new_scheduler
from kubeprio.scheduler.snapshot import NodeInfo
from kubeprio.sim.engine import SimClock
from kubeprio.store.memory import MemoryStore
from tests.unit.scheduler import cluster_strategies as cs
from tests.unit.scheduler.plugins.harness import run_scores


def _scheduler() -> Scheduler:
    clock = SimClock()
    api = ApiService(MemoryStore(), clock=clock, rng=random.Random(0), admission=AdmissionChain())
    return new_scheduler(api, clock=clock, rng=random.Random(1), fast_path=True)


@st.composite
def populated(draw: st.DrawFn, max_nodes: int = 8) -> tuple[Scheduler, PodInfo]:
    """A fast-path scheduler whose cache holds a random cluster, and a plain pod."""
    count = draw(st.integers(1, max_nodes))
    nodes = [draw(cs.node_specs(f"node-{i}")) for i in range(count)]
    names = tuple(n.name for n in nodes)
    bound = [
        draw(cs.pod_specs(f"bound-{i}", plain=True, node_names=names, bound=True))
        for i in range(draw(st.integers(0, 14)))
    ]
    pod = draw(cs.pod_specs("incoming", plain=True))
    scheduler = _scheduler()
    for node in nodes:
        scheduler.cache.add_node(cs.build_node(node))
    for spec in bound:
        scheduler.cache.add_pod(cs.build_pod(spec, uid=spec.name))
    info = PodInfo.of(cs.build_pod(pod, uid="incoming"))
    assert fastpath.is_plain_pod(info)
    return scheduler, info


def _general_statuses(
    scheduler: Scheduler, pod: PodInfo
) -> tuple[CycleState, list[NodeInfo], list[Status | None]]:
    nodes = list(scheduler.cache.node_infos())
    state = CycleState()
    _result, status, _narrowing = scheduler.framework.run_pre_filter_plugins(state, pod, nodes)
    assert status is None
    return state, nodes, [scheduler.framework.run_filter_plugins(state, pod, n) for n in nodes]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populated())
def test_status_of_equals_the_filter_plugins_on_every_node(
    case: tuple[Scheduler, PodInfo],
) -> None:
    """Upstream ``RunFilterPlugins``: the first failing filter's status, node by node."""
    scheduler, pod = case
    assert scheduler.fast is not None
    _state, nodes, expected = _general_statuses(scheduler, pod)
    for row, node in enumerate(nodes):
        assert scheduler.cache.table.names[row] == node.name
        assert scheduler.fast.status_of(pod, row) == expected[row], node


def _reference_find(
    scheduler: Scheduler,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    start: int,
    wanted: int,
) -> tuple[list[str], int, dict[str, Status]]:
    """Upstream ``findNodesThatPassFilters`` (sequential): feasible, processed, rejected."""
    feasible: list[str] = []
    rejected: dict[str, Status] = {}
    for i in range(len(nodes)):
        node = nodes[(start + i) % len(nodes)]
        status = scheduler.framework.run_filter_plugins_with_nominated_pods(state, pod, node)
        if status is None:
            feasible.append(node.name)
            if len(feasible) >= wanted:
                break
        else:
            rejected[node.name] = status
    return feasible, len(feasible) + len(rejected), rejected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populated(), st.data())
def test_find_visits_nodes_like_find_nodes_that_pass_filters(
    case: tuple[Scheduler, PodInfo], data: st.DataObject
) -> None:
    """Same feasible nodes in the same order, same rotation step, same diagnosis."""
    scheduler, pod = case
    assert scheduler.fast is not None
    state, nodes, _ = _general_statuses(scheduler, pod)
    start = data.draw(st.integers(0, len(nodes) - 1), label="start")
    wanted = data.draw(st.integers(1, len(nodes)), label="wanted")
    # Nominated pods (of any priority) on some nodes: those rows use the general filters.
    nominated: dict[str, list[PodInfo]] = {}
    for i, node in enumerate(nodes):
        if data.draw(st.integers(0, 3), label=f"nominate {node.name}") == 0:
            spec = data.draw(cs.pod_specs(f"nominated-{i}", plain=True), label="nominee")
            nominated[node.name] = [PodInfo.of(cs.build_pod(spec, uid=spec.name))]
    scheduler.framework.nominated_pods = lambda name: nominated.get(name, ())
    expected_feasible, expected_processed, expected_rejected = _reference_find(
        scheduler, state, pod, nodes, start, wanted
    )
    table = scheduler.cache.table
    # Small chunks split the table into several numpy steps, as 5,000 nodes do: the
    # search then changes method after a first chunk without feasible rows.
    chunk_rows = data.draw(st.sampled_from([1, 2, 3, fastpath.CHUNK_ROWS]), label="chunk rows")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fastpath, "CHUNK_ROWS", chunk_rows)
        result = scheduler.fast.find(
            pod,
            start=start,
            wanted=wanted,
            nominated_rows=[table.index[name] for name in nominated],
            filter_node=lambda row: scheduler.framework.run_filter_plugins_with_nominated_pods(
                state, pod, nodes[row]
            ),
        )
    assert [table.names[row] for row in result.feasible.tolist()] == expected_feasible
    assert result.processed == expected_processed
    if not expected_feasible:
        # Rejections are only reported when nothing fits (only then are they read).
        # RowStatuses is a mapping from node name to status.
        assert result.rejected is not None
        assert dict(result.rejected.items()) == expected_rejected


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populated())
def test_score_equals_the_weighted_score_plugins(case: tuple[Scheduler, PodInfo]) -> None:
    """Upstream ``RunScorePlugins`` totals over the feasible nodes, weights applied."""
    scheduler, pod = case
    assert scheduler.fast is not None
    state, nodes, statuses = _general_statuses(scheduler, pod)
    rows = [row for row, status in enumerate(statuses) if status is None]
    feasible = [nodes[row] for row in rows]
    if not feasible:
        return
    assert scheduler.framework.run_pre_score_plugins(state, pod, feasible) is None
    totals, status = scheduler.framework.run_score_plugins(state, pod, feasible)
    assert status is None
    fast_totals = scheduler.fast.score(pod, np.array(rows, dtype=np.int64))
    assert fast_totals.tolist() == totals


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populated())
def test_each_vectorised_scorer_equals_its_plugin(case: tuple[Scheduler, PodInfo]) -> None:
    """LeastAllocated (non-zero requests), BalancedAllocation (float64, truncated), and
    TaintToleration (reverse-normalised PreferNoSchedule count) on all nodes."""
    scheduler, pod = case
    table = scheduler.cache.table
    nodes = list(scheduler.cache.node_infos())
    rows = np.arange(len(nodes), dtype=np.int64)
    least = run_scores(Fit(), pod.pod, nodes)
    assert isinstance(least, dict)
    least_scores = [least[n.name] for n in nodes]
    got = fastpath._least_allocated(
        table.alloc_cpu[rows], table.nz_cpu[rows] + pod.non_zero_cpu,
        table.alloc_mem[rows], table.nz_mem[rows] + pod.non_zero_memory,
    )  # fmt: skip
    assert got.tolist() == least_scores
    balanced = run_scores(BalancedAllocation(), pod.pod, nodes)
    balanced_scores = [0] * len(nodes)
    if isinstance(balanced, dict):
        balanced_scores = [balanced[n.name] for n in nodes]
        got = fastpath._balanced(
            table.alloc_cpu[rows], table.req_cpu[rows] + pod.requests.get("cpu", 0),
            table.alloc_mem[rows], table.req_mem[rows] + pod.requests.get("memory", 0),
        )  # fmt: skip
        assert got.tolist() == balanced_scores
    else:
        # PreScore SKIP: a pod requesting neither cpu nor memory (kubernetes#129138).
        assert balanced.code is Code.SKIP
        assert not pod.requests.get("cpu")
        assert not pod.requests.get("memory")
    taint = run_scores(TaintToleration(), pod.pod, nodes)
    assert isinstance(taint, dict)
    expected = [
        3 * taint[n.name] + least_scores[i] + balanced_scores[i] for i, n in enumerate(nodes)
    ]
    assert fastpath.FastPath(table).score(pod, rows).tolist() == expected


@st.composite
def decorated_pods(draw: st.DrawFn) -> PodInfo:
    """Any pod shape: plain ones and ones the fast path must refuse, mixed at random.

    Besides what ``pod_specs`` varies, this adds fields ``is_plain_pod`` has to look at
    (or may safely ignore): owners of every kind, overhead, empty-but-present
    selectors, tolerations and affinity blocks, spread constraints.
    """
    spec = draw(cs.pod_specs("incoming"))
    pod = cs.build_pod(spec, uid="incoming")
    assert pod.spec is not None
    changes: dict[str, object] = {}
    if draw(st.booleans()):
        changes["overhead"] = draw(
            st.sampled_from(
                [
                    {"cpu": parse_quantity("100m")},
                    {"memory": parse_quantity("1Mi")},
                    {"example.com/gpu": parse_quantity("1")},
                ]
            )
        )
    if draw(st.booleans()):
        changes["node_selector"] = draw(st.sampled_from([{}, {"zone": "z1"}]))
    if draw(st.booleans()):
        changes["tolerations"] = draw(
            st.sampled_from(
                [
                    (),
                    (Toleration(operator="Exists"),),
                    (Toleration(key="a"),),
                    # DefaultTolerationSeconds admission's two, on every pod of a real cluster.
                    (NOT_READY_TOLERATION, UNREACHABLE_TOLERATION),
                ]
            )
        )
    if draw(st.booleans()):
        changes["affinity"] = draw(
            st.sampled_from(
                [
                    Affinity(),
                    Affinity(node_affinity=NodeAffinity()),
                    Affinity(pod_affinity=PodAffinity()),
                    Affinity(pod_anti_affinity=PodAffinity()),
                ]
            )
        )
    if draw(st.integers(0, 5)) == 0:
        changes["topology_spread_constraints"] = (
            TopologySpreadConstraint(
                max_skew=1,
                topology_key="zone",
                when_unsatisfiable="DoNotSchedule",
                label_selector=LabelSelector(match_labels={"app": "x"}),
            ),
        )
    owner = draw(st.sampled_from([None, "Job", "DaemonSet", "ReplicaSet", "StatefulSet"]))
    metadata = pod.metadata
    if owner is not None:
        ref = OwnerReference(api_version="apps/v1", kind=owner, name="o", controller=True)
        metadata = dataclasses.replace(metadata, owner_references=(ref,))
    return PodInfo.of(
        dataclasses.replace(pod, metadata=metadata, spec=dataclasses.replace(pod.spec, **changes))
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populated(), decorated_pods())
def test_every_pod_the_gate_lets_through_is_filtered_alike(
    case: tuple[Scheduler, PodInfo], pod: PodInfo
) -> None:
    """``is_plain_pod`` is sound: whenever it admits a pod, the vectorised filter and
    score agree with the plugins on every node (whatever else the pod carries)."""
    scheduler, _ = case
    assert scheduler.fast is not None
    if not fastpath.is_plain_pod(pod, lost_node_taints=scheduler.cache.table.any_lost_node_taint):
        return
    state, nodes, expected = _general_statuses(scheduler, pod)
    for row in range(len(nodes)):
        assert scheduler.fast.status_of(pod, row) == expected[row]
    rows = [row for row, status in enumerate(expected) if status is None]
    if rows:
        feasible = [nodes[row] for row in rows]
        assert scheduler.framework.run_pre_score_plugins(state, pod, feasible) is None
        totals, status = scheduler.framework.run_score_plugins(state, pod, feasible)
        assert status is None
        assert scheduler.fast.score(pod, np.array(rows, dtype=np.int64)).tolist() == totals


# --- the table stays in sync with the cache ---------------------------------------------------


def _expected_row(node: NodeInfo) -> dict[str, int]:
    """A row computed straight from the NodeInfo."""
    spec = node.node.spec if node.node is not None else None
    taints = (spec.taints if spec else None) or ()
    return {
        "alloc_cpu": node.allocatable.get("cpu", 0),
        "alloc_mem": node.allocatable.get("memory", 0),
        "alloc_eph": node.allocatable.get("ephemeral-storage", 0),
        "alloc_pods": node.allocatable.get("pods", 0),
        "req_cpu": node.requested.get("cpu", 0),
        "req_mem": node.requested.get("memory", 0),
        "req_eph": node.requested.get("ephemeral-storage", 0),
        "pods": len(node.pods),
        "nz_cpu": node.non_zero_cpu,
        "nz_mem": node.non_zero_memory,
        "prefer_taints": sum(1 for t in taints if t.effect == "PreferNoSchedule"),
        "unschedulable": int(bool(spec and spec.unschedulable)),
        "hard_taint": int(any(t.effect in ("NoSchedule", "NoExecute") for t in taints)),
    }


def _table_row(table: NodeTable, row: int) -> dict[str, int]:
    return {name: int(getattr(table, name)[row]) for name in _expected_row(NodeInfo())}


def _add_or_update_node(
    data: st.DataObject, cache: Cache, op: str, names: tuple[str, ...], serial: int
) -> None:
    """A random new node, or new contents for an existing one."""
    name = data.draw(st.sampled_from(names)) if op == "update_node" and names else f"node-{serial}"
    cache.add_node(cs.build_node(data.draw(cs.node_specs(name))))


OPS = st.sampled_from(
    (
        "add_node",
        "update_node",
        "remove_node",
        "readd_node",
        "add_pod",
        "remove_pod",
        "assume",
        "forget",
    )
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_node_table_rows_mirror_the_cache_after_any_changes(data: st.DataObject) -> None:
    """Every cache change refreshes its node's row; a removal rebuilds the table."""
    scheduler = _scheduler()
    cache = scheduler.cache
    pods: dict[str, Pod] = {}
    assumed: dict[str, PodInfo] = {}
    removed: list[str] = []
    for serial, op in enumerate(data.draw(st.lists(OPS, min_size=1, max_size=40), label="ops")):
        names = tuple(info.name for info in cache.node_infos())
        if op in ("add_node", "update_node"):
            _add_or_update_node(data, cache, op, names, serial)
        elif op == "remove_node" and names:
            name = data.draw(st.sampled_from(names))
            cache.remove_node(name)
            removed.append(name)
        elif op == "readd_node" and removed:
            name = removed.pop(data.draw(st.integers(0, len(removed) - 1)))
            cache.add_node(cs.build_node(data.draw(cs.node_specs(name))))
        elif op in ("add_pod", "assume") and (names or removed):
            # Pods may also land on a removed node (their events can come late).
            spec = data.draw(
                cs.pod_specs(
                    f"pod-{serial}", plain=True, node_names=names + tuple(removed), bound=True
                )
            )
            pod = cs.build_pod(spec, uid=spec.name)
            if op == "assume":
                assumed[spec.name] = PodInfo.of(pod)
                cache.assume_pod(assumed[spec.name], spec.node or "")
            else:
                pods[spec.name] = pod
                cache.add_pod(pod)
        elif op == "remove_pod" and pods:
            cache.remove_pod(pods.pop(data.draw(st.sampled_from(sorted(pods)))))
        elif op == "forget" and assumed:
            cache.forget_pod(assumed.pop(data.draw(st.sampled_from(sorted(assumed)))))
        infos = cache.node_infos()
        # Upstream keeps the pods of a removed node (a ghost) until their own deletions
        # arrive, so every pod the cache knows is on exactly one NodeInfo.
        on_nodes = sorted(
            p.uid
            for name in {*names, *removed, *(i.name for i in infos)}
            if (node := cache.node_info(name)) is not None
            for p in node.pods
        )
        assert on_nodes == sorted(info.uid for info, _node in cache.iter_pods())
        table = cache.table
        assert table.size == len(infos)
        assert table.names == [info.name for info in infos]
        for row, info in enumerate(infos):
            assert table.index[info.name] == row
            assert _table_row(table, row) == _expected_row(info), (op, info.name)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_cached_filter_outcomes_equal_a_fresh_pass_after_any_changes(
    data: st.DataObject,
) -> None:
    """The per-shape cache of filter outcomes (refreshed only for rows whose table or
    nominated-load version moved) always equals ``plain_kinds`` computed from scratch,
    and the one-row form agrees with it row by row: a stale row would let the fast path
    place a pod on a full node or report the wrong reason."""
    scheduler = _scheduler()
    cache = scheduler.cache
    fast, load = scheduler.fast, scheduler.nominated_load
    assert fast is not None
    assert load is not None
    specs = [data.draw(cs.pod_specs(f"probe-{i}", plain=True)) for i in range(2)]
    probes = [PodInfo.of(cs.build_pod(spec, uid=spec.name)) for spec in specs]
    pods: dict[str, Pod] = {}
    nominated: dict[str, PodInfo] = {}
    ops = st.sampled_from(
        # Nominations are frequent: each one moves a row's load and not its table version.
        ("add_node", "update_node", "add_pod", "remove_pod", "remove_node")
        + ("nominate",) * 4
        + ("unnominate",) * 2
    )
    for serial, op in enumerate(data.draw(st.lists(ops, min_size=1, max_size=30), label="ops")):
        names = tuple(info.name for info in cache.node_infos())
        if op in ("add_node", "update_node"):
            _add_or_update_node(data, cache, op, names, serial)
        elif op == "remove_node" and names:
            cache.remove_node(data.draw(st.sampled_from(names)))
        elif op == "add_pod" and names:
            spec = data.draw(
                cs.pod_specs(f"pod-{serial}", plain=True, node_names=names, bound=True)
            )
            pods[spec.name] = cs.build_pod(spec, uid=spec.name)
            cache.add_pod(pods[spec.name])
        elif op == "remove_pod" and pods:
            cache.remove_pod(pods.pop(data.draw(st.sampled_from(sorted(pods)))))
        elif op == "nominate" and names:
            # A nominee shaped like a probe: a few on one node flip the probe's outcome.
            spec = specs[data.draw(st.integers(0, 1))]
            nominee = PodInfo.of(cs.build_pod(spec, uid=f"nominee-{serial}"))
            nominated[nominee.uid] = nominee
            load.nominated(nominee, data.draw(st.sampled_from(names)))
        elif op == "unnominate" and nominated:
            load.unnominated(nominated.pop(data.draw(st.sampled_from(sorted(nominated)))).uid)
        table = cache.table
        for probe in probes:
            requests = probe.requests
            amounts = (
                requests.get("cpu", 0),
                requests.get("memory", 0),
                requests.get("ephemeral-storage", 0),
            )
            # The load every nominated pod counts in (what a pod of the lowest priority sees).
            every = (
                load.load(min((p.priority for p in nominated.values()), default=0), "")
                if nominated
                else None
            )
            for with_load in (None, every):
                key = fastpath._kinds_key(probe, with_load)
                assert key is not None
                cached, _fits = fast._all_kinds(key, probe, with_load)
                fresh = fastpath.plain_kinds(table, *amounts, with_load)
                assert cached.tolist() == fresh.tolist(), (op, probe.name)
                rows = [
                    fastpath._row_kind(table, row, *amounts, with_load) for row in range(table.size)
                ]
                assert rows == fresh.tolist()
