"""The Table of a custom resource: NAME plus the CRD version's ``additionalPrinterColumns``.

Mirrors v1.32's ``apiextensions-apiserver/pkg/registry/customresource/tableconvertor``:
the first column is ``Name``; then one column per printer column, its cell read with the
column's JSONPath (a simple path: ``.spec.replicas``, ``.status.conditions[0].type``):
absent is ``null``; ``integer``/``number``/``boolean`` cells are the JSON value when it
has that type (else ``null``); ``date`` cells the timestamp string; ``string`` cells the
value as the JSONPath printer prints it. A CRD version without printer columns gets
``Age`` (``.metadata.creationTimestamp``, type ``date``), upstream's default. Column
descriptions are the CRD's, else upstream's ``Custom resource definition column (in
JSONPath format): <path>``. Who drives it: ``apiserver.crreads``. Pure.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from kubeprio.api.apiextensions import CustomObject, CustomResourceColumnDefinition
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.tableformat import Cells, Column, RowConditions, name_column
from kubeprio.apiserver.tables import TablePrinter

DEFAULT_COLUMNS: Final = (
    CustomResourceColumnDefinition(
        name="Age", type="date", json_path=".metadata.creationTimestamp"
    ),
)
"""``DefaultAdditionalPrinterColumns`` when a version declares none."""

_SEGMENT: Final = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


def json_path_value(document: Any, path: str) -> tuple[bool, Any]:
    """(found, value) of a simple JSONPath in ``document`` (``{...}`` braces allowed)."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    value = document
    position = 0
    while position < len(text):
        match = _SEGMENT.match(text, position)
        if match is None:
            return False, None
        position = match.end()
        key, index, quoted, double = match.groups()
        if index is not None:
            if not isinstance(value, list) or int(index) >= len(value):
                return False, None
            value = value[int(index)]
            continue
        name = key if key is not None else quoted if quoted is not None else double
        if not isinstance(value, dict) or name not in value:
            return False, None
        value = value[name]
    return True, value


def _string_cell(value: Any) -> str:
    """How the JSONPath printer prints a value: strings raw, others as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"))


def _cell(column_type: str, value: Any) -> Any:
    """``cellForJSONValue``."""
    if value is None:
        return None
    if column_type == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return None
    if column_type == "number":
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if column_type == "boolean":
        return value if isinstance(value, bool) else None
    if column_type == "date":
        return value if isinstance(value, str) else None
    return _string_cell(value)


def custom_printer(columns: tuple[CustomResourceColumnDefinition, ...]) -> TablePrinter:
    """The Table columns and row printer of a CRD version."""
    shown = columns or DEFAULT_COLUMNS
    definitions = (
        name_column(),
        *(
            Column(
                column.name or "",
                column.type or "string",
                column.description
                or f"Custom resource definition column (in JSONPath format): {column.json_path}",
                priority=column.priority or 0,
                format=column.format or "",
            )
            for column in shown
        ),
    )

    def print_row(obj: CustomObject, now: float) -> tuple[Cells, RowConditions]:
        document = {**obj.extra, "metadata": _metadata_json(obj)}
        cells: Cells = [obj.metadata.name or ""]
        for column in shown:
            found, value = json_path_value(document, column.json_path or "")
            cells.append(_cell(column.type or "string", value) if found else None)
        return cells, None

    return definitions, print_row


def _metadata_json(obj: CustomObject) -> dict[str, Any]:
    return to_dict(obj.metadata)
