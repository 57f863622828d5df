"""Requests of nominated pods per node row, for filtering plain pods with nominated pods.

Upstream's ``RunFilterPluginsWithNominatedPods`` adds the pods nominated to a node with a
priority at least the incoming pod's (not the pod itself) before filtering it (semantics
§5). For a *plain* pod (``fastpath.is_plain_pod``) in a cluster without inter-pod
(anti-)affinity, only NodeResourcesFit can see them — InterPodAffinity and
PodTopologySpread skip such a pod at PreFilter, and it has no host ports — so "with
nominated pods" is "with their requests and their count added", and the second pass
without them cannot change a rejection (resources only shrink the room). ``NominatedLoad``
keeps the nominations as numpy columns (the ``Nominator`` reports every change to it) so
that the per-row load for one priority is a few vectorised operations, not a Python loop
over the nominated nodes.

Owned by the ``Scheduler`` (fast path on); read by ``fastpath`` and ``fastpreemption``.
No clock, no I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Final

import numpy as np
import numpy.typing as npt

from kubeprio.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nodetable import NodeTable

IntArray = npt.NDArray[np.int64]
INITIAL_SLOTS: Final = 64


@dataclasses.dataclass(frozen=True, slots=True)
class Load:
    """Per node row (``NodeTable`` order): requests and count of the nominated pods."""

    cpu: IntArray
    mem: IntArray
    eph: IntArray
    pods: IntArray


class NominatedLoad:
    """Nominated pods as columns: priority, cpu, memory, ephemeral storage, node row."""

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
        self._resolved = (-1, -1)
        """(table epoch, table size) the rows were resolved against."""

    def __len__(self) -> int:
        return len(self._uids)

    # --- the Nominator's observer ---------------------------------------------------------------

    def nominated(self, pod: PodInfo, node_name: str) -> None:
        """``pod`` is now nominated to ``node_name``."""
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
        requests = pod.requests
        self.priority[slot] = pod.priority
        self.cpu[slot] = requests.get(CPU, 0)
        self.mem[slot] = requests.get(MEMORY, 0)
        self.eph[slot] = requests.get(EPHEMERAL_STORAGE, 0)
        self.row[slot] = self.table.index.get(node_name, -1)
        self.active[slot] = True

    def unnominated(self, uid: str) -> None:
        """The pod with ``uid`` is no longer nominated."""
        slot = self._uids.pop(uid, None)
        if slot is None:
            return
        self.active[slot] = False
        self.row[slot] = -1
        self._nodes[slot] = ""
        self._free.append(slot)

    def _grow(self) -> None:
        capacity = 2 * len(self.priority)
        for name in ("priority", "cpu", "mem", "eph", "row", "active"):
            old = getattr(self, name)
            column = np.zeros(capacity, old.dtype)
            if name == "row":
                column[:] = -1
            column[: len(old)] = old
            setattr(self, name, column)

    # --- reading ---------------------------------------------------------------------------------

    def _resolve_rows(self) -> None:
        """Re-read node rows after the table renumbered or grew (rare)."""
        stamp = (self.table.epoch, self.table.size)
        if stamp == self._resolved:
            return
        index = self.table.index
        for uid_slot in self._uids.values():
            self.row[uid_slot] = index.get(self._nodes[uid_slot], -1)
        self._resolved = stamp

    def load(self, priority: int, exclude_uid: str) -> Load | None:
        """Per row, the pods nominated with priority >= ``priority`` (``exclude_uid`` left
        out, as upstream skips the incoming pod); None when there are none."""
        if not self._uids:
            return None
        self._resolve_rows()
        k = self._size
        mask = self.active[:k] & (self.priority[:k] >= priority) & (self.row[:k] >= 0)
        own = self._uids.get(exclude_uid)
        if own is not None:
            mask[own] = False
        if not mask.any():
            return None
        rows = self.row[:k][mask]
        n = self.table.size
        columns = []
        for values in (self.cpu, self.mem, self.eph):
            total = np.zeros(n, np.int64)
            np.add.at(total, rows, values[:k][mask])
            columns.append(total)
        pods = np.bincount(rows, minlength=n).astype(np.int64)
        return Load(columns[0], columns[1], columns[2], pods)
