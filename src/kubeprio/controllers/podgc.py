"""Pod garbage collection, as kube-controller-manager's ``podgc`` controller.

Upstream ``pkg/controller/podgc/gc_controller.go`` runs every 20 s (``gcCheckPeriod``)
over all pods and nodes and force-deletes (grace period 0):

* terminated pods (phase neither Pending, Running nor Unknown) beyond
  ``--terminated-pod-gc-threshold`` (default 12,500; 0 turns this off), evicted pods
  first, then the oldest by creation timestamp, then by name;
* terminating pods on a node that is not Ready and carries the
  ``node.kubernetes.io/out-of-service`` taint;
* orphaned pods: bound to a node that has been missing for the 40 s quarantine and that a
  GET confirms gone; those get ``DisruptionTarget`` (reason ``DeletionByPodGC``,
  "PodGC: node no longer exists");
* terminating pods that were never scheduled.

A pod that is not yet terminal is first patched to phase Failed (``markFailedAndDeletePod``).
In ``kubeprio serve`` a pod's status write or delete that waits on an admission webhook
does not hold the loop: it is written once the answer is in (``client.answeredretry``),
as upstream's collection goroutine (one per pod, ``ParallelizeUntil``) ends its call
then; meanwhile later checks leave that pod alone.

Driven like the other controllers (``next_wakeup``/``run_once``): checks fall on the
20 s grid from the controller's start, but ``next_wakeup`` names the next tick only while
some pod qualifies, so an idle cluster (or a finished simulation) has no timer. Candidates
are tracked from informer events, so deciding whether a tick is needed costs no listing;
a tick itself walks the candidates only. Time from the injected ``Clock``.
"""

from __future__ import annotations

import functools
import heapq
import logging
import math
from typing import Final

from kubeprio import counts
from kubeprio.api import errors
from kubeprio.api.core import (
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_RUNNING,
    PHASE_SUCCEEDED,
    Node,
    Pod,
    PodCondition,
    PodStatus,
)
from kubeprio.api.model import evolve
from kubeprio.api.podconditions import update_pod_condition
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.informer import CacheKey, FuncHandler, Informer, cache_key
from kubeprio.client.protocol import Client, DeleteRequest
from kubeprio.client.statuswrite import write_status
from kubeprio.clock import Clock, rfc3339

LOG = logging.getLogger(__name__)

GC_CHECK_PERIOD: Final = 20.0
QUARANTINE_TIME: Final = 40.0
DEFAULT_TERMINATED_POD_THRESHOLD: Final = 12_500
"""kube-controller-manager's ``--terminated-pod-gc-threshold`` default."""

TAINT_OUT_OF_SERVICE: Final = "node.kubernetes.io/out-of-service"
REASON_EVICTED: Final = "Evicted"
"""The kubelet's reason for pods it evicted (``eviction.PodIsEvicted``)."""
REASON_DELETION_BY_POD_GC: Final = "DeletionByPodGC"
MESSAGE_NODE_GONE: Final = "PodGC: node no longer exists"
_NODE_GONE: Final = PodCondition(
    type="DisruptionTarget",
    status="True",
    reason=REASON_DELETION_BY_POD_GC,
    message=MESSAGE_NODE_GONE,
)
_NOT_TERMINATED: Final = frozenset({PHASE_PENDING, PHASE_RUNNING, "Unknown"})


def is_terminated(pod: Pod) -> bool:
    """``isPodTerminated``: any phase but Pending, Running and Unknown."""
    return (pod.status.phase if pod.status else None) not in _NOT_TERMINATED


def _is_evicted(pod: Pod) -> bool:
    status = pod.status
    return bool(status and status.phase == PHASE_FAILED and status.reason == REASON_EVICTED)


def _gc_order(pod: Pod) -> tuple[bool, str, str]:
    """``byEvictionAndCreationTimestamp``: evicted first, then oldest, then by name."""
    meta = pod.metadata
    return (not _is_evicted(pod), meta.creation_timestamp or "", meta.name or "")


def _node_of(pod: Pod) -> str:
    return (pod.spec.node_name if pod.spec else None) or ""


def _force_deleted(pod: Pod) -> bool:
    """Terminal and deleted with a zero grace period: what ``markFailedAndDeletePod`` leaves."""
    return (
        pod.metadata.deletion_grace_period_seconds == 0
        and (pod.status.phase if pod.status else None) not in _NOT_TERMINATED
    )


