"""``PressureMonitor``: when the kubelet runs eviction passes, and what it reports.

The kubelet's eviction manager loops every ``monitoring_interval`` (10 s). A simulated
node's usage changes only when a pod that declares usage starts or exits, so the
monitor runs a pass at the first 10 s tick after such a change, at the tick after a
soft threshold's grace period or a pressure condition's transition period ends, and
right after an evicted pod is gone (``waitForPodsCleanup``, at most 30 s). Between
those moments a pass would see the same inputs and decide the same; skipping it keeps
thousands of quiet nodes from waking every 10 s of virtual time. (Upstream also
repeats its ``EvictionThresholdMet`` event on every pass; here it is sent per pass
actually run.)

After a pass it patches the ``MemoryPressure``/``DiskPressure`` node conditions (a strategic
merge PATCH of ``nodes/status``, ``client.nodestatuspatch``) when they
flip, with the events ``NodeHasInsufficientMemory`` & co., and records
``EvictionThresholdMet`` ("Attempting to reclaim memory") on the node. Choosing and
killing the victim is the kubelet's (``Kubelet._evict``).

A conditions write that waits on an admission webhook (``kubeprio serve``) does not hold
the loop: it is sent again once answered (``client.answeredretry``), and if the
conditions changed meanwhile, the latest are written after it, as upstream's node status
loop writes what it sees at its next update.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Node, NodeStatus, Pod
from kubeprio.api.model import evolve
from kubeprio.api.nodeconditions import NODE_READY
from kubeprio.api.resources import EPHEMERAL_STORAGE, MEMORY
from kubeprio.client import record
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.nodestatuspatch import patch_node_status
from kubeprio.client.protocol import Client
from kubeprio.clock import rfc3339
from kubeprio.kubelet import admission, node
from kubeprio.kubelet.eviction import PodStats, StatsFunc
from kubeprio.kubelet.evictionmanager import (
    EvictionConfig,
    EvictionManager,
    NodeUsage,
    PassResult,
    observe,
)

_CONDITIONS_WRITE: Final = ("node-conditions",)
"""The ``AnsweredRetry`` key of the pressure conditions' write."""


