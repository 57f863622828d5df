"""The rules of the ``pods/binding`` subresource that need no store access.

Mirrors ``setPodNodeAndMetadata`` (``pkg/registry/core/pod/storage/storage.go``): which
pods cannot be bound, and how a binding changes a pod (node name, annotations,
``PodScheduled=True`` via ``podutil.UpdatePodCondition``). ``ApiService.bind`` drives
them. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubeprio.api import errors, kinds
from kubeprio.api.core import Binding, Pod, PodCondition, PodStatus
from kubeprio.api.model import evolve
from kubeprio.apiserver import storageprecondition


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


def precondition_failure(binding: Binding, pod: Pod) -> str:
    """``storage.Preconditions.Check``: the StorageError text when the binding's uid or
    resourceVersion does not match the pod (empty if they do)."""
    meta = pod.metadata
    detail = ""
    if binding.metadata.uid and binding.metadata.uid != meta.uid:
        detail = errors.uid_precondition_failed(binding.metadata.uid, meta.uid)
    elif (
        binding.metadata.resource_version
        and binding.metadata.resource_version != meta.resource_version
    ):
        detail = errors.resource_version_precondition_failed(
            binding.metadata.resource_version, meta.resource_version
        )
    if not detail:
        return ""
    key = storageprecondition.storage_key(kinds.for_model(Pod), meta.namespace, meta.name or "")
    return storageprecondition.invalid_object(key, detail)
