"""The Tables of PodMetrics and NodeMetrics: what ``kubectl get podmetrics`` prints.

metrics-server converts its objects itself (``pkg/api/table.go``, its storages implement
``rest.TableConvertor``): a ``Name`` column, one ``quantity`` column per resource in the
first item's usage (sorted: ``cpu``, ``memory``; a pod's usage is its containers' sum) and
a ``Window`` column, which kubectl prints as ``NAME CPU MEMORY WINDOW``. The columns come
from the first item, so an empty list has none (``columnDefinitions: null``, and kubectl
says "No resources found"). Cells are the quantities' canonical strings and the window.
Each row's ``object`` follows ``includeObject`` as for every other kind
(``tables.row_object``).

Who drives it: ``apiserver.resourcemetrics`` for a read with a Table ``Accept``. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from kubeprio.api.model import JsonDict
from kubeprio.api.quantity import Quantity
from kubeprio.api.resourcemetrics import NodeMetrics, PodMetrics
from kubeprio.apiserver.tableformat import Column
from kubeprio.apiserver.tables import IncludeObject, row_object

NAME_COLUMN: Final = Column("Name", "string", "Name of the resource", format="name")
WINDOW_COLUMN: Final = Column("Window", "string", "", format="duration")


def pod_usage(pod: PodMetrics) -> dict[str, Quantity]:
    """The sum of the pod's containers' usage, per resource."""
    total: dict[str, Quantity] = {}
    for container in pod.containers:
        for resource, quantity in (container.usage or {}).items():
            total[resource] = total.get(resource, Quantity(0)) + quantity
    return total


def _usage_of(item: PodMetrics | NodeMetrics) -> Mapping[str, Quantity]:
    return pod_usage(item) if isinstance(item, PodMetrics) else (item.usage or {})


def build_table(
    items: Sequence[PodMetrics | NodeMetrics], *, include: IncludeObject, api_version: str
) -> JsonDict:
    """The Table of ``items`` (metrics-server's ``addPodMetricsToTable``/``addNodeMetricsToTable``)."""
    columns: list[Column] | None = None
    names: list[str] = []
    rows: list[JsonDict] = []
    for item in items:
        usage = _usage_of(item)
        if columns is None:
            names = sorted(usage)
            columns = [
                NAME_COLUMN,
                *(Column(name, "string", "", format="quantity") for name in names),
                WINDOW_COLUMN,
            ]
        cells = [
            item.metadata.name or "",
            *(str(usage.get(name, Quantity(0))) for name in names),
            item.window or "",
        ]
        row: JsonDict = {"cells": cells}
        partial = row_object(item, include)
        if partial is not None:
            row["object"] = partial
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": {},
        "columnDefinitions": None if columns is None else [c.to_json() for c in columns],
        # Go leaves both slices nil for no items: null on the wire.
        "rows": rows or None,
    }
