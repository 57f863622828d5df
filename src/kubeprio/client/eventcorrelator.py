"""``EventCorrelator``: client-go's three stages between a core/v1 event and its write.

``client.record.EventRecorder`` asks it what to do with each event, as client-go's
broadcaster does before it writes to the sink (``k8s.io/client-go/tools/record``,
``events_cache.go``, ``EventCorrelate``; ``event.go``, ``recordToSink``). The stages run
in upstream's order:

1. **aggregate** (``EventAggregator`` with ``EventAggregatorByReasonFunc``): events that
   differ only in their message (same source, object, type, reason, reporting controller
   and instance) are grouped; once ten distinct messages were seen with no gap longer
   than 600 s, each further new message goes instead into one event whose message is
   ``(combined from similar events): `` and the latest message;
2. **observe** (``eventLogger.eventObserve``): a repeat of an event already written (same
   key: the exact event, or the group for a combined one) becomes a PATCH of that event's
   ``count``, ``lastTimestamp`` and ``message``; the count includes the repeats the spam
   filter dropped, as upstream's log counts them before it filters. The repeat carries
   the first write's name and ``firstTimestamp``, so that if the PATCH finds the event
   gone the recorder creates it again as it was (``recordEvent``);
3. **filter** (``EventSourceObjectSpamFilter``): a token bucket (``client.tokenbucket``) per
   source and object (``getSpamKey``: component, host, kind, namespace, name, UID, API
   version; not the reason in v1.32) allows a burst of 25 events and refills one every
   300 s; an event without a token is dropped.

kube-controller-manager and the kubelet build their broadcasters without
``CorrelatorOptions``, so these defaults are theirs. Each cache is an LRU of 4096 keys.

Deterministic: the time of each event is passed in (the recorder reads it from its
injected ``Clock``), never read from the wall clock, and where upstream drops an
arbitrary message from a full group (``sets.String.PopAny``, Go's random map order) this
drops the oldest one.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Hashable
from typing import Final, Generic, TypeVar

from kubeprio.api.core import ObjectReference
from kubeprio.api.gofloat import float32
from kubeprio.client.tokenbucket import TokenBucket

LRU_CACHE_ENTRIES: Final = 4096
"""client-go's ``maxLruCacheEntries``, the size of each of the three caches."""
AGGREGATE_MAX_EVENTS: Final = 10
"""``defaultAggregateMaxEvents``: distinct messages before they are combined."""
AGGREGATE_INTERVAL_SECONDS: Final = 600.0
"""``defaultAggregateIntervalInSeconds``: a gap longer than this starts a group afresh."""
SPAM_BURST: Final = 25
"""``defaultSpamBurst``: events a source may write about an object at once."""
SPAM_QPS: Final = float32(1.0 / 300.0)
"""``defaultSpamQPS`` (1/300), rounded to float32 as the spam filter's ``qps float32`` field
holds it (a hair above 1/300)."""
COMBINED_PREFIX: Final = "(combined from similar events): "
"""``EventAggregatorByReasonMessageFunc``'s prefix."""

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class Lru(Generic[_K, _V]):
    """A bounded map that forgets the least recently used key (groupcache's ``lru``)."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: collections.OrderedDict[_K, _V] = collections.OrderedDict()

    def get(self, key: _K) -> _V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def add(self, key: _K, value: _V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self._capacity:
            self._entries.popitem(last=False)


@dataclasses.dataclass(slots=True)
class _Group:
    """The distinct messages seen in one aggregation group, oldest first, and when the
    group last saw an event (upstream ``aggregateRecord``)."""

    messages: dict[str, None]
    last_seen: float


@dataclasses.dataclass(slots=True)
class _Logged:
    """What was written for one key: its count so far, the name of the event that holds
    it and that event's ``firstTimestamp`` (upstream ``eventLog``); ``name`` is None
    until the write came back."""

    count: int
    name: str | None
    first_timestamp: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class Correlated:
    """What to write for one event: a new Event (``count`` 1, or no ``name`` known) or a
    PATCH of the event ``name`` to ``count`` and ``message``."""

    key: Hashable
    """Tell ``written`` this key once the write is in."""
    message: str
    count: int
    name: str | None
    combined: bool
    """The event is the group's combined event: upstream builds it without reporting
    controller, instance, action or related object."""
    first_timestamp: str | None = None
    """A repeat's ``firstTimestamp``: the first write's (``eventObserve`` copies it from
    its log), so that the repeat, recreated if its event is gone, keeps it."""

    @property
    def is_patch(self) -> bool:
        return self.count > 1 and self.name is not None


def _object_key(ref: ObjectReference) -> tuple[str, ...]:
    return (
        ref.kind or "",
        ref.namespace or "",
        ref.name or "",
        ref.uid or "",
        ref.api_version or "",
    )


class EventCorrelator:
    """Aggregates, counts and throttles one recorder's core/v1 events (upstream
    ``NewEventCorrelator`` with the default options)."""

    def __init__(self, *, burst: int = SPAM_BURST) -> None:
        self._burst = burst
        """The spam filter's burst (``SPAM_BURST``; a test raises it to look past it)."""
        self._groups: Lru[Hashable, _Group] = Lru(LRU_CACHE_ENTRIES)
        self._log: Lru[Hashable, _Logged] = Lru(LRU_CACHE_ENTRIES)
        self._buckets: Lru[Hashable, TokenBucket] = Lru(LRU_CACHE_ENTRIES)
        self.dropped = 0
        """Events the spam filter dropped."""

    def correlate(
        self,
        ref: ObjectReference,
        event_type: str,
        reason: str,
        message: str,
        *,
        component: str,
        host: str,
        now: float,
    ) -> Correlated | None:
        """What to write for this event at ``now``; None if the spam filter drops it."""
        source = (component, host)
        obj = _object_key(ref)
        # EventAggregatorByReasonFunc also keys on the reporting controller and instance:
        # the recorder fills them from the source, so they add nothing here.
        group_key = (*source, *obj, event_type, reason)
        combined = self._aggregate(group_key, message, now)
        if combined:
            key: Hashable = ("combined", group_key)
            message = COMBINED_PREFIX + message
        else:
            # getEventKey: the group's fields less the reporter, plus the field path
            # (each container's events are their own) and the message.
            key = (*source, *obj, ref.field_path or "", event_type, reason, message)
        logged = self._log.get(key)
        if logged is None:
            logged = _Logged(1, None, None)
            self._log.add(key, logged)
        else:
            logged.count += 1  # get moved it to the most recently used end already
        count, name = logged.count, logged.name
        if not self._allow((*source, *obj), now):
            self.dropped += 1
            return None
        return Correlated(key, message, count, name, combined, logged.first_timestamp)

    def written(
        self, correlated: Correlated, name: str, count: int, first_timestamp: str | None
    ) -> None:
        """The event ``name`` now holds ``correlated``'s key with ``count`` since
        ``first_timestamp`` (upstream ``UpdateState``, keyed as the event was correlated
        so that a combined event's next member patches it)."""
        self._log.add(correlated.key, _Logged(count, name, first_timestamp))

    def _aggregate(self, group_key: Hashable, message: str, now: float) -> bool:
        """Note ``message`` in its group; True if the event goes into the combined one."""
        group = self._groups.get(group_key)
        if group is None or now - group.last_seen > AGGREGATE_INTERVAL_SECONDS:
            group = _Group({}, now)
            self._groups.add(group_key, group)
        group.messages[message] = None
        group.last_seen = now
        if len(group.messages) < AGGREGATE_MAX_EVENTS:
            return False
        # Keep the group below the limit, so that each new message is combined.
        del group.messages[next(iter(group.messages))]
        return True

    def _allow(self, spam_key: Hashable, now: float) -> bool:
        bucket = self._buckets.get(spam_key)
        if bucket is None:
            bucket = TokenBucket(SPAM_QPS, self._burst, now)
            self._buckets.add(spam_key, bucket)
        return bucket.try_accept(now)
