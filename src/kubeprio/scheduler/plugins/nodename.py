"""NodeName: a pod with ``spec.nodeName`` fits only that node (upstream ``plugins/nodename``).

Filter only; a mismatch is UnschedulableAndUnresolvable. Run by ``scheduler.runtime``;
reads only the NodeInfo it is handed.
"""

from __future__ import annotations

from typing import Final

from kubeprio.scheduler import framework
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "NodeName"
ERR_REASON: Final = "node(s) didn't match the requested node name"
"""Upstream ``ErrReason``."""

_REJECTED: Final = framework.unresolvable(ERR_REASON)


def fits(pod: framework.PodInfo, node: NodeInfo) -> bool:
    """Upstream ``nodename.Fits``: no node name asked for, or this node's."""
    spec = pod.pod.spec
    wanted = spec.node_name if spec is not None else None
    return not wanted or wanted == node.name


class NodeName:
    """Rejects every node but the one the pod names."""

    name: Final = NAME

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``NodeName.Filter``."""
        return None if fits(pod, node) else _REJECTED
