"""Which cluster events may make a pod rejected by a given plugin schedulable again.

One row per upstream plugin: the events its ``EventsToRegister`` returns with queueing
hints enabled (current upstream defaults: ``SchedulerQueueingHints`` on, in-place pod
vertical scaling GA), each with the plugin's queueing-hint function where upstream's is a
cheap, self-contained check of the event objects:

* NodeResourcesFit (``noderesources/fit.go``): a deleted pod helps only if it was bound
  or nominated; a scale-down helps if it is the pod itself or an assigned pod lowered a
  resource the pod requests; a node helps if the pod fits its allocatable and, on update,
  a requested resource (or the pod count) grew.
* NodeUnschedulable (``nodeunschedulable``): a schedulable new node, or a node that just
  turned schedulable.
* NodeName: a new node helps only if it is the node the pod names.
* TaintToleration: a node helps if the pod tolerates all its NoSchedule/NoExecute taints
  (and, on update, did not before); the pod's own toleration change always helps.
* SchedulingGates: only the removal of this pod's own gates helps.
* VolumeBinding (``volumebinding``): a claim of this pod added or updated; a new storage
  class, or one whose ``allowedTopologies`` changed; any volume add/update; a new
  CSINode or a changed migrated-plugins annotation; a CSIDriver of an inline volume that
  stopped tracking capacity; a new CSIStorageCapacity or one whose limit grew
  (``csievents``).
* VolumeRestrictions (``volumerestrictions``): a deleted pod of the namespace that used a
  disk or a claim of this pod; a new node; a new claim of this pod.
* NodeVolumeLimits (``nodevolumelimits``): any new CSINode; a deleted bound pod with a
  claim, ephemeral or migratable inline volume; a new claim this pod uses.
* VolumeZone (``volumezone``): a claim of this pod added or updated; any new class, node
  (or node label/taint change) and volume add/update.

Other plugins' hints read cluster state (affinity, topology spread, ports) and are
simplified to "always queue" for their registered events, so they retry more often than
upstream but never miss a wake-up. A plugin name not in the table is treated as upstream
treats a plugin without ``EventsToRegister``: interested in every Pod and Node event.

The scheduler builds the queue's map with :func:`queueing_hint_map` from the enabled
plugins; a plugin may override its row by passing its own ``ClusterEventWithHint`` s.
Pure functions; no state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from kubeprio.api.core import Node, Pod, Taint, Toleration
from kubeprio.api.resources import PODS, amounts, pod_requests
from kubeprio.scheduler.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.plugins import (
    names,
    nodevolumelimits,
    volumebinding,
    volumerestrictions,
    volumezone,
)

QUEUE: Final = QueueingHint.QUEUE
SKIP: Final = QueueingHint.QUEUE_SKIP
_NO_SCHEDULE = "NoSchedule"
_NO_EXECUTE = "NoExecute"


def _as_pod(obj: object | None) -> Pod | None:
    return obj if isinstance(obj, Pod) else None


def _as_node(obj: object | None) -> Node | None:
    return obj if isinstance(obj, Node) else None


def _allocatable(node: Node) -> dict[str, int]:
    return amounts(node.status.allocatable if node.status else None)


def _requests(pod: Pod) -> dict[str, int]:
    return pod_requests(pod.spec) if pod.spec is not None else {}


# --- NodeResourcesFit ---------------------------------------------------------------------


def fit_after_pod_event(info: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Upstream ``Fit.isSchedulableAfterPodEvent`` (in-place scaling enabled)."""
    pod = info.pod
    original, modified = _as_pod(old), _as_pod(new)
    if modified is None:
        if original is None:
            return QUEUE
        spec, status = original.spec, original.status
        if not (spec and spec.node_name) and not (status and status.nominated_node_name):
            return SKIP  # an unscheduled, unnominated pod held nothing
        return QUEUE
    if modified.metadata.uid == pod.metadata.uid:
        return QUEUE  # the pod itself was scaled down
    if not (modified.spec and modified.spec.node_name) or original is None:
        return SKIP
    before, after = _requests(original), _requests(modified)
    for name, value in info.requests.items():
        if value and before.get(name, 0) > after.get(name, 0):
            return QUEUE
    return SKIP


