"""What happened during a simulation: every pod and node that ever existed, preemptions, events.

The recorder watches pods, nodes and events through informers, like any other component,
and notes the virtual time at which it saw each change (a pod's binding, the start of its
graceful deletion, its terminal phase, its removal). It never writes to the cluster.
Preemptions are read from the scheduler's ``Preempted`` events (the victim is the
event's object, the preemptor its related object, the node is in the message), so the
report shows exactly what the scheduler did through the API.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from kubeprio.api.core import Event, Node, Pod, PodCondition
from kubeprio.client.eventsrecord import occurrences
from kubeprio.sim.engine import SimClock

_ON_NODE: Final = re.compile(r" on node (\S+)$")
PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"


@dataclasses.dataclass(slots=True)
class PodRecord:
    """The life of one pod."""

    namespace: str
    name: str
    uid: str
    priority: int
    priority_class_name: str | None
    preemption_policy: str | None
    phase: str
    node: str | None
    nominated_node: str | None
    created_at: float
    scheduled_at: float | None = None
    deleted: bool = False
    deleted_at: float | None = None
    terminating_at: float | None = None
    finished_at: float | None = None
    preempted_by: str | None = None
    pending_message: str | None = None


@dataclasses.dataclass(slots=True)
class NodeRecord:
    """One node: its allocatable resources (quantity text) and when it came and went."""

    name: str
    allocatable: dict[str, str]
    created_at: float
    deleted_at: float | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class EventRecord:
    """One event occurrence (a folded repeat counts again)."""

    time: float
    type: str
    reason: str
    object: str
    message: str
    related: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class EvictionRecord:
    """A pod marked for disruption by anything but the scheduler's preemption: the
    ``DisruptionTarget`` condition it got (taint eviction, node-pressure eviction, pod GC,
    the Eviction API)."""

    time: float
    pod: str
    node: str | None
    reason: str
    message: str


@dataclasses.dataclass(slots=True)
class PreemptionRecord:
    """One preemption: a preemptor evicting victims on a node at a time."""

    time: float
    preemptor: str
    node: str
    victims: list[str]


def _key(namespace: str | None, name: str | None) -> str:
    return f"{namespace or ''}/{name or ''}"


class Recorder:
    """Builds the history the report is made of."""

    def __init__(self, clock: SimClock) -> None:
        self._clock = clock
        self.pods: dict[str, PodRecord] = {}
        self.nodes: dict[str, NodeRecord] = {}
        self.events: list[EventRecord] = []
        self.preemptions: list[PreemptionRecord] = []
        self.evictions: list[EvictionRecord] = []
        self._evicted: set[str] = set()
        self._preemption_index: dict[tuple[float, str, str], PreemptionRecord] = {}
        self._by_name: dict[str, str] = {}

    def _now(self) -> float:
        return self._clock.elapsed

    # --- pods --------------------------------------------------------------------------------

    def on_add(self, obj: Pod | Event | Node) -> None:
        """A pod, node or event appeared."""
        if isinstance(obj, Event):
            self._event(obj)
        elif isinstance(obj, Node):
            self._node(obj, deleted=False)
        else:
            self._pod(obj, deleted=False)

    def on_update(self, old: Pod | Event | Node, new: Pod | Event | Node) -> None:
        """A pod or node changed, or an event was folded (its count, or its series'
        count, went up)."""
        if isinstance(new, Event):
            if isinstance(old, Event) and occurrences(new) > occurrences(old):
                self._event(new)
        elif isinstance(new, Node):
            self._node(new, deleted=False)
        else:
            self._pod(new, deleted=False)

    def on_delete(self, obj: Pod | Event | Node) -> None:
        """A pod or node is gone."""
        if isinstance(obj, Pod):
            self._pod(obj, deleted=True)
        elif isinstance(obj, Node):
            self._node(obj, deleted=True)

    def _node(self, node: Node, *, deleted: bool) -> None:
        name = node.metadata.name or ""
        allocatable = node.status.allocatable if node.status else None
        record = self.nodes.get(name)
        if record is None or (record.deleted_at is not None and not deleted):
            record = NodeRecord(name=name, allocatable={}, created_at=self._now())
            self.nodes[name] = record
        if allocatable:
            record.allocatable = {key: str(allocatable[key]) for key in sorted(allocatable)}
        if deleted:
            record.deleted_at = self._now()

    def _pod(self, pod: Pod, *, deleted: bool) -> None:
        uid = pod.metadata.uid or _key(pod.metadata.namespace, pod.metadata.name)
        spec = pod.spec
        status = pod.status
        record = self.pods.get(uid)
        if record is None:
            record = PodRecord(
                namespace=pod.metadata.namespace or "",
                name=pod.metadata.name or "",
                uid=uid,
                priority=(spec.priority if spec else None) or 0,
                priority_class_name=spec.priority_class_name if spec else None,
                preemption_policy=spec.preemption_policy if spec else None,
                phase=(status.phase if status else None) or "Pending",
                node=spec.node_name if spec else None,
                nominated_node=status.nominated_node_name if status else None,
                created_at=self._now(),
            )
            self.pods[uid] = record
            self._by_name[_key(record.namespace, record.name)] = uid
        record.phase = (status.phase if status else None) or record.phase
        record.node = (spec.node_name if spec else None) or record.node
        record.nominated_node = status.nominated_node_name if status else None
        if record.node and record.scheduled_at is None:
            record.scheduled_at = self._now()
        if pod.metadata.deletion_timestamp and record.terminating_at is None:
            record.terminating_at = self._now()
        if record.phase in ("Succeeded", "Failed") and record.finished_at is None:
            record.finished_at = self._now()
        if status is not None and status.conditions and uid not in self._evicted:
            self._disruption(uid, record, status.conditions)
        if deleted and not record.deleted:
            record.deleted = True
            record.deleted_at = self._now()

    def _disruption(
        self, uid: str, record: PodRecord, conditions: tuple[PodCondition, ...]
    ) -> None:
        for condition in conditions:
            if condition.type != "DisruptionTarget" or condition.status != "True":
                continue
            self._evicted.add(uid)
            if condition.reason == PREEMPTION_BY_SCHEDULER:
                return  # the preemptions list has it
            self.evictions.append(
                EvictionRecord(
                    time=self._now(),
                    pod=_key(record.namespace, record.name),
                    node=record.node,
                    reason=condition.reason or "",
                    message=condition.message or "",
                )
            )
            return

    # --- events ------------------------------------------------------------------------------

    def _event(self, event: Event) -> None:
        ref = event.involved_object
        related = event.related
        obj = (
            f"{ref.kind}/{ref.namespace}/{ref.name}"
            if ref and ref.namespace
            else (f"{ref.kind}/{ref.name}" if ref else "")
        )
        record = EventRecord(
            time=self._now(),
            type=event.type or "",
            reason=event.reason or "",
            object=obj,
            message=event.message or "",
            related=_key(related.namespace, related.name) if related is not None else None,
        )
        self.events.append(record)
        if ref is None or ref.kind != "Pod":
            return
        target = self.pods.get(self._by_name.get(_key(ref.namespace, ref.name), ""))
        if record.reason == "FailedScheduling" and target is not None:
            target.pending_message = record.message
        if record.reason == "Preempted" and record.related is not None:
            victim = _key(ref.namespace, ref.name)
            if target is not None:
                target.preempted_by = record.related
            match = _ON_NODE.search(record.message)
            node = match.group(1) if match else ""
            group = (record.time, record.related, node)
            preemption = self._preemption_index.get(group)
            if preemption is None:
                preemption = PreemptionRecord(record.time, record.related, node, [])
                self._preemption_index[group] = preemption
                self.preemptions.append(preemption)
            preemption.victims.append(victim)
