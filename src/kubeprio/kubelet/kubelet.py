"""The simulated kubelet: one per Node; admits, runs and stops the pods bound to it.

It sees the cluster only through ``client.protocol.Client`` and the pod events it is
handed (it is an ``EventHandler[Pod]``: register it on an informer of the node's pods,
``informer()`` builds one with ``spec.nodeName=<node>``, or route a shared informer's
events to it with ``kubelet.router.PodRouter``). A driver calls ``run_once()`` whenever
``next_wakeup()`` is due; handlers only record what changed, all writes happen in
``run_once``. Time comes from the injected ``Clock``; nothing sleeps, no threads.

A pod's life on the node (``Record.state``)::

    bound, Pending --admit--> RUNNING --kubeprio.io/duration--> (exit 0) Succeeded
         |                     |
         +--reject--> Failed   +--deletionTimestamp / evicted--> TERMINATING
           (OutOfcpu, ...)                                         |  holds its resources
                                                                   v
                          exit: termination-seconds, or SIGKILL when the grace period ends
                          -> status Failed (or Succeeded if the run ended first), then
                          DELETE grace 0 with a uid precondition (if it was deleted)

* Admission (``kubelet.admission``) counts the requests of pods admitted and not
  terminal, including pods being deleted, as upstream's ``GetActivePods``; an evicted
  pod stops counting as soon as its status says Failed.
* Graceful termination (``kubelet.runtime``): the grace period is the pod's
  ``deletionGracePeriodSeconds`` (else ``terminationGracePeriodSeconds``), may only
  shrink, and is at least 2 s at the container runtime.
* Ephemeral containers (``kubectl debug``) added to a RUNNING pod start when the kubelet
  sees the update: their statuses are written at once, running; they are never restarted
  and end, killed, with the pod (``kubelet.containers``, which also words the container
  events, and ``kubelet.status``).
* Status writes go through ``kubelet.statusmanager``; a pod's final status and final
  delete through ``kubelet.finalwrites``.
* The pod records (``Record``, ``State``) are ``kubelet.podrecord``, the configuration
  ``kubelet.config``; the conditions posted after an outage ``kubelet.node``.
* Pod IPs come from the node's pod CIDR (``kubelet.podips``); the Node is found or
  registered at ``start()`` (``kubelet.registration``; a write there that waits on a
  webhook holds this kubelet, not the loop). A running kubelet whose Ready condition
  someone took away posts it again at its next status tick (``kubelet.nodestatussync``).
* Node-pressure eviction (``kubelet.evictionmanager``) runs on 10 s ticks when usage
  changed, and right after an evicted pod is gone; it evicts one pod per pass.

Must not import ``apiserver``, ``store`` or ``admission`` (import-linter enforces it).
"""

from __future__ import annotations

import functools
import heapq
import random
from collections.abc import Callable
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import (
    DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
    PHASE_RUNNING,
    TERMINAL_PHASES,
    Node,
    NodeStatus,
    Pod,
    PodCondition,
)
from kubeprio.api.model import evolve
from kubeprio.api.resources import PODS, ResourceAmounts, pod_requests
from kubeprio.client import record
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.informer import Informer
from kubeprio.client.nodestatuspatch import patch_node_status
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, parse_rfc3339, rfc3339
from kubeprio.kubelet import admission, containers, podips, registration, runtime, status
from kubeprio.kubelet import node as node_status
from kubeprio.kubelet.config import KubeletConfig as KubeletConfig
from kubeprio.kubelet.eviction import PodStats
from kubeprio.kubelet.evictionmanager import POD_CLEANUP_TIMEOUT
from kubeprio.kubelet.finalwrites import FinalWrites, revision
from kubeprio.kubelet.nodestatussync import NodeStatusSync
from kubeprio.kubelet.podrecord import Record, State
from kubeprio.kubelet.pressure import PressureMonitor
from kubeprio.kubelet.registration import register_node as register_node  # where serve finds it
from kubeprio.kubelet.statusmanager import PodStatusManager

