"""Indexed preemption: upstream's DefaultPreemption decision for plain pods, vectorised.

The ``preemption.Evaluator`` runs upstream's algorithm node by node in Python: clone the
node, remove every lower-priority pod, run the filters, add the pods back one by one in
importance order and filter again. For a *plain* preemptor (``fastpath.is_plain_pod``) in
a cluster without inter-pod (anti-)affinity and without PodDisruptionBudgets that select
any pod, the default filters on a node reduce to resource arithmetic
(``nodeunschedulable``, ``tainttoleration`` and ``noderesources/fit`` over the node's
requests, plus the requests of pods nominated there with at least the preemptor's
priority, ``nominatedload``). This module computes the very same decision over the
``VictimTable`` (each node's pods already in importance order), for many nodes at once:

1. potential nodes: rows whose filter status is exactly Unschedulable, in node order
   (``findCandidates``); the same ``rng.randrange`` offset and candidate budget;
2. rows in order from the offset, in chunks, until the budget of candidates is reached
   (``DryRunPreemption``'s stop rule: without PDBs every candidate is non-violating);
   per row, as ``SelectVictimsOnNode``: no lower-priority pod -> ``No preemption victims
   found for incoming pod``; not fitting with all of them removed -> that filter status;
   else the reprieve, most important pod first, as a loop over the few columns of the
   block (each step vectorised across rows);
3. ``SelectCandidate``'s criteria (fewest PDB violations: all 0; lowest highest-victim
   priority; smallest sum of priority + 2^31; fewest victims; latest start of the first
   victim), then one ``rng.randrange`` among the ties in candidate order, as the general
   path does.

A row's outcome is kept per preemptor shape and reused while the row's ``NodeTable``,
``VictimTable`` and ``NominatedLoad`` versions are unchanged. The one or two rows a
decision leaves stale are dry-run again in plain Python (``_refresh_row``, the same steps
for one row), where numpy's per-call overhead would cost more than the arithmetic.

The upstream algorithm stays the specification: ``tests/unit/scheduler/
test_fastpreemption_differential.py`` checks this module against the Evaluator's general
path on random clusters (victims, node, message and the rng state afterwards).

Driven by the ``Evaluator`` (``IndexedPreemption``); reads the cache and never changes it
(the executor evicts); no clock (the Evaluator passes ``now``), no I/O.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubeprio.scheduler.cache import Cache
from kubeprio.scheduler.fastpath import (
    KIND_RESOURCES,
    KIND_TAINT,
    KIND_UNSCHEDULABLE,
    PLAIN_PALETTE,
    is_plain_pod,
)
from kubeprio.scheduler.framework import Code, NodeToStatus, PodInfo
from kubeprio.scheduler.nodetable import NodeTable
from kubeprio.scheduler.nominatedload import Load, NominatedLoad
from kubeprio.scheduler.preemption import (
    INT32_SHIFT,
    NO_VICTIMS,
    Candidate,
    DryRunFailure,
    PreemptionArgs,
    Victims,
    number_of_candidates,
    pdb_selector,
)
from kubeprio.scheduler.rowchanges import RowChanges, counters, rows_changed_since
from kubeprio.scheduler.rowstatus import RowStatuses
from kubeprio.scheduler.shapecache import shape_entry
from kubeprio.scheduler.victimtable import (
    CPU_FIELD,
    EPH_FIELD,
    MEM_FIELD,
    PAD_PRIORITY,
    PRIO,
    SEQ,
    SLOT,
    START,
    STARTLESS,
    VictimTable,
)

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
KIND_NO_VICTIMS: Final = len(PLAIN_PALETTE)
KIND_NO_VICTIM_FOUND: Final = KIND_NO_VICTIMS + 1
"""A candidate whose reprieve kept every pod: upstream's ``expected at least one victim``."""
UNBOUNDED: Final = 2**62
"""Room for a resource the pod does not request (sums of requests stay far below)."""
CACHED_SHAPES: Final = 16
"""Preemptor shapes whose per-row outcomes are kept."""
MASK_BITS: Final = 62
"""Rows with more pods than this keep no victim mask (their outcome is recomputed)."""
MIN_CHUNK: Final = 128
"""Fewest rows dry-run per numpy step."""
SYNC_FRACTION: Final = 8
"""A scanned entry is caught up when at most this fraction of its rows are stale."""
MAX_SYNC_BACKOFF: Final = 64
"""Most scans between two attempts to catch an entry up."""
SCALAR_ROWS: Final = 2
"""Stale rows up to which they are dry-run in plain Python: the one or two rows the last
decision changed cost less than numpy's per-call overhead that way."""


