"""Generate ``src/kubeprio/apiserver/upstream_fields.json`` from the official Python client.

The API server needs the field names of upstream's Go structs to do what upstream's strict
JSON decoder does (``fieldValidation=Strict|Warn``: report unknown fields, drop them). The
official ``kubernetes`` Python client (a dev dependency, pinned in pyproject.toml) is
generated from upstream's OpenAPI document, so its models carry every field with its JSON
name and type. This script walks the types reachable from the kinds kubeprio serves and
writes a compact table::

    {"roots": {"Pod": "V1Pod", ...},
     "types": {"V1Pod": {"apiVersion": "", "metadata": "V1ObjectMeta", ...}, ...}}

A value is ``""`` for a scalar or free-form value (not checked further), ``"T"`` for an
object of type T, ``"[]T"`` for a list of T and ``"{}T"`` for a map of T.

Run: ``.venv/bin/python tools/gen_upstream_fields.py`` and review the diff.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import kubernetes.client as k8s

ROOTS = {
    "Namespace": "V1Namespace",
    "Node": "V1Node",
    "Pod": "V1Pod",
    "Event": "CoreV1Event",
    "PriorityClass": "V1PriorityClass",
    "PodDisruptionBudget": "V1PodDisruptionBudget",
    "Deployment": "V1Deployment",
    "ReplicaSet": "V1ReplicaSet",
    "Job": "V1Job",
    "Binding": "V1Binding",
    "Eviction": "V1Eviction",
    "Scale": "V1Scale",
    "DeleteOptions": "V1DeleteOptions",
}
SCALARS = {"str", "int", "float", "bool", "datetime", "date", "object", "bytearray"}
OUT = Path(__file__).resolve().parent.parent / "src/kubeprio/apiserver/upstream_fields.json"


def type_ref(openapi_type: str, pending: list[str]) -> str:
    """Translate a client type string (``List[V1Container]``) into the table's notation."""
    match = re.fullmatch(r"List\[(.+)\]", openapi_type)
    if match:
        inner = type_ref(match.group(1), pending)
        return f"[]{inner}" if inner else ""
    match = re.fullmatch(r"Dict\[str, (.+)\]", openapi_type)
    if match:
        inner = type_ref(match.group(1), pending)
        return f"{{}}{inner}" if inner else ""
    if openapi_type in SCALARS:
        return ""
    pending.append(openapi_type)
    return openapi_type


def main() -> None:
    types: dict[str, dict[str, str]] = {}
    pending = list(ROOTS.values())
    while pending:
        name = pending.pop()
        if name in types:
            continue
        model = getattr(k8s, name)
        fields: dict[str, str] = {}
        for attr, openapi_type in sorted(model.openapi_types.items()):
            fields[model.attribute_map[attr]] = type_ref(openapi_type, pending)
        types[name] = dict(sorted(fields.items()))
    table = {"roots": ROOTS, "types": dict(sorted(types.items()))}
    OUT.write_text(json.dumps(table, indent=0, sort_keys=False) + "\n")
    print(f"wrote {OUT} ({len(types)} types)")


if __name__ == "__main__":
    main()
