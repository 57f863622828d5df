"""Deciding whether a cluster event may make a rejected pod schedulable.

The judgement half of upstream ``PriorityQueue``: ``isEventOfInterest``,
``isPodWorthRequeuing`` and the gated-pod check of ``movePodsToActiveOrBackoffQueue``
(``pkg/scheduler/backend/queue/scheduling_queue.go``). ``HintEvaluator`` holds the enabled
plugins' registered events (``scheduler.queueing_hints``) and, per incoming event, caches
which (plugin, hint) pairs it concerns, so judging one pod costs a few set lookups plus the
hint calls of its own rejector plugins. ``scheduler.queue`` acts on the verdicts.
No clock, no I/O.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence

from kubeprio.api.core import Pod
from kubeprio.scheduler.events import (
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    match_any_cluster_event,
    match_cluster_events,
)
from kubeprio.scheduler.framework import QueuedPodInfo

HintEntry = tuple[str, ClusterEventWithHint]
"""(plugin name, one of its registered events with its hint)."""


class Strategy(enum.IntEnum):
    """How a pod leaving the unschedulable pool is requeued (upstream ``queueingStrategy``)."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


@dataclasses.dataclass(frozen=True, slots=True)
class EventInterest:
    """What the enabled plugins make of one distinct event, worked out once.

    The queue asks these questions several times per event (whether it concerns anyone,
    which plugins, its label); each asks the event's hash and flags again otherwise.
    """

    wildcard: bool
    of_interest: bool
    """Upstream ``isEventOfInterest``: a wildcard, or some plugin registered a match."""
    plugins: frozenset[str]
    """Plugins that registered an event this one matches."""
    hints: tuple[HintEntry, ...]
    """The (plugin, registration) pairs this event matches, in registration order."""
    label: str


class HintEvaluator:
    """Registered events and hints of the enabled plugins, queried per event."""

    __slots__ = ("_by_event", "_entries", "_plugin_events")

    def __init__(self, hints: Mapping[str, Sequence[ClusterEventWithHint]]) -> None:
        self._plugin_events: dict[str, tuple[ClusterEvent, ...]] = {
            plugin: tuple(entry.event for entry in entries) for plugin, entries in hints.items()
        }
        self._entries: tuple[HintEntry, ...] = tuple(
            (plugin, entry) for plugin, entries in hints.items() for entry in entries
        )
        self._by_event: dict[ClusterEvent, EventInterest] = {}

    def interest(self, event: ClusterEvent) -> EventInterest:
        """What ``event`` means to the enabled plugins (cached per distinct event)."""
        cached = self._by_event.get(event)
        if cached is None:
            hints = tuple(
                (plugin, entry)
                for plugin, entry in self._entries
                if match_cluster_events(entry.event, event)
            )
            wildcard = event.is_wildcard()
            cached = EventInterest(
                wildcard=wildcard,
                of_interest=wildcard or bool(hints),
                plugins=frozenset(plugin for plugin, _ in hints),
                hints=hints,
                label=event.label,
            )
            self._by_event[event] = cached
        return cached

    def gate_ignores(self, qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Whether ``qpi`` is gated by a PreEnqueue plugin that did not register ``event``."""
        if not qpi.gating_plugin:
            return False
        registered = self._plugin_events.get(qpi.gating_plugin, ())
        return not match_any_cluster_event(event, registered)

    def worth_requeuing(
        self,
        qpi: QueuedPodInfo,
        event: ClusterEvent,
        old: object | None,
        new: object | None,
        *,
        interest: EventInterest | None = None,
    ) -> Strategy:
        """Upstream ``isPodWorthRequeuing``: ask the rejector plugins' hints about ``event``.

        No rejector: retry after backoff. A wildcard: retry after backoff, unless it
        carries another pod. Otherwise a ``QUEUE`` from a pending plugin requeues
        immediately, from an unschedulable plugin after backoff; all ``QUEUE_SKIP`` (or
        no rejector registered the event) leaves the pod where it is.
        """
        pending = qpi.pending_plugins
        rejectors = qpi.unschedulable_plugins | pending
        if not rejectors:
            return Strategy.AFTER_BACKOFF
        if interest is None:  # (a caller moving many pods looked it up once for all)
            interest = self.interest(event)
        if interest.wildcard:
            if new is not None and not (
                isinstance(new, Pod) and (new.metadata.uid or "") == qpi.pod_info.uid
            ):
                return Strategy.SKIP  # a wildcard aimed at another pod
            return Strategy.AFTER_BACKOFF
        strategy = Strategy.SKIP
        for plugin, entry in interest.hints:
            if plugin not in rejectors:
                continue
            hint = entry.hint
            if hint is not None and hint(qpi.pod_info, old, new) is QueueingHint.QUEUE_SKIP:
                continue
            if plugin in pending:
                return Strategy.IMMEDIATELY
            if not pending:
                return Strategy.AFTER_BACKOFF
            strategy = Strategy.AFTER_BACKOFF
        return strategy