def potential_rows(filtered: NodeToStatus, table: NodeTable) -> IntArray:
    """Rows whose status is exactly Unschedulable, in node order (``findCandidates``)."""
    n = table.size
    statuses = filtered.statuses
    absent_helps = filtered.absent.code is Code.UNSCHEDULABLE
    if isinstance(statuses, RowStatuses) and len(statuses.kinds) == n:
        present = statuses.present()  # computed once per failure (the message reads it)
        if (absent_helps or sum(rows for _, rows in present) == n) and all(
            statuses.palette[kind].code is Code.UNSCHEDULABLE for kind, _ in present
        ):
            # Every row's failure is one preemption may resolve (the usual "Insufficient
            # cpu" everywhere): no per-row codes to gather.
            return np.arange(n, dtype=np.int64)
        codes = statuses.codes()
        if absent_helps:
            codes = np.where(codes < 0, int(Code.UNSCHEDULABLE), codes)
        return np.flatnonzero(codes == int(Code.UNSCHEDULABLE))
    if absent_helps:
        names = table.names
        return np.array(
            [row for row in range(n) if filtered.get(names[row]).code is Code.UNSCHEDULABLE],
            np.int64,
        )
    index = table.index
    rows = sorted(
        index[name]
        for name, status in statuses.items()
        if status.code is Code.UNSCHEDULABLE and name in index
    )
    return np.array(rows, np.int64)


def pdbs_select_no_pod(pdbs: Sequence[PodDisruptionBudget], namespace_pods: dict[str, int]) -> bool:
    """No PDB can select a pod: each has an empty or invalid selector (upstream's
    ``filterPodsWithPDBViolation`` skips those), or no pod lives in its namespace."""
    for pdb in pdbs:
        if not namespace_pods.get(pdb.metadata.namespace or "", 0):
            continue
        selector = pdb_selector(pdb)
        if selector is not None and not selector.is_empty():
            return False
    return True


def _importance_order(block: IntArray, now_nanos: int) -> IntArray:
    """``block`` (``FIELDS, width, rows``) re-sorted by importance per row, with start-less
    pods starting at ``now_nanos``."""
    priority = block[PRIO]
    start = block[START]
    effective = np.where(start == STARTLESS, now_nanos, start)
    pad = priority == PAD_PRIORITY
    order = np.lexsort((block[SEQ], effective, -priority, pad), axis=0)
    return np.take_along_axis(block, order[None, :, :], axis=1)