def _fits_empty(requests: Mapping[str, int], allocatable: Mapping[str, int]) -> bool:
    if allocatable.get(PODS, 0) < 1:
        return False
    return all(not value or value <= allocatable.get(name, 0) for name, value in requests.items())


def fit_after_node_change(info: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Upstream ``Fit.isSchedulableAfterNodeChange``."""
    modified = _as_node(new)
    if modified is None:
        return QUEUE
    requests = info.requests
    after = _allocatable(modified)
    if not _fits_empty(requests, after):
        return SKIP  # the pod would not fit even the empty node
    original = _as_node(old)
    if original is None:
        return QUEUE
    before = _allocatable(original)
    if after.get(PODS, 0) > before.get(PODS, 0):
        return QUEUE
    grew = any(
        value and after.get(name, 0) > before.get(name, 0)
        for name, value in requests.items()
        if name != PODS
    )
    return QUEUE if grew else SKIP


# --- taints ---------------------------------------------------------------------------------


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Upstream ``Toleration.ToleratesTaint`` (``v1helper``)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.value or "") == (taint.value or "")


def _untolerated(pod: Pod, node: Node) -> bool:
    tolerations = (pod.spec.tolerations if pod.spec else None) or ()
    for taint in (node.spec.taints if node.spec else None) or ():
        if taint.effect not in (_NO_SCHEDULE, _NO_EXECUTE):
            continue
        if not any(tolerates(toleration, taint) for toleration in tolerations):
            return True
    return False


def taint_toleration_after_node_change(
    info: PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``TaintToleration.isSchedulableAfterNodeChange``: untolerated before, tolerated now."""
    modified = _as_node(new)
    if modified is None:
        return QUEUE
    original = _as_node(old)
    was_untolerated = original is None or _untolerated(info.pod, original)
    return QUEUE if was_untolerated and not _untolerated(info.pod, modified) else SKIP


def node_unschedulable_after_node_change(
    info: PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``NodeUnschedulable.isSchedulableAfterNodeChange``.

    Queue when a schedulable node is added or a node turns from unschedulable to
    schedulable (upstream does not look at the pod's tolerations here).
    """
    modified = _as_node(new)
    if modified is None:
        return QUEUE
    if modified.spec and modified.spec.unschedulable:
        return SKIP
    original = _as_node(old)
    if original is None or (original.spec and original.spec.unschedulable):
        return QUEUE
    return SKIP


# --- NodeName, SchedulingGates --------------------------------------------------------------


def node_name_after_node_add(info: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    """Upstream ``NodeName.isSchedulableAfterNodeAdd``."""
    node = _as_node(new)
    spec = info.pod.spec
    wanted = spec.node_name if spec else None
    if node is None or not wanted or wanted == node.metadata.name:
        return QUEUE
    return SKIP


def scheduling_gates_after_update(
    info: PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``SchedulingGates.isSchedulableAfterUpdatePodSchedulingGatesEliminated``."""
    modified = _as_pod(new)
    if modified is None or modified.metadata.uid != info.uid:
        return SKIP
    return QUEUE


# --- the table ------------------------------------------------------------------------------

_A = ActionType
_NODE = EventResource.NODE
_POD = EventResource.POD


def _ev(resource: EventResource, action: ActionType) -> ClusterEvent:
    return ClusterEvent(resource, action)


DEFAULT_EVENTS: Final[Mapping[str, tuple[ClusterEventWithHint, ...]]] = {
    names.NODE_RESOURCES_FIT: (
        ClusterEventWithHint(_ev(_POD, _A.DELETE | _A.UPDATE_POD_SCALE_DOWN), fit_after_pod_event),
        ClusterEventWithHint(
            _ev(_NODE, _A.ADD | _A.UPDATE_NODE_ALLOCATABLE), fit_after_node_change
        ),
    ),
    names.NODE_UNSCHEDULABLE: (
        ClusterEventWithHint(
            _ev(_NODE, _A.ADD | _A.UPDATE_NODE_TAINT), node_unschedulable_after_node_change
        ),
        ClusterEventWithHint(_ev(_POD, _A.UPDATE_POD_TOLERATION)),
    ),
    names.NODE_NAME: (ClusterEventWithHint(_ev(_NODE, _A.ADD), node_name_after_node_add),),
    names.TAINT_TOLERATION: (
        ClusterEventWithHint(
            _ev(_NODE, _A.ADD | _A.UPDATE_NODE_TAINT), taint_toleration_after_node_change
        ),
        ClusterEventWithHint(_ev(_POD, _A.UPDATE_POD_TOLERATION)),
    ),
    names.NODE_AFFINITY: (ClusterEventWithHint(_ev(_NODE, _A.ADD | _A.UPDATE_NODE_LABEL)),),
    names.NODE_PORTS: (
        ClusterEventWithHint(_ev(_POD, _A.DELETE)),
        ClusterEventWithHint(_ev(_NODE, _A.ADD)),
    ),
    names.POD_TOPOLOGY_SPREAD: (
        ClusterEventWithHint(_ev(_POD, _A.ADD | _A.UPDATE_POD_LABEL | _A.DELETE)),
        ClusterEventWithHint(
            _ev(_NODE, _A.ADD | _A.DELETE | _A.UPDATE_NODE_LABEL | _A.UPDATE_NODE_TAINT)
        ),
    ),
    names.INTER_POD_AFFINITY: (
        ClusterEventWithHint(_ev(_POD, _A.ADD | _A.UPDATE_POD_LABEL | _A.DELETE)),
        ClusterEventWithHint(_ev(_NODE, _A.ADD | _A.UPDATE_NODE_LABEL)),
    ),
    names.VOLUME_BINDING: volumebinding.EVENTS,
    names.VOLUME_RESTRICTIONS: volumerestrictions.EVENTS,
    names.NODE_VOLUME_LIMITS: nodevolumelimits.EVENTS,
    names.VOLUME_ZONE: volumezone.EVENTS,
    names.SCHEDULING_GATES: (
        ClusterEventWithHint(
            _ev(_POD, _A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED), scheduling_gates_after_update
        ),
    ),
    # Score-only and sort/bind plugins never reject a pod; they register nothing.
    names.PRIORITY_SORT: (),
    names.DEFAULT_BINDER: (),
    names.DEFAULT_PREEMPTION: (),
    names.IMAGE_LOCALITY: (),
    names.NODE_RESOURCES_BALANCED_ALLOCATION: (),
}
"""Plugin name -> registered events with hints (upstream ``EventsToRegister``)."""

ALL_EVENTS: Final = (
    ClusterEventWithHint(_ev(_POD, _A.ALL)),
    ClusterEventWithHint(_ev(_NODE, _A.ALL)),
)
"""Upstream ``UnrollWildCardResource`` for the resources kubeprio models."""


def events_to_register(plugin: str) -> tuple[ClusterEventWithHint, ...]:
    """The events ``plugin`` registers; every Pod and Node event for unknown plugins."""
    return DEFAULT_EVENTS.get(plugin, ALL_EVENTS)


def queueing_hint_map(
    plugins: Iterable[str],
    overrides: Mapping[str, Sequence[ClusterEventWithHint]] | None = None,
) -> dict[str, tuple[ClusterEventWithHint, ...]]:
    """The queue's plugin -> events map for the enabled ``plugins`` (upstream ``buildQueueingHintMap``)."""
    result: dict[str, tuple[ClusterEventWithHint, ...]] = {}
    for plugin in plugins:
        if overrides is not None and plugin in overrides:
            result[plugin] = tuple(overrides[plugin])
        else:
            result[plugin] = events_to_register(plugin)
    return result


DEFAULT_PLUGINS: Final = tuple(DEFAULT_EVENTS)
"""The plugins the default profile enables that matter for requeueing."""
