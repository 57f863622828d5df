"""The taint eviction controller: pods on ``NoExecute``-tainted nodes go, at once or later.

Mirrors v1.32's separate ``taint-eviction-controller``
(``pkg/controller/tainteviction/taint_eviction.go`` and ``timed_workers.go``):

* it keeps every node's ``NoExecute`` taints (``taintedNodes``); a node without any costs
  nothing, and a pod event is looked at only when its node is tainted;
* ``processPodOnNode``: a pod that does not tolerate every ``NoExecute`` taint of its node
  is deleted now; a pod tolerating all of them with the first matching toleration of each
  (``GetMatchingTolerations``) is deleted when the smallest ``tolerationSeconds`` of those
  tolerations has passed, counted from when the controller saw the taints (not from the
  taint's ``timeAdded``); tolerations without ``tolerationSeconds`` tolerate forever, and
  a ``tolerationSeconds`` of zero or less means now. An eviction already scheduled at an
  earlier instant is kept as it is;
* the scheduled deletion is cancelled when the taints go away (or the pod stops being
  tainted, or is deleted), with the event ``TaintManagerEviction`` "Cancelling deletion
  of Pod <ns>/<name>";
* when it fires: the event ``TaintManagerEviction`` "Marking for deletion Pod
  <ns>/<name>", then the pod's status gets ``DisruptionTarget`` (reason
  ``DeletionByTaintManager``, message "Taint manager: deleting due to NoExecute taint"),
  then a plain DELETE (the pod's own grace period). A fired pod is not deleted again while
  it exists (v1.32 keeps the fired key in the queue). In ``kubeprio serve`` a status
  write or delete that waits on an admission webhook is done once the answer is in
  (``client.answeredretry``; the worker's retry re-reads the pod, so a condition
  already set is not written twice), as upstream's worker goroutine waits on its call.

Timers are the injected ``Clock``'s: ``next_wakeup`` names the next eviction due (or now,
while events wait), ``run_once`` handles node updates before pod updates, as upstream's
workers do, and then fires what is due. No threads, no sleeping. Sees the cluster only
through ``client`` (informers, get, update_status, delete).
"""

from __future__ import annotations

import functools
import heapq
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Node, ObjectReference, Pod, PodCondition, PodStatus, Taint, Toleration
from kubeprio.api.model import evolve
from kubeprio.api.podconditions import update_pod_condition
from kubeprio.api.taints import TAINT_EFFECT_NO_EXECUTE, toleration_tolerates_taint
from kubeprio.client import record
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.client.statuswrite import write_status
from kubeprio.clock import Clock, rfc3339

LOG: Final = logging.getLogger(__name__)

CONTROLLER_NAME: Final = "taint-eviction-controller"
"""The component in its events (``names.TaintEvictionController``)."""
REASON_EVICTION: Final = "TaintManagerEviction"
REASON_DELETION_BY_TAINT_MANAGER: Final = "DeletionByTaintManager"
MESSAGE_DELETION: Final = "Taint manager: deleting due to NoExecute taint"
NODE_NAME_INDEX: Final = "spec.nodeName"
"""The pod informer index of the pods bound to a node (``getPodsAssignedToNode``)."""
_DISRUPTION: Final = PodCondition(
    type="DisruptionTarget",
    status="True",
    reason=REASON_DELETION_BY_TAINT_MANAGER,
    message=MESSAGE_DELETION,
)


def no_execute_taints(node: Node | None) -> tuple[Taint, ...]:
    """``getNoExecuteTaints``: the node's taints with effect ``NoExecute``, in order."""
    taints = (node.spec.taints if node is not None and node.spec else None) or ()
    return tuple(t for t in taints if t.effect == TAINT_EFFECT_NO_EXECUTE)


