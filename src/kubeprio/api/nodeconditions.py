"""A Node's conditions as the components read them: the ``Ready`` condition's type and
its lookup, shared by the kubelet (which posts it), the node lifecycle controller (which
reads it, and writes ``Unknown`` when a kubelet stops posting) and the metrics views."""

from __future__ import annotations

from typing import Final

from kubeprio.api.core import Node, NodeCondition

NODE_READY: Final = "Ready"
"""``v1.NodeReady``."""


def ready_condition(node: Node | None) -> NodeCondition | None:
    """The node's Ready condition, if it has one."""
    conditions = (node.status.conditions if node is not None and node.status else None) or ()
    return next((c for c in conditions if c.type == NODE_READY), None)
