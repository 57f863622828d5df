"""Per-node numeric columns (numpy) mirroring the cache, for vectorised filtering and scoring.

Row ``i`` is the ``i``-th node of ``Cache.node_infos()``. The cache refreshes a row after
every change to that node (pod added/removed, node updated): a handful of scalar stores,
so keeping the table current is O(1) per change, never O(pods). A node removal rebuilds
the table (rare, O(nodes)). Only the resources the default profile filters and scores on
are columns: cpu (millicores), memory, ephemeral storage, pod count, the non-zero cpu and
memory used for scoring, plus node-level flags (unschedulable, hard taints, the number of
PreferNoSchedule taints, extended resources present).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from kubeprio.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubeprio.api.taints import LOST_NODE_TAINT_KEYS, TAINT_EFFECT_NO_EXECUTE
from kubeprio.scheduler.rowchanges import RowChanges
from kubeprio.scheduler.snapshot import NodeInfo

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
BASIC_RESOURCES: Final = frozenset({CPU, MEMORY, EPHEMERAL_STORAGE, PODS})
HARD_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})
INITIAL_CAPACITY: Final = 64


class NodeTable:
    """Columns of node capacity and usage, indexed like the cache's node list."""

    _INT_COLUMNS: Final = (
        "alloc_cpu",
        "alloc_mem",
        "alloc_eph",
        "alloc_pods",
        "req_cpu",
        "req_mem",
        "req_eph",
        "pods",
        "nz_cpu",
        "nz_mem",
        "prefer_taints",
        "version",
    )
    _BOOL_COLUMNS: Final = ("unschedulable", "hard_taint", "extended", "blocked")

    def __init__(self) -> None:
        self.size = 0
        self.capacity = INITIAL_CAPACITY
        self.index: dict[str, int] = {}
        self.names: list[str] = []
        self.alloc_cpu: IntArray = np.zeros(0, np.int64)
        self.alloc_mem: IntArray = np.zeros(0, np.int64)
        self.alloc_eph: IntArray = np.zeros(0, np.int64)
        self.alloc_pods: IntArray = np.zeros(0, np.int64)
        self.req_cpu: IntArray = np.zeros(0, np.int64)
        self.req_mem: IntArray = np.zeros(0, np.int64)
        self.req_eph: IntArray = np.zeros(0, np.int64)
        self.pods: IntArray = np.zeros(0, np.int64)
        self.nz_cpu: IntArray = np.zeros(0, np.int64)
        self.nz_mem: IntArray = np.zeros(0, np.int64)
        self.prefer_taints: IntArray = np.zeros(0, np.int64)
        self.version: IntArray = np.zeros(0, np.int64)
        """Bumped on every change to a row: lets callers cache per-row results."""
        self.epoch = 0
        """Bumped when rows are renumbered or reallocated: every cached row result is stale."""
        self.changes = RowChanges()
        """Hands out ``version`` values and remembers which rows got them."""
        self.alloc_version = 0
        """Bumped whenever some row's allocatable changes (or rows are renumbered)."""
        self.prefer_taint_total = 0
        self.unschedulable: BoolArray = np.zeros(0, np.bool_)
        self.hard_taint: BoolArray = np.zeros(0, np.bool_)
        self.extended: BoolArray = np.zeros(0, np.bool_)
        self.blocked: BoolArray = np.zeros(0, np.bool_)
        """Unschedulable or hard-tainted: a plain pod (no tolerations) never fits."""
        self._blocked_rows = 0
        self._lost_rows: set[int] = set()
        # Rows with a ``NoExecute`` not-ready or unreachable taint (a lost node): the 300 s
        # tolerations every pod gets from admission tolerate it, so such pods are plain only
        # while there is none (``fastpath.is_plain_pod``). Only that is read: a set, not a column.
        self._allocate(INITIAL_CAPACITY)

    def _allocate(self, capacity: int) -> None:
        self.epoch += 1
        self.alloc_version += 1
        for name in self._INT_COLUMNS:
            column = np.zeros(capacity, np.int64)
            old: IntArray = getattr(self, name)
            column[: min(len(old), capacity)] = old[:capacity]
            setattr(self, name, column)
        for name in self._BOOL_COLUMNS:
            flags = np.zeros(capacity, np.bool_)
            old_flags: BoolArray = getattr(self, name)
            flags[: min(len(old_flags), capacity)] = old_flags[:capacity]
            setattr(self, name, flags)
        self.capacity = capacity

    @property
    def any_blocked(self) -> bool:
        """Whether some row is unschedulable or hard-tainted (else that mask is skipped)."""
        return self._blocked_rows > 0

    @property
    def any_lost_node_taint(self) -> bool:
        """Whether some row carries a lost node's ``NoExecute`` taint."""
        return bool(self._lost_rows)

    def rebuild(self, nodes: Sequence[NodeInfo]) -> None:
        """Recreate every row from ``nodes`` (after a node was removed)."""
        self.epoch += 1
        self.alloc_version += 1
        self.prefer_taint_total = 0
        self.prefer_taints[:] = 0
        self.size = 0
        self._blocked_rows = 0
        self.blocked[:] = False
        self._lost_rows.clear()
        self.index.clear()
        self.names.clear()
        if len(nodes) > self.capacity:
            self._allocate(max(len(nodes), 2 * self.capacity))
        for node in nodes:
            self.append(node)

    def append(self, node: NodeInfo) -> int:
        """Add a row for a node new to the table."""
        if self.size == self.capacity:
            self._allocate(2 * self.capacity)
        row = self.size
        self.size += 1
        self.index[node.name] = row
        self.names.append(node.name)
        self.refresh_node(node)
        return row

    def refresh_node(self, node: NodeInfo) -> None:
        """Copy a node's allocatable resources, flags and usage into its row."""
        row = self.index.get(node.name)
        if row is None:
            return
        allocatable = node.allocatable
        amounts = (
            allocatable.get(CPU, 0),
            allocatable.get(MEMORY, 0),
            allocatable.get(EPHEMERAL_STORAGE, 0),
            allocatable.get(PODS, 0),
        )
        columns = (self.alloc_cpu, self.alloc_mem, self.alloc_eph, self.alloc_pods)
        if any(column[row] != amount for column, amount in zip(columns, amounts, strict=True)):
            for column, amount in zip(columns, amounts, strict=True):
                column[row] = amount
            self.alloc_version += 1
        self.extended[row] = any(name not in BASIC_RESOURCES for name in allocatable)
        spec = node.node.spec if node.node is not None else None
        self.unschedulable[row] = bool(spec and spec.unschedulable)
        taints = (spec.taints if spec else None) or ()
        prefer = sum(1 for taint in taints if taint.effect == "PreferNoSchedule")
        self.prefer_taint_total += prefer - int(self.prefer_taints[row])
        self.prefer_taints[row] = prefer
        self.hard_taint[row] = any(taint.effect in HARD_EFFECTS for taint in taints)
        blocked = bool(self.unschedulable[row] or self.hard_taint[row])
        if blocked != bool(self.blocked[row]):
            self._blocked_rows += 1 if blocked else -1
            self.blocked[row] = blocked
        if any(
            taint.effect == TAINT_EFFECT_NO_EXECUTE and taint.key in LOST_NODE_TAINT_KEYS
            for taint in taints
        ):
            self._lost_rows.add(row)
        else:
            self._lost_rows.discard(row)
        self.refresh_usage(node)

    def refresh_usage(self, node: NodeInfo) -> None:
        """Copy a node's requested resources and pod count into its row."""
        row = self.index.get(node.name)
        if row is None:
            return
        requested = node.requested
        self.req_cpu[row] = requested.get(CPU, 0)
        self.req_mem[row] = requested.get(MEMORY, 0)
        self.req_eph[row] = requested.get(EPHEMERAL_STORAGE, 0)
        self.pods[row] = len(node.pods)
        self.nz_cpu[row] = node.non_zero_cpu
        self.nz_mem[row] = node.non_zero_memory
        self.version[row] = self.changes.bump(row)
