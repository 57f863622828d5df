"""The scheduling queue: activeQ, backoffQ, the unschedulable pool and in-flight pods.

Mirrors upstream ``PriorityQueue`` (``pkg/scheduler/backend/queue/scheduling_queue.go``,
``active_queue.go``, ``backoff_queue.go``) with queueing hints and ``SchedulerPopFromBackoffQ``
enabled, as in current releases (semantics §3). The scheduler's informer handlers call
``add``/``update``/``delete``/``move_all_to_active_or_backoff``/``assigned_pod_*``; the
scheduling loop calls ``pop``, then ``add_unschedulable_if_not_present`` (or
``requeue_failed``) on failure and ``done`` when the pod's cycle ends; the driver calls
``flush_backoff_completed`` every second and ``flush_unschedulable_leftover`` every 30 s (or
at ``next_wakeup``). Everything is non-blocking: ``pop`` returns ``None`` when there is
nothing to do. Time comes from the injected ``Clock``; no threads, no sleeps, no I/O.

Where a pod can be: in exactly one of the four boxes at any time::

       add(pod), update(unknown pod)                          PreEnqueue gates it
    ---------------------+-------------------------------------------------+
                         v                                                 v
   +-----------+  pop()  +-----------+  rejected; nothing relevant  +---------------+
   |  activeQ  | ------> | in flight | ---------------------------> | unschedulable |
   +-----------+         +-----------+  seen while in flight        |     pool      |
     ^  ^  ^              |   |   |                                 +---------------+
     |  |  |    done():   |   |   | error; or rejected after a         |       |
     |  |  |    gone <----+   |   | relevant event, backing off        |       |
     |  |  |                  |   v                                    |       |
     |  |  +------------------+  +-----------+ <---------- (b) --------+       |
     |  |  rejected after a      | backoffQ  |                                 |
     |  |  relevant event,       +-----------+ ---- gated on the way in -->  pool
     |  |  backoff over                |                                     |
     |  +------------ (c) -------------+                                     |
     +-------------------------------------- (a) ----------------------------+

    (a) a cluster event a rejector plugin's hint accepts, the pod's own update, more than
        5 min in the pool, activate() -- with the backoff over (a Pending plugin's hint
        skips backoff);
    (b) the same while the pod is still backing off;
    (c) flush_backoff_completed once the backoff is over, activate(), or pop() straight
        from backoffQ when activeQ is empty (SchedulerPopFromBackoffQ; never the error
        heap).
    delete(pod) removes a waiting pod; an in-flight pod stays in flight until done().

Metrics: ``incoming[(queue, event)]`` counts pods moved where upstream's ``moveToActiveQ``
and ``requeuePodViaQueueingHint`` count ``scheduler_queue_incoming_pods_total``;
``pending_counts`` gives ``scheduler_pending_pods`` (docs/scheduling-queue.md).

Deviations, all deliberate: ties in every heap break by insertion order (upstream: heap
layout), events move pods in pool order (upstream: Go map order), and cluster events only
visit pods whose rejector plugins registered for them (same outcome as upstream's full
scan, without its cost).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Protocol, runtime_checkable

from kubeprio.api.core import Pod
from kubeprio.client.informer import Lister
from kubeprio.clock import Clock
from kubeprio.scheduler import events as ev
from kubeprio.scheduler.backoff import BackoffPolicy
from kubeprio.scheduler.backoff_queue import BackoffQueue
from kubeprio.scheduler.events import ClusterEvent, ClusterEventWithHint
from kubeprio.scheduler.framework import (
    Code,
    PodInfo,
    PreEnqueuePlugin,
    QueuedPodInfo,
    QueueSortPlugin,
)
from kubeprio.scheduler.heap import KeyedHeap, LessKey, SortKey
from kubeprio.scheduler.in_flight import InFlightPods, LoggedEvent
from kubeprio.scheduler.nominator import NominatingInfo, Nominator
from kubeprio.scheduler.queueing_hints import DEFAULT_PLUGINS, queueing_hint_map
from kubeprio.scheduler.requeue import HintEvaluator, Strategy
from kubeprio.scheduler.unschedulable_pods import NamespaceLabels, UnschedulablePods

DEFAULT_POD_INITIAL_BACKOFF: Final = 1.0
DEFAULT_POD_MAX_BACKOFF: Final = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION: Final = 300.0
UNSCHEDULABLE_FLUSH_INTERVAL: Final = 30.0
"""Period of upstream's ``flushUnschedulablePodsLeftover`` loop."""

