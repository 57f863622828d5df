"""Field-selector fields of each kind: what ``?fieldSelector=`` can filter on.

Mirrors the ``GetAttrs``/``ToSelectableFields`` functions of upstream registries
(``pkg/registry/core/pod/strategy.go``, ``event/strategy.go``, ...): every kind has
``metadata.name`` and ``metadata.namespace``; pods add ``spec.nodeName``,
``spec.schedulerName``, ``spec.restartPolicy``, ``status.phase``,
``status.nominatedNodeName``; events add the ``involvedObject.*`` fields, ``reason``,
``type`` and ``source``; nodes add ``spec.unschedulable``. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kubeprio.api.core import Event, Node, Pod

_COMMON: Final = ("metadata.name", "metadata.namespace")
_POD: Final = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.nominatedNodeName",
    "status.podIP",
)
_EVENT: Final = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)
_NODE: Final = ("spec.unschedulable",)


def supported_fields(model: type[object]) -> frozenset[str]:
    """The field names a selector may use for ``model``."""
    extra: tuple[str, ...] = ()
    if model is Pod:
        extra = _POD
    elif model is Event:
        extra = _EVENT
    elif model is Node:
        extra = _NODE
    return frozenset(_COMMON + extra)


def object_fields(obj: object) -> Mapping[str, str]:
    """The selectable field values of ``obj`` (missing values are empty strings)."""
    metadata = obj.metadata  # type: ignore[attr-defined]
    fields = {"metadata.name": metadata.name or "", "metadata.namespace": metadata.namespace or ""}
    if isinstance(obj, Pod):
        spec, status = obj.spec, obj.status
        fields["spec.nodeName"] = (spec.node_name if spec else None) or ""
        fields["spec.restartPolicy"] = (spec.restart_policy if spec else None) or ""
        fields["spec.schedulerName"] = (spec.scheduler_name if spec else None) or ""
        fields["spec.serviceAccountName"] = (spec.service_account_name if spec else None) or ""
        fields["spec.hostNetwork"] = "true" if spec and spec.host_network else "false"
        fields["status.phase"] = (status.phase if status else None) or ""
        fields["status.nominatedNodeName"] = (status.nominated_node_name if status else None) or ""
        fields["status.podIP"] = (status.pod_ip if status else None) or ""
    elif isinstance(obj, Event):
        ref = obj.involved_object
        fields["involvedObject.kind"] = (ref.kind if ref else None) or ""
        fields["involvedObject.namespace"] = (ref.namespace if ref else None) or ""
        fields["involvedObject.name"] = (ref.name if ref else None) or ""
        fields["involvedObject.uid"] = (ref.uid if ref else None) or ""
        fields["involvedObject.apiVersion"] = (ref.api_version if ref else None) or ""
        fields["involvedObject.resourceVersion"] = (ref.resource_version if ref else None) or ""
        fields["involvedObject.fieldPath"] = (ref.field_path if ref else None) or ""
        fields["reason"] = obj.reason or ""
        fields["reportingComponent"] = obj.reporting_component or ""
        fields["source"] = (obj.source.component if obj.source else None) or ""
        fields["type"] = obj.type or ""
    elif isinstance(obj, Node):
        fields["spec.unschedulable"] = "true" if obj.spec and obj.spec.unschedulable else "false"
    return fields
