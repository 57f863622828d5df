"""The node lifecycle controller: a node that stops reporting goes Unknown, then gets tainted.

Mirrors ``pkg/controller/nodelifecycle/node_lifecycle_controller.go`` (v1.32; the taint
eviction itself is ``controllers.tainteviction``, v1.32's separate controller):

* ``monitorNodeHealth`` every ``--node-monitor-period`` (5 s): a node's probe timestamp
  is the controller's time when it last saw its Ready condition's ``lastHeartbeatTime``
  change or its Lease (``kube-node-lease/<node>``) renewed; past
  ``--node-monitor-grace-period`` (v1.32's default: 50 s; a node that never posted a
  Ready condition gets ``--node-startup-grace-period``, 60 s, from its creation) the
  conditions ``Ready``, ``MemoryPressure``, ``DiskPressure`` and ``PIDPressure`` become
  ``Unknown`` (``NodeStatusUnknown``, "Kubelet stopped posting node status."; a missing
  one ``NodeStatusNeverUpdated``, "Kubelet never posted node status.");
* when Ready leaves True: the event ``NodeNotReady`` ("Node <n> status is now:
  NodeNotReady") and ``MarkPodsNotReady`` (each pod's Ready condition False, a Warning
  ``NodeNotReady`` "Node is not ready" on it); a pod bound later to such a node too;
* ``processTaintBaseEviction``: Ready False queues the node for the ``NoExecute`` taint
  ``node.kubernetes.io/not-ready``, Unknown for ``node.kubernetes.io/unreachable``
  (the other one is swapped at once if present); Ready True removes both;
* ``doNoExecuteTaintingPass``: the queue of each zone (``topology.kubernetes.io/region``
  and ``zone``) adds the taints (``timeAdded`` set) at ``--node-eviction-rate`` (0.1
  nodes/s) per zone (``controllers.ratelimitedqueue``);
* ``handleDisruption``: a zone with no Ready node is fully disrupted, one with more than
  two and at least ``--unhealthy-zone-threshold`` (55 %) not Ready partially: its rate
  becomes ``--secondary-node-eviction-rate`` (0.01) above
  ``--large-cluster-size-threshold`` (50) nodes, else 0. When every zone is fully
  disrupted, tainting stops and the taints come off every node; when one node is Ready
  again, every probe timestamp restarts. Nodes labelled
  ``node.kubernetes.io/exclude-disruption`` are left out of the zone counts;
* events ``RegisteredNode`` ("Node <n> event: Registered Node <n> in Controller") and
  ``RemovingNode``, component ``node-controller``.

* ``doNoScheduleTaintingPass`` on every node event: the ``NoSchedule`` taints of
  TaintNodesByCondition (Ready False ``not-ready``, Unknown ``unreachable``,
  ``memory-pressure``, ``disk-pressure``, ``pid-pressure``, ``network-unavailable``, and
  ``unschedulable`` for a cordoned node) follow the node's conditions.

Left out: the label reconciliation (kubeprio's kubelets set both label pairs).

``assume_healthy`` (simulation): nodes it accepts get no health check, as if their
kubelets heartbeated at every check, but count as their Ready condition says in their
zone, and their condition taints follow their conditions as every node's do. A simulation keeps leases only for kubelets that can fail, so only those are
watched; in ``serve`` every node is. Driven like the other controllers
(``next_wakeup``/``run_once``): a check is planned on the 5 s grid only while a watched
node could go stale, something changed, or work is pending, so a cluster whose nodes are
all Unknown or unwatched has no timer. Time from the injected ``Clock``.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.coordination import NODE_LEASE_NAMESPACE, Lease
from kubeprio.api.core import (
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    ObjectReference,
    Pod,
    Taint,
)
from kubeprio.api.model import evolve
from kubeprio.api.podconditions import update_pod_condition
from kubeprio.api.taints import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_NODE_NOT_READY,
    TAINT_NODE_UNREACHABLE,
    TAINT_NODE_UNSCHEDULABLE,
)
from kubeprio.client import record
from kubeprio.client.informer import CacheKey, FuncHandler, Informer, cache_key
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, parse_rfc3339, rfc3339
from kubeprio.controllers.ratelimitedqueue import RateLimitedTimedQueue

LOG: Final = logging.getLogger(__name__)

COMPONENT: Final = "node-controller"
READY: Final = "Ready"
_CONDITION_TYPES: Final = (READY, "MemoryPressure", "DiskPressure", "PIDPressure")
UNKNOWN: Final = "Unknown"
EXCLUDE_DISRUPTION: Final = "node.kubernetes.io/exclude-disruption"
NODE_NAME_INDEX: Final = "spec.nodeName"
RETRIES: Final = 5
"""``NodeHealthUpdateRetry``."""
UNREACHABLE: Final = Taint(key=TAINT_NODE_UNREACHABLE, effect=TAINT_EFFECT_NO_EXECUTE)
NOT_READY: Final = Taint(key=TAINT_NODE_NOT_READY, effect=TAINT_EFFECT_NO_EXECUTE)

_CONDITION_TAINTS: Final = {
    (READY, "False"): TAINT_NODE_NOT_READY,
    (READY, UNKNOWN): TAINT_NODE_UNREACHABLE,
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
}
"""``nodeConditionToTaintKeyStatusMap``."""
_NO_SCHEDULE_KEYS: Final = frozenset({*_CONDITION_TAINTS.values(), TAINT_NODE_UNSCHEDULABLE})

INITIAL, NORMAL, FULL, PARTIAL = "Initial", "Normal", "FullDisruption", "PartialDisruption"


@dataclasses.dataclass(frozen=True, slots=True)
class NodeLifecycleConfig:
    """kube-controller-manager's node lifecycle flags, with v1.32's defaults."""

    node_monitor_period: float = 5.0
    node_monitor_grace_period: float = 50.0
    node_startup_grace_period: float = 60.0
    node_eviction_rate: float = 0.1
    secondary_node_eviction_rate: float = 0.01
    large_cluster_size_threshold: int = 50
    unhealthy_zone_threshold: float = 0.55


@dataclasses.dataclass(slots=True)
class _Health:
    """``nodeHealthData``: when the controller last heard from the node, and what."""

    probe_timestamp: float
    ready_transition_timestamp: float
    ready: NodeCondition | None
    lease_renew: float | None = None


def ready_condition(node: Node | None) -> NodeCondition | None:
    """The node's Ready condition, if it has one."""
    conditions = (node.status.conditions if node is not None and node.status else None) or ()
    return next((c for c in conditions if c.type == READY), None)