_POD_ADD: Final = ev.UNSCHEDULED_POD_ADD.label
_POD_UPDATE: Final = ev.UNSCHEDULED_POD_UPDATE.label
_NOMINATING_EVENTS: Final = frozenset((_POD_ADD, _POD_UPDATE))
"""Entering activeQ through these registers the pod's own nomination (upstream moveToActiveQ)."""

ACTIVE_Q: Final = "Active"
BACKOFF_Q: Final = "Backoff"
UNSCHEDULABLE_Q: Final = "Unschedulable"

# The ``queue`` label values of upstream's queue metrics.
INCOMING_ACTIVE: Final = "active"
INCOMING_BACKOFF: Final = "backoff"
INCOMING_UNSCHEDULABLE: Final = "unschedulable"


@runtime_checkable
class SortKeyed(Protocol):
    """A QueueSort plugin that can also express its order as a tuple (``PrioritySort``)."""

    def sort_key(self, qpi: QueuedPodInfo) -> SortKey:
        """A key ordering exactly as the plugin's ``less``."""
        ...


def _uid(pod: Pod) -> str:
    return pod.metadata.uid or ""


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace or ''}/{pod.metadata.name or ''}"


class SchedulingQueue:
    """The priority queue of pending pods (upstream ``PriorityQueue``); see the module docstring."""

    def __init__(
        self,
        clock: Clock,
        *,
        sort: QueueSortPlugin,
        pre_enqueue: Sequence[PreEnqueuePlugin] = (),
        queueing_hints: Mapping[str, Sequence[ClusterEventWithHint]] | None = None,
        pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        pop_from_backoff_q: bool = True,
        pod_lister: Lister[Pod] | None = None,
        namespace_labels: NamespaceLabels | None = None,
    ) -> None:
        self._clock = clock
        self._max_in_unschedulable = pod_max_in_unschedulable_pods_duration
        self._pop_from_backoff = pop_from_backoff_q
        self._pre_enqueue = tuple(pre_enqueue)
        self._namespace_labels = namespace_labels
        hints = queueing_hints if queueing_hints is not None else queueing_hint_map(DEFAULT_PLUGINS)
        self._hints = HintEvaluator(hints)

        if isinstance(sort, SortKeyed):
            active_key: Callable[[QueuedPodInfo], SortKey] = sort.sort_key
        else:
            less = sort.less

            def active_key(qpi: QueuedPodInfo) -> SortKey:
                return (LessKey(less, qpi),)

        self._active_key = active_key
        self._backoff_policy = BackoffPolicy(
            clock,
            initial=pod_initial_backoff,
            maximum=pod_max_backoff,
            windowed=pop_from_backoff_q,
            active_key=active_key,
        )
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap(active_key)
        self._backoff = BackoffQueue(self._backoff_policy)
        self._unschedulable = UnschedulablePods()
        self._nominator = Nominator(pod_lister)
        self._in_flight = InFlightPods()
        self._cycle = 0
        self.incoming: dict[tuple[str, str], int] = {}
        """``(queue label, event label)`` -> pods moved that way (a gated pod parked in the
        pool is not counted, as in v1.32)."""

    def _count_incoming(self, queue: str, event: str) -> None:
        key = (queue, event)
        self.incoming[key] = self.incoming.get(key, 0) + 1

    @property
    def backoff(self) -> BackoffPolicy:
        """The backoff rules this queue applies."""
        return self._backoff_policy

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Whether ``qpi`` is still in its backoff (upstream ``isPodBackingoff``)."""
        return self._backoff_policy.is_backing_off(qpi)

    # --- PreEnqueue and the moves between queues -------------------------------------------

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> None:
        """Upstream ``runPreEnqueuePlugins``: the gating plugin first, stop at the first gate."""
        gating = qpi.gating_plugin
        plugins = self._pre_enqueue
        if gating:
            first = [plugin for plugin in plugins if plugin.name == gating]
            plugins = (*first, *(plugin for plugin in plugins if plugin.name != gating))
        for plugin in plugins:
            status = plugin.pre_enqueue(qpi.pod)
            if status is not None and status.code is not Code.SUCCESS:
                qpi.unschedulable_plugins.add(plugin.name)
                qpi.gating_plugin = plugin.name
                return
        qpi.gating_plugin = ""

    def _move_to_active(self, qpi: QueuedPodInfo, event: str, *, from_backoff: bool) -> bool:
        """Upstream ``moveToActiveQ``; gated pods go to (or stay in) the unschedulable pool."""
        if not (self._pop_from_backoff and from_backoff) and self._pre_enqueue:
            self._run_pre_enqueue(qpi)
        key = qpi.pod_info.key
        if qpi.gating_plugin:
            if key in self._active or key in self._backoff:
                return False
            self._unschedulable.add_or_update(qpi)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()
        self._unschedulable.delete(key)
        self._backoff.delete(key)
        self._active.add_or_update(key, qpi)
        self._count_incoming(INCOMING_ACTIVE, event)
        if event in _NOMINATING_EVENTS:
            self._nominator.add_nominated_pod(qpi.pod_info)
        return True

    def _move_to_backoff(self, qpi: QueuedPodInfo) -> bool:
        """Upstream ``moveToBackoffQ``: with PopFromBackoffQ, PreEnqueue runs on the way in."""
        if self._pop_from_backoff and self._pre_enqueue:
            self._run_pre_enqueue(qpi)
            if qpi.gating_plugin:
                self._unschedulable.add_or_update(qpi)
                return False
        self._unschedulable.delete(qpi.pod_info.key)
        self._backoff.add(qpi)
        return True

    def _requeue(self, qpi: QueuedPodInfo, strategy: Strategy, event: str) -> str:
        """Upstream ``requeuePodWithQueueingStrategy``: the name of the queue the pod went to."""
        if strategy is Strategy.SKIP:
            self._unschedulable.add_or_update(qpi)
            self._count_incoming(INCOMING_UNSCHEDULABLE, event)
            return UNSCHEDULABLE_Q
        if strategy is Strategy.AFTER_BACKOFF and self._backoff_policy.is_backing_off(qpi):
            if not self._move_to_backoff(qpi):
                return UNSCHEDULABLE_Q
            self._count_incoming(INCOMING_BACKOFF, event)
            return BACKOFF_Q
        return ACTIVE_Q if self._move_to_active(qpi, event, from_backoff=False) else UNSCHEDULABLE_Q

    # --- entry points for informer handlers ------------------------------------------------

    def _new_queued(self, pod: Pod) -> QueuedPodInfo:
        return QueuedPodInfo(pod_info=PodInfo.of(pod), timestamp=self._clock.now())

    def add(self, pod: Pod) -> None:
        """A new unscheduled pod (upstream ``Add``): to activeQ unless PreEnqueue gates it."""
        self._move_to_active(self._new_queued(pod), _POD_ADD, from_backoff=False)

    def update(self, old: Pod | None, new: Pod) -> None:
        """An unscheduled pod changed (upstream ``Update``).

        In flight: the update is recorded for replay. In activeQ or backoffQ: updated in
        place. In the pool: re-evaluated with the pod-update events' hints. Unknown: added.
        """
        events = ev.pod_scheduling_properties_change(new, old) if old is not None else []
        if self._in_flight.record_for_pod(_uid(new), (LoggedEvent(e, old, new) for e in events)):
            return
        key = _key(new)
        if old is not None:
            qpi = self._active.get(key) or self._backoff.get(key)
            if qpi is not None:
                qpi.pod_info = qpi.pod_info.updated(new)
                if key in self._active:
                    self._active.add_or_update(key, qpi)
                else:
                    self._backoff.update(key, qpi)
                self._nominator.update_nominated_pod(old, qpi.pod_info)
                return
        qpi = self._unschedulable.get(key)
        if qpi is not None:
            qpi.pod_info = qpi.pod_info.updated(new)
            self._unschedulable.add_or_update(qpi)
            self._nominator.update_nominated_pod(old if old is not None else new, qpi.pod_info)
            for event in events:
                strategy = self._hints.worth_requeuing(qpi, event, old, new)
                if self._requeue(qpi, strategy, event.label) in (ACTIVE_Q, BACKOFF_Q):
                    break
            return
        self._move_to_active(self._new_queued(new), _POD_UPDATE, from_backoff=False)

    def delete(self, pod: Pod) -> None:
        """An unscheduled pod was deleted (upstream ``Delete``); an in-flight one stays until ``done``."""
        self._nominator.delete_nominated_pod_if_exists(pod)
        key = _key(pod)
        if self._active.delete(key) is None and self._backoff.delete(key) is None:
            self._unschedulable.delete(key)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move pods from the pool or backoffQ to activeQ (upstream ``Activate``).

        An in-flight pod gets a ``ForceActivate`` event recorded so it is requeued when it
        returns; pods the queue does not hold are ignored.
        """
        for pod in pods:
            key = _key(pod)
            qpi = self._unschedulable.get(key)
            from_backoff = False
            if qpi is None:
                qpi = self._backoff.delete(key)
                from_backoff = True
            if qpi is not None:
                self._move_to_active(qpi, ev.FORCE_ACTIVATE_LABEL, from_backoff=from_backoff)
            else:
                self._in_flight.record_for_pod(
                    _uid(pod), [LoggedEvent(ev.FORCE_ACTIVATE, None, pod)]
                )

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object | None = None,
        new: object | None = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> None:
        """Requeue the pool's pods that ``event`` may help (upstream ``MoveAllToActiveOrBackoffQueue``).

        Costs O(pods rejected by plugins registered for the event), at most O(pool).
        """
        interest = self._hints.interest(event)
        if not interest.of_interest:
            return
        if interest.wildcard:
            if isinstance(new, Pod):
                target = self._unschedulable.get(_key(new))
                candidates = [target] if target is not None else []
            else:
                candidates = list(self._unschedulable)
        else:
            candidates = self._unschedulable.rejected_by(interest.plugins)
        if pre_check is not None:
            candidates = [qpi for qpi in candidates if pre_check(qpi.pod)]
        self._move_pods(candidates, event, old, new)

    def assigned_pod_added(self, pod: Pod) -> None:
        """A bound pod appeared (upstream ``AssignedPodAdded``): only cross-topology pods may gain."""
        candidates = self._unschedulable.with_cross_topology_term(pod, self._namespace_labels)
        self._move_pods(candidates, ev.ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Pod, new: Pod, event: ClusterEvent) -> None:
        """A bound pod changed (upstream ``AssignedPodUpdated``); a scale-down concerns everyone."""
        scale_down = ClusterEvent(ev.EventResource.POD, ev.ActionType.UPDATE_POD_SCALE_DOWN)
        if ev.match_cluster_events(scale_down, event):
            self.move_all_to_active_or_backoff(event, old, new)
            return
        candidates = self._unschedulable.with_cross_topology_term(new, self._namespace_labels)
        self._move_pods(candidates, event, old, new)

    def _move_pods(
        self,
        candidates: Sequence[QueuedPodInfo],
        event: ClusterEvent,
        old: object | None,
        new: object | None,
    ) -> None:
        """Upstream ``movePodsToActiveOrBackoffQueue``."""
        interest = self._hints.interest(event)
        if not interest.of_interest:
            return
        label = interest.label
        for qpi in candidates:
            if self._hints.gate_ignores(qpi, event):
                continue  # the gate does not care about this event
            strategy = self._hints.worth_requeuing(qpi, event, old, new, interest=interest)
            if strategy is Strategy.SKIP:
                continue
            self._unschedulable.delete(qpi.pod_info.key)
            self._requeue(qpi, strategy, label)
        self._in_flight.record(event, old, new)

    # --- the scheduling loop's side --------------------------------------------------------

    @property
    def scheduling_cycle(self) -> int:
        """How many pods have been popped (upstream ``SchedulingCycle``)."""
        return self._cycle

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or ``None`` (upstream ``Pop``, non-blocking).

        Takes the head of activeQ; when activeQ is empty, the head of the (non-error)
        backoffQ even if it is still backing off (``SchedulerPopFromBackoffQ``, KEP-5142:
        an idle scheduler need not wait). Bumps ``attempts`` and the cycle, clears the
        rejector plugins of the previous attempt and marks the pod in flight.
        """
        while True:
            qpi = self._active.pop()
            if qpi is None and self._pop_from_backoff:
                qpi = self._backoff.pop_rejected()
            if qpi is None:
                return None
            uid = qpi.pod_info.uid
            if uid in self._in_flight:
                continue  # upstream: "the same pod is tracked in multiple places"; discard
            qpi.attempts += 1
            qpi.unschedulable_plugins.clear()
            qpi.pending_plugins.clear()
            self._cycle += 1
            self._in_flight.start(qpi)
            return qpi

    def done(self, uid: str) -> None:
        """The pod's scheduling (and binding) attempt is over (upstream ``Done``)."""
        self._in_flight.done(uid)

    def _in_flight_strategy(self, qpi: QueuedPodInfo) -> Strategy:
        """Upstream ``determineSchedulingHintForInFlightPod``: replay events seen meanwhile."""
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return Strategy.AFTER_BACKOFF
        logged_events = self._in_flight.events_since_start(qpi.pod_info.uid)
        if logged_events is None:
            return Strategy.AFTER_BACKOFF  # not popped: upstream logs a bug and retries
        strategy = Strategy.SKIP
        for logged in logged_events:
            verdict = self._hints.worth_requeuing(qpi, logged.event, logged.old, logged.new)
            if verdict is Strategy.IMMEDIATELY:
                return verdict
            if verdict is Strategy.AFTER_BACKOFF:
                strategy = verdict
                if not qpi.pending_plugins:
                    return strategy
        return strategy

    def add_unschedulable_if_not_present(
        self, qpi: QueuedPodInfo, scheduling_cycle: int | None = None
    ) -> bool:
        """Put a pod back after a failed attempt (upstream ``AddUnschedulableIfNotPresent``).

        Bumps ``unschedulable_count`` (rejected by plugins) or ``consecutive_errors_count``
        (no rejector: an error), refreshes the timestamp, then replays the events seen while
        the pod was in flight: worth retrying -> backoffQ (or activeQ if backoff is over),
        otherwise the pool; an error -> the error backoff heap. Always ends the pod's flight.
        ``scheduling_cycle`` is accepted for parity with upstream and unused (it only
        mattered without queueing hints). Returns ``False`` if the pod was already queued.
        """
        del scheduling_cycle
        key = qpi.pod_info.key
        try:
            if key in self._unschedulable or key in self._active or self._backoff.get(key):
                return False
            if not qpi.unschedulable_plugins and not qpi.pending_plugins:
                qpi.consecutive_errors_count += 1
            else:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors_count = 0
            qpi.timestamp = self._clock.now()
            self._requeue(qpi, self._in_flight_strategy(qpi), ev.SCHEDULE_ATTEMPT_FAILURE)
            return True
        finally:
            self.done(qpi.pod_info.uid)

    def requeue_failed(
        self,
        qpi: QueuedPodInfo,
        code: Code,
        *,
        unschedulable_plugins: Iterable[str] = (),
        pending_plugins: Iterable[str] = (),
        pod: Pod | None = None,
    ) -> bool:
        """Record why an attempt failed, then ``add_unschedulable_if_not_present``.

        ``code`` ERROR discards the plugin names (the pod goes to error backoff); a
        rejection records them (``Code.PENDING`` names go to ``pending_plugins``). ``pod``
        is the informer's latest copy, which upstream requeues instead of the popped one.
        """
        if pod is not None:
            qpi.pod_info = qpi.pod_info.updated(pod)
        qpi.unschedulable_plugins.clear()
        qpi.pending_plugins.clear()
        if code is not Code.ERROR:
            qpi.unschedulable_plugins.update(unschedulable_plugins)
            qpi.pending_plugins.update(pending_plugins)
        return self.add_unschedulable_if_not_present(qpi)

    # --- periodic work -----------------------------------------------------------------------

    def flush_backoff_completed(self) -> None:
        """Move every pod whose backoff is over to activeQ (upstream ``flushBackoffQCompleted``)."""
        for qpi in self._backoff.pop_completed():
            self._move_to_active(qpi, ev.BACKOFF_COMPLETE, from_backoff=True)

    def flush_unschedulable_leftover(self) -> None:
        """Requeue pods in the pool for longer than the maximum (upstream ``flushUnschedulablePodsLeftover``)."""
        now = self._clock.now()
        # When even the oldest pod (gated or not: the pool keeps both in heaps) is recent,
        # nothing is due and the pool is not walked. The driver calls this at every
        # attempt, and a pass over a pool of 10,000 waiting pods was a fifth of each one.
        oldest = [
            t
            for t in (
                self._unschedulable.earliest_timestamp(),
                self._unschedulable.earliest_timestamp(gated=True),
            )
            if t is not None
        ]
        if not oldest or not now - min(oldest) > self._max_in_unschedulable:
            return
        stale = [
            qpi for qpi in self._unschedulable if now - qpi.timestamp > self._max_in_unschedulable
        ]
        if stale:
            self._move_pods(stale, ev.UNSCHEDULABLE_TIMEOUT, None, None)

    def next_wakeup(self, *, include_leftover_flush: bool = True) -> float | None:
        """When a flush could next move a pod, or ``None`` if only an event can.

        Backoff completes at the first whole second after the expiry (the flush runs on
        whole seconds); the leftover flush is taken to tick on multiples of 30 s. Without
        ``include_leftover_flush`` only backoff completions count: a simulation that has
        delivered every cluster event can stop instead of retrying unschedulable pods on
        the 5-minute timer forever.
        """
        backoff_done = self._backoff.earliest_completion()
        times = [backoff_done] if backoff_done is not None else []
        oldest = self._unschedulable.earliest_timestamp() if include_leftover_flush else None
        if oldest is not None:
            due = oldest + self._max_in_unschedulable
            times.append(
                (math.floor(due / UNSCHEDULABLE_FLUSH_INTERVAL) + 1) * UNSCHEDULABLE_FLUSH_INTERVAL
            )
        return min(times) if times else None

    # --- nominator facade ------------------------------------------------------------------

    @property
    def nominator(self) -> Nominator:
        """The nominator the queue keeps in step with pod adds, updates and deletes."""
        return self._nominator

    def add_nominated_pod(self, pod_info: PodInfo, info: NominatingInfo | None = None) -> None:
        """Upstream ``AddNominatedPod`` (preemption nominates with ``OVERRIDE``)."""
        self._nominator.add_nominated_pod(pod_info, info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        """Upstream ``DeleteNominatedPodIfExists`` (the scheduler calls it when assuming a pod)."""
        self._nominator.delete_nominated_pod_if_exists(pod)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to ``node_name`` with the freshest PodInfo the queue holds (upstream ``NominatedPodsForNode``)."""
        recorded = self._nominator.nominated_pods_for_node(node_name)
        if not recorded:
            return recorded
        result: list[PodInfo] = []
        for pod_info in recorded:
            key = pod_info.key
            qpi = self._active.get(key) or self._unschedulable.get(key) or self._backoff.get(key)
            if qpi is None:
                qpi = self._in_flight.get(pod_info.uid)
            result.append(qpi.pod_info if qpi is not None else pod_info)
        return result

    # --- introspection -----------------------------------------------------------------------

    def __len__(self) -> int:
        """Pods waiting in the three structures (in-flight pods excluded)."""
        return len(self._active) + len(self._backoff) + len(self._unschedulable)

    def pending_counts(self) -> dict[str, int]:
        """``scheduler_pending_pods`` by queue: ``active``, ``backoff`` (both heaps),
        ``unschedulable`` (the pool's attempted pods) and ``gated`` (the pool's gated ones).
        In-flight pods are in none, as upstream's gauges leave them out."""
        gated = self._unschedulable.gated_count
        return {
            "active": len(self._active),
            "backoff": len(self._backoff),
            "unschedulable": len(self._unschedulable) - gated,
            "gated": gated,
        }

    def get(self, name: str, namespace: str) -> QueuedPodInfo | None:
        """The queued pod ``namespace/name`` (upstream ``GetPod``)."""
        key = f"{namespace}/{name}"
        return self._backoff.get(key) or self._unschedulable.get(key) or self._active.get(key)

    def where(self, key: str) -> str | None:
        """``Active``, ``Backoff``, ``Unschedulable``, ``InFlight`` or ``None`` for a ``namespace/name``."""
        if key in self._active:
            return ACTIVE_Q
        if key in self._backoff:
            return BACKOFF_Q
        if key in self._unschedulable:
            return UNSCHEDULABLE_Q
        if any(qpi.pod_info.key == key for qpi in self._in_flight):
            return "InFlight"
        return None

    def pods_in_active_q(self) -> list[Pod]:
        """activeQ in pop order."""
        return [qpi.pod for qpi in self._active.ordered()]

    def pods_in_backoff_q(self) -> list[Pod]:
        """backoffQ (the plugin-rejection heap, then the error heap), each in expiry order."""
        return [qpi.pod for qpi in self._backoff.ordered()]

    def unschedulable_pods(self) -> list[Pod]:
        """The pool, in the order pods entered it."""
        return [qpi.pod for qpi in self._unschedulable]

    def in_flight_pods(self) -> list[Pod]:
        """Pods popped and not yet ``done``, in pop order."""
        return [qpi.pod for qpi in self._in_flight]

    def pending_pods(self) -> tuple[list[Pod], str]:
        """Every queued pod plus upstream's summary line (upstream ``PendingPods``)."""
        active, backoff, unschedulable = (
            self.pods_in_active_q(),
            self.pods_in_backoff_q(),
            self.unschedulable_pods(),
        )
        summary = f"activeQ:{len(active)}; backoffQ:{len(backoff)}; unschedulablePods:{len(unschedulable)}"
        return [*active, *backoff, *unschedulable], summary
