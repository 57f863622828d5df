"""The scheduler: informers feed a cache and a priority queue; ``schedule_one`` runs a cycle.

Mirrors upstream ``pkg/scheduler/scheduler.go``, ``schedule_one.go`` and
``eventhandlers.go``. Driven, not threaded: the driver (simulation engine or serve loop)
calls ``pump()`` to deliver informer events, ``run_once()`` to schedule at most one pod,
and ``next_wakeup()`` to learn when queue timers (backoff completion, the unschedulable
flush) or parked bindings next matter.

``Scheduler`` is assembled from parts, one concept each:

* ``scheduler.schedulerhandle``: the shared state and the framework ``Handle``;
* ``scheduler.eventhandlers``: informer events into the cache and the queue;
* ``scheduler.schedulingcycle``: PreFilter, Filter, Score, select host, PostFilter;
* ``scheduler.bindingcycle``: assume, Reserve, Permit, PreBind (may wait), Bind;
* ``scheduler.schedulingfailure``: event, PodScheduled=False, nomination, requeue.

This module builds it (informers, handlers, fast path) and drives it. Binding runs inline
after the scheduling cycle (upstream runs it in a goroutine; in a single-threaded driver
the observable order is the same: assume first, bind next).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubeprio.api.core import Node, Pod
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.eventsrecord import SeriesRecorder
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.informergroup import InformerGroup
from kubeprio.client.protocol import Client
from kubeprio.client.record import EventRecorder
from kubeprio.clock import Clock
from kubeprio.scheduler import queue as scheduling_queue
from kubeprio.scheduler.cache import Cache
from kubeprio.scheduler.fastpath import FastPath
from kubeprio.scheduler.metrics import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    SchedulerMetrics,
)
from kubeprio.scheduler.nominatedload import NominatedLoad
from kubeprio.scheduler.runtime import Framework
from kubeprio.scheduler.schedulingcycle import SchedulingCycle

NON_TERMINAL_SELECTOR: Final = "status.phase!=Succeeded,status.phase!=Failed"
EVENT_FLUSH_BATCH: Final = 64
"""Deferred events written per ``run_once`` when no pod is ready (about 4 ms of writes)."""


class Scheduler(SchedulingCycle):
    """One scheduler (one profile) against one cluster, through a ``Client``."""

    def __init__(
        self,
        client: Client,
        framework: Framework,
        *,
        clock: Clock,
        rng: random.Random,
        queue: scheduling_queue.SchedulingQueue | None,
        cache: Cache | None = None,
        extra_informers: Sequence[Informer[Any]] = (),
        scheduler_name: str = "default-scheduler",
        fast_path: bool = False,
        retry_unschedulable_on_timer: bool = True,
        stopwatch: Callable[[], float] | None = None,
    ) -> None:
        self.client = client
        self.framework = framework
        self.clock = clock
        self.rng = rng
        # The queue may be attached after construction (``setup`` builds it from the
        # scheduler's pod informer); a scheduler is not usable until it is.
        self.queue = queue  # type: ignore[assignment]
        self.scheduler_name = scheduler_name
        self.retry_unschedulable_on_timer = retry_unschedulable_on_timer
        self.cache = cache if cache is not None else Cache()
        # Events wait until nothing is left to schedule, as upstream's scheduler hands
        # them to its broadcaster's goroutine: recording never delays a binding. They are
        # written as kube-scheduler's events.k8s.io/v1 recorder writes them (series, no
        # counts; ``client.eventsrecord``).
        self.recorder: EventRecorder = SeriesRecorder(
            client, clock=clock, controller=scheduler_name, deferred=True
        )
        self.fast = FastPath(self.cache.table) if fast_path else None
        self.nominated_load = NominatedLoad(self.cache.table) if fast_path else None
        """Nominated pods' requests per row; ``setup`` makes it the nominator's observer."""
        self.selected_by_service: Callable[[str, Mapping[str, str]], bool] | None = None
        """(namespace, labels) -> whether a Service selects such a pod, which then gets
        default topology spreading and so leaves the fast path (``setup`` sets it)."""
        self.next_start_node_index = 0
        self._fast_rows = None
        self._pre_filter_result = None
        self.nodes = Informer(client, Node)
        self.pods = Informer(client, Pod, field_selector=NON_TERMINAL_SELECTOR)
        self.pdbs = Informer(client, PodDisruptionBudget)
        self.extra_informers = list(extra_informers)
        # Pumped after every unit of work a driver runs: quiet informers are skipped.
        self._pumped = InformerGroup([*self.extra_informers, self.nodes, self.pdbs, self.pods])
        self.nodes.add_handler(
            FuncHandler(self._on_node_add, self._on_node_update, self._on_node_delete)
        )
        self.pods.add_handler(
            FuncHandler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        )
        framework.nominated_pods = self.nominated_pods_for_node
        self.preemptions = 0
        self.metrics = SchedulerMetrics(scheduler_name)
        # Attempt durations are measured, never acted on: serve and bench hand in a
        # monotonic wall clock; by default (simulations) the injected clock keeps runs pure.
        self.stopwatch = stopwatch or clock.now
        self._attempt_start = 0.0
        self._waiting_binds = {}
        self.api_writes = AnsweredRetry(scheduler_name)
        """Status patches and preemption writes waiting on admission webhooks
        (``kubeprio serve``), each written once its answers are in."""

    @property
    def scheduled(self) -> int:
        """Pods bound so far: the count of ``scheduled`` attempts in the metrics."""
        return self.metrics.attempt_duration[RESULT_SCHEDULED].count

    @property
    def failed_attempts(self) -> int:
        """Attempts that ended without a binding (``unschedulable`` and ``error``)."""
        durations = self.metrics.attempt_duration
        return durations[RESULT_UNSCHEDULABLE].count + durations[RESULT_ERROR].count

    # --- driving ------------------------------------------------------------------------------

    def start(self) -> None:
        """List the cluster and start watching (in the order they are pumped)."""
        self._pumped.start()

    def pump(self) -> int:
        """Deliver pending informer events; returns how many were handled."""
        return self._pumped.pump()

    def run_once(self) -> bool:
        """Flush due queue timers, then schedule at most one pod; with no pod ready, write
        the queued events. False if there was nothing to do."""
        self.queue.flush_backoff_completed()
        self.queue.flush_unschedulable_leftover()
        resumed = self._resume_waiting_binds() if self._waiting_binds else 0
        queued = self.queue.pop()
        if queued is None:
            if resumed:
                return True
            # In batches: a driver sharing its loop (serve) gets control back in between.
            return self.recorder.flush(EVENT_FLUSH_BATCH) > 0
        self.schedule_one(queued)
        return True

    def next_wakeup(self) -> float | None:
        """When the queue next has timed work (backoff expiry, and the leftover flush
        unless ``retry_unschedulable_on_timer`` is off, as in simulation); now while
        events wait to be written."""
        if self.recorder.queued:
            return self.clock.now()
        wakeup = self.queue.next_wakeup(include_leftover_flush=self.retry_unschedulable_on_timer)
        if self._waiting_binds:
            polls = min(waiting.due for waiting in self._waiting_binds.values())
            wakeup = polls if wakeup is None else min(wakeup, polls)
        return wakeup
