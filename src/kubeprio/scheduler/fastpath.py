"""Vectorised filtering and scoring for plain pods under the default profile.

The general path runs every plugin on every node in Python; at 5,000 nodes that is
milliseconds per pod. Most pods, though, are *plain*: they name no node, select no
labels, tolerate nothing (but the lost-node tolerations every pod gets, while no node is
lost), ask for no host ports, spread, (anti-)affinity or claim volumes, request only
cpu/memory/ephemeral-storage, and no pod in the cluster has (anti-)affinity terms. For
them the default filters reduce to column arithmetic over the ``NodeTable``:

* NodeUnschedulable: ``node(s) were unschedulable`` where ``spec.unschedulable``;
* TaintToleration: the node's first NoSchedule/NoExecute taint is untolerated;
* NodeResourcesFit: ``Too many pods`` / ``Insufficient cpu|memory|ephemeral-storage``;

and the default scores to TaintToleration (PreferNoSchedule count, reversed),
NodeResourcesFit LeastAllocated (cpu, memory; non-zero requests) and
NodeResourcesBalancedAllocation (float64 |f_cpu - f_mem| / 2, as upstream computes it).

The result is the same as the general path by construction (same node order from the
rotating start index, same first-``wanted`` feasible nodes, same integer and float
arithmetic), and ``tests/unit/scheduler/test_fastpath.py`` checks it against the plugins
on random clusters. Nodes with nominated pods are evaluated by the general filters,
unless the caller passes their requests as a ``nominatedload.Load`` (exact for plain pods:
see that module). When no node fits, the rejections are computed for all rows at once
and returned as ``rowstatus.RowStatuses``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from kubeprio.api.core import Toleration
from kubeprio.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubeprio.api.storagehelpers import has_scheduling_volumes
from kubeprio.api.taints import LOST_NODE_TAINT_KEYS, TAINT_EFFECT_NO_EXECUTE, TOLERATION_OP_EXISTS
from kubeprio.scheduler.framework import Code, PodInfo, Status, unresolvable, unschedulable
from kubeprio.scheduler.nodetable import BoolArray, IntArray, NodeTable
from kubeprio.scheduler.nominatedload import ROOM_CPU, ROOM_EPH, ROOM_MEM, ROOM_PODS, Load
from kubeprio.scheduler.rowchanges import counters, rows_changed_since
from kubeprio.scheduler.rowstatus import RowStatuses
from kubeprio.scheduler.shapecache import shape_entry

UNSCHEDULABLE_REASON: Final = "node(s) were unschedulable"
TAINT_REASON: Final = "node(s) had untolerated taint(s)"
TOO_MANY_PODS: Final = "Too many pods"
PLAIN_RESOURCES: Final = frozenset({CPU, MEMORY, EPHEMERAL_STORAGE})
MAX_NODE_SCORE: Final = 100
SCORE_CACHE_SHAPES: Final = 64
"""Request shapes whose per-row scores are kept (workloads repeat a few shapes)."""
SCALAR_ROWS: Final = 8
"""Up to this many stale rows are rescored (or refiltered) in plain Python."""
KINDS_CACHE_SHAPES: Final = 16
"""Request shapes whose per-row filter outcomes are kept."""
STALE_FRACTION: Final = 16
"""Beyond 1/16 of the rows stale, cached outcomes are recomputed in one pass over all."""
CHUNK_ROWS: Final = 512
"""Rows filtered per numpy step: enough to amortise numpy's per-call cost."""

FilterNode = Callable[[int], Status | None]
"""Run the general filters (with nominated pods) on the node at a row."""
KindsKey = tuple[int, int, int, bool]
"""A request shape for cached filter outcomes: cpu, memory, ephemeral storage, and
whether the nominated pods' load counts."""


