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
* ``handleDisruption``: a zone with no Ready node is fully disrupted, one with more than
  two and at least ``--unhealthy-zone-threshold`` (55 %) not Ready partially: its rate
  becomes ``--secondary-node-eviction-rate`` (0.01) above
  ``--large-cluster-size-threshold`` (50) nodes, else 0. When every zone is fully
  disrupted, tainting stops and the taints come off every node; when one node is Ready
  again, every probe timestamp restarts. Nodes labelled
  ``node.kubernetes.io/exclude-disruption`` are left out of the zone counts;
* events ``RegisteredNode`` ("Node <n> event: Registered Node <n> in Controller") and
  ``RemovingNode``, component ``node-controller``.

The taints (``processTaintBaseEviction``, ``doNoExecuteTaintingPass`` at
``--node-eviction-rate``, 0.1 nodes/s per zone, the zone states and rates of
``handleDisruption``, and ``doNoScheduleTaintingPass`` on every node event) are
``controllers.nodetainting``, driven from here.

In ``kubeprio serve`` a write that waits on an admission webhook does not hold the loop
(``client.writepending``): a node's status write is skipped for this pass and made by the
next one (5 s later; the API service replays the first attempt with its answers), as
after a failed update; a pod's Ready=False write and a taint change are done once the
answer is in (``client.answeredretry``), as upstream's pass waits on its calls.

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
import functools
import logging
import math
from collections.abc import Callable, Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.coordination import NODE_LEASE_NAMESPACE, Lease
from kubeprio.api.core import Node, NodeCondition, NodeStatus, ObjectReference, Pod
from kubeprio.api.model import evolve
from kubeprio.api.nodeconditions import NODE_READY, ready_condition
from kubeprio.api.podconditions import update_pod_condition
from kubeprio.client import record
from kubeprio.client.answeredretry import retryable
from kubeprio.client.informer import CacheKey, FuncHandler, Informer, cache_key
from kubeprio.client.protocol import Client
from kubeprio.client.writepending import WritePendingError
from kubeprio.clock import Clock, parse_rfc3339, rfc3339
from kubeprio.controllers.nodetainting import (
    FULL,
    INITIAL,
    NORMAL,
    PARTIAL,
    RETRIES,
    UNKNOWN,
    NodeTainter,
    zone_key,
)

__all__ = [
    "FULL",
    "INITIAL",
    "NORMAL",
    "PARTIAL",
    "NodeLifecycleConfig",
    "NodeLifecycleController",
    "ready_condition",
    "zone_key",
]

LOG: Final = logging.getLogger(__name__)

COMPONENT: Final = "node-controller"
_CONDITION_TYPES: Final = (NODE_READY, "MemoryPressure", "DiskPressure", "PIDPressure")
EXCLUDE_DISRUPTION: Final = "node.kubernetes.io/exclude-disruption"
NODE_NAME_INDEX: Final = "spec.nodeName"


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
        self.tainting = NodeTainter(client, clock=clock, nodes=nodes, config=self.config)
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
        wakeups = self.tainting.next_wakeup(now)
        if self._monitor_due():
            wakeups.append(self._next_tick(now))
        return min(wakeups) if wakeups else None

    def run_once(self) -> None:
        """Mark pending pods, run a due health check, then the tainting pass."""
        now = self.clock.now()
        if self._node_updates:
            names, self._node_updates = self._node_updates, {}
            for name in sorted(names):
                self.tainting.no_schedule_tainting_pass(name)
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
        self.tainting.no_execute_tainting_pass()

    # --- monitorNodeHealth ---------------------------------------------------------------------------

    def monitor_node_health(self, now: float) -> None:
        """``monitorNodeHealth`` over the watched nodes."""
        watched = sorted(self._watched)
        for name in watched:
            node = self.nodes.get(name)
            if node is None or name in self._known:
                continue
            self._node_event(node, "RegisteredNode", f"Registered Node {name} in Controller")
            self._known[name] = node
            self.tainting.tainter(zone_key(node))
            self.tainting.mark_node_as_reachable(node)
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
                result = retryable(functools.partial(self._try_update_node_health, node, now))
                break
            except WritePendingError:
                return  # the next pass writes it, with the answers (see the docstring)
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
        self.tainting.process_taint_based_eviction(node, observed)
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
                type=NODE_READY,
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
        updated_ready = next(c for c in conditions if c.type == NODE_READY)
        if updated_ready == observed:
            return node, observed, current
        written = self.client.update_status(
            evolve(node, status=evolve(node.status or NodeStatus(), conditions=tuple(conditions)))
        )
        self._health[name] = _Health(health.probe_timestamp, now, updated_ready, health.lease_renew)
        return written, observed, updated_ready

    # --- writes -------------------------------------------------------------------------------------

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
            ready = next((c for c in conditions if c.type == NODE_READY), None)
            if ready is None:
                continue
            status = update_pod_condition(pod.status, evolve(ready, status="False"), now=now)
            if status is None:
                continue
            mark = functools.partial(self._mark_pod_not_ready, evolve(pod, status=status))
            # A write that waits on a webhook (None) counts as done, as upstream's call
            # returns once answered.
            marked = self.tainting.api_writes.run(("not-ready", pod.metadata.uid), mark)
            ok = ok and marked is not False
        return ok

    def _mark_pod_not_ready(self, pod: Pod) -> bool:
        """One pod of ``MarkPodsNotReady``: its status, then the event; False when the
        write failed."""
        written = True
        try:
            self.client.update_status(pod)
        except errors.NotFoundError:
            return True
        except errors.StatusError as exc:
            LOG.warning(
                "could not mark pod %s/%s not ready: %s",
                pod.metadata.namespace,
                pod.metadata.name,
                exc,
            )
            written = False
        self.recorder.event(pod, record.EVENT_TYPE_WARNING, "NodeNotReady", "Node is not ready")
        return written

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

    def compute_zone_state(self, ready: int, not_ready: int) -> str:
        """``ComputeZoneState`` (``controllers.nodetainting``)."""
        return self.tainting.compute_zone_state(ready, not_ready)

    def _handle_disruption(self, now: float) -> None:
        """``handleDisruption``; leaving full disruption restarts every probe timestamp."""
        if self.tainting.handle_disruption(now, self._members, self._known):
            for health in self._health.values():
                health.probe_timestamp = now
                health.ready_transition_timestamp = now
