"""Cluster events that move pods out of the unschedulable pool, and queueing-hint types.

Mirrors upstream ``fwk.ClusterEvent`` / ``fwk.ActionType`` (``staging/.../kube-scheduler/
framework/types.go``), the framework events and change extractors of
``pkg/scheduler/framework/events.go`` and ``MatchClusterEvents`` of
``pkg/scheduler/framework/types.go``.

An event is a resource plus a bit set of actions. Plugins *register* events (resource
``POD`` matches both assigned and unscheduled pods); the scheduler's informer handlers
*emit* specific ones (``ASSIGNED_POD``/``UNSCHEDULED_POD``, one update bit each) and hand
them to ``SchedulingQueue.move_all_to_active_or_backoff``. A registered event matches an
incoming one when the resources match, they share an action bit and the incoming action
is not broader than the registered one. Wildcard incoming events (``UNSCHEDULABLE_TIMEOUT``,
``FORCE_ACTIVATE``) move every pod regardless of registrations.

Pure functions and frozen values; imports only ``api`` and ``scheduler.framework``.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from kubeprio.api.core import Node, Pod
from kubeprio.api.resources import pod_requests
from kubeprio.frozen import fast_init
from kubeprio.scheduler.framework import PodInfo


class EventResource(enum.Enum):
    """What an event is about (upstream ``fwk.EventResource``)."""

    NODE = "Node"
    POD = "Pod"
    """Registration only: matches both ``ASSIGNED_POD`` and ``UNSCHEDULED_POD``."""
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnschedulablePod"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    WILDCARD = "*"


class ActionType(enum.IntFlag):
    """What happened (upstream ``fwk.ActionType``; same bit order)."""

    NONE = 0
    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    UPDATE = (1 << 12) - 4
    """Every update bit (a change none of the specific bits describes)."""
    ALL = (1 << 12) - 1


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A resource plus the actions that happened to it (upstream ``fwk.ClusterEvent``)."""

    resource: EventResource
    action: ActionType
    custom_label: str = ""

    @property
    def label(self) -> str:
        """The event's name in logs and metrics (upstream ``ClusterEvent.Label``)."""
        return self.custom_label or _label(self.resource, self.action)

    def is_wildcard(self) -> bool:
        """Upstream ``ClusterEventIsWildCard``: resource ``*`` and every action."""
        return self.resource is EventResource.WILDCARD and self.action == ActionType.ALL


@functools.cache
def _label(resource: EventResource, action: ActionType) -> str:
    if action == ActionType.ALL:
        name = "All"
    elif action == ActionType.UPDATE:
        name = "Update"
    else:
        name = "".join(_FLAG_LABELS[bit] for bit in _FLAG_LABELS if action & bit)
    return f"{resource.value}{name}"


_FLAG_LABELS: Final = {
    flag: "".join(word.capitalize() for word in (flag.name or "").split("_"))
    for flag in (ActionType(1 << bit) for bit in range(12))
}