def _lost_node_toleration(toleration: Toleration) -> bool:
    """One of the 300 s tolerations DefaultTolerationSeconds gives every pod (or the same
    without its seconds): ``Exists`` on a lost node's ``NoExecute`` taint."""
    return (
        toleration.effect == TAINT_EFFECT_NO_EXECUTE
        and toleration.key in LOST_NODE_TAINT_KEYS
        and toleration.operator == TOLERATION_OP_EXISTS
    )


def is_plain_pod(pod: PodInfo, *, lost_node_taints: bool = False) -> bool:
    """Whether the pod's constraints are only resources the fast path understands.

    Tolerations are allowed only when they are the lost-node ones admission adds to every
    pod and no node carries such a taint (``lost_node_taints`` false, from
    ``NodeTable.any_lost_node_taint``): then they tolerate nothing on any node, and the
    ``hard_taint`` column decides exactly as for a pod without tolerations.
    """
    spec = pod.pod.spec
    if spec is None:
        return False
    if spec.node_name or spec.node_selector or spec.topology_spread_constraints:
        return False
    tolerations = spec.tolerations
    if tolerations and (lost_node_taints or not all(_lost_node_toleration(t) for t in tolerations)):
        return False
    affinity = spec.affinity
    if affinity is not None and (
        affinity.node_affinity is not None
        or affinity.pod_affinity is not None
        or affinity.pod_anti_affinity is not None
    ):
        return False
    if spec.overhead and any(name not in PLAIN_RESOURCES for name in spec.overhead):
        return False
    if any(name not in PLAIN_RESOURCES for name in pod.requests):
        return False
    for container in (*(spec.containers or ()), *(spec.init_containers or ())):
        if any(port.host_port for port in container.ports or ()):
            return False
    if has_scheduling_volumes(pod.pod):
        # A volume plugin has work to do (VolumeRestrictions, VolumeBinding and VolumeZone
        # skip every other pod at PreFilter).
        return False
    owner = pod.pod.metadata.controller_ref()
    # Default topology spreading (ScheduleAnyway) applies to pods a workload controller owns.
    return owner is None or owner.kind not in ("ReplicaSet", "StatefulSet", "ReplicationController")


@dataclasses.dataclass(frozen=True, slots=True)
class FastResult:
    """Feasible rows (in evaluation order), their totals, processed count, and rejections
    (every row's status, only when no row is feasible)."""

    feasible: IntArray
    totals: IntArray
    processed: int
    rejected: RowStatuses | None


RESOURCE_REASONS: Final = (
    TOO_MANY_PODS,
    "Insufficient cpu",
    "Insufficient memory",
    "Insufficient ephemeral-storage",
)
KIND_UNSCHEDULABLE: Final = 0
KIND_TAINT: Final = 1
KIND_RESOURCES: Final = 2
"""Plain filter outcomes as palette kinds: 0 unschedulable node, 1 untolerated taint, and
``2 + bits`` for NodeResourcesFit, bits 1/2/4/8 = ``RESOURCE_REASONS``, 16 = Unresolvable."""


def _plain_palette() -> tuple[Status, ...]:
    palette = [
        unresolvable(UNSCHEDULABLE_REASON).with_plugin("NodeUnschedulable"),
        unresolvable(TAINT_REASON).with_plugin("TaintToleration"),
    ]
    for bits in range(32):
        reasons = tuple(r for i, r in enumerate(RESOURCE_REASONS) if bits & (1 << i))
        status = unresolvable(*reasons) if bits & 16 else unschedulable(*reasons)
        palette.append(status.with_plugin("NodeResourcesFit"))
    return tuple(palette)


PLAIN_PALETTE: Final = _plain_palette()


def _resource_checks(
    table: NodeTable, cpu: int, mem: int, eph: int, load: Load | None
) -> tuple[tuple[int, int, IntArray, IntArray | None, IntArray], ...]:
    """NodeResourcesFit's checks per resource: the kind's reason bit, the pod's request,
    the requested column, the nominated pods' column (None without them), allocatable."""
    return (
        (2, cpu, table.req_cpu, None if load is None else load.cpu, table.alloc_cpu),
        (4, mem, table.req_mem, None if load is None else load.mem, table.alloc_mem),
        (8, eph, table.req_eph, None if load is None else load.eph, table.alloc_eph),
    )


