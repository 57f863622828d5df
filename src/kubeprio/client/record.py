"""``EventRecorder``: write core/v1 Events about objects, as client-go's ``tools/record``.

The kubelet and the controllers report what they did (``Evicted``, ``SuccessfulCreate``,
``Preempted``...) as Events, the way ``kubectl describe`` shows them. Like client-go's
recorder (``k8s.io/client-go/tools/record/event.go`` and ``events_cache.go``):

* an Event is named ``<object name>.<timestamp in nanoseconds, hex>`` and lives in the
  object's namespace (``default`` for cluster-scoped objects such as Nodes); in virtual
  time a burst happens at one nanosecond, so a name taken goes on to the next one;
* each event goes through client-go's ``EventCorrelator`` (``client.eventcorrelator``,
  kube-controller-manager's and the kubelet's defaults): an identical repeat is a PATCH of
  the first event's ``count``, ``lastTimestamp`` and ``message``; from the tenth distinct
  message of one object and reason within 600 s the events go into one
  ``(combined from similar events): ...`` event, counted up the same way; and past a
  burst of 25 events per source and object (refilled one per 300 s) events are dropped.
  So a ReplicaSet that creates 300 pods at once shows, as on a real cluster, nine
  ``Created pod`` events and a combined one with count 16 (10 creates, 15 patches).
  ``SeriesRecorder`` (events.k8s.io, ``client.eventsrecord``) does not correlate: upstream's
  ``tools/events`` has no such stages, so it overrides ``_write`` with its series.

Writes are synchronous by default. A recorder made with ``deferred=True`` queues each
event with the time it happened and writes the queue when its owner calls ``flush``, as
client-go's broadcaster hands events to a goroutine so that they never delay the work
they describe; the scheduler uses it (as ``client.eventsrecord.SeriesRecorder``, with
the events.k8s.io recorder's rules) and flushes when it has nothing to schedule. Unlike
client-go the queue is never dropped from (a deferred recorder correlates at flush, with
the times the events happened).

An event write that waits on an admission webhook (``kubeprio serve``) does not hold the
event loop: it raises ``WritePendingError`` (``client.writepending``) and the event,
with every later one, waits in a backlog that is written, in order, once the answers
are in. That is client-go's sink: one goroutine writes a broadcaster's events one after
the other (``StartRecordingToSink``), so a slow write holds back those behind it, which
wait in the watcher's channel of ``maxQueuedEvents`` (1000); beyond that the broadcaster
drops them (``watch.DropIfChannelFull``), and so does the backlog (``dropped``). Time comes from the injected ``Clock``; no randomness is used. Failures to record
are swallowed, as upstream: an event is best effort and never fails the caller.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Final

from kubeprio.api import errors, kinds
from kubeprio.api.core import Event, EventSource, ObjectReference
from kubeprio.api.meta import ApiObject, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.client.answeredretry import retryable
from kubeprio.client.eventcorrelator import Correlated, EventCorrelator
from kubeprio.client.protocol import Client
from kubeprio.client.writepending import WritePendingError
from kubeprio.clock import Clock, rfc3339
from kubeprio.frozen import fast_init

EVENT_TYPE_NORMAL: Final = "Normal"
EVENT_TYPE_WARNING: Final = "Warning"
MAX_QUEUED_EVENTS: Final = 1000
"""Events that wait behind a pending write before new ones are dropped (client-go's
``maxQueuedEvents``)."""
_MAX_NAME_ATTEMPTS: Final = 8
"""Names tried, one nanosecond apart, past those this recorder knows are taken, before an
event is given up (names another writer took)."""


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class QueuedEvent:
    """An event waiting in a deferred recorder, with the time it happened."""

    ref: ObjectReference
    event_type: str
    reason: str
    message: str
    action: str | None
    related: ObjectReference | None
    at: float


def _as_correlated(event: Event, *, combined: bool, count: int) -> Event:
    """``event`` as the correlator makes it: the combined event of a group (upstream
    ``EventAggregate`` builds it with source, object, type, reason, message and times only)
    or a repeat whose first write is gone (created with its count)."""
    if not combined:
        return evolve(event, count=count)
    return evolve(
        event,
        count=count,
        reporting_component=None,
        reporting_instance=None,
        action=None,
        related=None,
    )


def object_reference(obj: ApiObject, field_path: str | None = None) -> ObjectReference:
    """The ``ObjectReference`` of ``obj`` (upstream ``reference.GetReference``)."""
    info = kinds.for_object(obj)
    meta = obj.metadata
    return ObjectReference(
        kind=info.kind,
        namespace=meta.namespace or None,
        name=meta.name,
        uid=meta.uid,
        api_version=info.api_version,
        resource_version=meta.resource_version,
        field_path=field_path,
    )


class EventRecorder:
    """Records Events for one component (``source.component``) on one host."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        component: str,
        host: str | None = None,
        deferred: bool = False,
        correlator: EventCorrelator | None = None,
    ) -> None:
        self._correlator = correlator or EventCorrelator()
        """Aggregates, counts and throttles the events."""
        self._in_flight: tuple[QueuedEvent, Correlated] | None = None
        """The event being written and what the correlator said, kept while the write
        waits on webhook answers so that its retry is not correlated (counted) twice."""
        self._client = client
        self._clock = clock
        self.component = component
        self.host = host
        self.deferred = deferred
        self._queued: collections.deque[QueuedEvent] = collections.deque()
        self._backlog: collections.deque[QueuedEvent] = collections.deque()
        """Events behind a write that waits on webhook answers, oldest first."""
        self.dropped = 0
        """Events dropped because the backlog was full."""
        self._named_at = -1
        self._named: dict[tuple[str, str], int] = {}
        """Names this recorder created at nanosecond ``_named_at``: (namespace, object) ->
        attempts used. Those names exist (events are never deleted here), so the next
        event about the object at the same instant starts past them, without a failed
        create each."""

    def event(
        self,
        obj: ApiObject,
        event_type: str,
        reason: str,
        message: str,
        *,
        action: str | None = None,
        related: ApiObject | None = None,
    ) -> Event | None:
        """Record an event about ``obj``; return the stored Event (None if it failed or
        was queued by a deferred recorder).

        ``action`` and ``related`` are the events.k8s.io fields upstream's scheduler fills
        (``Preempting`` with the preemptor as the related object).
        """
        return self.event_for(
            object_reference(obj),
            event_type,
            reason,
            message,
            action=action,
            related=object_reference(related) if related is not None else None,
        )

    def event_for(
        self,
        ref: ObjectReference,
        event_type: str,
        reason: str,
        message: str,
        *,
        action: str | None = None,
        related: ObjectReference | None = None,
    ) -> Event | None:
        """Record an event about the object ``ref`` points to (or queue it, if deferred)."""
        item = QueuedEvent(ref, event_type, reason, message, action, related, self._clock.now())
        if self.deferred:
            self._queued.append(item)
            return None
        return self._write_or_wait(item)

    @property
    def queued(self) -> int:
        """Events waiting for ``flush``."""
        return len(self._queued)

    def flush(self, limit: int | None = None) -> int:
        """Write the queued events (at most ``limit``) in the order they happened; return
        how many were written."""
        written = 0
        while self._queued and (limit is None or written < limit):
            self._write_or_wait(self._queued.popleft())
            written += 1
        return written

    @property
    def backlog(self) -> int:
        """Events waiting behind a write that waits on webhook answers."""
        return len(self._backlog)

    def _write_or_wait(self, item: QueuedEvent) -> Event | None:
        """Write ``item`` now, or (behind a pending write, or pending itself) in the backlog."""
        if self._backlog:
            if len(self._backlog) >= MAX_QUEUED_EVENTS:
                self.dropped += 1
            else:
                self._backlog.append(item)
            return None
        return self._attempt(item)

    def _attempt(self, item: QueuedEvent) -> Event | None:
        """Write ``item``; when it waits on webhook answers, it goes first in the backlog,
        which is written once they are in."""
        try:
            return retryable(functools.partial(self._write, item))
        except WritePendingError as pending:
            self._backlog.appendleft(item)
            pending.when_answered(self._drain_backlog)
            return None

    def _drain_backlog(self) -> None:
        """Write the backlog in order, until a write waits on answers again."""
        while self._backlog:
            item = self._backlog.popleft()
            self._attempt(item)
            if self._backlog and self._backlog[0] is item:
                return  # pending again: this runs again once its answers are in

    def _write(self, item: QueuedEvent) -> Event | None:
        """Write ``item`` as the correlator says: drop it, create it (perhaps as the
        combined event) or patch the event it repeats (upstream ``recordToSink``)."""
        decision: Correlated | None
        if self._in_flight is not None and self._in_flight[0] is item:
            decision = self._in_flight[1]  # a retry once webhook answers are in
        else:
            decision = self._correlator.correlate(
                item.ref,
                item.event_type,
                item.reason,
                item.message,
                component=self.component,
                host=self.host or "",
                now=item.at,
            )
            if decision is None:
                return None
        self._in_flight = (item, decision)
        stored: Event | None
        if decision.is_patch:
            try:
                stored = self._patch_correlated(decision, item.ref, item.at)
            except errors.NotFoundError:
                # Gone (expired, deleted): recordEvent creates the repeat it patched, under
                # the same name, with its first timestamp and count.
                stored = self._recreate(item, decision)
            except errors.StatusError:
                self._in_flight = None
                return None
        else:
            stored = self._create(
                item.ref,
                item.event_type,
                item.reason,
                decision.message,
                item.at,
                item.action,
                item.related,
                combined=decision.combined,
                count=decision.count,
            )
        self._in_flight = None
        if stored is not None:
            self._correlator.written(
                decision, stored.metadata.name or "", stored.count or 1, stored.first_timestamp
            )
        return stored

    def _recreate(self, item: QueuedEvent, decision: Correlated) -> Event | None:
        """``recordEvent`` after a PATCH that found no event: create the repeat as
        ``eventObserve`` made it (the first write's name and ``firstTimestamp``, the count
        so far, ``lastTimestamp`` now); None when that fails too."""
        event = self._new_event(
            item.ref,
            item.event_type,
            item.reason,
            decision.message,
            item.at,
            item.action,
            item.related,
            decision.name or "",
        )
        event = _as_correlated(event, combined=decision.combined, count=decision.count)
        if decision.first_timestamp is not None:
            event = evolve(event, first_timestamp=decision.first_timestamp)
        try:
            return self._client.create(event)
        except errors.StatusError:
            return None

    def _patch_correlated(self, decision: Correlated, ref: ObjectReference, now: float) -> Event:
        """Upstream ``eventObserve``'s patch: the fields that differ from a copy with no
        count, an epoch ``lastTimestamp`` and no message."""
        patch = {
            "count": decision.count,
            "lastTimestamp": rfc3339(now),
            "message": decision.message,
        }
        return self._client.patch(
            Event, decision.name or "", patch, namespace=ref.namespace or "default"
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
        """A first occurrence named ``name``, as client-go's ``makeEvent`` fills it."""
        timestamp = rfc3339(now)
        return Event(
            metadata=ObjectMeta(name=name, namespace=ref.namespace or "default"),
            involved_object=ref,
            reason=reason,
            message=message,
            source=EventSource(component=self.component, host=self.host),
            first_timestamp=timestamp,
            last_timestamp=timestamp,
            count=1,
            type=event_type,
            reporting_component=self.component,
            reporting_instance=self.host or "",
            action=action,
            related=related,
        )

    def _create(
        self,
        ref: ObjectReference,
        event_type: str,
        reason: str,
        message: str,
        now: float,
        action: str | None = None,
        related: ObjectReference | None = None,
        *,
        combined: bool = False,
        count: int = 1,
    ) -> Event | None:
        nanos = round(now * 1e9)
        if nanos != self._named_at:
            self._named.clear()
            self._named_at = nanos
        taken = (ref.namespace or "default", ref.name or "")
        # Past the names already taken at this instant, however many: in virtual time a
        # controller's burst (a ReplicaSet creating 300 pods) all happens at one instant.
        first = self._named.get(taken, 0)
        # Built with its first name: the event is made once, not once and then copied.
        named = self._new_event(
            ref, event_type, reason, message, now, action, related, f"{ref.name}.{nanos + first:x}"
        )
        if combined or count != 1:
            named = _as_correlated(named, combined=combined, count=count)
        for attempt in range(first, first + _MAX_NAME_ATTEMPTS):
            # Two events about one object at the same (virtual) nanosecond would share a
            # name; the next nanosecond keeps names unique and deterministic.
            if attempt != first:
                name = f"{ref.name}.{nanos + attempt:x}"
                named = evolve(named, metadata=evolve(named.metadata, name=name))
            try:
                stored = self._client.create(named)
            except errors.AlreadyExistsError:
                continue
            except errors.StatusError:
                return None
            self._named[taken] = attempt + 1
            return stored
        return None
