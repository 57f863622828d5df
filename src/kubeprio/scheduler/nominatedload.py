"""Requests of nominated pods per node row, for filtering plain pods with nominated pods.

Upstream's ``RunFilterPluginsWithNominatedPods`` adds the pods nominated to a node with a
priority at least the incoming pod's (not the pod itself) before filtering it (semantics
§5). For a *plain* pod (``fastpath.is_plain_pod``) in a cluster without inter-pod
(anti-)affinity, only NodeResourcesFit can see them — InterPodAffinity and
PodTopologySpread skip such a pod at PreFilter, and it has no host ports — so "with
nominated pods" is "with their requests and their count added", and the second pass
without them cannot change a rejection (resources only shrink the room).

``NominatedLoad`` keeps, per ``NodeTable`` row, the summed requests and the count of the
pods nominated there (the ``Nominator`` reports every change, O(1) each), plus a
``version`` per row bumped on every change (``fastpreemption`` caches per-row outcomes).
The load for one incoming pod is those totals, less the few nominated pods of lower
priority and the pod itself: usually no work at all.

Owned by the ``Scheduler`` (fast path on); read by ``fastpath`` and ``fastpreemption``.
No clock, no I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Final

import numpy as np
import numpy.typing as npt

from kubeprio import counts
from kubeprio.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nodetable import NodeTable
from kubeprio.scheduler.rowchanges import RowChanges

IntArray = npt.NDArray[np.int64]
INITIAL_SLOTS: Final = 64
_SLOT_COLUMNS: Final = ("priority", "cpu", "mem", "eph", "row")
ROOM_CPU: Final = 0
ROOM_MEM: Final = 1
ROOM_EPH: Final = 2
ROOM_PODS: Final = 3


@dataclasses.dataclass(frozen=True, slots=True)
class Load:
    """Per node row (``NodeTable`` order): requests and count of the nominated pods.

    ``room``, when given, is the allocatable less these: rows ``cpu``, ``mem``, ``eph``
    and ``pods`` (``ROOM_*``), so that a fit check costs what it costs without nominated
    pods. The arrays may be the ``NominatedLoad``'s own: read them, never write them."""

    cpu: IntArray
    mem: IntArray
    eph: IntArray
    pods: IntArray
    room: IntArray | None = None
    version: IntArray | None = None
    """For the load of every nominated pod: the ``NominatedLoad``'s per-row versions
    (callers cache per-row results against them); None for a load made for one pod."""
    changes: RowChanges | None = None
    """With ``version``: the log of the rows those versions were handed to."""


