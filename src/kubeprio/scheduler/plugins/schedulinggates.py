"""SchedulingGates: keeps pods with ``spec.schedulingGates`` out of activeQ (PreEnqueue).

Mirrors ``pkg/scheduler/framework/plugins/schedulinggates``: a pod whose gates list is
not empty stays in the unschedulable pool with
``waiting for scheduling gates: [gate-a gate-b]`` until an update removes every gate.
``schedulingGates`` is not a modelled field, so it is read from the pod spec's ``extra``.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.core import Pod
from kubeprio.scheduler.framework import Status, unresolvable

NAME: Final = "SchedulingGates"


def scheduling_gates(pod: Pod) -> list[str]:
    """The names of the pod's scheduling gates."""
    spec = pod.spec
    gates = spec.extra.get("schedulingGates") if spec is not None else None
    if not isinstance(gates, list):
        return []
    return [str(gate.get("name", "")) for gate in gates if isinstance(gate, dict)]


class SchedulingGates:
    """PreEnqueue: gated pods wait."""

    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """None when the pod has no gates."""
        gates = scheduling_gates(pod)
        if not gates:
            return None
        return unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]")