COMPONENT: Final = "kubelet"


def _sort_key(pod: Pod) -> tuple[str, str, str]:
    meta = pod.metadata
    return (meta.creation_timestamp or "", meta.namespace or "", meta.name or "")


class Kubelet:
    """The agent of one node (``pkg/kubelet``), reduced to what scheduling sees."""

    def __init__(
        self,
        client: Client,
        node_name: str,
        *,
        clock: Clock,
        rng: random.Random,
        config: KubeletConfig | None = None,
        recorder: record.EventRecorder | None = None,
    ) -> None:
        self._client = client
        self.node_name = node_name
        self._clock = clock
        self._rng = rng  # reserved: the simulated runtime is deterministic without it
        self.config = config or KubeletConfig()
        self._recorder = recorder or record.EventRecorder(
            client, clock=clock, component=COMPONENT, host=node_name
        )
        self.node: Node | None = None
        self._started = False
        self._records: dict[str, Record] = {}
        self._changed: dict[str, tuple[Pod, bool]] = {}
        self._timers: list[tuple[float, int, str]] = []
        self._timer_seq = 0
        self._used: dict[str, int] = {}
        self._used_pods = 0
        self._ips = podips.PodIps(node_name)
        self._stamp_at = float("nan")
        self._stamp_text = ""
        self.api_writes = AnsweredRetry(f"kubelet {node_name}")
        """Writes waiting on webhook answers (``kubeprio serve``): see ``kubelet.statusmanager``."""
        self.statuses = PodStatusManager(client, self.api_writes)
        self._final = FinalWrites(client, self.statuses, self.api_writes)
        self.pressure = PressureMonitor(
            client,
            node_name,
            self._recorder,
            writes=self.api_writes,
            config=self.config.eviction,
            origin=clock.now(),
            system_memory_usage=self.config.system_memory_usage,
            system_disk_usage=self.config.system_disk_usage,
        )
        self.node_status_sync = NodeStatusSync(node_name, origin=clock.now())
        """Posts Ready again when someone else took it away (``kubelet.nodestatussync``)."""

    # --- wiring ----------------------------------------------------------------------------

    def start(self, then: Callable[[], None] | None = None) -> Node | None:
        """Find (or register) this kubelet's Node; report Ready if it reports nothing.

        Returns the Node, or None when that write waits on admission webhook answers
        (``kubeprio serve``): it is sent again once they are in (``client.answeredretry``;
        the API service replays it, one webhook call per review), as upstream's kubelet
        waits in ``registerWithAPIServer`` before its node status loop goes on. Until
        then the kubelet only collects the pod events it is handed; ``then`` runs once
        it has started (its driver wakes it for them). An error other than the wait
        raises here on the first attempt, and is logged on a retry.
        """
        self.api_writes.run(
            ("start",), functools.partial(self._start, rfc3339(self._clock.now()), then)
        )
        return self.node

    def _start(self, now: str, then: Callable[[], None] | None) -> None:
        current = registration.ensure_node(
            self._client,
            self.node_name,
            now=now,
            register=self.config.register_node,
            capacity=self.config.capacity,
        )
        self.on_node(current)
        self.pressure.usage_changed(self._clock.now(), force=True)
        self._started = True
        if then is not None:
            then()

    @property
    def started(self) -> bool:
        """Whether the Node was found or registered (``start`` done)."""
        return self._started

    def informer(self) -> Informer[Pod]:
        """An informer of this node's pods with this kubelet registered on it (not started)."""
        informer = Informer(self._client, Pod, field_selector=f"spec.nodeName={self.node_name}")
        informer.add_handler(self)
        return informer

    def on_node(self, current: Node) -> None:
        """The Node object changed (or was read): refresh allocatable and the IP pool."""
        self.node = current
        self._ips.on_node(current)

    # --- EventHandler[Pod] -----------------------------------------------------------------

    def _mine(self, pod: Pod) -> bool:
        return pod.spec is not None and pod.spec.node_name == self.node_name

    def on_add(self, obj: Pod) -> None:
        """A pod appeared: remember to look at it in the next ``run_once``."""
        if self._mine(obj):
            self._changed[obj.metadata.uid or ""] = (obj, False)

    def on_update(self, old: Pod, new: Pod) -> None:
        """A pod changed."""
        if self._mine(new):
            self._changed[new.metadata.uid or ""] = (new, False)
        elif self._mine(old):
            self._changed[old.metadata.uid or ""] = (old, True)

    def on_delete(self, obj: Pod) -> None:
        """A pod was removed from the API."""
        if self._mine(obj):
            self._changed[obj.metadata.uid or ""] = (obj, True)

    # --- driving ------------------------------------------------------------------------------

    def next_wakeup(self) -> float | None:
        """When ``run_once`` next has work: now if events are pending, else the next timer
        (never before ``start`` is done)."""
        if not self._started:
            return None
        if self._changed:
            return self._clock.now()
        self._drop_stale_timers()
        candidates = [t for t in (self.pressure.due, self.node_status_sync.due) if t is not None]
        if self._timers:
            candidates.append(self._timers[0][0])
        return min(candidates) if candidates else None

    def run_once(self) -> None:
        """Do everything due now: exits and completions, new observations, an eviction pass
        (nothing before ``start`` is done)."""
        if not self._started:
            return
        now = self._clock.now()
        while self._timers and self._timers[0][0] <= now:
            _, _, uid = heapq.heappop(self._timers)
            self._on_timer(uid, now)
        changed, self._changed = self._changed, {}
        for pod, deleted in sorted(changed.values(), key=lambda item: _sort_key(item[0])):
            self._sync(pod, deleted, now)
        if self.pressure.due is not None and self.pressure.due <= now:
            self._eviction_pass(now)
        if self.node_status_sync.take_due(now):
            self.resume()

    def node_updated(self, old: Node, new: Node) -> None:
        """Its Node changed while this kubelet runs: plan a node status sync if Ready was
        taken away (``kubelet.nodestatussync``)."""
        self.node_status_sync.observe(old, new, self._clock.now())

    def resume(self) -> None:
        """Back after an outage (``kubelet.outage``), or at the status tick after Ready was
        taken from a running kubelet (``kubelet.nodestatussync``): post the node's
        conditions again.

        The node lifecycle controller set them ``Unknown`` while this kubelet was silent;
        its next node status update (``setNodeStatus``) reports what it sees, with a fresh
        heartbeat, and the ``NodeReady`` event when Ready comes back. A write waiting on a
        webhook is sent again once answered (a later resume meanwhile is not started
        twice: upstream's node status loop runs one update at a time).
        """
        self.node_status_sync.due = None
        self.api_writes.run(("node-status",), functools.partial(self._resume, self._clock.now()))

    def _resume(self, now: float) -> None:
        try:
            latest = self._client.get(Node, self.node_name)
        except errors.StatusError:
            return
        conditions, flipped = node_status.resumed_conditions(
            latest.status.conditions if latest.status else None,
            set(self.pressure.node_conditions),
            now=rfc3339(now),
        )
        try:
            updated = patch_node_status(
                self._client,
                latest,
                evolve(latest, status=evolve(latest.status or NodeStatus(), conditions=conditions)),
            )
        except errors.StatusError:
            return
        self.on_node(updated)
        if flipped:
            self._recorder.event(
                updated,
                record.EVENT_TYPE_NORMAL,
                "NodeReady",
                f"Node {self.node_name} status is now: NodeReady",
            )

    # --- introspection ------------------------------------------------------------------------

    def running(self) -> list[Pod]:
        """Pods whose containers run here (including terminating ones), sorted."""
        return sorted(
            (r.pod for r in self._records.values() if r.state != State.TERMINATED), key=_sort_key
        )

    def allocated(self) -> dict[str, int]:
        """Requests of the pods counted by admission, plus their number under ``pods``."""
        return {**self._used, PODS: self._used_pods}

    def record(self, uid: str) -> Record | None:
        """The kubelet's record of a pod it runs."""
        return self._records.get(uid)

    # --- syncing one pod ----------------------------------------------------------------------

    def _sync(self, pod: Pod, deleted: bool, now: float) -> None:
        if self._final.ignores(pod, deleted):
            return
        uid = pod.metadata.uid or ""
        existing = self._records.get(uid)
        if existing is not None:
            self._sync_running(existing, pod, deleted, now)
            return
        if deleted:
            return
        phase = pod.status.phase if pod.status else None
        if phase in TERMINAL_PHASES:
            self._clean_up_terminal(pod)
            return
        if pod.metadata.deletion_timestamp:
            self._finish_unstarted(pod, now)
            return
        if phase == PHASE_RUNNING:
            self._adopt(pod, now)
            return
        self._admit(pod, now)

    def _sync_running(self, rec: Record, pod: Pod, deleted: bool, now: float) -> None:
        if revision(pod) >= revision(rec.pod):
            rec.pod = pod
        if deleted:
            rec.gone = True
            self._uncount(rec)
            if rec.state == State.RUNNING:
                grace = pod.metadata.deletion_grace_period_seconds or 0
                self._terminate(rec, now, grace)
            elif rec.state == State.TERMINATED:
                self._forget(rec)
            return
        if pod.metadata.deletion_timestamp and rec.state != State.TERMINATED:
            self._terminate(rec, now, self._grace_period(pod))
        elif rec.state == State.RUNNING:
            self._start_ephemeral_containers(rec, now)

    def _start_ephemeral_containers(self, rec: Record, now: float) -> None:
        """Start the ephemeral containers ``kubectl debug`` added to a running pod (the
        pod worker's ``SyncPod`` starts them after the regular ones): report them running.
        They hold no resources and change no condition; the pod's own run is unchanged."""
        pod = rec.pod
        new = [
            c for c in containers.unstarted_ephemeral(pod) if c.name not in rec.ephemeral_started
        ]
        if not new:
            return
        rec.ephemeral_started |= {c.name or "" for c in new}
        stamp = self._stamp(now)
        self.statuses.set_status(
            pod,
            lambda p: containers.ephemeral_running_status(p, now=stamp),
            functools.partial(self._refresh, rec),
        )
        if self.config.container_events:
            containers.ephemeral_started_events(self._recorder, pod, new)

    def _grace_period(self, pod: Pod) -> int:
        """``calculateEffectiveGracePeriod``: the API's deletion grace, else the pod's own."""
        if pod.metadata.deletion_grace_period_seconds is not None:
            return pod.metadata.deletion_grace_period_seconds
        spec = pod.spec
        if spec is not None and spec.termination_grace_period_seconds is not None:
            return spec.termination_grace_period_seconds
        return DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS

    def _admit(self, pod: Pod, now: float) -> None:
        result = admission.admit_under_pressure(pod, self.pressure.node_conditions)
        requests = pod_requests(pod.spec) if pod.spec else {}
        if result.admit:
            result = admission.fit_resources(
                requests,
                allocatable=admission.node_allocatable(self.node),
                used=self._used,
                used_pods=self._used_pods,
            )
        if not result.admit:
            self._recorder.event(pod, record.EVENT_TYPE_WARNING, result.reason, result.message)
            stamp = self._stamp(now)
            self._final.write(
                pod,
                lambda p: status.rejected_status(
                    p, now=stamp, reason=result.reason, message=result.message
                ),
            )
            return
        self._run(pod, now, requests, started_at=now, start_time=self._stamp(now))

    def _adopt(self, pod: Pod, now: float) -> None:
        """A pod that is already running here (a snapshot of a live cluster): keep it."""
        start_text = (pod.status.start_time if pod.status else None) or self._stamp(now)
        try:
            started_at = parse_rfc3339(start_text)
        except ValueError:
            started_at = now
        requests = pod_requests(pod.spec) if pod.spec else {}
        self._run(pod, now, requests, started_at=started_at, start_time=start_text)

    def _run(
        self,
        pod: Pod,
        now: float,
        requests: ResourceAmounts,
        *,
        started_at: float,
        start_time: str,
    ) -> None:
        script = runtime.read_script(pod)
        for problem in script.errors:
            self._recorder.event(pod, record.EVENT_TYPE_WARNING, "InvalidAnnotation", problem)
        rec = Record(
            pod=pod,
            state=State.RUNNING,
            script=script,
            requests=requests,
            started_at=started_at,
            start_time=start_time,
            finishes_at=None if script.duration is None else started_at + script.duration,
            pod_ip=self._ips.assign(pod),
        )
        self._records[rec.uid] = rec
        admission.add_amounts(self._used, requests)
        self._used_pods += 1
        self.pressure.hold(rec.script.stats, 1, now)
        host_ip = self._ips.host_ip
        stamp = self._stamp(now)
        self.statuses.set_status(
            pod,
            lambda p: status.running_status(
                p, now=stamp, start_time=start_time, host_ip=host_ip, pod_ip=rec.pod_ip
            ),
            functools.partial(self._refresh, rec),
        )
        if self.config.container_events:
            containers.started_events(self._recorder, pod)
        self._schedule(rec)

    def _terminate(self, rec: Record, now: float, grace: float) -> None:
        """SIGTERM now (or again, with a shorter grace period): recompute the exit."""
        if rec.state == State.TERMINATED:
            return
        kill_at = now + runtime.kill_window(max(grace, 1))
        if rec.sigterm_at is None:
            rec.sigterm_at = now
            if self.config.container_events and not rec.gone:
                containers.killing_events(self._recorder, rec.pod)
        if rec.kill_at is not None and rec.kill_at <= kill_at:
            return
        rec.kill_at = kill_at
        rec.state = State.TERMINATING
        rec.exit = runtime.exit_after_sigterm(
            rec.script, sigterm_at=rec.sigterm_at, kill_at=kill_at, finishes_at=rec.finishes_at
        )
        self._schedule(rec)

    def _on_timer(self, uid: str, now: float) -> None:
        rec = self._records.get(uid)
        if rec is None or rec.state == State.TERMINATED:
            return
        due = rec.wake_at()
        if due is None or due > now:
            return  # a stale entry: the record's time moved
        if rec.exit is None:
            # The run ended by itself: exit 0.
            rec.exit = runtime.Exit(due, runtime.EXIT_CODE_SUCCESS)
            rec.sigterm_at = due
        self._exited(rec, now)

    def _exited(self, rec: Record, now: float) -> None:
        """The containers are gone: report the final status, release, delete if deleted."""
        assert rec.exit is not None
        rec.state = State.TERMINATED
        self._uncount(rec)
        self.pressure.hold(rec.script.stats, -1, now)
        self._ips.release(rec.pod_ip)
        if rec.gone:
            self._forget(rec)
            return
        exit_code = rec.exit.exit_code
        disruption: PodCondition | None = None
        reason = message = None
        if rec.evicted:
            # The eviction's status function forces Failed whatever the containers did.
            exit_code = exit_code or runtime.EXIT_CODE_SIGKILL
            reason, message = "Evicted", rec.evicted_message
        stamp = self._stamp(now)
        self._final.write(
            rec.pod,
            lambda p: status.terminal_status(
                p,
                now=stamp,
                start_time=rec.start_time,
                exit_code=exit_code,
                reason=reason,
                message=message,
                disruption=disruption,
            ),
            delete_if_deleted=True,
        )
        self._forget(rec)

    def _finish_unstarted(self, pod: Pod, now: float) -> None:
        """A pod deleted before it started: report it Failed and let it go."""
        stamp = self._stamp(now)
        self._final.write(
            pod,
            lambda p: status.terminal_status(
                p, now=stamp, start_time=stamp, exit_code=runtime.EXIT_CODE_SIGKILL
            ),
            delete_always=True,
        )

    def _clean_up_terminal(self, pod: Pod) -> None:
        """``HandlePodCleanups``: a terminal pod waiting out a grace period is deleted now."""
        if pod.metadata.deletion_timestamp and pod.metadata.deletion_grace_period_seconds:
            self._final.delete(pod)

    def _forget(self, rec: Record) -> None:
        self._records.pop(rec.uid, None)

    def _stamp(self, now: float) -> str:
        """``rfc3339(now)``, memoised: many pods change state at the same instant."""
        if now != self._stamp_at:
            self._stamp_at, self._stamp_text = now, rfc3339(now)
        return self._stamp_text

    # --- accounting -----------------------------------------------------------------------------

    def _uncount(self, rec: Record) -> None:
        if rec.counted:
            rec.counted = False
            admission.add_amounts(self._used, rec.requests, -1)
            self._used_pods -= 1

    def _schedule(self, rec: Record) -> None:
        due = rec.wake_at()
        if due is not None:
            self._timer_seq += 1
            heapq.heappush(self._timers, (due, self._timer_seq, rec.uid))

    def _drop_stale_timers(self) -> None:
        while self._timers:
            due, _, uid = self._timers[0]
            rec = self._records.get(uid)
            if rec is not None and rec.state != State.TERMINATED and rec.wake_at() == due:
                return
            heapq.heappop(self._timers)

    # --- status writes --------------------------------------------------------------------------

    def _refresh(self, rec: Record, stored: Pod | None) -> None:
        """Keep the pod as stored by a status write, unless an event brought a newer one."""
        if stored is not None and revision(stored) >= revision(rec.pod):
            rec.pod = stored

    # --- node-pressure eviction -------------------------------------------------------------------

    def _eviction_candidates(self) -> list[Pod]:
        """``GetActivePods``: running pods whose status is not yet terminal, by name."""
        active = [
            r.pod
            for r in self._records.values()
            if r.state != State.TERMINATED and not r.evicted and not r.gone
        ]
        return sorted(active, key=lambda p: (p.metadata.namespace or "", p.metadata.name or ""))

    def _stats(self, pod: Pod) -> PodStats | None:
        rec = self._records.get(pod.metadata.uid or "")
        return rec.script.stats if rec is not None else None

    def _eviction_pass(self, now: float) -> None:
        result, self.node = self.pressure.run(
            now, self.node, self._eviction_candidates, self._stats
        )
        decision = result.eviction
        if decision is not None:
            rec = self._records[decision.pod.metadata.uid or ""]
            self._evict(rec, decision.message, decision.grace_period, now)
            assert rec.exit is not None
            self.pressure.schedule(min(rec.exit.at, now + POD_CLEANUP_TIMEOUT))

    def _evict(self, rec: Record, message: str, grace: int, now: float) -> None:
        """``evictPod``: Warning event, status Failed/Evicted with DisruptionTarget, kill."""
        rec.evicted = True
        rec.evicted_message = message
        self._uncount(rec)
        self._recorder.event(rec.pod, record.EVENT_TYPE_WARNING, "Evicted", message)
        disruption = PodCondition(
            type=status.DISRUPTION_TARGET,
            status="True",
            reason=status.REASON_TERMINATION_BY_KUBELET,
            message=message,
        )
        stamp = self._stamp(now)
        self.statuses.set_status(
            rec.pod,
            lambda p: status.evicted_status(p, now=stamp, message=message, disruption=disruption),
            functools.partial(self._refresh, rec),
        )
        self._terminate(rec, now, grace)