def _resources_match(registered: EventResource, incoming: EventResource) -> bool:
    return (
        registered is EventResource.WILDCARD
        or registered is incoming
        or (
            registered is EventResource.POD
            and incoming in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD)
        )
    )


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Upstream ``MatchClusterEvents``: ``incoming`` is the same as or more specific than ``registered``.

    An incoming wildcard event matches only a registered wildcard.
    """
    return registered.is_wildcard() or (
        _resources_match(registered.resource, incoming.resource)
        and bool(registered.action & incoming.action)
        and incoming.action <= registered.action
    )


def match_any_cluster_event(incoming: ClusterEvent, registered: Sequence[ClusterEvent]) -> bool:
    """Upstream ``MatchAnyClusterEvent``."""
    return any(match_cluster_events(event, incoming) for event in registered)


# --- the framework's own events (upstream framework/events.go) ----------------------------

SCHEDULE_ATTEMPT_FAILURE: Final = "ScheduleAttemptFailure"
BACKOFF_COMPLETE: Final = "BackoffComplete"
POP_FROM_BACKOFF_Q: Final = "PopFromBackoffQ"
FORCE_ACTIVATE_LABEL: Final = "ForceActivate"
UNSCHEDULABLE_TIMEOUT_LABEL: Final = "UnschedulableTimeout"

NODE_ADD: Final = ClusterEvent(EventResource.NODE, ActionType.ADD)
NODE_DELETE: Final = ClusterEvent(EventResource.NODE, ActionType.DELETE)
ASSIGNED_POD_ADD: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
ASSIGNED_POD_UPDATE: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)
ASSIGNED_POD_DELETE: Final = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
UNSCHEDULED_POD_ADD: Final = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)
UNSCHEDULED_POD_UPDATE: Final = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)
UNSCHEDULED_POD_DELETE: Final = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE)
UNSCHEDULABLE_TIMEOUT: Final = ClusterEvent(
    EventResource.WILDCARD, ActionType.ALL, UNSCHEDULABLE_TIMEOUT_LABEL
)
FORCE_ACTIVATE: Final = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, FORCE_ACTIVATE_LABEL)


# --- change extractors ----------------------------------------------------------------------


def _scheduling_gates(pod: Pod) -> object:
    # spec.schedulingGates is not modelled; it round-trips in the spec's ``extra``.
    spec = pod.spec
    return spec.extra.get("schedulingGates") if spec is not None else None


def _labels(labels: Mapping[str, str] | None) -> Mapping[str, str]:
    return labels or {}


def pod_scheduling_properties_change(new: Pod, old: Pod) -> list[ClusterEvent]:
    """Upstream ``PodSchedulingPropertiesChange``: the specific update events of one pod update.

    The resource is ``UNSCHEDULED_POD`` when the new object has no ``spec.nodeName``,
    ``ASSIGNED_POD`` otherwise; with no specific change the general ``UPDATE`` is returned.
    """
    resource = (
        EventResource.ASSIGNED_POD
        if new.spec is not None and new.spec.node_name
        else EventResource.UNSCHEDULED_POD
    )
    actions: list[ActionType] = []
    if _labels(new.metadata.labels) != _labels(old.metadata.labels):
        actions.append(ActionType.UPDATE_POD_LABEL)
    # A status or metadata write (the kubelet's, a condition, a deletion mark) shares the
    # spec object: no request, gate or toleration can have changed.
    if new.spec is not old.spec:
        if _scaled_down(new, old):
            actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
        if not _scheduling_gates(new) and _scheduling_gates(old):
            actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
        new_tolerations = (new.spec.tolerations if new.spec else None) or ()
        old_tolerations = (old.spec.tolerations if old.spec else None) or ()
        if len(new_tolerations) != len(old_tolerations):
            # Validation only lets tolerations be added: a length change is the whole story.
            actions.append(ActionType.UPDATE_POD_TOLERATION)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(resource, action) for action in actions]


def _scaled_down(new: Pod, old: Pod) -> bool:
    """Upstream ``extractPodScaleDown``: some request was lowered or removed."""
    new_requests = pod_requests(new.spec) if new.spec is not None else {}
    old_requests = pod_requests(old.spec) if old.spec is not None else {}
    return any(
        name not in new_requests or value > new_requests[name]
        for name, value in old_requests.items()
    )


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    """Upstream ``NodeSchedulingPropertiesChange``: the specific update events of one node update."""
    actions: list[ActionType] = []
    new_unschedulable = bool(new.spec and new.spec.unschedulable)
    old_unschedulable = bool(old.spec and old.spec.unschedulable)
    if old_unschedulable and not new_unschedulable:
        # Upstream reports spec.unschedulable turning false as a taint update.
        actions.append(ActionType.UPDATE_NODE_TAINT)
    new_status, old_status = new.status, old.status
    if (new_status.allocatable if new_status else None) != (
        old_status.allocatable if old_status else None
    ):
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if _labels(new.metadata.labels) != _labels(old.metadata.labels):
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if (new.spec.taints if new.spec else None) != (old.spec.taints if old.spec else None):
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if _condition_statuses(new) != _condition_statuses(old):
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if _labels(new.metadata.annotations) != _labels(old.metadata.annotations):
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    return [ClusterEvent(EventResource.NODE, action) for action in actions]


def _condition_statuses(node: Node) -> dict[str | None, str | None]:
    conditions = (node.status.conditions if node.status else None) or ()
    return {condition.type: condition.status for condition in conditions}


# --- queueing hints -------------------------------------------------------------------------


class QueueingHint(enum.Enum):
    """A plugin's verdict on an event for one rejected pod (upstream ``fwk.QueueingHint``)."""

    QUEUE_SKIP = 0
    QUEUE = 1


QueueingHintFn = Callable[[PodInfo, object | None, object | None], QueueingHint]
"""``(rejected pod, old object, new object) -> hint``; objects are Pods or Nodes, ``None`` on add/delete.

Upstream passes the bare pod; a ``PodInfo`` carries it plus its precomputed requests.
"""


@dataclasses.dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """A registered event plus the hint function that judges it (``None``: always ``QUEUE``)."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None
