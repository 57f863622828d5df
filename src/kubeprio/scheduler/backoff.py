"""Per-pod exponential backoff (upstream ``pkg/scheduler/backend/queue/backoff_queue.go``).

After a failed attempt a pod waits ``initial * 2**(count - 1)`` seconds, capped at the
maximum (defaults 1 s and 10 s: 1, 2, 4, 8, 10, 10, ... s), counted from its refreshed
queue timestamp. ``count`` is the number of consecutive errors if the last attempt ended
in an error, otherwise the number of times plugins rejected it (upstream since v1.34,
kubernetes#128748; older releases counted every pop, ``attempts``). A maximum of 0
disables backoff.

With ``SchedulerPopFromBackoffQ`` (KEP-5142, on by default) expiries are truncated to whole
seconds, "ordering windows": a pod is still backing off while its window is not strictly
earlier than the current one, and within a window the backoff heap orders pods as activeQ
does. Without it, expiries are exact and the heap orders by expiry only. The error heap
always orders by expiry only. ``BackoffPolicy`` computes all of this from the clock; the
queue owns the heaps. No state beyond configuration, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kubeprio.clock import Clock
from kubeprio.scheduler.framework import QueuedPodInfo
from kubeprio.scheduler.heap import SortKey

ORDERING_WINDOW = 1.0
"""Upstream ``backoffQOrderingWindowDuration``: also the period of the backoff flush."""


class BackoffPolicy:
    """Backoff durations, expiries and heap orders for one queue's configuration."""

    __slots__ = ("_active_key", "_clock", "_initial", "_max", "windowed")

    def __init__(
        self,
        clock: Clock,
        *,
        initial: float,
        maximum: float,
        windowed: bool,
        active_key: Callable[[QueuedPodInfo], SortKey],
    ) -> None:
        self._clock = clock
        self._initial = initial
        self._max = maximum
        self.windowed = windowed
        self._active_key = active_key

    def duration(self, count: int) -> float:
        """Upstream ``calculateBackoffDuration``: overflow-safe doubling, capped."""
        if count <= 0:
            return 0.0
        shift = count - 1
        if shift >= 63 or self._initial * (1 << shift) > self._max:
            return self._max
        return self._initial * (1 << shift)

    def expiry(self, qpi: QueuedPodInfo) -> float | None:
        """Upstream ``getBackoffTime``: when ``qpi``'s backoff ends; ``None`` means no backoff."""
        if self._max == 0:
            return None
        count = qpi.consecutive_errors_count or qpi.unschedulable_count
        if count == 0:
            return None
        expiry = qpi.timestamp + self.duration(count)
        return float(math.floor(expiry)) if self.windowed else expiry

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Upstream ``isPodBackingoff``: the expiry is not before the current window."""
        expiry = self.expiry(qpi)
        if expiry is None:
            return False
        now = self._clock.now()
        return expiry >= (math.floor(now) if self.windowed else now)

    def completion_time(self, qpi: QueuedPodInfo) -> float:
        """The first whole-second flush at which ``qpi`` no longer backs off."""
        expiry = self.expiry(qpi)
        return self._clock.now() if expiry is None else math.floor(expiry) + ORDERING_WINDOW

    def sort_key(self, qpi: QueuedPodInfo) -> SortKey:
        """podBackoffQ order: window, then as activeQ (``lessBackoffCompletedWithPriority``)."""
        expiry = self.expiry(qpi)
        head = -math.inf if expiry is None else expiry
        return (head, *self._active_key(qpi)) if self.windowed else (head,)

    def error_sort_key(self, qpi: QueuedPodInfo) -> SortKey:
        """podErrorBackoffQ order: expiry only (``lessBackoffCompleted``)."""
        expiry = self.expiry(qpi)
        return (-math.inf if expiry is None else expiry,)