class NominatedLoad:
    """Nominated pods as slots (priority, requests, node row) and per-row totals."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self._size = 0
        self._uids: dict[str, int] = {}
        self._nodes: list[str] = []
        self._free: list[int] = []
        self.priority: IntArray = np.zeros(INITIAL_SLOTS, np.int64)
        self.cpu: IntArray = np.zeros(INITIAL_SLOTS, np.int64)
        self.mem: IntArray = np.zeros(INITIAL_SLOTS, np.int64)
        self.eph: IntArray = np.zeros(INITIAL_SLOTS, np.int64)
        self.row: IntArray = np.full(INITIAL_SLOTS, -1, np.int64)
        self.active: npt.NDArray[np.bool_] = np.zeros(INITIAL_SLOTS, np.bool_)
        self.totals: IntArray = np.zeros((4, 0), np.int64)
        """Per row: summed cpu, memory, ephemeral storage and count of nominated pods."""
        self.version: IntArray = np.zeros(0, np.int64)
        """Per row: bumped whenever the pods nominated to it change."""
        self.changes = RowChanges()
        """Hands out ``version`` values and remembers which rows got them."""
        self._resolved = (-1, -1)
        """(table epoch, table size) the rows were resolved against."""
        self._priorities: dict[int, int] = {}
        """Priority -> how many nominated pods have it (a handful of distinct values)."""
        self._all_load: Load | None = None
        """``load``'s common case (every nominated pod counts): views of the totals and
        of ``_room``; dropped with either array."""
        self._room: IntArray | None = None
        """Per row: allocatable cpu, memory, ephemeral storage and pods less ``totals``
        (``ROOM_*`` order, the totals' own), kept current with them by ``_place``."""
        self._room_alloc_version = -1
        """The table's ``alloc_version`` when ``_room`` was computed."""

    def __len__(self) -> int:
        return len(self._uids)

    # --- the Nominator's observer ---------------------------------------------------------------

    def nominated(self, pod: PodInfo, node_name: str) -> None:
        """``pod`` is now nominated to ``node_name``."""
        self._current()
        self.unnominated(pod.uid)
        if self._free:
            slot = self._free.pop()
            self._nodes[slot] = node_name
        else:
            slot = self._size
            self._size += 1
            self._nodes.append(node_name)
            if slot == len(self.priority):
                self._grow()
        self._uids[pod.uid] = slot
        counts.adjust(self._priorities, pod.priority, 1)
        requests = pod.requests
        self.priority[slot] = pod.priority
        self.cpu[slot] = requests.get(CPU, 0)
        self.mem[slot] = requests.get(MEMORY, 0)
        self.eph[slot] = requests.get(EPHEMERAL_STORAGE, 0)
        self.active[slot] = True
        self.row[slot] = -1
        self._place(slot, self.table.index.get(node_name, -1))

    def unnominated(self, uid: str) -> None:
        """The pod with ``uid`` is no longer nominated."""
        if uid not in self._uids:
            return
        self._current()
        slot = self._uids.pop(uid)
        counts.adjust(self._priorities, int(self.priority[slot]), -1)
        self._place(slot, -1)
        self.active[slot] = False
        self._nodes[slot] = ""
        self._free.append(slot)

    def _place(self, slot: int, row: int) -> None:
        """Move ``slot``'s requests from its current row (if any) to ``row`` (if any);
        the totals are current (``_current``)."""
        old = int(self.row[slot])
        if old == row:
            return
        amounts = (int(self.cpu[slot]), int(self.mem[slot]), int(self.eph[slot]), 1)
        room = self._room
        for target, sign in ((old, -1), (row, 1)):
            if target < 0:
                continue
            for i, amount in enumerate(amounts):
                self.totals[i, target] += sign * amount
                if room is not None:
                    room[i, target] -= sign * amount
            self.version[target] = self.changes.bump(target)
        self.row[slot] = row

    def _grow(self) -> None:
        capacity = 2 * len(self.priority)
        for name in (*_SLOT_COLUMNS, "active"):
            old = getattr(self, name)
            column = np.zeros(capacity, old.dtype)
            if name == "row":
                column[:] = -1
            column[: len(old)] = old
            setattr(self, name, column)

    def _reset_totals(self) -> None:
        """Recompute the per-row totals (the table grew or renumbered its rows)."""
        capacity = self.table.capacity
        self.totals = np.zeros((4, capacity), np.int64)
        self._all_load = None
        self._room = None
        old_versions = self.version
        self.version = np.zeros(capacity, np.int64)
        self.version[: min(len(old_versions), capacity)] = old_versions[:capacity]
        index = self.table.index
        for slot in self._uids.values():
            row = index.get(self._nodes[slot], -1)
            self.row[slot] = row
            if row >= 0:
                self.totals[0, row] += self.cpu[slot]
                self.totals[1, row] += self.mem[slot]
                self.totals[2, row] += self.eph[slot]
                self.totals[3, row] += 1
        # Rows may have been renumbered: every row counts as changed.
        self.version[:] = self.changes.bump_all()
        self._resolved = (self.table.epoch, self.table.size)

    # --- reading ---------------------------------------------------------------------------------

    def _current(self) -> None:
        """Re-read node rows after the table renumbered, grew or gained nodes (rare)."""
        if (self.table.epoch, self.table.size) != self._resolved or self.totals.shape[
            1
        ] < self.table.capacity:
            self._reset_totals()

    def _lowest_priority(self) -> int:
        return min(self._priorities)

    def _all(self, n: int) -> Load:
        """Views of the totals of rows ``0..n`` and of the room they leave. The room is
        recomputed (one vector operation) only after an allocatable changed; nominations
        adjust it in place."""
        table = self.table
        if self._room is None or self._room_alloc_version != table.alloc_version:
            allocatable = np.stack(
                (table.alloc_cpu, table.alloc_mem, table.alloc_eph, table.alloc_pods)
            )
            width = min(allocatable.shape[1], self.totals.shape[1])
            self._room = allocatable[:, :width] - self.totals[:, :width]
            self._room_alloc_version = table.alloc_version
            self._all_load = None
        if self._all_load is None or len(self._all_load.pods) != n:
            totals = self.totals
            self._all_load = Load(
                totals[0, :n],
                totals[1, :n],
                totals[2, :n],
                totals[3, :n],
                room=self._room[:, :n],
                version=self.version[:n],
                changes=self.changes,
            )
        return self._all_load

    def row_of(self, uid: str) -> int:
        """The row the pod with ``uid`` is nominated to (-1: none, or not a table row)."""
        self._current()
        slot = self._uids.get(uid)
        return -1 if slot is None else int(self.row[slot])

    def row_versions(self) -> IntArray:
        """``version`` for the table's current rows."""
        self._current()
        return self.version

    def load(self, priority: int, exclude_uid: str) -> Load | None:
        """Per row, the pods nominated with priority >= ``priority`` (``exclude_uid`` left
        out, as upstream skips the incoming pod); None when nothing is nominated."""
        if not self._uids:
            return None
        self._current()
        n = self.table.size
        if exclude_uid not in self._uids and priority <= self._lowest_priority():
            # Every nominated pod counts (the common case: regular pods while higher
            # ones wait for their victims): the totals themselves, no array work.
            return self._all(n)
        k = self._size
        low = self.active[:k] & (self.priority[:k] < priority) & (self.row[:k] >= 0)
        own = self._uids.get(exclude_uid)
        if own is not None and self.row[own] >= 0 and self.priority[own] >= priority:
            low[own] = True
        totals = self.totals[:, :n]
        if low.any():
            totals = totals.copy()
            rows = self.row[:k][low]
            for i, column in enumerate((self.cpu, self.mem, self.eph)):
                np.subtract.at(totals[i], rows, column[:k][low])
            np.subtract.at(totals[3], rows, 1)
        return Load(totals[0], totals[1], totals[2], totals[3])
