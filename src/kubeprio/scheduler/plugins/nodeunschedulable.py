"""NodeUnschedulable: cordoned nodes take no new pods (upstream ``plugins/nodeunschedulable``).

Filter only. A node with ``spec.unschedulable: true`` rejects every pod that does not
tolerate the ``node.kubernetes.io/unschedulable:NoSchedule`` taint, as
UnschedulableAndUnresolvable (preemption cannot uncordon a node). Run by
``scheduler.runtime``; reads only the NodeInfo it is handed.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import taints
from kubeprio.api.core import Taint
from kubeprio.scheduler import framework
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
"""Upstream ``ErrReasonUnschedulable``."""

_UNSCHEDULABLE_TAINT: Final = Taint(
    key=taints.TAINT_NODE_UNSCHEDULABLE, effect=taints.TAINT_EFFECT_NO_SCHEDULE
)
_REJECTED: Final = framework.unresolvable(ERR_REASON_UNSCHEDULABLE)


class NodeUnschedulable:
    """Rejects cordoned nodes unless the pod tolerates the unschedulable taint."""

    name: Final = NAME

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``NodeUnschedulable.Filter``."""
        spec = node.node.spec if node.node is not None else None
        if spec is None or not spec.unschedulable:
            return None
        pod_spec = pod.pod.spec
        tolerations = pod_spec.tolerations if pod_spec is not None else None
        if taints.tolerations_tolerate_taint(tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return _REJECTED
