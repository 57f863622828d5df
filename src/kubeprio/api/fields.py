"""Field-selector fields of each kind: what ``?fieldSelector=`` can filter on.

Mirrors the ``GetAttrs``/``ToSelectableFields`` functions of upstream registries
(``pkg/registry/core/pod/strategy.go``, ``event/strategy.go``, ...): every kind has
``metadata.name`` and ``metadata.namespace``; pods add ``spec.nodeName``,
``spec.schedulerName``, ``spec.restartPolicy``, ``status.phase``,
``status.nominatedNodeName``; events add the ``involvedObject.*`` fields, ``reason``,
``type`` and ``source``; nodes add ``spec.unschedulable``; secrets add ``type``
(``pkg/registry/core/secret/strategy.go``); ReplicationControllers ``status.replicas``
(``pkg/registry/core/replicationcontroller/strategy.go``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kubeprio.api.core import Event, Node, Pod
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.secret import Secret

FieldGetter = Callable[[Any], str]


def _spec(attr: str) -> FieldGetter:
    return lambda obj: (getattr(obj.spec, attr) if obj.spec else None) or ""


def _status(attr: str) -> FieldGetter:
    return lambda obj: (getattr(obj.status, attr) if obj.status else None) or ""


def _involved(attr: str) -> FieldGetter:
    return lambda obj: (getattr(obj.involved_object, attr) if obj.involved_object else None) or ""


_COMMON_GETTERS: Final[dict[str, FieldGetter]] = {
    "metadata.name": lambda obj: obj.metadata.name or "",
    "metadata.namespace": lambda obj: obj.metadata.namespace or "",
}
_GETTERS: Final[dict[type[object], dict[str, FieldGetter]]] = {
    Pod: {
        **_COMMON_GETTERS,
        "spec.nodeName": _spec("node_name"),
        "spec.restartPolicy": _spec("restart_policy"),
        "spec.schedulerName": _spec("scheduler_name"),
        "spec.serviceAccountName": _spec("service_account_name"),
        "spec.hostNetwork": lambda obj: "true" if obj.spec and obj.spec.host_network else "false",
        "status.phase": _status("phase"),
        "status.nominatedNodeName": _status("nominated_node_name"),
        "status.podIP": _status("pod_ip"),
    },
    Event: {
        **_COMMON_GETTERS,
        "involvedObject.kind": _involved("kind"),
        "involvedObject.namespace": _involved("namespace"),
        "involvedObject.name": _involved("name"),
        "involvedObject.uid": _involved("uid"),
        "involvedObject.apiVersion": _involved("api_version"),
        "involvedObject.resourceVersion": _involved("resource_version"),
        "involvedObject.fieldPath": _involved("field_path"),
        "reason": lambda obj: obj.reason or "",
        "reportingComponent": lambda obj: obj.reporting_component or "",
        "source": lambda obj: (obj.source.component if obj.source else None) or "",
        "type": lambda obj: obj.type or "",
    },
    Secret: {**_COMMON_GETTERS, "type": lambda obj: obj.type or ""},
    ReplicationController: {
        **_COMMON_GETTERS,
        "status.replicas": lambda obj: str((obj.status.replicas if obj.status else None) or 0),
    },
    Node: {
        **_COMMON_GETTERS,
        "spec.unschedulable": lambda obj: (
            "true" if obj.spec and obj.spec.unschedulable else "false"
        ),
    },
}


def field_getters(model: type[object]) -> Mapping[str, FieldGetter]:
    """Per selectable field of ``model``, the function reading it from an object (missing
    values are empty strings): a selector reads only the fields it names."""
    return _GETTERS.get(model, _COMMON_GETTERS)


def supported_fields(model: type[object]) -> frozenset[str]:
    """The field names a selector may use for ``model``."""
    return frozenset(field_getters(model))