def plain_kinds(
    table: NodeTable,
    cpu: int,
    mem: int,
    eph: int,
    load: Load | None = None,
    rows: IntArray | None = None,
) -> IntArray:
    """The plain-filter outcome of every row (or of ``rows``) as a ``PLAIN_PALETTE`` kind
    (-1: the pod fits)."""
    at: slice | IntArray = slice(0, table.size) if rows is None else rows
    count = table.pods[at] if load is None else table.pods[at] + load.pods[at]
    bits = (count + 1 > table.alloc_pods[at]).astype(np.int64)
    beyond = np.zeros(len(bits), np.bool_)
    for bit, amount, used, extra, capacity in _resource_checks(table, cpu, mem, eph, load):
        if amount <= 0:
            continue
        total = used[at] if extra is None else used[at] + extra[at]
        short = amount > capacity[at] - total
        bits |= short * bit
        beyond |= short & (amount > capacity[at])
    kinds: IntArray = np.where(bits > 0, KIND_RESOURCES + bits + 16 * beyond, -1)
    if table.any_blocked:
        kinds = np.where(table.hard_taint[at], KIND_TAINT, kinds)
        kinds = np.where(table.unschedulable[at], KIND_UNSCHEDULABLE, kinds)
    return kinds


def _row_kind(table: NodeTable, row: int, cpu: int, mem: int, eph: int, load: Load | None) -> int:
    """``plain_kinds`` of one row in plain Python (same rules, same precedence)."""
    if table.unschedulable[row]:
        return KIND_UNSCHEDULABLE
    if table.hard_taint[row]:
        return KIND_TAINT
    count = int(table.pods[row]) + (int(load.pods[row]) if load is not None else 0)
    bits = 1 if count + 1 > int(table.alloc_pods[row]) else 0
    beyond = False
    for bit, amount, used, extra, capacity in _resource_checks(table, cpu, mem, eph, load):
        if amount <= 0:
            continue
        room = int(capacity[row]) - int(used[row]) - (0 if extra is None else int(extra[row]))
        if amount > room:
            bits |= bit
            beyond = beyond or amount > int(capacity[row])
    return KIND_RESOURCES + bits + 16 * beyond if bits else -1


def _segments(start: int, n: int, chunk: int) -> list[tuple[int, int]]:
    """Contiguous row ranges covering ``start..n`` then ``0..start``, at most ``chunk`` long."""
    ranges: list[tuple[int, int]] = []
    for lo, hi in ((start, n), (0, start)):
        for begin in range(lo, hi, chunk):
            ranges.append((begin, min(begin + chunk, hi)))
    return ranges