def _out_of_service(node: Node) -> bool:
    """Not Ready and tainted ``node.kubernetes.io/out-of-service`` (any effect)."""
    ready = any(
        c.type == "Ready" and c.status == "True"
        for c in (node.status.conditions if node.status else None) or ()
    )
    taints = (node.spec.taints if node.spec else None) or ()
    return not ready and any(t.key == TAINT_OUT_OF_SERVICE for t in taints)


class PodGCController:
    """Force-deletes terminated, orphaned and stuck terminating pods."""

    name: Final = "pod-garbage-collector"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        pods: Informer[Pod],
        nodes: Informer[Node],
        terminated_pod_threshold: int = DEFAULT_TERMINATED_POD_THRESHOLD,
        orphans_of_unseen_nodes: bool = True,
    ) -> None:
        """``orphans_of_unseen_nodes=False`` (simulation) collects only the pods of nodes
        that were deleted while it watched: a snapshot may hold pods whose nodes it does not
        include, and those nodes existed in the cluster the snapshot came from."""
        self.client = client
        self.api_writes = AnsweredRetry(self.name)
        """Collections waiting on admission webhook answers, by pod."""
        self.orphans_of_unseen_nodes = orphans_of_unseen_nodes
        self._seen_nodes: set[str] = set()
        self.clock = clock
        self.pods = pods
        self.nodes = nodes
        self.terminated_pod_threshold = terminated_pod_threshold
        self._origin = clock.now()
        self._last_check = -math.inf
        """The grid time of the last (or running) check: the latest 20 s tick at or before
        its start (see ``_tick_at_or_before``)."""
        self._planned: float | None = None
        """The check ``next_wakeup`` named, until it runs (see there)."""
        self._terminated: dict[CacheKey, Pod] = {}
        self._gc_queue: list[tuple[tuple[bool, str, str], CacheKey]] = []
        """Terminated pods in collection order (a heap; entries of pods that are gone or
        whose order changed are skipped when popped)."""
        self._queued_order: dict[CacheKey, tuple[bool, str, str]] = {}
        self._terminating: dict[CacheKey, Pod] = {}
        self._bound: dict[str, set[CacheKey]] = {}
        """Node name -> the pods bound to it (to find pods whose node is missing)."""
        self._missing: set[str] = set()
        """Nodes that pods are bound to and that the node informer does not hold."""
        self._quarantine: dict[str, float] = {}
        """Missing node -> when its quarantine ends (the grid time of the check that first
        saw it missing + 40 s)."""
        self._terminating_on: dict[str, int] = {}
        """Node name ("" for none) -> how many terminating pods are bound to it."""
        self._out_of_service: set[str] = set()
        """Nodes that are not Ready and carry the out-of-service taint."""
        self.deleted = 0
        pods.add_handler(FuncHandler(self._pod_added, self._pod_updated, self._pod_deleted))
        nodes.add_handler(FuncHandler(self._node_added, self._node_updated, self._node_deleted))

    # --- informer events ----------------------------------------------------------------------

    def _pod_added(self, pod: Pod) -> None:
        self._track(None, pod)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        self._track(old, new)

    def _track(self, previous: Pod | None, pod: Pod) -> None:
        key = cache_key(pod)
        old_node = _node_of(previous) if previous is not None else ""
        node = _node_of(pod)
        if old_node != node:
            self._unbind(key, old_node)
        if is_terminated(pod):
            self._terminated[key] = pod
            order = _gc_order(pod)
            if self._queued_order.get(key) != order:
                self._queued_order[key] = order
                heapq.heappush(self._gc_queue, (order, key))
        else:
            self._terminated.pop(key, None)
        self._set_terminating(key, pod if pod.metadata.deletion_timestamp else None)
        if node and node != old_node:
            self._bound.setdefault(node, set()).add(key)
            if self.nodes.get(node) is None and (
                self.orphans_of_unseen_nodes or node in self._seen_nodes
            ):
                self._missing.add(node)

    def _pod_deleted(self, pod: Pod) -> None:
        """The pod is gone: drop everything known of it."""
        key = cache_key(pod)
        self._terminated.pop(key, None)
        if self._queued_order.pop(key, None) is not None:
            self._compact_gc_queue()
        self._set_terminating(key, None)
        self._unbind(key, _node_of(pod))

    def _unbind(self, key: CacheKey, node: str) -> None:
        """``key`` no longer counts on ``node``; a node left without pods is no concern
        (its quarantine ends: upstream only looks at nodes that pods are bound to)."""
        bound = self._bound.get(node)
        if bound is None:
            return
        bound.discard(key)
        if not bound:
            del self._bound[node]
            self._missing.discard(node)
            self._quarantine.pop(node, None)

    def _set_terminating(self, key: CacheKey, pod: Pod | None) -> None:
        """Track terminating pods, and how many per node ("" for unscheduled) still need
        a check: one this controller already failed and force-deleted, held by a
        finalizer, would only be deleted again (upstream does, every 20 s, to no effect)."""
        previous = self._terminating.pop(key, None)
        if previous is not None and not _force_deleted(previous):
            counts.adjust(self._terminating_on, _node_of(previous), -1)
        if pod is not None:
            self._terminating[key] = pod
            if not _force_deleted(pod):
                counts.adjust(self._terminating_on, _node_of(pod), 1)

    def _compact_gc_queue(self) -> None:
        """Rebuild the heap once entries of departed pods dominate it."""
        if len(self._gc_queue) > 2 * len(self._queued_order) + 1024:
            self._gc_queue = [(order, key) for key, order in self._queued_order.items()]
            heapq.heapify(self._gc_queue)

    def _node_added(self, node: Node) -> None:
        name = node.metadata.name or ""
        self._seen_nodes.add(name)
        self._missing.discard(name)
        self._quarantine.pop(name, None)
        self._node_updated(node, node)

    def _node_updated(self, old: Node, new: Node) -> None:
        name = new.metadata.name or ""
        if _out_of_service(new):
            self._out_of_service.add(name)
        else:
            self._out_of_service.discard(name)

    def _node_deleted(self, node: Node) -> None:
        name = node.metadata.name or ""
        self._out_of_service.discard(name)
        if name in self._bound:
            self._missing.add(name)

    # --- driving --------------------------------------------------------------------------------

    def _has_work(self) -> bool:
        """Whether a check would find something to do (counters only: asked every round)."""
        if 0 < self.terminated_pod_threshold < len(self._terminated):
            return True
        if self._missing or "" in self._terminating_on:
            return True
        return any(node in self._terminating_on for node in self._out_of_service)

    def _next_tick(self, now: float) -> float:
        """The first grid time at or after ``now`` that is later than the last check."""
        ticks = max(math.ceil((now - self._origin) / GC_CHECK_PERIOD - 1e-9), 0)
        tick = self._origin + ticks * GC_CHECK_PERIOD
        if tick <= self._last_check:
            tick += GC_CHECK_PERIOD
        return tick

    def next_wakeup(self) -> float | None:
        """The next 20 s check, while some pod may be collected.

        The tick named is kept until the check runs: on the wall clock (``kubeprio
        serve``) the driver wakes a little after it, when the first tick at or after the
        time read then is the next one, so a tick worked out again at every call would
        always lie ahead and no check would ever run. On virtual time the check runs at
        its tick, and the kept tick is the one worked out again."""
        if not self._has_work():
            self._planned = None
            return None
        if self._planned is None:
            self._planned = self._next_tick(self.clock.now())
        return self._planned

    def run_once(self) -> int:
        """One ``gc`` pass; returns how many pods it deleted."""
        before = self.deleted
        self._planned = None
        self._last_check = self._tick_at_or_before(self.clock.now())
        if self.terminated_pod_threshold > 0:
            self._gc_terminated()
        self._gc_terminating()
        self._gc_orphaned()
        self._gc_unscheduled_terminating()
        return self.deleted - before

    # --- the four collections -------------------------------------------------------------------

    def _gc_terminated(self) -> None:
        # Upstream sorts every terminated pod at each check; the heap yields the same
        # first ``excess`` pods without touching the others.
        excess = len(self._terminated) - self.terminated_pod_threshold
        doomed: list[Pod] = []
        while len(doomed) < excess and self._gc_queue:
            order, key = heapq.heappop(self._gc_queue)
            pod = self._terminated.get(key)
            if self._queued_order.get(key) != order:
                continue  # superseded by a later entry, or the pod is gone
            if pod is None:
                del self._queued_order[key]
                continue
            del self._queued_order[key]
            doomed.append(pod)
        for pod in doomed:
            self._mark_failed_and_delete(pod)
        for pod in doomed:
            # Until the informer reports it gone (a finalizer may hold it), the pod keeps
            # its place at the front: upstream counts it and deletes it again each check.
            key = cache_key(pod)
            if key in self._terminated and key not in self._queued_order:
                order = _gc_order(pod)
                self._queued_order[key] = order
                heapq.heappush(self._gc_queue, (order, key))

    def _gc_terminating(self) -> None:
        doomed = []
        for pod in self._terminating.values():
            node = self.nodes.get(_node_of(pod))
            if node is not None and _out_of_service(node):
                doomed.append(pod)
        for pod in sorted(doomed, key=_gc_order):
            self._mark_failed_and_delete(pod)

    def _tick_at_or_before(self, now: float) -> float:
        """The latest tick at or before ``now``: the time a check started at ``now`` counts as.

        The quarantine is counted in checks, not in clock reads: on the wall clock
        (``kubeprio serve``) a check starts some time after its tick, and a clock read
        during the check comes after its other collections wrote. A quarantine stamped with
        one check's read and compared with a later check's read would then end at the
        check 40 s on or at the one after, by a few microseconds either way. On virtual
        time a check runs at its tick, and this is that time.
        """
        ticks = max(math.floor((now - self._origin) / GC_CHECK_PERIOD + 1e-9), 0)
        return self._origin + ticks * GC_CHECK_PERIOD

    def _gc_orphaned(self) -> None:
        now = self._last_check
        for node in sorted(self._missing):
            self._quarantine.setdefault(node, now + QUARANTINE_TIME)
        gone = []
        for node, ends in sorted(self._quarantine.items()):
            if ends > now:
                continue
            del self._quarantine[node]
            try:
                self.client.get(Node, node)
            except errors.NotFoundError:
                gone.append(node)
            except errors.StatusError as exc:
                # Upstream: logged; the node is queued again at the next check.
                LOG.warning("pod GC could not read node %s: %s", node, exc)
        for node in gone:
            for namespace, name in sorted(self._bound.get(node, ())):
                pod = self.pods.get(name, namespace)
                if pod is not None:
                    self._mark_failed_and_delete(pod, orphaned=True)

    def _gc_unscheduled_terminating(self) -> None:
        unscheduled = [pod for pod in self._terminating.values() if not _node_of(pod)]
        for pod in sorted(unscheduled, key=lambda p: cache_key(p)):
            self._mark_failed_and_delete(pod)

    def _mark_failed_and_delete(self, pod: Pod, *, orphaned: bool = False) -> None:
        """Collect ``pod`` now, or once the webhook answers its writes wait on are in (a
        retry reads the pod again: its status write may be done already)."""
        self.api_writes.run(
            cache_key(pod),
            functools.partial(self._collect, pod, orphaned),
            again=functools.partial(self._collect_latest, pod, orphaned),
        )

    def _collect_latest(self, pod: Pod, orphaned: bool) -> None:
        try:
            latest = self.client.get(Pod, pod.metadata.name or "", pod.metadata.namespace)
        except errors.NotFoundError:
            return
        if latest.metadata.uid == pod.metadata.uid:
            self._collect(latest, orphaned)

    def _collect(self, pod: Pod, orphaned: bool) -> None:
        """``markFailedAndDeletePodWithCondition``: phase Failed (with the condition, set as
        ``UpdatePodCondition`` sets it) first, then delete at once."""
        name, namespace = pod.metadata.name or "", pod.metadata.namespace
        phase = pod.status.phase if pod.status else None
        now = rfc3339(self.clock.now())

        def failed(latest: Pod) -> Pod:
            status = evolve(latest.status or PodStatus(), phase=PHASE_FAILED)
            if orphaned:
                status = update_pod_condition(status, _NODE_GONE, now=now) or status
            return evolve(latest, status=status)

        try:
            if phase not in (PHASE_SUCCEEDED, PHASE_FAILED) and (
                write_status(self.client, pod, failed) is None
            ):
                return  # gone, or replaced by another pod of the same name
            self.client.delete(Pod, name, namespace, options=DeleteRequest(grace_period_seconds=0))
        except errors.StatusError as exc:
            # Upstream logs the error and goes on with the next pod; not-found means
            # somebody else deleted it. The next check tries again if it still applies.
            if not isinstance(exc, errors.NotFoundError):
                LOG.warning("pod GC could not delete %s/%s: %s", namespace, name, exc)
            return
        self.deleted += 1
