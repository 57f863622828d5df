"""The rules of the ``pods/binding`` subresource that need no store access.

Mirrors ``setPodNodeAndMetadata`` (``pkg/registry/core/pod/storage/storage.go``): which
pods cannot be bound, and how a binding changes a pod (node name, annotations,
``PodScheduled=True`` via ``podutil.UpdatePodCondition``). ``ApiService.bind`` drives
them. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubeprio.api.core import Pod, PodCondition, PodStatus
from kubeprio.api.model import evolve


def binding_refusal(pod: Pod) -> str:
    """Why ``setPodNodeAndMetadata`` refuses to bind this pod (empty if it may)."""
    name = pod.metadata.name or ""
    if pod.metadata.deletion_timestamp:
        return f"pod {name} is being deleted, cannot be assigned to a host"
    spec = pod.spec
    if spec is not None and spec.node_name:
        return f'pod {name} is already assigned to node "{spec.node_name}"'
    if spec is not None and spec.extra.get("schedulingGates"):
        return f"pod {name} has non-empty .spec.schedulingGates"
    return ""


def bind_pod(pod: Pod, node_name: str, now: str, annotations: Mapping[str, str] | None) -> Pod:
    """Set the node, copy the binding's annotations, and mark the pod PodScheduled=True."""
    spec = evolve(pod.spec, node_name=node_name) if pod.spec else None
    status = pod.status or PodStatus()
    conditions = list(status.conditions or ())
    scheduled = PodCondition(type="PodScheduled", status="True", last_transition_time=now)
    for position, condition in enumerate(conditions):
        if condition.type == "PodScheduled":
            if condition.status == "True":
                # UpdatePodCondition keeps the transition time when the status is unchanged.
                scheduled = evolve(scheduled, last_transition_time=condition.last_transition_time)
            conditions[position] = scheduled
            break
    else:
        conditions.append(scheduled)
    metadata = pod.metadata
    if annotations:
        metadata = evolve(metadata, annotations={**(metadata.annotations or {}), **annotations})
    return evolve(
        pod,
        metadata=metadata,
        spec=spec,
        status=evolve(status, conditions=tuple(conditions)),
    )