class PressureMonitor:
    """Usage totals, the pass schedule and the node conditions of one node."""

    def __init__(
        self,
        client: Client,
        node_name: str,
        recorder: record.EventRecorder,
        *,
        config: EvictionConfig,
        origin: float,
        system_memory_usage: int = 0,
        system_disk_usage: int = 0,
        writes: AnsweredRetry,
    ) -> None:
        self._client = client
        self._writes = writes
        self._later: tuple[tuple[str, ...], float] | None = None
        """Conditions (and when) decided while a conditions write waits on webhooks."""
        self._node_name = node_name
        self._recorder = recorder
        self.config = config
        self.manager = EvictionManager(config)
        self._origin = origin
        self._system_memory = system_memory_usage
        self._system_disk = system_disk_usage
        self._memory = 0
        self._disk = 0
        self.due: float | None = None

    @property
    def node_conditions(self) -> tuple[str, ...]:
        """The pressure conditions the node reports now."""
        return self.manager.node_conditions

    def hold(self, stats: PodStats, sign: int, now: float) -> None:
        """A pod with ``stats`` started (+1) or exited (-1)."""
        if stats.memory or stats.ephemeral_storage:
            self._memory += sign * stats.memory
            self._disk += sign * stats.ephemeral_storage
            self.usage_changed(now)

    def usage_changed(self, now: float, *, force: bool = False) -> None:
        """Run a pass at the next tick if anything could be over a threshold."""
        if not self.config.thresholds:
            return
        if force or self._memory or self._disk or not self.manager.quiet:
            self.schedule(self.next_tick(now))

    def next_tick(self, now: float) -> float:
        """The first monitoring tick at or after ``now``."""
        interval = self.config.monitoring_interval
        if interval <= 0:
            return now
        ticks = math.ceil((now - self._origin) / interval - 1e-9)
        return self._origin + max(ticks, 0) * interval

    def schedule(self, when: float) -> None:
        """Run a pass at ``when`` (the earliest request wins)."""
        if self.due is None or when < self.due:
            self.due = when

    def node_usage(self, current: Node | None) -> NodeUsage:
        """What the pods running here use, against the node's capacity."""
        capacity = admission.node_capacity(current)
        allocatable = admission.node_allocatable(current)
        memory_capacity = capacity.get(MEMORY, allocatable.get(MEMORY, 0))
        return NodeUsage(
            memory_capacity=memory_capacity,
            memory_allocatable=allocatable.get(MEMORY, memory_capacity),
            memory_working_set=self._memory + self._system_memory,
            pods_memory_working_set=self._memory,
            fs_capacity=capacity.get(EPHEMERAL_STORAGE) or allocatable.get(EPHEMERAL_STORAGE),
            fs_used=self._disk + self._system_disk,
        )

    def run(
        self,
        now: float,
        current: Node | None,
        candidates: Callable[[], Sequence[Pod]],
        stats: StatsFunc,
    ) -> tuple[PassResult, Node | None]:
        """One pass: decide, report conditions and the reclaim event; return the node."""
        self.due = None
        before = self.manager.node_conditions
        result = self.manager.synchronize(now, observe(self.node_usage(current)), candidates, stats)
        if before != result.node_conditions:
            current = self._report(current, result.node_conditions, now) or current
        if result.reclaiming is not None and current is not None:
            self._recorder.event(
                current,
                record.EVENT_TYPE_WARNING,
                "EvictionThresholdMet",
                f"Attempting to reclaim {result.reclaiming}",
            )
        if result.eviction is None:
            for due in (self.manager.soft_threshold_due(), self.manager.pressure_ends_at()):
                if due is not None:
                    self.schedule(self.next_tick(due))
        return result, current

    def _report(self, current: Node | None, wanted: tuple[str, ...], now: float) -> Node | None:
        """Flip ``MemoryPressure``/``DiskPressure`` on the Node; one event per flip. The
        stored Node, or None (not written, or the write waits on webhook answers)."""
        if current is None:
            return None
        if self._writes.waiting(_CONDITIONS_WRITE):
            self._later = (wanted, now)
            return None
        return self._start_write(wanted, now)

    def _start_write(self, wanted: tuple[str, ...], now: float) -> Node | None:
        written: list[Node] = []
        self._writes.run(
            _CONDITIONS_WRITE,
            functools.partial(self._write_conditions, wanted, now, written),
            again=functools.partial(self._write_waited, wanted, now),
        )
        return written[0] if written else None

    def _write_waited(self, wanted: tuple[str, ...], now: float) -> None:
        """The write that waited, once answered; then what was decided meanwhile."""
        self._write_conditions(wanted, now, [])
        later, self._later = self._later, None
        if later is not None and later[0] != wanted:
            self._start_write(*later)

    def _write_conditions(self, wanted: tuple[str, ...], now: float, written: list[Node]) -> None:
        try:
            latest = self._client.get(Node, self._node_name)
        except errors.NotFoundError:
            return
        conditions = latest.status.conditions if latest.status else None
        flips: list[tuple[str, bool]] = []
        for type_ in node.NODE_STATUS_EVENTS:
            if type_ == NODE_READY:
                continue
            value = type_ in wanted
            conditions, flipped = node.set_condition(conditions, type_, value, now=rfc3339(now))
            if flipped:
                flips.append((type_, value))
        node_status = evolve(latest.status or NodeStatus(), conditions=conditions)
        try:
            updated = patch_node_status(self._client, latest, evolve(latest, status=node_status))
        except errors.StatusError:
            return
        for type_, value in flips:
            reason = node.NODE_STATUS_EVENTS[type_][value]
            self._recorder.event(
                updated,
                record.EVENT_TYPE_NORMAL,
                reason,
                f"Node {self._node_name} status is now: {reason}",
            )
        written.append(updated)
