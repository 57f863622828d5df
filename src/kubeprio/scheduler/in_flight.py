"""Pods being scheduled and the cluster events seen meanwhile (upstream ``activeQueue``'s in-flight part).

When a pod is popped it is *in flight* until the scheduler calls ``done``. Events that
arrive meanwhile might have made it schedulable, so ``SchedulingQueue`` records them here
and replays them when the pod comes back unschedulable (``determineSchedulingHintForInFlightPod``).

Upstream keeps one linked list of pod markers and events; an event is relevant to every
pod whose marker precedes it. ``InFlightPods`` keeps the same list as a Python list with a
moving head: ``done`` turns the pod's marker into a hole and drops the front of the list up
to the first live marker, since no remaining pod needs older events. Events are only
recorded while some pod is in flight, so the list stays as short as the longest flight.
Only ``scheduler.queue`` drives it. No clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from kubeprio.scheduler.events import ClusterEvent
from kubeprio.scheduler.framework import QueuedPodInfo

_COMPACT_AFTER = 1024


class LoggedEvent(NamedTuple):
    """A cluster event recorded while pods were in flight (upstream ``clusterEvent``)."""

    event: ClusterEvent
    old: object | None
    new: object | None


class InFlightPods:
    """Popped pods by UID, and the event log they share."""

    __slots__ = ("_base", "_head", "_log", "_pods")

    def __init__(self) -> None:
        self._pods: dict[str, tuple[int, QueuedPodInfo]] = {}
        self._log: list[str | LoggedEvent | None] = []
        self._base = 0  # absolute index of _log[0]
        self._head = 0  # first entry that may still be needed

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        """The in-flight pods, in pop order."""
        return iter([qpi for _, qpi in self._pods.values()])

    def get(self, uid: str) -> QueuedPodInfo | None:
        """The in-flight pod with ``uid``."""
        entry = self._pods.get(uid)
        return entry[1] if entry is not None else None

    def start(self, qpi: QueuedPodInfo) -> None:
        """Mark ``qpi`` in flight from now on."""
        uid = qpi.pod_info.uid
        self._pods[uid] = (self._base + len(self._log), qpi)
        self._log.append(uid)

    def record(self, event: ClusterEvent, old: object | None, new: object | None) -> None:
        """Log ``event`` if any pod is in flight (upstream ``addEventIfAnyInFlight``)."""
        if self._pods:
            self._log.append(LoggedEvent(event, old, new))

    def record_for_pod(self, uid: str, events: Iterable[LoggedEvent]) -> bool:
        """Log ``events`` if the pod ``uid`` is in flight (upstream ``addEventsIfPodInFlight``)."""
        if uid not in self._pods:
            return False
        self._log.extend(events)
        return True

    def events_since_start(self, uid: str) -> list[LoggedEvent] | None:
        """Events logged after ``uid`` was popped; ``None`` if it is not in flight."""
        entry = self._pods.get(uid)
        if entry is None:
            return None
        start = entry[0] - self._base + 1
        return [item for item in self._log[start:] if isinstance(item, LoggedEvent)]

    def done(self, uid: str) -> None:
        """End ``uid``'s flight and drop log entries nobody needs any more (upstream ``done``)."""
        entry = self._pods.pop(uid, None)
        if entry is None:
            return
        log = self._log
        log[entry[0] - self._base] = None
        head = self._head
        while head < len(log):
            item = log[head]
            if isinstance(item, str) and item in self._pods:
                break
            head += 1
        if head == len(log):
            self._base += len(log)
            log.clear()
            head = 0
        elif head > _COMPACT_AFTER and 2 * head > len(log):
            del log[:head]
            self._base += head
            head = 0
        self._head = head

    def log_size(self) -> int:
        """Entries still held (for tests of the pruning)."""
        return len(self._log) - self._head