def zone_key(node: Node) -> str:
    """``nodetopology.GetZoneKey``: region and zone labels (GA, else beta), or ""."""
    labels = node.metadata.labels or {}
    region = labels.get("topology.kubernetes.io/region") or labels.get(
        "failure-domain.beta.kubernetes.io/region", ""
    )
    zone = labels.get("topology.kubernetes.io/zone") or labels.get(
        "failure-domain.beta.kubernetes.io/zone", ""
    )
    return f"{region}:\x00:{zone}" if region or zone else ""


def has_taint(node: Node, template: Taint) -> bool:
    """``TaintExists``: a taint with the template's key and effect."""
    taints = (node.spec.taints if node.spec else None) or ()
    return any(t.key == template.key and t.effect == template.effect for t in taints)


def _renew_time(lease: Lease | None) -> float | None:
    text = lease.spec.renew_time if lease is not None and lease.spec else None
    return parse_rfc3339(text) if text else None


class NodeLifecycleController:
    """Watches node heartbeats; marks lost nodes Unknown and taints them, zone-rate-limited."""

    name: Final = COMPONENT

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        nodes: Informer[Node],
        pods: Informer[Pod],
        leases: Informer[Lease] | None,
        config: NodeLifecycleConfig | None = None,
        assume_healthy: Callable[[Node], bool] | None = None,
        recorder: record.EventRecorder | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.nodes = nodes
        self.pods = pods
        self.leases = leases
        self.config = config or NodeLifecycleConfig()
        self._assume_healthy = assume_healthy
        self.recorder = recorder or record.EventRecorder(client, clock=clock, component=COMPONENT)
        self._origin = clock.now()
        self._last_pass = -math.inf
        self._known: dict[str, Node] = {}
        self._health: dict[str, _Health] = {}
        self._watched: set[str] = set()
        self._members: dict[str, tuple[str, bool]] = {}
        """Node -> (zone, Ready is True), for nodes counted in zone states."""
        self.zone_states: dict[str, str] = {}
        self.tainters: dict[str, RateLimitedTimedQueue] = {}
        self._to_retry: set[str] = set()
        self._pending_pods: dict[CacheKey, None] = {}
        self._changed = True
        self._node_updates: dict[str, None] = {}
        pods.add_index(NODE_NAME_INDEX, lambda p: [n] if p.spec and (n := p.spec.node_name) else [])
        nodes.add_handler(FuncHandler(self._node_seen, self._node_updated, self._node_deleted))
        pods.add_handler(FuncHandler(self._pod_added, self._pod_updated))
        if leases is not None:
            leases.add_handler(FuncHandler(self._lease_seen, self._lease_updated))

    # --- informer events --------------------------------------------------------------------------

    def _is_watched(self, node: Node) -> bool:
        return self._assume_healthy is None or not self._assume_healthy(node)

    def _node_seen(self, node: Node) -> None:
        name = node.metadata.name or ""
        # The NoSchedule pass follows every node's conditions, as upstream's on each node
        # event: it is event-driven, so an unwatched node costs one look per update.
        self._node_updates[name] = None
        if self._is_watched(node):
            self._watched.add(name)
            self._changed = True
        elif name in self._watched:
            self._watched.discard(name)
            self._changed = True
        if EXCLUDE_DISRUPTION in (node.metadata.labels or {}):
            self._members.pop(name, None)
        else:
            ready = ready_condition(node)
            self._members[name] = (zone_key(node), ready is not None and ready.status == "True")

    def _node_updated(self, old: Node, new: Node) -> None:
        self._node_seen(new)

    def _node_deleted(self, node: Node) -> None:
        name = node.metadata.name or ""
        self._members.pop(name, None)
        self._to_retry.discard(name)
        if name in self._watched:
            self._watched.discard(name)
            self._changed = True

    def _lease_seen(self, lease: Lease) -> None:
        if (
            lease.metadata.namespace == NODE_LEASE_NAMESPACE
            and lease.metadata.name in self._watched
        ):
            self._changed = True

    def _lease_updated(self, old: Lease, new: Lease) -> None:
        self._lease_seen(new)

    def _pod_added(self, pod: Pod) -> None:
        self._pod_bound(None, pod)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        self._pod_bound(old, new)

    def _pod_bound(self, old: Pod | None, new: Pod) -> None:
        """``podUpdated``: a pod newly bound to a node this controller holds not Ready."""
        node = new.spec.node_name if new.spec else None
        if not node or (old is not None and old.spec is not None and old.spec.node_name == node):
            return
        health = self._health.get(node)
        if health is not None and health.ready is not None and health.ready.status != "True":
            self._pending_pods[cache_key(new)] = None

    # --- driving ------------------------------------------------------------------------------------

    def _monitor_due(self) -> bool:
        if self._changed or self._to_retry:
            return True
        for name in self._watched:
            health = self._health.get(name)
            if health is None or health.ready is None or health.ready.status != UNKNOWN:
                return True
        return False

    def _next_tick(self, now: float) -> float:
        """The latest grid time not after ``now`` if no check ran since; else the next one.
        (On real time ``now`` is never exactly on the grid: compare with the last check.)"""
        period = self.config.node_monitor_period
        tick = self._origin + max(math.floor((now - self._origin) / period + 1e-9), 0) * period
        return tick if tick > self._last_pass else tick + period

    def next_wakeup(self) -> float | None:
        """Now for pending pods; the next 5 s check while needed; a tainting queue's turn."""
        now = self.clock.now()
        if self._pending_pods or self._node_updates:
            return now
        wakeups = [w for q in self.tainters.values() if (w := q.next_wakeup(now)) is not None]
        if self._monitor_due():
            wakeups.append(self._next_tick(now))
        return min(wakeups) if wakeups else None

    def run_once(self) -> None:
        """Mark pending pods, run a due health check, then the tainting pass."""
        now = self.clock.now()
        if self._node_updates:
            names, self._node_updates = self._node_updates, {}
            for name in sorted(names):
                self._no_schedule_tainting_pass(name)
        if self._pending_pods:
            pending, self._pending_pods = self._pending_pods, {}
            for namespace, name in sorted(pending):
                pod = self.pods.get(name, namespace)
                if pod is not None and pod.spec is not None and pod.spec.node_name:
                    self._mark_pods_not_ready([pod], pod.spec.node_name)
        if self._monitor_due() and self._next_tick(now) <= now:
            self._last_pass = now
            self._changed = False
            self.monitor_node_health(now)
        for zone in sorted(self.tainters):
            self.tainters[zone].try_(self._taint_action, now)

    def _no_schedule_tainting_pass(self, name: str) -> None:
        """``doNoScheduleTaintingPass``: condition taints follow the node's conditions."""
        node = self.nodes.get(name)
        if node is None:
            return
        wanted: list[Taint] = []
        for condition in (node.status.conditions if node.status else None) or ():
            key = _CONDITION_TAINTS.get((condition.type or "", condition.status or ""))
            if key is not None:
                wanted.append(Taint(key=key, effect=TAINT_EFFECT_NO_SCHEDULE))
        if node.spec is not None and node.spec.unschedulable:
            wanted.append(Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=TAINT_EFFECT_NO_SCHEDULE))
        present = [
            t
            for t in (node.spec.taints if node.spec else None) or ()
            if t.effect == TAINT_EFFECT_NO_SCHEDULE and t.key in _NO_SCHEDULE_KEYS
        ]
        present_keys = {t.key for t in present}
        wanted_keys = {t.key for t in wanted}
        add = [t for t in wanted if t.key not in present_keys]
        remove = [t for t in present if t.key not in wanted_keys]
        if add or remove:
            stamp = rfc3339(self.clock.now())
            self._change_taints(name, [evolve(t, time_added=stamp) for t in add], remove)

    # --- monitorNodeHealth ---------------------------------------------------------------------------

    def _tainter(self, zone: str) -> RateLimitedTimedQueue:
        queue = self.tainters.get(zone)
        if queue is None:
            queue = RateLimitedTimedQueue(self.config.node_eviction_rate, self.clock.now())
            self.tainters[zone] = queue
            self.zone_states.setdefault(zone, INITIAL)
        return queue

    def monitor_node_health(self, now: float) -> None:
        """``monitorNodeHealth`` over the watched nodes."""
        watched = sorted(self._watched)
        for name in watched:
            node = self.nodes.get(name)
            if node is None or name in self._known:
                continue
            self._node_event(node, "RegisteredNode", f"Registered Node {name} in Controller")
            self._known[name] = node
            self._tainter(zone_key(node))
            self._mark_node_as_reachable(node)
        for name in sorted(set(self._known) - set(watched)):
            gone = self._known.pop(name)
            self._node_event(gone, "RemovingNode", f"Removing Node {name} from Controller")
        for name in watched:
            node = self.nodes.get(name)
            if node is not None:
                self._update_node(node, now)
        self._handle_disruption(now)

    def _update_node(self, node: Node, now: float) -> None:
        name = node.metadata.name or ""
        result = None
        for attempt in range(RETRIES):
            try:
                result = self._try_update_node_health(node, now)
                break
            except errors.StatusError as exc:
                if attempt == RETRIES - 1:
                    LOG.warning("could not update the health of node %s: %s", name, exc)
                    return
                try:
                    node = self.client.get(Node, name)
                except errors.StatusError:
                    return
        if result is None:
            return
        node, observed, current = result
        if name in self._members:
            self._members[name] = (
                self._members[name][0],
                current is not None and current.status == "True",
            )
        if current is None:
            self._to_retry.discard(name)
            return
        self._process_taint_based_eviction(node, observed)
        if current.status != "True" and observed.status == "True":
            self._node_event(node, "NodeNotReady", None)
            if not self._mark_pods_not_ready(self._pods_on(name), name):
                self._to_retry.add(name)
                return
        elif (
            name in self._to_retry
            and observed.status != "True"
            and not self._mark_pods_not_ready(self._pods_on(name), name)
        ):
            return
        self._to_retry.discard(name)

    def _try_update_node_health(
        self, node: Node, now: float
    ) -> tuple[Node, NodeCondition, NodeCondition | None]:
        """``tryUpdateNodeHealth``: (the node as written, observed Ready, current Ready)."""
        name = node.metadata.name or ""
        created = (
            parse_rfc3339(node.metadata.creation_timestamp)
            if node.metadata.creation_timestamp
            else now
        )
        health = self._health.get(name)
        current = ready_condition(node)
        if current is None:
            observed = NodeCondition(
                type=READY,
                status=UNKNOWN,
                last_heartbeat_time=node.metadata.creation_timestamp,
                last_transition_time=node.metadata.creation_timestamp,
            )
            grace = self.config.node_startup_grace_period
            if health is not None:
                health.ready = None
            else:
                health = _Health(created, created, None)
        else:
            observed = current
            grace = self.config.node_monitor_grace_period
        saved = health.ready if health is not None else None
        saved_lease = health.lease_renew if health is not None else None
        if (
            health is None
            or (saved is None and current is not None)
            or (saved is not None and current is None)
        ):
            health = _Health(now, now, current)
        elif (
            current is not None
            and saved is not None
            and saved.last_heartbeat_time != current.last_heartbeat_time
        ):
            changed = saved.last_transition_time != current.last_transition_time
            health = _Health(now, now if changed else health.ready_transition_timestamp, current)
        lease = self.leases.get(name, NODE_LEASE_NAMESPACE) if self.leases is not None else None
        renew = _renew_time(lease)
        if renew is not None and (saved_lease is None or saved_lease < renew):
            health.lease_renew = renew
            health.probe_timestamp = now
        self._health[name] = health
        if not now > health.probe_timestamp + grace:
            return node, observed, current
        stamp = rfc3339(now)
        conditions = list((node.status.conditions if node.status else None) or ())
        for type_ in _CONDITION_TYPES:
            index = next((i for i, c in enumerate(conditions) if c.type == type_), None)
            if index is None:
                conditions.append(
                    NodeCondition(
                        type=type_,
                        status=UNKNOWN,
                        reason="NodeStatusNeverUpdated",
                        message="Kubelet never posted node status.",
                        last_heartbeat_time=node.metadata.creation_timestamp,
                        last_transition_time=stamp,
                    )
                )
            elif conditions[index].status != UNKNOWN:
                conditions[index] = evolve(
                    conditions[index],
                    status=UNKNOWN,
                    reason="NodeStatusUnknown",
                    message="Kubelet stopped posting node status.",
                    last_transition_time=stamp,
                )
        updated_ready = next(c for c in conditions if c.type == READY)
        if updated_ready == observed:
            return node, observed, current
        written = self.client.update_status(
            evolve(node, status=evolve(node.status or NodeStatus(), conditions=tuple(conditions)))
        )
        self._health[name] = _Health(health.probe_timestamp, now, updated_ready, health.lease_renew)
        return written, observed, updated_ready

    def _process_taint_based_eviction(self, node: Node, observed: NodeCondition) -> None:
        """``processTaintBaseEviction``."""
        if observed.status == "False":
            if has_taint(node, UNREACHABLE):
                self._swap_taints(node, NOT_READY, UNREACHABLE)
            else:
                self._mark_node_for_tainting(node, "False")
        elif observed.status == UNKNOWN:
            if has_taint(node, NOT_READY):
                self._swap_taints(node, UNREACHABLE, NOT_READY)
            else:
                self._mark_node_for_tainting(node, UNKNOWN)
        elif observed.status == "True":
            self._mark_node_as_reachable(node)

    def _mark_node_for_tainting(self, node: Node, status: str) -> bool:
        """``markNodeForTainting``."""
        name = node.metadata.name or ""
        queue = self._tainter(zone_key(node))
        if (status == "False" and not has_taint(node, NOT_READY)) or (
            status == UNKNOWN and not has_taint(node, UNREACHABLE)
        ):
            queue.remove(name)
        return queue.add(name, self.clock.now())

    def _mark_node_as_reachable(self, node: Node) -> bool:
        """``markNodeAsReachable``: both taints off; out of the tainting queue."""
        for template in (UNREACHABLE, NOT_READY):
            if has_taint(node, template):
                self._change_taints(node.metadata.name or "", (), (template,))
        return self._tainter(zone_key(node)).remove(node.metadata.name or "")

    def _taint_action(self, name: str) -> tuple[bool, float]:
        """The action of ``doNoExecuteTaintingPass``."""
        node = self.nodes.get(name)
        if node is None:
            return True, 0.0
        ready = ready_condition(node)
        if ready is None:
            return False, 0.05
        if ready.status == "False":
            return self._swap_taints(node, NOT_READY, UNREACHABLE), 0.0
        if ready.status == UNKNOWN:
            return self._swap_taints(node, UNREACHABLE, NOT_READY), 0.0
        return True, 0.0

    # --- writes -------------------------------------------------------------------------------------

    def _swap_taints(self, node: Node, add: Taint, remove: Taint) -> bool:
        """``SwapNodeControllerTaint``: add ``add`` (``timeAdded`` now), drop ``remove``."""
        stamped = evolve(add, time_added=rfc3339(self.clock.now()))
        return self._change_taints(node.metadata.name or "", (stamped,), (remove,))

    def _change_taints(self, name: str, add: Sequence[Taint], remove: Sequence[Taint]) -> bool:
        """``AddOrUpdateTaintOnNode`` then ``RemoveTaintOffNode`` on the latest copy."""
        for _attempt in range(RETRIES):
            try:
                latest = self.client.get(Node, name)
            except errors.NotFoundError:
                return False
            taints = list((latest.spec.taints if latest.spec else None) or ())
            for taint in add:
                kept = [t for t in taints if not (t.key == taint.key and t.effect == taint.effect)]
                taints = (
                    [*kept, taint]
                    if len(kept) == len(taints)
                    else [
                        taint if (t.key == taint.key and t.effect == taint.effect) else t
                        for t in taints
                    ]
                )
            taints = [
                t
                for t in taints
                if not any(t.key == r.key and t.effect == r.effect for r in remove)
            ]
            if tuple(taints) == tuple((latest.spec.taints if latest.spec else None) or ()):
                return True
            spec = evolve(latest.spec or NodeSpec(), taints=tuple(taints) or None)
            try:
                self.client.update(evolve(latest, spec=spec))
                return True
            except errors.ConflictError:
                continue
            except errors.StatusError as exc:
                LOG.warning("could not change the taints of node %s: %s", name, exc)
                return False
        return False

    def _pods_on(self, node: str) -> list[Pod]:
        return self.pods.by_index(NODE_NAME_INDEX, node)

    def _mark_pods_not_ready(self, pods: Sequence[Pod], node: str) -> bool:
        """``MarkPodsNotReady``: each pod's Ready condition False, a Warning on it."""
        ok = True
        now = rfc3339(self.clock.now())
        for pod in pods:
            if pod.spec is None or pod.spec.node_name != node:
                continue
            conditions = (pod.status.conditions if pod.status else None) or ()
            ready = next((c for c in conditions if c.type == READY), None)
            if ready is None:
                continue
            status = update_pod_condition(pod.status, evolve(ready, status="False"), now=now)
            if status is None:
                continue
            try:
                self.client.update_status(evolve(pod, status=status))
            except errors.NotFoundError:
                continue
            except errors.StatusError as exc:
                LOG.warning(
                    "could not mark pod %s/%s not ready: %s",
                    pod.metadata.namespace,
                    pod.metadata.name,
                    exc,
                )
                ok = False
            self.recorder.event(pod, record.EVENT_TYPE_WARNING, "NodeNotReady", "Node is not ready")
        return ok

    def _node_event(self, node: Node, reason: str, event: str | None) -> None:
        """``RecordNodeEvent`` (``event`` given) or ``RecordNodeStatusChange``."""
        name = node.metadata.name or ""
        ref = ObjectReference(api_version="v1", kind="Node", name=name, uid=node.metadata.uid)
        message = (
            f"Node {name} event: {event}"
            if event is not None
            else f"Node {name} status is now: {reason}"
        )
        self.recorder.event_for(ref, record.EVENT_TYPE_NORMAL, reason, message)

    # --- handleDisruption -----------------------------------------------------------------------------

    def compute_zone_state(self, ready: int, not_ready: int) -> str:
        """``ComputeZoneState``."""
        if ready == 0 and not_ready > 0:
            return FULL
        if (
            not_ready > 2
            and not_ready / (not_ready + ready) >= self.config.unhealthy_zone_threshold
        ):
            return PARTIAL
        return NORMAL

    def _zone_counts(self) -> dict[str, tuple[int, int]]:
        counts: dict[str, list[int]] = {}
        for zone, ready in self._members.values():
            entry = counts.setdefault(zone, [0, 0])
            entry[0 if ready else 1] += 1
        return {zone: (r, n) for zone, (r, n) in counts.items()}

    def _set_limiter(self, zone: str, size: int, state: str, now: float) -> None:
        """``setLimiterInZone``."""
        qps = self.config.node_eviction_rate
        if state == PARTIAL:
            qps = (
                self.config.secondary_node_eviction_rate
                if size > self.config.large_cluster_size_threshold
                else 0.0
            )
        self._tainter(zone).swap_limiter(qps, now)

    def _handle_disruption(self, now: float) -> None:
        """``handleDisruption``: zone states and their tainting rates."""
        counts = self._zone_counts()
        new_states = {zone: self.compute_zone_state(r, n) for zone, (r, n) in counts.items()}
        for zone in counts:
            self._tainter(zone)
        all_are_full = all(s == FULL for s in new_states.values())
        for zone in [z for z in self.zone_states if z not in counts]:
            del self.zone_states[zone]
        all_were_full = all(s == FULL for s in self.zone_states.values())
        if all_are_full and all_were_full:
            return
        if all_are_full:
            for name in sorted(self._known):
                node = self.nodes.get(name)
                if node is not None:
                    self._mark_node_as_reachable(node)
            for zone in self.zone_states:
                self._tainter(zone).swap_limiter(0.0, now)
                self.zone_states[zone] = FULL
            return
        if all_were_full:
            for health in self._health.values():
                health.probe_timestamp = now
                health.ready_transition_timestamp = now
            for zone in self.zone_states:
                self._set_limiter(
                    zone, sum(counts.get(zone, (0, 0))), new_states.get(zone, NORMAL), now
                )
                self.zone_states[zone] = new_states.get(zone, NORMAL)
            return
        for zone, state in list(self.zone_states.items()):
            new = new_states.get(zone, NORMAL)
            if state != new:
                self._set_limiter(zone, sum(counts.get(zone, (0, 0))), new, now)
                self.zone_states[zone] = new
