"""``PodRouter``: one shared pod informer feeding many kubelets.

Each real kubelet watches its own pods (field selector ``spec.nodeName=<node>``). With
thousands of simulated nodes in one process that would be thousands of watches, each
testing every pod event: O(nodes) work per event. The router is the alternative: a
single ``EventHandler[Pod]`` on one pod informer that hands each event to the kubelet of
the pod's ``spec.nodeName`` (a dict lookup). A pod that becomes bound reaches its
kubelet as an update, exactly as through a field-selected watch it would arrive as an
add; ``Kubelet`` treats both alike.

Driven by whoever pumps the informer; keeps no state but the node -> handler table.
"""

from __future__ import annotations

from kubeprio.api.core import Pod
from kubeprio.client.informer import EventHandler


def _node_of(pod: Pod) -> str:
    return (pod.spec.node_name if pod.spec else None) or ""


class PodRouter:
    """Routes pod events to the handler registered for the pod's node."""

    def __init__(self) -> None:
        self._handlers: dict[str, EventHandler[Pod]] = {}

    def register(self, node_name: str, handler: EventHandler[Pod]) -> None:
        """Send events of pods bound to ``node_name`` to ``handler``."""
        self._handlers[node_name] = handler

    def unregister(self, node_name: str) -> None:
        """Stop routing events for ``node_name``."""
        self._handlers.pop(node_name, None)

    def on_add(self, obj: Pod) -> None:
        """Forward an add to the pod's kubelet."""
        handler = self._handlers.get(_node_of(obj))
        if handler is not None:
            handler.on_add(obj)

    def on_update(self, old: Pod, new: Pod) -> None:
        """Forward an update; if the node changed, the old node's kubelet sees a delete."""
        old_node, new_node = _node_of(old), _node_of(new)
        if old_node and old_node != new_node:
            previous = self._handlers.get(old_node)
            if previous is not None:
                previous.on_delete(old)
        handler = self._handlers.get(new_node)
        if handler is not None:
            handler.on_update(old, new)

    def on_delete(self, obj: Pod) -> None:
        """Forward a delete to the pod's kubelet."""
        handler = self._handlers.get(_node_of(obj))
        if handler is not None:
            handler.on_delete(obj)
