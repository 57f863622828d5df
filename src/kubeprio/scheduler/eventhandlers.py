"""``EventHandlers``: how the scheduler reacts to node and pod events from its informers.

Mirrors upstream ``pkg/scheduler/eventhandlers.go``: nodes go into the cache and wake the
pods their change may help (``scheduler.events``, queueing hints); an assigned pod goes
into the cache (a binding arriving confirms an assumed pod), an unassigned pod this
scheduler is responsible for goes into the queue; a pod that leaves, or gives up its
nomination, frees room for pods of lower or equal priority.

Who drives it: the scheduler's node and pod informers (``Scheduler.pump``).
"""

from __future__ import annotations

from collections.abc import Callable

from kubeprio.api.core import Node, Pod
from kubeprio.scheduler import events as cluster_events
from kubeprio.scheduler.framework import pod_priority
from kubeprio.scheduler.schedulerhandle import SchedulerHandle


def is_assigned(pod: Pod) -> bool:
    """Whether the pod is bound to a node."""
    return bool(pod.spec and pod.spec.node_name)


def nominated_node(pod: Pod) -> str:
    """The pod's ``status.nominatedNodeName`` ("" when unset)."""
    return (pod.status.nominated_node_name if pod.status else None) or ""


def lower_or_equal(pod: Pod) -> Callable[[Pod], bool]:
    """Upstream ``getLEPriorityPreCheck``: only pods of priority <= ``pod``'s."""
    priority = pod_priority(pod)
    return lambda other: pod_priority(other) <= priority


class EventHandlers(SchedulerHandle):
    """The informers' handlers: cache and queue updates, and the moves they trigger."""

    def _responsible(self, pod: Pod) -> bool:
        spec = pod.spec
        return (spec.scheduler_name if spec else None) in (None, self.scheduler_name)

    def _on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(cluster_events.NODE_ADD, None, node)

    def _on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(new)
        for event in cluster_events.node_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def _on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(node.metadata.name or "")

    def _on_pod_add(self, pod: Pod) -> None:
        if is_assigned(pod):
            self.cache.add_pod(pod)
            self.queue.assigned_pod_added(pod)
        elif self._responsible(pod) and not pod.metadata.deletion_timestamp:
            self.queue.add(pod)

    def _on_pod_update(self, old: Pod, new: Pod) -> None:
        if is_assigned(new):
            if not is_assigned(old):
                # The binding arrived: the pod leaves the queue and is confirmed in the cache.
                self.queue.delete(old)
                self.cache.add_pod(new)
                self.queue.assigned_pod_added(new)
                return
            self.cache.update_pod(new)
            for event in cluster_events.pod_scheduling_properties_change(new, old):
                self.queue.move_all_to_active_or_backoff(event, old, new)
            return
        if not self._responsible(new):
            return
        if new.metadata.deletion_timestamp:
            self._unscheduled_pod_gone(new)
            return
        self.queue.update(old, new)
        old_nominated = nominated_node(old)
        if old_nominated and old_nominated != nominated_node(new):
            # Room reserved by the old nomination is free again for pods of <= priority.
            self.queue.move_all_to_active_or_backoff(
                cluster_events.ASSIGNED_POD_DELETE, old, None, pre_check=lower_or_equal(old)
            )

    def _on_pod_delete(self, pod: Pod) -> None:
        if is_assigned(pod):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(cluster_events.ASSIGNED_POD_DELETE, pod, None)
        else:
            self._unscheduled_pod_gone(pod)

    def _unscheduled_pod_gone(self, pod: Pod) -> None:
        self.queue.delete(pod)
        if nominated_node(pod):
            self.queue.move_all_to_active_or_backoff(
                cluster_events.ASSIGNED_POD_DELETE, pod, None, pre_check=lower_or_equal(pod)
            )
