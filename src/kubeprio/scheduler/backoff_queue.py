"""backoffQ: the two heaps of pods waiting out their backoff before activeQ.

Mirrors upstream ``backoffQueue`` (``pkg/scheduler/backend/queue/backoff_queue.go``): pods
rejected by plugins wait in ``podBackoffQ``, ordered by ``BackoffPolicy.sort_key`` (ordering
windows, then activeQ's order); pods whose attempt ended in an error wait in
``podErrorBackoffQ``, ordered by expiry only, and are never popped early. A pod is in at
most one of the two. ``SchedulingQueue`` owns one and is its only caller; the policy
(durations, expiries, orders) lives in ``scheduler.backoff``. No clock reads of its own
beyond the policy's, no I/O.
"""

from __future__ import annotations

from kubeprio.scheduler.backoff import BackoffPolicy
from kubeprio.scheduler.framework import QueuedPodInfo
from kubeprio.scheduler.heap import KeyedHeap


class BackoffQueue:
    """The plugin-rejection heap and the error heap, keyed by ``namespace/name``."""

    __slots__ = ("_errors", "_policy", "_rejected")

    def __init__(self, policy: BackoffPolicy) -> None:
        self._policy = policy
        self._rejected: KeyedHeap[QueuedPodInfo] = KeyedHeap(policy.sort_key)
        self._errors: KeyedHeap[QueuedPodInfo] = KeyedHeap(policy.error_sort_key)

    def __len__(self) -> int:
        return len(self._rejected) + len(self._errors)

    def __contains__(self, key: object) -> bool:
        return key in self._rejected or key in self._errors

    def add(self, qpi: QueuedPodInfo) -> None:
        """Queue ``qpi`` in the heap its last attempt calls for (upstream ``add``).

        No rejector plugin means the attempt ended in an error: the error heap. A pod
        moving between the heaps leaves the other one.
        """
        key = qpi.pod_info.key
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            self._rejected.delete(key)
            self._errors.add_or_update(key, qpi)
        else:
            self._errors.delete(key)
            self._rejected.add_or_update(key, qpi)

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued pod ``key``, from either heap."""
        qpi = self._rejected.get(key)
        return qpi if qpi is not None else self._errors.get(key)

    def delete(self, key: str) -> QueuedPodInfo | None:
        """Remove ``key`` from whichever heap holds it; the removed pod or ``None``."""
        qpi = self._rejected.delete(key)
        return qpi if qpi is not None else self._errors.delete(key)

    def update(self, key: str, qpi: QueuedPodInfo) -> bool:
        """Re-heap ``key`` in place after its pod changed; ``False`` if it is not here."""
        for heap in (self._rejected, self._errors):
            if key in heap:
                heap.add_or_update(key, qpi)
                return True
        return False

    def pop_rejected(self) -> QueuedPodInfo | None:
        """The head of the plugin-rejection heap even if still backing off
        (``SchedulerPopFromBackoffQ``: an idle scheduler need not wait; never the error heap)."""
        return self._rejected.pop()

    def pop_completed(self) -> list[QueuedPodInfo]:
        """Remove and return every pod whose backoff is over (upstream ``popAllBackoffCompleted``)."""
        completed: list[QueuedPodInfo] = []
        for heap in (self._rejected, self._errors):
            while (head := heap.peek()) is not None and not self._policy.is_backing_off(head):
                heap.pop()
                completed.append(head)
        return completed

    def earliest_completion(self) -> float | None:
        """When the first pod's backoff completes, or ``None`` when both heaps are empty."""
        times = [
            self._policy.completion_time(head)
            for heap in (self._rejected, self._errors)
            if (head := heap.peek()) is not None
        ]
        return min(times) if times else None

    def ordered(self) -> list[QueuedPodInfo]:
        """The plugin-rejection heap, then the error heap, each in expiry order."""
        return [*self._rejected.ordered(), *self._errors.ordered()]