class FastPath:
    """Filters and scores a plain pod over all nodes at once."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self._score_cache: dict[tuple[int, int, int, int], _ScoreCache] = {}
        self._kinds_cache: dict[KindsKey, _KindsCache] = {}

    def _feasible(self, pod: PodInfo, lo: int, hi: int, load: Load | None = None) -> BoolArray:
        """Rows ``lo..hi`` that pass NodeUnschedulable, TaintToleration and NodeResourcesFit
        (with the nominated pods' requests in ``load`` added)."""
        table = self.table
        cpu = pod.requests.get(CPU, 0)
        mem = pod.requests.get(MEMORY, 0)
        eph = pod.requests.get(EPHEMERAL_STORAGE, 0)
        if load is None:
            ok = table.pods[lo:hi] < table.alloc_pods[lo:hi]
            if cpu:
                ok &= table.req_cpu[lo:hi] + cpu <= table.alloc_cpu[lo:hi]
            if mem:
                ok &= table.req_mem[lo:hi] + mem <= table.alloc_mem[lo:hi]
            if eph:
                ok &= table.req_eph[lo:hi] + eph <= table.alloc_eph[lo:hi]
        elif load.room is not None:
            # The same sums, with the nominated pods already taken off the allocatable.
            room = load.room[:, lo:hi]
            ok = table.pods[lo:hi] < room[ROOM_PODS]
            if cpu:
                ok &= table.req_cpu[lo:hi] + cpu <= room[ROOM_CPU]
            if mem:
                ok &= table.req_mem[lo:hi] + mem <= room[ROOM_MEM]
            if eph:
                ok &= table.req_eph[lo:hi] + eph <= room[ROOM_EPH]
        else:
            ok = table.pods[lo:hi] + load.pods[lo:hi] < table.alloc_pods[lo:hi]
            if cpu:
                ok &= table.req_cpu[lo:hi] + load.cpu[lo:hi] + cpu <= table.alloc_cpu[lo:hi]
            if mem:
                ok &= table.req_mem[lo:hi] + load.mem[lo:hi] + mem <= table.alloc_mem[lo:hi]
            if eph:
                ok &= table.req_eph[lo:hi] + load.eph[lo:hi] + eph <= table.alloc_eph[lo:hi]
        if table.any_blocked:
            ok &= ~table.blocked[lo:hi]
        return ok

    def status_of(self, pod: PodInfo, row: int, load: Load | None = None) -> Status | None:
        """The general-path status of one row (used for failure diagnostics)."""
        requests = pod.requests
        kind = _row_kind(
            self.table,
            row,
            requests.get(CPU, 0),
            requests.get(MEMORY, 0),
            requests.get(EPHEMERAL_STORAGE, 0),
            load,
        )
        return None if kind < 0 else PLAIN_PALETTE[kind]

    def find(
        self,
        pod: PodInfo,
        *,
        start: int,
        wanted: int,
        nominated_rows: Sequence[int],
        filter_node: FilterNode,
        load: Load | None = None,
    ) -> FastResult:
        """Upstream ``findNodesThatPassFilters`` over the table, from row ``start``.

        Rows are examined in order from ``start`` (wrapping), in chunks, and the search
        stops at the ``wanted``-th feasible row — exactly the rows and the processed
        count of the general path, without touching the rest of the table. ``load`` holds
        the requests of nominated pods the caller resolved itself (then ``nominated_rows``
        lists only rows that still need the general filters).
        """
        n = self.table.size
        overrides = {row: filter_node(row) for row in nominated_rows}
        chunk = max(2 * wanted, CHUNK_ROWS)
        found: list[IntArray] = []
        count = 0
        processed = 0
        key = _kinds_key(pod, load)
        known = None if key is None else self._kinds_cache.get(key)
        kinds: IntArray | None = None
        if known is not None and not known.fitted:
            # A shape that fitted nowhere last time most likely fits nowhere now: start
            # from every row's cached kind instead of filtering a first chunk.
            kinds, fits_somewhere = self._all_kinds(key, pod, load)
            if not overrides and not fits_somewhere:
                processed = n  # every row examined, none feasible: no chunk to filter
        for lo, hi in _segments(start, n, chunk) if not processed else ():
            if kinds is None and processed and not count:
                # Nothing fitted in the first chunk: most likely nothing fits at all, and a
                # failure needs every row's kind anyway. One pass over the whole table
                # gives both, instead of a pass per chunk and then the kinds.
                kinds, fits_somewhere = self._all_kinds(key, pod, load)
                if not overrides and not fits_somewhere:
                    processed = n
                    break
            ok = self._feasible(pod, lo, hi, load) if kinds is None else kinds[lo:hi] < 0
            for row, status in overrides.items():
                if lo <= row < hi:
                    ok[row - lo] = status is None
            rows = np.flatnonzero(ok)
            if count + len(rows) >= wanted:
                need = wanted - count
                found.append(rows[:need] + lo)
                processed += int(rows[need - 1]) + 1
                count = wanted
                break
            found.append(rows + lo)
            count += len(rows)
            processed += hi - lo
        feasible = np.concatenate(found) if found else np.zeros(0, np.int64)
        rejected = None
        if count == 0:
            if kinds is None:
                kinds = self._plain_kinds(pod, load)
            palette = list(PLAIN_PALETTE)
            for row, status in overrides.items():
                if status is None:
                    kinds[row] = -1
                else:
                    kinds[row] = len(palette)
                    palette.append(status)
            table = self.table
            rejected = RowStatuses(table.names, table.index, kinds, palette, start)
        return FastResult(feasible, np.zeros(0, np.int64), processed, rejected)

    def _plain_kinds(self, pod: PodInfo, load: Load | None) -> IntArray:
        requests = pod.requests
        return plain_kinds(
            self.table,
            requests.get(CPU, 0),
            requests.get(MEMORY, 0),
            requests.get(EPHEMERAL_STORAGE, 0),
            load,
        )

    def _all_kinds(
        self, key: KindsKey | None, pod: PodInfo, load: Load | None
    ) -> tuple[IntArray, bool]:
        """Every row's kind (a copy the caller may change) and whether some row fits:
        from the cache when the shape has a ``key``, else computed afresh."""
        if key is None:
            kinds = self._plain_kinds(pod, load)
            return kinds, bool(np.count_nonzero(kinds < 0))
        entry = self._kinds_entry(key, load)
        return entry.kinds[: self.table.size].copy(), entry.fitted

    def _kinds_entry(self, key: KindsKey, load: Load | None) -> _KindsCache:
        """The shape's cached kinds, brought up to date: only rows whose table or
        nominated-load ``version`` moved since are recomputed (all of them in a new entry,
        whose versions are -1)."""
        table = self.table
        n = table.size
        cache = shape_entry(
            self._kinds_cache, key, table, limit=KINDS_CACHE_SHAPES, new=_KindsCache
        )
        cpu, mem, eph, _with_load = key
        load_version = None if load is None else load.version
        load_changes = None if load is None else load.changes
        logs = (table.changes,) if load_changes is None else (table.changes, load_changes)
        changed = rows_changed_since(logs, cache.seen[: len(logs)])
        if changed is None:
            stale = cache.table_version[:n] != table.version[:n]
            if load_version is not None:
                stale |= cache.load_version[:n] != load_version[:n]
            rows = np.flatnonzero(stale)
        else:
            rows = np.array(sorted(changed), np.int64)
        cache.seen = counters(logs)  # an entry always has the same logs (its key says)
        if len(rows) > n // STALE_FRACTION:
            # Many rows moved (binds in a busy stream, or a new entry): gathering them
            # costs more than one pass over contiguous columns.
            cache.kinds[:n] = plain_kinds(table, cpu, mem, eph, load)
            cache.table_version[:n] = table.version[:n]
            if load_version is not None:
                cache.load_version[:n] = load_version[:n]
        else:
            if len(rows) > SCALAR_ROWS:
                cache.kinds[rows] = plain_kinds(table, cpu, mem, eph, load, rows)
            else:
                # A few rows (a bind, a victim gone): plain Python beats a dozen numpy calls.
                for row in rows.tolist():
                    cache.kinds[row] = _row_kind(table, row, cpu, mem, eph, load)
            cache.table_version[rows] = table.version[rows]
            if load_version is not None:
                cache.load_version[rows] = load_version[rows]
        # count_nonzero: ndarray.any goes through a Python-level wrapper.
        cache.fitted = bool(np.count_nonzero(cache.kinds[:n] < 0))
        return cache

    def score(self, pod: PodInfo, rows: IntArray) -> IntArray:
        """Weighted default totals: 3·TaintToleration + 1·LeastAllocated + 1·BalancedAllocation.

        The resource part of a row's score depends only on the row and on the pod's
        requests, so it is cached per request shape and recomputed only for rows whose
        ``version`` changed since (one row per bind in a steady stream of alike pods).
        """
        table = self.table
        base = self._resource_scores(pod, rows)
        if table.prefer_taint_total == 0:
            # No PreferNoSchedule taint anywhere: every node gets the full 100 (x3).
            return base + 3 * MAX_NODE_SCORE
        counts = table.prefer_taints[rows]
        max_count = int(counts.max()) if len(counts) else 0
        if max_count == 0:
            return base + 3 * MAX_NODE_SCORE
        return base + 3 * (MAX_NODE_SCORE - counts * MAX_NODE_SCORE // max_count)

    def _resource_scores(self, pod: PodInfo, rows: IntArray) -> IntArray:
        table = self.table
        cpu = pod.requests.get(CPU, 0)
        mem = pod.requests.get(MEMORY, 0)
        key = (pod.non_zero_cpu, pod.non_zero_memory, cpu, mem)
        cache = shape_entry(
            self._score_cache, key, table, limit=SCORE_CACHE_SHAPES, new=_ScoreCache
        )
        stale = rows[cache.versions[rows] != table.version[rows]]
        if len(stale) > SCALAR_ROWS:
            cache.scores[stale] = self._compute_resource_scores(pod, stale, cpu, mem)
            cache.versions[stale] = table.version[stale]
        else:
            # A few rows: plain Python arithmetic beats a dozen numpy calls.
            for row in stale.tolist():
                cache.scores[row] = self._row_resource_score(pod, row, cpu, mem)
                cache.versions[row] = table.version[row]
        return cache.scores[rows]

    def _row_resource_score(self, pod: PodInfo, row: int, cpu: int, mem: int) -> int:
        """``_compute_resource_scores`` for one row, with the same integer/float64 rules."""
        table = self.table
        alloc_cpu = int(table.alloc_cpu[row])
        alloc_mem = int(table.alloc_mem[row])
        cpu_score = _least_scalar(alloc_cpu, int(table.nz_cpu[row]) + pod.non_zero_cpu)
        mem_score = _least_scalar(alloc_mem, int(table.nz_mem[row]) + pod.non_zero_memory)
        weight = (alloc_cpu != 0) + (alloc_mem != 0)
        score = 0 if weight == 0 else (cpu_score + mem_score) // weight
        if cpu or mem:
            if alloc_cpu and alloc_mem:
                cpu_fraction = min((int(table.req_cpu[row]) + cpu) / alloc_cpu, 1.0)
                mem_fraction = min((int(table.req_mem[row]) + mem) / alloc_mem, 1.0)
                score += int((1 - abs((cpu_fraction - mem_fraction) / 2)) * MAX_NODE_SCORE)
            else:
                score += MAX_NODE_SCORE
        return score

    def _compute_resource_scores(
        self, pod: PodInfo, rows: IntArray, cpu: int, mem: int
    ) -> IntArray:
        table = self.table
        scores = _least_allocated(
            table.alloc_cpu[rows], table.nz_cpu[rows] + pod.non_zero_cpu,
            table.alloc_mem[rows], table.nz_mem[rows] + pod.non_zero_memory,
        )  # fmt: skip
        if cpu or mem:
            scores = scores + _balanced(
                table.alloc_cpu[rows], table.req_cpu[rows] + cpu,
                table.alloc_mem[rows], table.req_mem[rows] + mem,
            )  # fmt: skip
        return scores


def _kinds_key(pod: PodInfo, load: Load | None) -> KindsKey | None:
    """The ``_KindsCache`` key of ``pod``'s shape; None when ``load`` was made for this pod
    alone (its outcomes are not cached)."""
    if load is not None and load.version is None:
        return None
    requests = pod.requests
    return (
        requests.get(CPU, 0),
        requests.get(MEMORY, 0),
        requests.get(EPHEMERAL_STORAGE, 0),
        load is not None,
    )


class _KindsCache:
    """Every row's plain-filter kind for one request shape, with the row versions (of the
    table and, with nominated pods, of their load) it was computed from (-1: never)."""

    __slots__ = ("epoch", "fitted", "kinds", "load_version", "seen", "table_version")

    def __init__(self, epoch: int, capacity: int) -> None:
        self.epoch = epoch
        self.kinds: IntArray = np.zeros(capacity, np.int64)
        self.table_version: IntArray = np.full(capacity, -1, np.int64)
        self.load_version: IntArray = np.full(capacity, -1, np.int64)
        self.fitted = False
        """Whether some row fitted when the kinds were last brought up to date."""
        self.seen: tuple[int, ...] = (-1, -1)
        """``RowChanges`` counters (table, nominated load) when every row was last
        brought up to date (-1: never)."""


class _ScoreCache:
    """Resource scores of every row for one request shape, with the row versions they saw."""

    __slots__ = ("epoch", "scores", "versions")

    def __init__(self, epoch: int, capacity: int) -> None:
        self.epoch = epoch
        self.scores: IntArray = np.zeros(capacity, np.int64)
        self.versions: IntArray = np.full(capacity, -1, np.int64)


def _least_scalar(capacity: int, requested: int) -> int:
    """``_least_score`` for one value."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _least_score(capacity: IntArray, requested: IntArray) -> IntArray:
    """Upstream ``leastRequestedScore``: 0 for no capacity or an overfull node."""
    if capacity.min() > 0 and bool((requested <= capacity).all()):
        # The common case (every node has room) needs no masking.
        return (capacity - requested) * MAX_NODE_SCORE // capacity
    safe = np.where(capacity == 0, 1, capacity)
    score = (capacity - requested) * MAX_NODE_SCORE // safe
    return np.where((capacity == 0) | (requested > capacity), 0, score)


def _least_allocated(
    alloc_cpu: IntArray, req_cpu: IntArray, alloc_mem: IntArray, req_mem: IntArray
) -> IntArray:
    """Upstream ``leastResourceScorer`` with cpu and memory at weight 1 each."""
    cpu_score = _least_score(alloc_cpu, req_cpu)
    mem_score = _least_score(alloc_mem, req_mem)
    if alloc_cpu.min() > 0 and alloc_mem.min() > 0:
        return (cpu_score + mem_score) // 2
    has_cpu = alloc_cpu != 0
    has_mem = alloc_mem != 0
    weight = has_cpu.astype(np.int64) + has_mem.astype(np.int64)
    total = np.where(has_cpu, cpu_score, 0) + np.where(has_mem, mem_score, 0)
    return np.where(weight == 0, 0, total // np.where(weight == 0, 1, weight))


def _balanced(
    alloc_cpu: IntArray, req_cpu: IntArray, alloc_mem: IntArray, req_mem: IntArray
) -> IntArray:
    """Upstream ``balancedResourceScorer`` for cpu and memory (float64, truncated)."""
    if alloc_cpu.min() > 0 and alloc_mem.min() > 0:
        cpu_fraction = np.minimum(req_cpu / alloc_cpu, 1.0)
        mem_fraction = np.minimum(req_mem / alloc_mem, 1.0)
        return ((1 - np.abs((cpu_fraction - mem_fraction) / 2)) * MAX_NODE_SCORE).astype(np.int64)
    has_cpu = alloc_cpu != 0
    has_mem = alloc_mem != 0
    cpu_fraction = np.minimum(req_cpu / np.where(has_cpu, alloc_cpu, 1), 1.0)
    mem_fraction = np.minimum(req_mem / np.where(has_mem, alloc_mem, 1), 1.0)
    std = np.abs((cpu_fraction - mem_fraction) / 2)
    both = has_cpu & has_mem
    score = np.where(both, (1 - std) * MAX_NODE_SCORE, float(MAX_NODE_SCORE))
    return score.astype(np.int64)


__all__ = ["Code", "FastPath", "FastResult", "is_plain_pod"]
