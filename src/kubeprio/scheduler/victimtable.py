"""Per-node pods in upstream importance order, as padded numpy columns, for preemption.

Upstream's ``SelectVictimsOnNode`` sorts a node's lower-priority pods by
``util.MoreImportantPod`` (higher priority first, then earlier start) and reprieves them
in that order. The ``VictimTable`` keeps every node's pods already in that order, so the
indexed preemption path (``fastpreemption``) reads, for many nodes at once, the few pods
of each node from a ``(FIELDS, width, rows)`` int64 block instead of sorting and
filtering per node in Python.

Row ``i`` is row ``i`` of the cache's ``NodeTable`` (the ``i``-th node of the snapshot).
Each row holds ``count[i]`` entries, sorted by ``(-priority, start, seq)``:

* ``start`` is ``status.startTime`` in nanoseconds, as ``preemption.pod_start_nanos``
  computes it. A pod without a start time counts as *now* upstream, and now moves, so
  such a pod is stored with ``STARTLESS`` (after every started pod of its priority) and
  the row is re-sorted at decision time when a started pod of the row starts at or after
  now (``needs_resort``) — rare: start times are in the past.
* ``seq`` is the order of ``NodeInfo.pods`` (upstream's stable tie order): a global
  counter taken when the cache appends the pod to the node. Upstream removes a pod by
  moving the node's last pod into its place, and updates one by removing and appending
  it, so the moved pod takes the removed pod's ``seq`` (``remove``, ``move_to_end``):
  sorting a node's entries by ``seq`` always lists them in ``NodeInfo.pods`` order.

Entries past ``count[i]`` are padding (priority ``PAD_PRIORITY``, never "lower" than a
preemptor, and zero requests). The cache calls ``add``/``remove``/``move_to_end`` when it
changes a node's pod list, ``attach`` when a node gets its row and ``relayout`` after the
``NodeTable`` renumbers rows: each is O(pods on that node), never O(cluster). Pods on
nodes without a row (placeholders) are kept per node name until the row exists.

Driven by ``cache.Cache`` only; no clock, no I/O.
"""

from __future__ import annotations

import bisect
from typing import Any, Final, NamedTuple, overload

import numpy as np
import numpy.typing as npt

from kubeprio import counts
from kubeprio.api.model import INT64_MAX
from kubeprio.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubeprio.clock import parse_rfc3339
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nodetable import NodeTable
from kubeprio.scheduler.rowchanges import RowChanges

IntArray = npt.NDArray[np.int64]

PRIO: Final = 0
START: Final = 1
SEQ: Final = 2
CPU_FIELD: Final = 3
MEM_FIELD: Final = 4
EPH_FIELD: Final = 5
SLOT: Final = 6
FIELDS: Final = 7
STARTLESS: Final = INT64_MAX
"""Stored start of a pod without ``status.startTime`` (it counts as now upstream)."""
PAD_PRIORITY: Final = INT64_MAX
NO_START: Final = -(2**63)
INITIAL_WIDTH: Final = 8
_PAD: Final = (PAD_PRIORITY, 0, INT64_MAX, 0, 0, 0, -1)
_PAD_COLUMN: Final = np.array(_PAD, np.int64)[:, None, None]


def start_nanos(pod: PodInfo) -> int:
    """``preemption.pod_start_nanos`` with ``STARTLESS`` for a pod without a start time."""
    status = pod.pod.status
    start = status.start_time if status is not None else None
    if not start:
        return STARTLESS
    return round(parse_rfc3339(start) * 1_000_000_000)


class _Entry(NamedTuple):
    """One pod on a node; tuples sort in importance order."""

    neg_priority: int
    start: int
    seq: int
    slot: int


def _values(entry: _Entry, pod: PodInfo) -> tuple[int, ...]:
    """The ``FIELDS`` of one entry."""
    requests = pod.requests
    return (
        -entry.neg_priority,
        entry.start,
        entry.seq,
        requests.get(CPU, 0),
        requests.get(MEMORY, 0),
        requests.get(EPHEMERAL_STORAGE, 0),
        entry.slot,
    )


