"""``SeriesRecorder``: write Events as client-go's events.k8s.io/v1 recorder does.

kube-scheduler records through the new Events API (``k8s.io/client-go/tools/events``,
``event_recorder.go`` and ``event_broadcaster.go``), not the core/v1 recorder the
controllers use (``client.record``). Its events look different, seen through either API:

* ``eventTime`` (microseconds) is set; ``firstTimestamp``, ``lastTimestamp``, ``count`` and
  ``source`` are not (``kubectl describe`` then shows ``reportingController`` in its From
  column, and the age from ``eventTime``);
* ``reportingController`` is the scheduler's name and ``reportingInstance`` the name and
  the host (``default-scheduler-<hostname>``, as ``NewRecorder`` builds it); kubeprio's host
  is ``REPORTING_HOST``, the same everywhere so that runs stay reproducible;
* every event has an ``action`` (``Scheduling``, ``Binding``, ``Preempting``);
* a repeat is recognised by type, action, reason, reporter and the regarding and related
  objects (``getKey``: not the note), and becomes a ``series``: the second occurrence
  patches ``series: {count: 2, lastObservedTime}``, later ones raise the count.

The name (``<object>.<nanoseconds, hex>``), the namespace and the deferred writing are the
core recorder's (``EventRecorder``, which this extends); its write, which goes through
client-go's ``EventCorrelator``, is replaced here by the series lookup (an LRU of 4096
series). One difference from client-go:
it writes the third and later occurrences of a series lazily (every 30 minutes, and when
the series has been quiet for 6); here every occurrence is written when the recorder
flushes, so a simulation's report sees each one. A write through core/v1 stores the same
object events.k8s.io/v1 would (the conversion is one to one for these fields).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Event, ObjectReference
from kubeprio.api.meta import ObjectMeta
from kubeprio.client.eventcorrelator import LRU_CACHE_ENTRIES, Lru
from kubeprio.client.protocol import Client
from kubeprio.client.record import EventRecorder, QueuedEvent
from kubeprio.clock import Clock, rfc3339_micro

REPORTING_HOST: Final = "kubeprio"
"""The host part of ``reportingInstance`` (upstream: ``os.Hostname()`` of the scheduler)."""


def _reference_key(ref: ObjectReference | None) -> tuple[str, ...]:
    if ref is None:
        return ()
    return (
        ref.kind or "",
        ref.namespace or "",
        ref.name or "",
        ref.uid or "",
        ref.api_version or "",
        ref.resource_version or "",
        ref.field_path or "",
    )


def occurrences(event: Event) -> int:
    """How many times ``event`` happened: its series count, else its core/v1 count (an
    events.k8s.io event without a series happened once)."""
    if event.series is not None and event.series.count:
        return event.series.count
    return event.count or 1


class SeriesRecorder(EventRecorder):
    """Records Events for one controller (``reportingController``) through the new API's
    rules: ``eventTime``, ``action`` and series instead of counts."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        controller: str,
        instance: str | None = None,
        deferred: bool = False,
    ) -> None:
        super().__init__(client, clock=clock, component=controller, deferred=deferred)
        self.reporting_instance = instance or f"{controller}-{REPORTING_HOST}"
        self._series: Lru[Hashable, Event] = Lru(LRU_CACHE_ENTRIES)
        """The last stored event of each series, by ``_key``."""

    def _write(self, item: QueuedEvent) -> Event | None:
        """Write ``item`` uncorrelated: ``tools/events`` has no aggregation or spam filter,
        only its series, so a repeat patches the series and anything else is created."""
        key = self._key(item)
        previous = self._series.get(key)
        if previous is not None:
            stored = self._bump(previous, item.at)
            if stored is not None:
                self._series.add(key, stored)
                return stored
        stored = self._create(
            item.ref, item.event_type, item.reason, item.message, item.at, item.action, item.related
        )
        if stored is not None:
            self._series.add(key, stored)
        return stored

    def _key(self, item: QueuedEvent) -> Hashable:
        """Which series an event belongs to (upstream ``getKey``: not the note)."""
        return (
            item.event_type,
            item.action or "",
            item.reason,
            self.component,
            self.reporting_instance,
            _reference_key(item.ref),
            _reference_key(item.related),
        )

    def _new_event(
        self,
        ref: ObjectReference,
        event_type: str,
        reason: str,
        message: str,
        now: float,
        action: str | None,
        related: ObjectReference | None,
        name: str,
    ) -> Event:
        return Event(
            metadata=ObjectMeta(name=name, namespace=ref.namespace or "default"),
            involved_object=ref,
            reason=reason,
            message=message,
            type=event_type,
            event_time=rfc3339_micro(now),
            action=action,
            related=related,
            reporting_component=self.component,
            reporting_instance=self.reporting_instance,
        )

    def _bump(self, previous: Event, now: float) -> Event | None:
        """A repeat: start the series at 2, or count one more (upstream patches only the
        series, as ``createPatchBytesForSeries`` computes)."""
        count = previous.series.count + 1 if previous.series and previous.series.count else 2
        patch = {"series": {"count": count, "lastObservedTime": rfc3339_micro(now)}}
        try:
            return self._client.patch(
                Event, previous.metadata.name or "", patch, namespace=previous.metadata.namespace
            )
        except errors.StatusError:
            return None
