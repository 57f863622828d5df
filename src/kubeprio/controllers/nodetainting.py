"""The node lifecycle controller's taints: condition taints, and NoExecute tainting by zone.

Mirrors the tainting half of ``pkg/controller/nodelifecycle/node_lifecycle_controller.go``
(v1.32):

* ``doNoScheduleTaintingPass``: the ``NoSchedule`` taints of TaintNodesByCondition (Ready
  False ``not-ready``, Unknown ``unreachable``, ``memory-pressure``, ``disk-pressure``,
  ``pid-pressure``, ``network-unavailable``, and ``unschedulable`` for a cordoned node)
  follow the node's conditions;
* ``processTaintBaseEviction``: Ready False queues the node for the ``NoExecute`` taint
  ``node.kubernetes.io/not-ready``, Unknown for ``node.kubernetes.io/unreachable`` (the
  other one is swapped at once if present); Ready True removes both;
* ``doNoExecuteTaintingPass``: the queue of each zone (``topology.kubernetes.io/region``
  and ``zone``) adds the taints (``timeAdded`` set) at ``--node-eviction-rate`` per zone
  (``controllers.ratelimitedqueue``);
* ``handleDisruption``: zone states (``ComputeZoneState``) and their tainting rates
  (``setLimiterInZone``); when every zone is fully disrupted the taints come off every node.

Driven by ``controllers.nodelifecycle.NodeLifecycleController`` (which owns the health
data and the zone membership counts); writes node taints through the ``Client`` only.
Time from the injected ``Clock``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from kubeprio.api import errors
from kubeprio.api.core import Node, NodeCondition, NodeSpec, Taint
from kubeprio.api.model import evolve
from kubeprio.api.nodeconditions import NODE_READY, ready_condition
from kubeprio.api.taints import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_NODE_NOT_READY,
    TAINT_NODE_UNREACHABLE,
    TAINT_NODE_UNSCHEDULABLE,
)
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, rfc3339
from kubeprio.controllers.ratelimitedqueue import RateLimitedTimedQueue

if TYPE_CHECKING:
    from kubeprio.controllers.nodelifecycle import NodeLifecycleConfig

LOG: Final = logging.getLogger(__name__)

UNKNOWN: Final = "Unknown"
RETRIES: Final = 5
"""``NodeHealthUpdateRetry``."""
UNREACHABLE: Final = Taint(key=TAINT_NODE_UNREACHABLE, effect=TAINT_EFFECT_NO_EXECUTE)
NOT_READY: Final = Taint(key=TAINT_NODE_NOT_READY, effect=TAINT_EFFECT_NO_EXECUTE)

_CONDITION_TAINTS: Final = {
    (NODE_READY, "False"): TAINT_NODE_NOT_READY,
    (NODE_READY, UNKNOWN): TAINT_NODE_UNREACHABLE,
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
}
"""``nodeConditionToTaintKeyStatusMap``."""
_NO_SCHEDULE_KEYS: Final = frozenset({*_CONDITION_TAINTS.values(), TAINT_NODE_UNSCHEDULABLE})

INITIAL, NORMAL, FULL, PARTIAL = "Initial", "Normal", "FullDisruption", "PartialDisruption"


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


class NodeTainter:
    """The tainting queues of each zone, the zone states, and the taint writes."""

    def __init__(
        self, client: Client, *, clock: Clock, nodes: Informer[Node], config: NodeLifecycleConfig
    ) -> None:
        self.client = client
        self.clock = clock
        self.nodes = nodes
        self.config = config
        self.zone_states: dict[str, str] = {}
        self.tainters: dict[str, RateLimitedTimedQueue] = {}
        self.api_writes = AnsweredRetry("node-controller")
        """Node and pod writes waiting on admission webhook answers (shared with
        ``controllers.nodelifecycle``)."""

    def tainter(self, zone: str) -> RateLimitedTimedQueue:
        """The zone's tainting queue, created (state ``Initial``) on first use."""
        queue = self.tainters.get(zone)
        if queue is None:
            queue = RateLimitedTimedQueue(self.config.node_eviction_rate, self.clock.now())
            self.tainters[zone] = queue
            self.zone_states.setdefault(zone, INITIAL)
        return queue

    def next_wakeup(self, now: float) -> list[float]:
        """The turns of the tainting queues that have one."""
        return [w for q in self.tainters.values() if (w := q.next_wakeup(now)) is not None]

    def no_execute_tainting_pass(self) -> None:
        """``doNoExecuteTaintingPass``: each zone's queue, in zone order.

        The time is read here, after the health check queued nodes at its own reads of
        the clock: on real time (``kubeprio serve``) those are later than the time the
        controller's round started, and a queue's ``try_`` takes the zone's token before
        it checks that its head is due (as upstream's ``Try``, which reads the time after
        ``TryAccept``, in its own 100 ms loop), so an earlier time would spend the token
        on a node not yet due, and the node would wait 10 s for the next one and lose it
        the same way.
        """
        now = self.clock.now()
        for zone in sorted(self.tainters):
            self.tainters[zone].try_(self._taint_action, now)

    def no_schedule_tainting_pass(self, name: str) -> None:
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
            self.change_taints(name, [evolve(t, time_added=stamp) for t in add], remove)

    def process_taint_based_eviction(self, node: Node, observed: NodeCondition) -> None:
        """``processTaintBaseEviction``."""
        if observed.status == "False":
            if has_taint(node, UNREACHABLE):
                self.swap_taints(node, NOT_READY, UNREACHABLE)
            else:
                self.mark_node_for_tainting(node, "False")
        elif observed.status == UNKNOWN:
            if has_taint(node, NOT_READY):
                self.swap_taints(node, UNREACHABLE, NOT_READY)
            else:
                self.mark_node_for_tainting(node, UNKNOWN)
        elif observed.status == "True":
            self.mark_node_as_reachable(node)

    def mark_node_for_tainting(self, node: Node, status: str) -> bool:
        """``markNodeForTainting``."""
        name = node.metadata.name or ""
        queue = self.tainter(zone_key(node))
        if (status == "False" and not has_taint(node, NOT_READY)) or (
            status == UNKNOWN and not has_taint(node, UNREACHABLE)
        ):
            queue.remove(name)
        return queue.add(name, self.clock.now())

    def mark_node_as_reachable(self, node: Node) -> bool:
        """``markNodeAsReachable``: both taints off; out of the tainting queue."""
        for template in (UNREACHABLE, NOT_READY):
            if has_taint(node, template):
                self.change_taints(node.metadata.name or "", (), (template,))
        return self.tainter(zone_key(node)).remove(node.metadata.name or "")

    def _taint_action(self, name: str) -> tuple[bool, float]:
        """The action of ``doNoExecuteTaintingPass``."""
        node = self.nodes.get(name)
        if node is None:
            return True, 0.0
        ready = ready_condition(node)
        if ready is None:
            return False, 0.05
        if ready.status == "False":
            return self.swap_taints(node, NOT_READY, UNREACHABLE), 0.0
        if ready.status == UNKNOWN:
            return self.swap_taints(node, UNREACHABLE, NOT_READY), 0.0
        return True, 0.0

    # --- writes -------------------------------------------------------------------------------------

    def swap_taints(self, node: Node, add: Taint, remove: Taint) -> bool:
        """``SwapNodeControllerTaint``: add ``add`` (``timeAdded`` now), drop ``remove``."""
        stamped = evolve(add, time_added=rfc3339(self.clock.now()))
        return self.change_taints(node.metadata.name or "", (stamped,), (remove,))

    def change_taints(self, name: str, add: Sequence[Taint], remove: Sequence[Taint]) -> bool:
        """``AddOrUpdateTaintOnNode`` then ``RemoveTaintOffNode`` on the latest copy. An
        update that waits on an admission webhook (``kubeprio serve``) is done once the
        answer is in, computed again on the then latest copy (``client.answeredretry``),
        and counts as done: upstream's pass waits on its call and goes on."""
        changed = self.api_writes.run(
            ("taints", name), functools.partial(self._try_change_taints, name, add, remove)
        )
        return True if changed is None else changed

    def _try_change_taints(self, name: str, add: Sequence[Taint], remove: Sequence[Taint]) -> bool:
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

    @staticmethod
    def _zone_counts(members: Iterable[tuple[str, bool]]) -> dict[str, tuple[int, int]]:
        counts: dict[str, list[int]] = {}
        for zone, ready in members:
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
        self.tainter(zone).swap_limiter(qps, now)

    def handle_disruption(
        self, now: float, members: Mapping[str, tuple[str, bool]], known: Iterable[str]
    ) -> bool:
        """``handleDisruption``: zone states and their tainting rates, from ``members``
        (node -> (zone, Ready is True)); ``known`` are the nodes whose taints come off when
        every zone is fully disrupted. True when the cluster just left full disruption:
        the caller then restarts every probe timestamp."""
        counts = self._zone_counts(members.values())
        new_states = {zone: self.compute_zone_state(r, n) for zone, (r, n) in counts.items()}
        for zone in counts:
            self.tainter(zone)
        all_are_full = all(s == FULL for s in new_states.values())
        for zone in [z for z in self.zone_states if z not in counts]:
            del self.zone_states[zone]
        all_were_full = all(s == FULL for s in self.zone_states.values())
        if all_are_full and all_were_full:
            return False
        if all_are_full:
            for name in sorted(known):
                node = self.nodes.get(name)
                if node is not None:
                    self.mark_node_as_reachable(node)
            for zone in self.zone_states:
                self.tainter(zone).swap_limiter(0.0, now)
                self.zone_states[zone] = FULL
            return False
        if all_were_full:
            for zone in self.zone_states:
                self._set_limiter(
                    zone, sum(counts.get(zone, (0, 0))), new_states.get(zone, NORMAL), now
                )
                self.zone_states[zone] = new_states.get(zone, NORMAL)
            return True
        for zone, state in list(self.zone_states.items()):
            new = new_states.get(zone, NORMAL)
            if state != new:
                self._set_limiter(zone, sum(counts.get(zone, (0, 0))), new, now)
                self.zone_states[zone] = new
        return False
