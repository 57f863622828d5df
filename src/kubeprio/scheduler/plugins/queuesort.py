"""PrioritySort: the QueueSort plugin that orders activeQ (upstream ``plugins/queuesort/priority_sort.go``).

Pod A goes before pod B iff A's priority is higher, or the priorities are equal and A's
*queue* timestamp is earlier (semantics §3.2). The timestamp is ``QueuedPodInfo.timestamp``,
refreshed every time the pod comes back after a failed attempt, never the pod's
``creationTimestamp``; an unset ``spec.priority`` counts as 0 (``PodInfo.priority``).

Besides the upstream ``less``, the plugin offers ``sort_key``: a tuple that orders exactly
as ``less`` does, so ``scheduler.queue`` can keep its heaps on C-level tuple comparisons
instead of calling back into Python for every comparison. Pure: no state, no I/O.
"""

from __future__ import annotations

from kubeprio.scheduler.framework import QueuedPodInfo
from kubeprio.scheduler.plugins import names

NAME = names.PRIORITY_SORT


class PrioritySort:
    """Higher priority first, then the earlier queue timestamp (upstream ``PrioritySort``)."""

    __slots__ = ()

    @property
    def name(self) -> str:
        """``PrioritySort``."""
        return NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` should be popped before ``b`` (upstream ``PrioritySort.Less``)."""
        pa = a.pod_info.priority
        pb = b.pod_info.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, float]:
        """A key with ``sort_key(a) < sort_key(b)`` exactly when ``less(a, b)``."""
        return (-qpi.pod_info.priority, qpi.timestamp)