def matching_tolerations(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> tuple[bool, list[Toleration]]:
    """``GetMatchingTolerations``: whether every taint is tolerated, and for each taint the
    first toleration that tolerates it."""
    if not taints:
        return True, []
    used: list[Toleration] = []
    for taint in taints:
        match = next((t for t in tolerations if toleration_tolerates_taint(t, taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_seconds(tolerations: Sequence[Toleration]) -> float | None:
    """``getMinTolerationTime``: the smallest ``tolerationSeconds`` (0 when one is <= 0, or
    when there are no tolerations), or None when every one tolerates forever."""
    if not tolerations:
        return 0.0
    smallest: int | None = None
    for toleration in tolerations:
        seconds = toleration.toleration_seconds
        if seconds is None:
            continue
        if seconds <= 0:
            return 0.0
        if smallest is None or seconds < smallest:
            smallest = seconds
    return None if smallest is None else float(smallest)


@dataclass(slots=True)
class _Work:
    """A scheduled deletion (``TimedWorker``): created at, fires at."""

    created_at: float
    fire_at: float


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _node_of(pod: Pod | None) -> str:
    return (pod.spec.node_name if pod is not None and pod.spec else None) or ""


def _tolerations(pod: Pod | None) -> tuple[Toleration, ...]:
    return tuple((pod.spec.tolerations if pod is not None and pod.spec else None) or ())


class TaintEvictionController:
    """Deletes pods that do not tolerate their node's ``NoExecute`` taints (long enough)."""

    name: Final = CONTROLLER_NAME

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        pods: Informer[Pod],
        nodes: Informer[Node],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        """Registers on both informers and adds the ``spec.nodeName`` index to ``pods``."""
        self.client = client
        self.api_writes = AnsweredRetry(CONTROLLER_NAME)
        """Evictions waiting on admission webhook answers, by pod key."""
        self.clock = clock
        self.pods = pods
        self.nodes = nodes
        self.recorder = recorder or record.EventRecorder(
            client, clock=clock, component=CONTROLLER_NAME
        )
        self.tainted: dict[str, tuple[Taint, ...]] = {}
        """Node name -> its ``NoExecute`` taints (``taintedNodes``), for tainted nodes only."""
        self._node_updates: dict[str, None] = {}
        self._pod_updates: dict[str, tuple[str, str, str]] = {}
        """Pod key -> (namespace, name, node name) of the update to handle."""
        self._work: dict[str, _Work | None] = {}
        """Pod key -> its scheduled deletion; None once fired (upstream's nil worker)."""
        self._heap: list[tuple[float, int, str]] = []
        self._sequence = 0
        self.deleted = 0
        # The same index the control plane's kubelets read: adding it again is harmless.
        pods.add_index(NODE_NAME_INDEX, lambda p: [n] if (n := _node_of(p)) else [])
        pods.add_handler(FuncHandler(self._pod_added, self._pod_updated, self._pod_deleted))
        nodes.add_handler(FuncHandler(self._node_added, self._node_updated, self._node_deleted))

    # --- informer events (``PodUpdated``/``NodeUpdated``) ----------------------------------------

    def _pod_added(self, pod: Pod) -> None:
        self._pod_changed(None, pod)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        if _tolerations(old) == _tolerations(new) and _node_of(old) == _node_of(new):
            return
        self._pod_changed(old, new)

    def _pod_deleted(self, pod: Pod) -> None:
        key = _key(pod.metadata.namespace or "", pod.metadata.name or "")
        if key in self._work:
            self._pod_updates[key] = (pod.metadata.namespace or "", pod.metadata.name or "", "")

    def _pod_changed(self, old: Pod | None, new: Pod) -> None:
        # Upstream queues every change; only a pod on a tainted node, or one with work
        # scheduled, can lead anywhere (``handlePodUpdate`` returns for the rest).
        node = _node_of(new)
        key = _key(new.metadata.namespace or "", new.metadata.name or "")
        if node in self.tainted or key in self._work:
            self._pod_updates[key] = (new.metadata.namespace or "", new.metadata.name or "", node)

    def _node_added(self, node: Node) -> None:
        if no_execute_taints(node):
            self._node_updates[node.metadata.name or ""] = None

    def _node_updated(self, old: Node, new: Node) -> None:
        if no_execute_taints(old) != no_execute_taints(new):
            self._node_updates[new.metadata.name or ""] = None

    def _node_deleted(self, node: Node) -> None:
        name = node.metadata.name or ""
        if name in self.tainted:
            self._node_updates[name] = None

    # --- driving ---------------------------------------------------------------------------------

    def next_wakeup(self) -> float | None:
        """Now while updates wait; else when the earliest scheduled deletion is due."""
        if self._node_updates or self._pod_updates:
            return self.clock.now()
        while self._heap:
            fire_at, _, key = self._heap[0]
            work = self._work.get(key)
            if work is not None and work.fire_at == fire_at:
                return fire_at
            heapq.heappop(self._heap)
        return None

    def run_once(self) -> int:
        """Handle node updates, then pod updates, then fire due deletions; return how many
        pods were deleted."""
        before = self.deleted
        while self._node_updates or self._pod_updates:
            # Node updates first: upstream's workers empty the node channel before a pod.
            while self._node_updates:
                name = next(iter(self._node_updates))
                del self._node_updates[name]
                self._handle_node_update(name)
            if self._pod_updates:
                key = next(iter(self._pod_updates))
                namespace, name, node = self._pod_updates.pop(key)
                self._handle_pod_update(namespace, name, node)
        now = self.clock.now()
        while self._heap and self._heap[0][0] <= now:
            fire_at, _, key = heapq.heappop(self._heap)
            work = self._work.get(key)
            if work is None or work.fire_at != fire_at:
                continue
            self._fire(key)
        return self.deleted - before

    # --- handlers ----------------------------------------------------------------------------------

    def _handle_pod_update(self, namespace: str, name: str, node_name: str) -> None:
        """``handlePodUpdate``."""
        key = _key(namespace, name)
        pod = self.pods.get(name, namespace)
        if pod is None:
            self._cancel(key, namespace, name)
            return
        if _node_of(pod) != node_name or not node_name:
            return
        taints = self.tainted.get(node_name)
        if taints is None:
            return
        self._process_pod_on_node(pod, taints, self.clock.now())

    def _handle_node_update(self, name: str) -> None:
        """``handleNodeUpdate``."""
        node = self.nodes.get(name)
        if node is None:
            self.tainted.pop(name, None)
            return
        taints = no_execute_taints(node)
        if taints:
            self.tainted[name] = taints
        else:
            self.tainted.pop(name, None)
        pods = sorted(
            self.pods.by_index(NODE_NAME_INDEX, name),
            key=lambda p: (p.metadata.namespace or "", p.metadata.name or ""),
        )
        if not taints:
            for pod in pods:
                self._cancel(
                    _key(pod.metadata.namespace or "", pod.metadata.name or ""),
                    pod.metadata.namespace or "",
                    pod.metadata.name or "",
                )
            return
        now = self.clock.now()
        for pod in pods:
            self._process_pod_on_node(pod, taints, now)

    def _process_pod_on_node(self, pod: Pod, taints: tuple[Taint, ...], now: float) -> None:
        """``processPodOnNode``."""
        namespace, name = pod.metadata.namespace or "", pod.metadata.name or ""
        key = _key(namespace, name)
        tolerated, used = matching_tolerations(taints, _tolerations(pod))
        if not tolerated:
            self._cancel(key, namespace, name)
            self._add_work(key, now, now)
            return
        seconds = min_toleration_seconds(used)
        if seconds is None:
            self._cancel(key, namespace, name)
            return
        created_at, trigger = now, now + seconds
        scheduled = self._work.get(key)
        if scheduled is not None:
            created_at = scheduled.created_at
            if created_at + seconds < trigger:
                return  # scheduled at an earlier instant: it stands
            self._cancel(key, namespace, name)
        self._add_work(key, created_at, trigger)

    # --- the timed work queue (``TimedWorkerQueue``) ----------------------------------------------

    def _add_work(self, key: str, created_at: float, fire_at: float) -> None:
        """``AddWork``: skipped when the key already has work (or fired)."""
        if key in self._work:
            return
        if fire_at <= self.clock.now():
            # ``createWorker`` runs work that is due at once, without a timer.
            self._fire(key)
            return
        self._work[key] = _Work(created_at, fire_at)
        self._sequence += 1
        heapq.heappush(self._heap, (fire_at, self._sequence, key))

    def _cancel(self, key: str, namespace: str, name: str) -> None:
        """``cancelWorkWithEvent``: drop the key; an event when a pending deletion was cancelled."""
        if key not in self._work:
            return
        work = self._work.pop(key)
        if work is not None:
            self.recorder.event_for(
                _pod_reference(namespace, name),
                record.EVENT_TYPE_NORMAL,
                REASON_EVICTION,
                f"Cancelling deletion of Pod {key}",
            )

    def _fire(self, key: str) -> None:
        """``deletePodHandler``: the event, ``DisruptionTarget``, then DELETE."""
        self._work[key] = None
        namespace, _, name = key.partition("/")
        self.recorder.event_for(
            _pod_reference(namespace, name),
            record.EVENT_TYPE_NORMAL,
            REASON_EVICTION,
            f"Marking for deletion Pod {key}",
        )
        # The worker's call waits on any admission webhook; here it is written once the
        # answer is in (``client.answeredretry``), the key staying fired meanwhile.
        self.api_writes.run(key, functools.partial(self._evict, key, namespace, name))

    def _evict(self, key: str, namespace: str, name: str) -> None:
        if self._add_condition_and_delete(namespace, name):
            self.deleted += 1
        else:
            # Upstream logs the failure and forgets the key: a later update may retry.
            self._work.pop(key, None)

    def _add_condition_and_delete(self, namespace: str, name: str) -> bool:
        """``addConditionAndDeletePod``: True when deleted (or already gone)."""
        now = rfc3339(self.clock.now())

        def disrupted(latest: Pod) -> Pod | None:
            status = update_pod_condition(latest.status or PodStatus(), _DISRUPTION, now=now)
            return None if status is None else evolve(latest, status=status)

        try:
            pod = self.client.get(Pod, name, namespace)
            write_status(self.client, pod, disrupted)
            self.client.delete(Pod, name, namespace)
        except errors.NotFoundError:
            return True
        except errors.StatusError as exc:
            LOG.warning("taint eviction could not delete pod %s/%s: %s", namespace, name, exc)
            return False
        return True


def _pod_reference(namespace: str, name: str) -> ObjectReference:
    """The reference upstream's events carry: no uid, no resource version."""
    return ObjectReference(api_version="v1", kind="Pod", name=name, namespace=namespace)
