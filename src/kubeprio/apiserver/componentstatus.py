"""``/api/v1/componentstatuses``: the health of the control plane's parts, read-only.

What it is: upstream's ``pkg/registry/core/componentstatus/rest.go`` over the servers
``pkg/registry/core/rest/storage_core.go`` names (``controller-manager``, ``scheduler``,
and ``etcd-<n>`` per storage backend), computed on every request:

* ``GET /api/v1/componentstatuses``: a ``ComponentStatusList`` of every component, each
  probed now, filtered by ``labelSelector`` and ``fieldSelector`` with the default
  predicate (labels: a component has none; fields: ``metadata.name``). A field other
  than ``metadata.name``/``metadata.namespace`` is a 400 (the kind registers no field
  label conversion, so the default one answers); ``?watch=true`` is 405 (no Watcher);
* ``GET /api/v1/componentstatuses/<name>``: one component; an unknown name is the plain
  Go error upstream returns, ``Component not found: <name>`` (500, no reason: kubectl
  prints ``Error from server: Component not found: x``);
* every answer carries ``Warning: 299 - "v1 ComponentStatus is deprecated in v1.19+"``;
* a Table ``Accept`` gets ``printComponentStatus``'s NAME STATUS MESSAGE ERROR: STATUS
  is ``Healthy`` when the ``Healthy`` condition is ``True``, ``Unhealthy`` otherwise.

A component is a probe (:data:`Probe`) returning its condition, as upstream's
``DoServerCheck`` returns (result, body, error): ``True`` with ``ok`` (a ``/healthz``
body) when healthy, ``False`` with the reason as the message when the probe got an
answer that was not healthy, ``False`` with an empty message and the ``error`` when the
backend could not be reached (etcd's check). kubeprio's scheduler and controllers run
in-process, so ``kubeprio serve`` probes its driver loop instead of an HTTP port (see
docs/serve.md). Who drives it: ``apiserver.rest``. Rules: no HTTP library; reads only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from kubeprio.api import errors
from kubeprio.api.componentstatus import (
    DEPRECATION_WARNING,
    HEALTHY,
    ComponentCondition,
    ComponentStatus,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver import status
from kubeprio.apiserver.metaselection import meta_selection
from kubeprio.apiserver.negotiation import flag, negotiate
from kubeprio.apiserver.routes import Target
from kubeprio.apiserver.tableformat import Column, name_column
from kubeprio.apiserver.tables import IncludeObject, row_object

Probe = Callable[[], ComponentCondition]
"""Checks one component now and returns its ``Healthy`` condition."""

WARNINGS: Final = (DEPRECATION_WARNING,)

COLUMNS: Final = (
    name_column(),
    Column("Status", "string", "Status of the component conditions"),
    Column("Message", "string", "Message of the component conditions"),
    Column("Error", "string", "Error of the component conditions"),
)
"""``componentStatusColumnDefinitions`` (pkg/printers/internalversion/printers.go)."""


def healthy(message: str = "ok") -> ComponentCondition:
    """A probe that got a healthy answer."""
    return ComponentCondition(type=HEALTHY, status="True", message=message)


def unhealthy(message: str) -> ComponentCondition:
    """A probe that got an answer saying the component is not healthy."""
    return ComponentCondition(type=HEALTHY, status="False", message=message)


def unreachable(error: str) -> ComponentCondition:
    """A probe that could not ask (etcd's ``probe.Failure, "", err``)."""
    return ComponentCondition(type=HEALTHY, status="False", error=error)


def component_status(name: str, probe: Probe) -> ComponentStatus:
    """``getComponentStatus``: the component named ``name`` with its probed condition."""
    return ComponentStatus(metadata=ObjectMeta(name=name), conditions=(probe(),))


def print_component_status(item: ComponentStatus) -> list[str]:
    """``printComponentStatus``: name, Healthy/Unhealthy/Unknown, message, error."""
    state, message, error = "Unknown", "", ""
    for condition in item.conditions or ():
        if condition.type == HEALTHY:
            state = "Healthy" if condition.status == "True" else "Unhealthy"
            message, error = condition.message or "", condition.error or ""
            break
    return [item.metadata.name or "", state, message, error]


def build_table(
    items: list[ComponentStatus], *, include: IncludeObject, api_version: str
) -> JsonDict:
    """The server-side Table of ``items``."""
    rows: list[JsonDict] = []
    for item in items:
        row: JsonDict = {"cells": print_component_status(item)}
        partial = row_object(item, include)
        if partial is not None:
            row["object"] = partial
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": {},
        "columnDefinitions": [column.to_json() for column in COLUMNS],
        "rows": rows,
    }


class ComponentStatusApi:
    """Serves ``componentstatuses`` from the probes ``components`` returns (name -> probe,
    in listing order); asked per request, as upstream's ``GetServersToValidate``."""

    def __init__(self, components: Callable[[], Mapping[str, Probe]]) -> None:
        self._components = components

    def handle(
        self, method: str, target: Target, query: Mapping[str, str], accept: str
    ) -> JsonDict:
        """Answer one request; raise ``StatusError`` for failures."""
        if method != "GET":
            raise status.method_not_allowed()
        output = negotiate(accept)
        components = self._components()
        if target.is_collection:
            matches = meta_selection(query, ComponentStatus)
            if flag(query, "watch"):
                raise status.method_not_supported(target.info.plural, "", "watch")
            items = [
                item
                for name, probe in components.items()
                if matches(item := component_status(name, probe))
            ]
            if output.table:
                return build_table(
                    items, include=_include(query), api_version=output.table_api_version
                )
            return {
                "kind": "ComponentStatusList",
                "apiVersion": "v1",
                "metadata": {},
                "items": [to_dict(item) for item in items],
            }
        probe = components.get(target.name)
        if probe is None:
            raise errors.plain_error(f"Component not found: {target.name}")
        item = component_status(target.name, probe)
        if output.table:
            return build_table(
                [item], include=_include(query), api_version=output.table_api_version
            )
        return to_dict(item)


def _include(query: Mapping[str, str]) -> IncludeObject:
    value = query.get("includeObject") or IncludeObject.METADATA.value
    try:
        return IncludeObject(value)
    except ValueError:
        raise errors.bad_request(f"unsupported includeObject value {value!r}") from None