class _Verdicts:
    """Per-row outcomes of ``SelectVictimsOnNode`` for one preemptor shape, with the row,
    victim-table and nominated-load versions they were computed at (-1: recompute)."""

    __slots__ = (
        "count",
        "dirty",
        "epoch",
        "kinds",
        "load_version",
        "mask",
        "seen",
        "start",
        "sync_backoff",
        "sync_wait",
        "synced",
        "table_version",
        "top",
        "total",
        "victim_version",
    )

    def __init__(self, epoch: int, capacity: int) -> None:
        self.epoch = epoch
        self.table_version: IntArray = np.full(capacity, -1, np.int64)
        self.victim_version: IntArray = np.full(capacity, -1, np.int64)
        self.load_version: IntArray = np.full(capacity, -1, np.int64)
        self.kinds: IntArray = np.zeros(capacity, np.int64)
        """Status kind (-1: a candidate)."""
        self.top: IntArray = np.zeros(capacity, np.int64)
        """Priority of the first (most important) victim."""
        self.total: IntArray = np.zeros(capacity, np.int64)
        """Sum of the victims' priority + 2^31."""
        self.count: IntArray = np.zeros(capacity, np.int64)
        self.start: IntArray = np.zeros(capacity, np.int64)
        """Start of the first victim (``STARTLESS``: now)."""
        self.mask: IntArray = np.zeros(capacity, np.int64)
        """Bit j set: the row's j-th pod is a victim."""
        self.synced = False
        """Every row's outcome is current but for the rows the three tables' change logs
        list after ``seen`` and the ``dirty`` ones: a decision refreshes just those."""
        self.seen: tuple[int, ...] = (-1, -1, -1)
        """``RowChanges`` counters (table, victims, nominated load) when last caught up."""
        self.dirty: set[int] = set()
        """Rows whose outcome was not kept (``_stamp``): recomputed at the next catch-up."""
        self.sync_wait = 0
        """Cold decisions left before the next attempt to catch up every row."""
        self.sync_backoff = 1


@dataclasses.dataclass(slots=True)
class _DryRun:
    """One chunk of rows dry-run: statuses as kinds (-1: candidate) and the victims."""

    rows: IntArray
    kinds: IntArray
    victims: BoolArray
    """``victims[j, i]``: the ``j``-th pod of row ``i`` is evicted."""
    block: IntArray
    """The rows' pods in importance order (``VictimTable.data`` layout: field, j, row)."""