class VictimTable:
    """Every node's pods in importance order, as a ``(FIELDS, width, rows)`` int64 block."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.width = INITIAL_WIDTH
        self.capacity = 0
        self.data: IntArray = np.zeros((FIELDS, self.width, 0), np.int64)
        """``data[field, j, row]``: a field of the row's ``j``-th pod in importance order.
        Rows are the last axis, so the rows a decision gathers form contiguous vectors."""
        self.count: IntArray = np.zeros(0, np.int64)
        self.startless: IntArray = np.zeros(0, np.int64)
        """Entries of the row without a start time."""
        self.latest_start: IntArray = np.zeros(0, np.int64)
        """Latest start among the row's started entries (``NO_START`` if none)."""
        self.version: IntArray = np.zeros(0, np.int64)
        """Bumped on every change to a row (``fastpreemption`` caches per-row outcomes)."""
        self.changes = RowChanges()
        """Hands out ``version`` values and remembers which rows got them."""
        self.pods: list[PodInfo | None] = []
        """Slot -> PodInfo (the object in ``NodeInfo.pods``)."""
        self.namespace_pods: dict[str, int] = {}
        """Pods per namespace (a PDB in a namespace without pods selects none)."""
        self._free: list[int] = []
        self._entries: dict[str, list[_Entry]] = {}
        self._where: dict[str, tuple[str, _Entry]] = {}
        self._seq = 0

    # --- maintenance (the cache calls these) ---------------------------------------------------

    def add(self, node_name: str, pod: PodInfo) -> None:
        """``pod`` was appended to ``node_name``'s pod list."""
        slot = self._free.pop() if self._free else len(self.pods)
        if slot == len(self.pods):
            self.pods.append(pod)
        else:
            self.pods[slot] = pod
        self._seq += 1
        self._count_namespace(pod, 1)
        self._place(node_name, _Entry(-pod.priority, start_nanos(pod), self._seq, slot), pod)

    def remove(self, node_name: str, pod: PodInfo, moved: PodInfo | None = None) -> None:
        """``pod`` left ``node_name``'s pod list and ``moved`` (the list's last pod, if
        it was not ``pod``) took its place, as upstream's ``removeFromSlice`` swaps."""
        found = self._where.pop(pod.uid or pod.key, None)
        if found is None:
            return
        name, entry = found
        self._take(name, entry)
        self.pods[entry.slot] = None
        self._free.append(entry.slot)
        self._count_namespace(pod, -1)
        if moved is not None:
            self._reorder(name, moved, entry.seq)

    def move_to_end(
        self, node_name: str, old: PodInfo, new: PodInfo, moved: PodInfo | None
    ) -> None:
        """Upstream ``updatePod``: ``new`` replaced ``old`` at the end of the node's list
        and ``moved`` (the former last pod, None if that was ``old``) took ``old``'s place.
        ``new`` counts as ``old`` (same requests); its start time may differ."""
        found = self._where.pop(old.uid or old.key, None)
        if found is None:
            return
        name, entry = found
        self.pods[entry.slot] = new
        seq = entry.seq
        if moved is not None:
            self._seq += 1
            seq = self._seq
        updated = _Entry(-new.priority, start_nanos(new), seq, entry.slot)
        if updated == entry:
            # Still last, same start: the row does not change, only the object.
            self._where[new.uid or new.key] = (name, entry)
            return
        if updated.start == entry.start:
            self._move_entry(name, entry, updated, new)
        else:
            self._take(name, entry)
            self._place(name, updated, new)
        if moved is not None:
            self._reorder(name, moved, entry.seq)

    def _reorder(self, name: str, pod: PodInfo, seq: int) -> None:
        """``pod`` took the list position whose order is ``seq``."""
        found = self._where.pop(pod.uid or pod.key, None)
        if found is None:
            return
        _, entry = found
        self._move_entry(name, entry, entry._replace(seq=seq), pod)

    def _move_entry(self, name: str, old: _Entry, new: _Entry, pod: PodInfo) -> None:
        """Replace ``old`` by ``new`` (same start, same requests) in the node's sorted
        entries and row: one shift of the entries between their two positions."""
        entries = self._entries[name]
        source = bisect.bisect_left(entries, old)
        del entries[source]
        target = bisect.bisect_right(entries, new)
        entries.insert(target, new)
        self._where[pod.uid or pod.key] = (name, new)
        row = self.table.index.get(name)
        if row is None or row >= self.capacity:
            return
        block = self.data[:, :, row].T
        if target < source:
            block[target + 1 : source + 1] = block[target:source]
        elif target > source:
            block[source:target] = block[source + 1 : target + 1]
        block[target] = _values(new, pod)
        self.version[row] = self.changes.bump(row)

    def _place(self, name: str, entry: _Entry, pod: PodInfo) -> None:
        """Insert ``entry`` into the node's sorted entries and its row."""
        entries = self._entries.setdefault(name, [])
        position = bisect.bisect_right(entries, entry)
        entries.insert(position, entry)
        self._where[pod.uid or pod.key] = (name, entry)
        row = self.table.index.get(name)
        if row is None:
            return
        if row >= self.capacity or len(entries) > self.width:
            self._write_row(name)
            return
        # Shift the row's tail right by one and store the entry (two numpy calls).
        k = len(entries) - 1
        block = self.data[:, :, row].T
        if position < k:
            block[position + 1 : k + 1] = block[position:k]
        block[position] = _values(entry, pod)
        self.count[row] = k + 1
        self.version[row] = self.changes.bump(row)
        if entry.start == STARTLESS:
            self.startless[row] += 1
        elif entry.start > self.latest_start[row]:
            self.latest_start[row] = entry.start

    def _take(self, name: str, entry: _Entry) -> None:
        """Remove ``entry`` from the node's sorted entries and its row."""
        entries = self._entries[name]
        position = bisect.bisect_left(entries, entry)
        del entries[position]
        if not entries:
            del self._entries[name]
        row = self.table.index.get(name)
        if row is None or row >= self.capacity:
            return
        k = len(entries)
        block = self.data[:, :, row].T
        if position < k:
            block[position:k] = block[position + 1 : k + 1]
        block[k] = _PAD
        self.count[row] = k
        self.version[row] = self.changes.bump(row)
        if entry.start == STARTLESS:
            self.startless[row] -= 1
        elif entry.start == self.latest_start[row]:
            starts = block[:k, START]
            started = starts[starts != STARTLESS]
            self.latest_start[row] = started.max() if len(started) else NO_START

    def drop_node(self, node_name: str) -> None:
        """Forget every pod of a node the cache dropped together with its pods."""
        for entry in self._entries.pop(node_name, []):
            pod = self.pods[entry.slot]
            if pod is not None:
                self._where.pop(pod.uid or pod.key, None)
                self._count_namespace(pod, -1)
            self.pods[entry.slot] = None
            self._free.append(entry.slot)

    def _count_namespace(self, pod: PodInfo, delta: int) -> None:
        counts.adjust(self.namespace_pods, pod.pod.metadata.namespace or "", delta)

    def attach(self, node_name: str) -> None:
        """The node got a ``NodeTable`` row: write its pods there."""
        self._write_row(node_name)

    def relayout(self) -> None:
        """The ``NodeTable`` renumbered its rows: rewrite every row (O(pods), rare)."""
        self._ensure_capacity(self.table.capacity)
        self.data[:] = _PAD_COLUMN
        self.count[:] = 0
        self.startless[:] = 0
        self.latest_start[:] = NO_START
        for name in self.table.names:
            self._write_row(name)

    # --- layout ---------------------------------------------------------------------------------

    def _ensure_capacity(self, rows: int) -> None:
        if rows <= self.capacity:
            return
        capacity = max(rows, 2 * self.capacity, 64)
        data = np.empty((FIELDS, self.width, capacity), np.int64)
        data[:] = _PAD_COLUMN
        data[:, :, : self.capacity] = self.data
        self.data = data
        for name in ("count", "startless", "latest_start", "version"):
            column = np.zeros(capacity, np.int64)
            old: IntArray = getattr(self, name)
            column[: self.capacity] = old
            if name == "latest_start":
                column[self.capacity :] = NO_START
            setattr(self, name, column)
        self.capacity = capacity

    def _ensure_width(self, width: int) -> None:
        if width <= self.width:
            return
        new_width = max(width, 2 * self.width)
        data = np.empty((FIELDS, new_width, self.capacity), np.int64)
        data[:] = _PAD_COLUMN
        data[:, : self.width] = self.data
        self.data = data
        self.width = new_width

    def _write_row(self, node_name: str) -> None:
        """Copy a node's sorted entries into its row (nothing if it has no row yet)."""
        row = self.table.index.get(node_name)
        if row is None:
            return
        self._ensure_capacity(self.table.capacity)
        entries = self._entries.get(node_name, ())
        k = len(entries)
        self._ensure_width(k)
        values = []
        startless = 0
        latest = NO_START
        for entry in entries:
            values.append(_values(entry, self.pod(entry.slot)))
            if entry.start == STARTLESS:
                startless += 1
            elif entry.start > latest:
                latest = entry.start
        block = self.data[:, :, row].T
        if k:
            block[:k] = values
        old = int(self.count[row])
        if old > k:
            block[k:old] = _PAD
        self.count[row] = k
        self.startless[row] = startless
        self.latest_start[row] = latest
        self.version[row] = self.changes.bump(row)

    # --- reading ---------------------------------------------------------------------------------

    @overload
    def needs_resort(self, rows: int, now_nanos: int) -> bool: ...

    @overload
    def needs_resort(self, rows: IntArray, now_nanos: int) -> npt.NDArray[np.bool_]: ...

    def needs_resort(self, rows: Any, now_nanos: int) -> Any:
        """Rows (or the row) whose stored order may differ from importance order at
        ``now_nanos``."""
        return (self.startless[rows] > 0) & (self.latest_start[rows] >= now_nanos)

    def pod(self, slot: int) -> PodInfo:
        """The PodInfo stored in ``slot``."""
        pod = self.pods[slot]
        assert pod is not None
        return pod
