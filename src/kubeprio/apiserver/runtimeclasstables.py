"""The Table of RuntimeClasses (``kubectl get runtimeclasses``): NAME HANDLER AGE.

Mirrors upstream v1.32 ``pkg/printers/internalversion/printers.go``
(``runtimeClassColumnDefinitions``/``printRuntimeClass``). Upstream takes the HANDLER
column's description from ``metav1.ObjectMeta{}.SwaggerDoc()["handler"]``, a key
ObjectMeta does not have, so the description is empty; kubeprio serves it empty too.
Who drives it: ``apiserver.tables`` (the printer registry). Pure; ``now`` is the caller's.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

RUNTIME_CLASS_COLUMNS: Final = (
    name_column(),
    Column("Handler", "string", ""),
    age_column(),
)


def print_runtime_class(runtime_class: RuntimeClass, now: float) -> tuple[Cells, RowConditions]:
    """``printRuntimeClass``: the name, the handler and the age."""
    return [
        runtime_class.metadata.name or "",
        runtime_class.handler or "",
        since(runtime_class.metadata.creation_timestamp, now),
    ], None