class FastPreemption:
    """``IndexedPreemption`` over the cache's ``VictimTable`` and the nominated load."""

    def __init__(
        self,
        cache: Cache,
        load: NominatedLoad,
        *,
        nominations: Callable[[], int],
        default_profile: Callable[[], bool],
    ) -> None:
        self.cache = cache
        self.load = load
        self._nominations = nominations
        self._default_profile = default_profile
        self._cache: dict[tuple[int, int, int, int], _Verdicts] = {}
        self.chunk_rows: int | None = None
        """Rows dry-run per numpy step (default: twice the candidate budget, at least
        ``MIN_CHUNK``); tests set a small one to exercise the chunking."""
        self.catch_up_rows: int | None = None
        """Most stale rows a caught-up entry refreshes, and most a scanned one may have
        to become caught up (default: the budget plus ``MIN_CHUNK``, and ``MIN_CHUNK`` or
        an eighth of the rows); tests set a small one to exercise both ways."""

    @property
    def victims(self) -> VictimTable:
        """The cache's victim table."""
        return self.cache.victims

    def applies(self, pod: PodInfo, pdbs: Sequence[PodDisruptionBudget]) -> bool:
        """Whether the indexed path gives the general path's answer for ``pod``."""
        cache = self.cache
        return (
            self._default_profile()
            and cache.pods_with_affinity == 0
            and is_plain_pod(pod, lost_node_taints=cache.table.any_lost_node_taint)
            and cache.table.size == len(cache.node_infos())
            and len(self.load) == self._nominations()
            and pdbs_select_no_pod(pdbs, cache.victims.namespace_pods)
        )

    def find_best(
        self,
        pod: PodInfo,
        filtered: NodeToStatus,
        *,
        rng: random.Random,
        args: PreemptionArgs,
        now_nanos: int,
    ) -> Candidate | DryRunFailure:
        """``findCandidates`` + ``DryRunPreemption`` + ``SelectCandidate`` for ``pod``.

        Rows are dry-run in evaluation order, chunk by chunk, until the candidate budget
        is met. A row's outcome is kept per preemptor shape (priority and requests) and
        reused while the row, its pods and the pods nominated to it are unchanged (their
        versions), so a stream of alike preemptors re-evaluates only the rows the last
        decisions touched.
        """
        table = self.cache.table
        potential = potential_rows(filtered, table)
        count = len(potential)
        if count == 0:
            return DryRunFailure((), {}, 0)
        offset = rng.randrange(count)
        wanted = number_of_candidates(count, args)
        verdicts = self._verdicts(pod)
        own_row = self.load.row_of(pod.uid)
        limit = wanted + MIN_CHUNK if self.catch_up_rows is None else self.catch_up_rows
        if self._catch_up(verdicts, pod, now_nanos, own_row, limit=limit):
            return self._decide(verdicts, potential, offset, wanted, pod, rng, now_nanos)
        decision = self._scan(verdicts, potential, offset, wanted, pod, rng, now_nanos, own_row)
        self._maybe_sync(verdicts, pod, now_nanos, own_row)
        return decision

    def _scan(
        self,
        verdicts: _Verdicts,
        potential: IntArray,
        offset: int,
        wanted: int,
        pod: PodInfo,
        rng: random.Random,
        now_nanos: int,
        own_row: int,
    ) -> Candidate | DryRunFailure:
        """The decision for an entry that is not caught up: rows in evaluation order,
        chunk by chunk, each chunk's stale rows (by version) refreshed, until the budget."""
        table = self.cache.table
        victims = self.cache.victims
        count = len(potential)
        order = np.concatenate((potential[offset:], potential[:offset]))
        load_versions = self.load.row_versions()
        load: Load | bool | None = False  # computed on first need
        evaluated: list[IntArray] = []
        found = 0
        lo = 0
        while lo < count:
            chunk = self.chunk_rows or self._chunk(wanted - found, lo, found)
            rows = order[lo : lo + chunk]
            lo += chunk
            stale = verdicts.table_version[rows] != table.version[rows]
            stale |= verdicts.victim_version[rows] != victims.version[rows]
            stale |= verdicts.load_version[rows] != load_versions[rows]
            if own_row >= 0:
                stale |= rows == own_row
            if np.count_nonzero(stale):
                if load is False:
                    load = self.load.load(pod.priority, pod.uid)
                assert load is not True
                self._refresh_stale(verdicts, rows[stale], pod, load, now_nanos, own_row)
            candidates = np.flatnonzero(verdicts.kinds[rows] < 0)
            if found + len(candidates) >= wanted:
                evaluated.append(rows[: int(candidates[wanted - found - 1]) + 1])
                found = wanted
                break
            evaluated.append(rows)
            found += len(candidates)
        rows = np.concatenate(evaluated)
        if found == 0:
            return self._failure(rows, verdicts.kinds[rows])
        return self._select(verdicts, rows[verdicts.kinds[rows] < 0], pod, rng, now_nanos)

    # --- caught-up entries: rows refreshed from the change logs ---------------------------------

    def _catch_up(
        self, verdicts: _Verdicts, pod: PodInfo, now: int, own_row: int, *, limit: int
    ) -> bool:
        """Refresh a synced entry's rows that changed since it last caught up (the three
        tables' change logs), its dirty rows and the preemptor's own row; False (the entry
        is no longer synced) when the logs do not reach back or more than ``limit`` rows
        changed, and the decision scans instead."""
        if not verdicts.synced:
            return False
        stale = rows_changed_since(self._logs(), verdicts.seen)
        if stale is None:
            verdicts.synced = False
            return False
        stale |= verdicts.dirty
        if own_row >= 0:
            stale.add(own_row)
        if len(stale) > limit:
            verdicts.synced = False
            return False
        self._caught_up(verdicts, np.array(sorted(stale), np.int64), pod, now, own_row)
        return True

    def _logs(self) -> tuple[RowChanges, RowChanges, RowChanges]:
        """The change logs of the three tables an outcome depends on."""
        return (self.cache.table.changes, self.cache.victims.changes, self.load.changes)

    def _caught_up(
        self, verdicts: _Verdicts, rows: IntArray, pod: PodInfo, now: int, own_row: int
    ) -> None:
        """Refresh ``rows``, the entry's only stale ones: from now on it has seen every
        change logged so far (the refresh re-marks the rows it does not keep dirty)."""
        verdicts.dirty = set()
        verdicts.seen = counters(self._logs())
        if len(rows):
            load = self.load.load(pod.priority, pod.uid)
            self._refresh_stale(verdicts, rows, pod, load, now, own_row)

    def _maybe_sync(self, verdicts: _Verdicts, pod: PodInfo, now: int, own_row: int) -> None:
        """After a scan: refresh every stale row (by version) if few are left, so the
        entry is caught up from then on; else try again after a growing number of scans
        (a shape whose rows keep changing in bulk does not pay this every time)."""
        if verdicts.sync_wait > 0:
            verdicts.sync_wait -= 1
            return
        table = self.cache.table
        n = table.size
        load_versions = self.load.row_versions()
        stale = verdicts.table_version[:n] != table.version[:n]
        stale |= verdicts.victim_version[:n] != self.cache.victims.version[:n]
        stale |= verdicts.load_version[:n] != load_versions[:n]
        if 0 <= own_row < n:
            stale[own_row] = True
        rows = np.flatnonzero(stale)
        limit = self.catch_up_rows
        if limit is None:
            limit = max(MIN_CHUNK, n // SYNC_FRACTION)
        if len(rows) > limit:
            verdicts.sync_wait = verdicts.sync_backoff
            verdicts.sync_backoff = min(2 * verdicts.sync_backoff, MAX_SYNC_BACKOFF)
            return
        self._caught_up(verdicts, rows, pod, now, own_row)
        verdicts.synced = True
        verdicts.sync_backoff = 1

    def _decide(
        self,
        verdicts: _Verdicts,
        potential: IntArray,
        offset: int,
        wanted: int,
        pod: PodInfo,
        rng: random.Random,
        now: int,
    ) -> Candidate | DryRunFailure:
        """The decision of a caught-up entry: the first ``wanted`` candidate rows in
        evaluation order (potential rows from ``offset`` on, wrapping) read off the
        sorted candidate rows, the very rows a scan would have stopped at."""
        kinds = verdicts.kinds
        n = self.cache.table.size
        if len(potential) == n:
            # Every row is potential (``potential`` is 0..n-1): no gather needed.
            candidates = np.flatnonzero(kinds[:n] < 0)
            first = offset
        else:
            candidates = potential[kinds[potential] < 0]
            first = int(potential[offset])
        found = len(candidates)
        if found == 0:
            order = np.concatenate((potential[offset:], potential[:offset]))
            return self._failure(order, kinds[order])
        split = int(np.searchsorted(candidates, first))
        if found - split >= wanted:
            chosen = candidates[split : split + wanted]
        else:
            chosen = np.concatenate(
                (candidates[split:], candidates[: min(split, wanted - (found - split))])
            )
        return self._select(verdicts, chosen, pod, rng, now)

    def _verdicts(self, pod: PodInfo) -> _Verdicts:
        """The outcome cache for ``pod``'s shape (new after the table renumbered rows)."""
        key = (
            pod.priority,
            pod.requests.get(CPU, 0),
            pod.requests.get(MEMORY, 0),
            pod.requests.get(EPHEMERAL_STORAGE, 0),
        )
        return shape_entry(self._cache, key, self.cache.table, limit=CACHED_SHAPES, new=_Verdicts)

    def _refresh_stale(
        self,
        verdicts: _Verdicts,
        rows: IntArray,
        pod: PodInfo,
        load: Load | None,
        now: int,
        own_row: int,
    ) -> None:
        """``_refresh`` of ``rows``: a few rows one by one, more (or rows that must be
        re-sorted first) across rows at once."""
        if len(rows) > SCALAR_ROWS:
            self._refresh(verdicts, rows, pod, load, now, own_row)
            return
        left = [
            row
            for row in rows.tolist()
            if not self._refresh_row(verdicts, row, pod, load, now, own_row)
        ]
        if left:
            self._refresh(verdicts, np.array(left, np.int64), pod, load, now, own_row)

    def _refresh_row(
        self,
        verdicts: _Verdicts,
        row: int,
        pod: PodInfo,
        load: Load | None,
        now: int,
        own_row: int,
    ) -> bool:
        """``_refresh`` of one row in plain Python, step for step as ``_dry_run`` does it
        across rows; False (nothing done) when the row must be re-sorted first."""
        victims = self.cache.victims
        table = self.cache.table
        if victims.needs_resort(row, now):
            return False
        count = int(victims.count[row])
        fields = victims.data[:, :count, row].tolist()
        priorities = fields[PRIO]
        sizes = list(zip(fields[CPU_FIELD], fields[MEM_FIELD], fields[EPH_FIELD], strict=True))
        lower = [priority < pod.priority for priority in priorities]
        requests = (
            pod.requests.get(CPU, 0),
            pod.requests.get(MEMORY, 0),
            pod.requests.get(EPHEMERAL_STORAGE, 0),
        )
        # The node with every lower-priority pod removed (and nominated pods added).
        used = [int(table.req_cpu[row]), int(table.req_mem[row]), int(table.req_eph[row])]
        used_pods = int(table.pods[row]) - sum(lower)
        for size, is_lower in zip(sizes, lower, strict=True):
            if is_lower:
                used = [u - amount for u, amount in zip(used, size, strict=True)]
        if load is not None:
            used[0] += int(load.cpu[row])
            used[1] += int(load.mem[row])
            used[2] += int(load.eph[row])
            used_pods += int(load.pods[row])
        alloc = (int(table.alloc_cpu[row]), int(table.alloc_mem[row]), int(table.alloc_eph[row]))
        alloc_pods = int(table.alloc_pods[row])
        room = [a - r if r > 0 else UNBOUNDED for a, r in zip(alloc, requests, strict=True)]
        bits = 1 if used_pods + 1 > alloc_pods else 0
        for i, bit in enumerate((2, 4, 8)):
            if used[i] > room[i]:
                bits |= bit
                if requests[i] > alloc[i]:
                    bits |= 16
        kind = KIND_RESOURCES + bits if bits else -1
        if table.any_blocked and table.unschedulable[row]:
            kind = KIND_UNSCHEDULABLE
        elif table.any_blocked and table.hard_taint[row]:
            kind = KIND_TAINT
        if not any(lower):
            kind = KIND_NO_VICTIMS
        chosen: list[int] = []
        if kind < 0:
            # Reprieve, most important first (lower-priority pods are the row's last).
            for j, size in enumerate(sizes):
                if not lower[j]:
                    continue
                grown = [u + amount for u, amount in zip(used, size, strict=True)]
                if used_pods <= alloc_pods - 2 and all(
                    g <= r for g, r in zip(grown, room, strict=True)
                ):
                    used = grown
                    used_pods += 1
                else:
                    chosen.append(j)
            if not chosen:
                kind = KIND_NO_VICTIM_FOUND
        verdicts.kinds[row] = kind
        if count:
            first = chosen[0] if chosen else 0
            verdicts.top[row] = priorities[first]
            verdicts.total[row] = sum(priorities[j] for j in chosen) + len(chosen) * INT32_SHIFT
            verdicts.count[row] = len(chosen)
            verdicts.start[row] = fields[START][first]
            if count <= MASK_BITS:
                verdicts.mask[row] = sum(1 << j for j in chosen)
        self._stamp(verdicts, row, count <= MASK_BITS and row != own_row)
        return True

    def _refresh(
        self,
        verdicts: _Verdicts,
        rows: IntArray,
        pod: PodInfo,
        load: Load | None,
        now: int,
        own_row: int,
    ) -> None:
        """Dry-run ``rows`` and keep their outcomes (with the versions they saw)."""
        run = self._dry_run(rows, pod, load, now)
        verdicts.kinds[rows] = run.kinds
        chosen = run.victims
        width = chosen.shape[0]
        if width:
            first = chosen.argmax(axis=0)
            span = np.arange(len(rows))
            priority = run.block[PRIO]
            count = chosen.sum(axis=0)
            verdicts.top[rows] = priority[first, span]
            verdicts.total[rows] = np.where(chosen, priority, 0).sum(axis=0) + count * INT32_SHIFT
            verdicts.count[rows] = count
            verdicts.start[rows] = run.block[START][first, span]
            if width <= MASK_BITS:
                bits = np.left_shift(1, np.arange(width, dtype=np.int64))
                verdicts.mask[rows] = bits @ chosen
        keep = ~self.cache.victims.needs_resort(rows, now)
        if width > MASK_BITS:
            keep[:] = False
        if own_row >= 0:
            keep &= rows != own_row
        self._stamp(verdicts, rows, keep)

    def _stamp(self, verdicts: _Verdicts, rows: IntArray | int, keep: BoolArray | bool) -> None:
        """Record the versions the outcomes of ``rows`` (a row or an array) were computed
        at. Outcomes not to ``keep`` depend on this decision alone (rows re-sorted at
        ``now``, the row the preemptor itself is nominated to): they are used now and
        recomputed next time."""
        table = self.cache.table
        verdicts.table_version[rows] = np.where(keep, table.version[rows], -1)
        verdicts.victim_version[rows] = self.cache.victims.version[rows]
        verdicts.load_version[rows] = self.load.row_versions()[rows]
        if isinstance(rows, int):
            if not keep:
                verdicts.dirty.add(rows)
        elif not isinstance(keep, bool):
            verdicts.dirty.update(rows[~keep].tolist())
        elif not keep:
            verdicts.dirty.update(rows.tolist())

    @staticmethod
    def _chunk(needed: int, evaluated: int, found: int) -> int:
        """Rows to dry-run next: enough for the ``needed`` candidates at the rate seen so
        far (all rows at first), with a margin, and never tiny."""
        if found == 0:
            estimate = needed if evaluated == 0 else 4 * needed
        else:
            estimate = needed * evaluated // found
        return max(estimate + estimate // 8 + 8, MIN_CHUNK)

    # --- SelectVictimsOnNode, many rows at once ----------------------------------------------------

    def _dry_run(self, rows: IntArray, pod: PodInfo, load: Load | None, now: int) -> _DryRun:
        """``SelectVictimsOnNode`` for every row of ``rows``.

        A node holds few pods, so the pod axis is walked in Python and every step is one
        numpy call across all rows; cpu, memory and ephemeral storage are the rows of one
        ``(3, rows)`` array (a resource the pod does not ask for gets unbounded room, as
        ``fitsRequest`` skips it).
        """
        table = self.cache.table
        victims = self.cache.victims
        priority = pod.priority
        amounts = (
            pod.requests.get(CPU, 0),
            pod.requests.get(MEMORY, 0),
            pod.requests.get(EPHEMERAL_STORAGE, 0),
        )
        size = len(rows)
        counts = victims.count[rows]
        width = int(counts.max()) if size else 0
        block = np.take(victims.data, rows, axis=2)[:, :width]
        resort = victims.needs_resort(rows, now)
        if np.count_nonzero(resort):
            block[:, :, resort] = _importance_order(block[:, :, resort], now)
        lower = block[PRIO] < priority
        num_lower = lower.sum(axis=0)
        sizes = block[CPU_FIELD : EPH_FIELD + 1]
        # The node with every lower-priority pod removed (and nominated pods added).
        used = np.stack((table.req_cpu[rows], table.req_mem[rows], table.req_eph[rows]))
        used -= (sizes * lower).sum(axis=1)
        used_pods = table.pods[rows] - num_lower
        if load is not None:
            used += np.stack((load.cpu[rows], load.mem[rows], load.eph[rows]))
            used_pods += load.pods[rows]
        alloc = np.stack((table.alloc_cpu[rows], table.alloc_mem[rows], table.alloc_eph[rows]))
        alloc_pods = table.alloc_pods[rows]
        request = np.array(amounts, np.int64)[:, None]
        room = np.where(request > 0, alloc - request, UNBOUNDED)
        short = used > room
        beyond = short & (request > alloc)
        bits = (used_pods + 1 > alloc_pods).astype(np.int64)
        bits |= short[0] * 2 | short[1] * 4 | short[2] * 8
        bits |= beyond.any(axis=0) * 16
        kinds = np.where(bits > 0, KIND_RESOURCES + bits, -1)
        if table.any_blocked:
            kinds = np.where(table.hard_taint[rows], KIND_TAINT, kinds)
            kinds = np.where(table.unschedulable[rows], KIND_UNSCHEDULABLE, kinds)
        kinds[num_lower == 0] = KIND_NO_VICTIMS
        chosen = np.zeros((width, size), np.bool_)
        candidate = kinds < 0
        if np.count_nonzero(candidate):
            # Reprieve, most important first: a lower-priority pod stays if the pod still
            # fits with it back on the node (position j is each row's j-th pod).
            first = int((counts - num_lower)[candidate].min())
            pod_room = alloc_pods - 2
            grown = np.empty_like(used)
            below = np.empty(used.shape, np.bool_)
            for j in range(first, width):
                back = lower[j] & candidate
                fits = used_pods <= pod_room
                size_j = sizes[:, j]
                np.add(used, size_j, out=grown)
                np.less_equal(grown, room, out=below)
                fits &= below[0]
                fits &= below[1]
                fits &= below[2]
                keep = back & fits
                used += size_j * keep
                used_pods += keep
                np.greater(back, fits, out=chosen[j])
            kinds[candidate & ~chosen.any(axis=0)] = KIND_NO_VICTIM_FOUND
        return _DryRun(rows, kinds, chosen, block)

    # --- outcomes --------------------------------------------------------------------------------

    def _failure(self, rows: IntArray, kinds: IntArray) -> DryRunFailure:
        """Every potential row failed: errors, or the histogram of their reasons."""
        names = self.cache.table.names
        errors = tuple(
            f'expected at least one victim pod on node "{names[row]}"'
            for row in rows[kinds == KIND_NO_VICTIM_FOUND].tolist()
        )
        if errors:
            return DryRunFailure(errors, {}, len(rows))
        counts: dict[str, int] = {}
        tally = np.bincount(kinds, minlength=KIND_NO_VICTIMS + 1)
        for kind in np.flatnonzero(tally).tolist():
            reasons = (NO_VICTIMS,) if kind == KIND_NO_VICTIMS else PLAIN_PALETTE[kind].reasons
            for reason in reasons:
                counts[reason] = counts.get(reason, 0) + int(tally[kind])
        return DryRunFailure((), counts, len(rows))

    def _select(
        self,
        verdicts: _Verdicts,
        candidates: IntArray,
        pod: PodInfo,
        rng: random.Random,
        now: int,
    ) -> Candidate:
        """``SelectCandidate`` over the candidate rows, in candidate (evaluation) order."""
        rows = candidates
        for column in (verdicts.top, verdicts.total, verdicts.count, None):
            if len(rows) == 1:
                break
            if column is None:
                start = verdicts.start[rows]
                values = -np.where(start == STARTLESS, now, start)
            else:
                values = column[rows]
            # Only the ties on this criterion go on, in candidate order. (The ufunc's own
            # reduce: ndarray.min goes through a Python-level wrapper, a third of the cost
            # on a few hundred rows.) When every row ties (alike nodes, alike victims) they
            # all go on as they are, without a comparison and a copy.
            lowest = np.minimum.reduce(values)
            if lowest != np.maximum.reduce(values):
                rows = rows[values == lowest]
        pick = 0 if len(rows) == 1 else rng.randrange(len(rows))
        row = int(rows[pick])
        victims = self.cache.victims
        if verdicts.table_version[row] >= 0:
            bits = int(verdicts.mask[row])
            positions = [j for j in range(bits.bit_length()) if bits >> j & 1]
            slots = victims.data[SLOT, positions, row].tolist()
        else:
            # An outcome of this decision only: dry-run the row again for its victims.
            load = self.load.load(pod.priority, pod.uid)
            run = self._dry_run(np.array([row], np.int64), pod, load, now)
            slots = run.block[SLOT][:, 0][run.victims[:, 0]].tolist()
        return Candidate(
            self.cache.table.names[row],
            Victims(tuple(victims.pod(slot) for slot in slots), 0),
        )
