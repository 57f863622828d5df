"""Generate ``src/kubeprio/api/go_zeros.json``: what Go's ``encoding/json`` writes for an
unset field of each upstream API struct kubeprio serves.

Why: upstream's API server encodes objects with Go's ``encoding/json``, where ``omitempty``
drops only nil pointers, empty slices/maps/strings, zero numbers and ``false``, never a
struct value; and a field without ``omitempty`` is always written. So a new Deployment is
served with ``"status": {}`` (``Status DeploymentStatus `json:"status,omitempty"```), every
pod template with ``"metadata": {"creationTimestamp": null}`` (``metav1.Time`` is a struct
whose zero value marshals as ``null``), a PodDisruptionBudget's status with
``"currentHealthy": 0`` (``json:"currentHealthy"``). kubeprio's models hold ``None`` for
what was never set; ``api.serialization`` writes these zero values in its place.

Facts per field, from the ``types.go`` files of k8s.io/api and k8s.io/apimachinery at
tag ``v0.32.9`` (``upstream_go``) and the field table ``gen_upstream_fields.py`` wrote
(its JSON types tell slices, maps and scalars apart):

* a pointer (``*T``) or an ``omitempty`` scalar, slice or map: nothing;
* ``metav1.Time``/``metav1.MicroTime``/``runtime.RawExtension`` values: ``null``;
* ``resource.Quantity`` values: ``"0"``; ``intstr.IntOrString`` values: ``0``;
* a struct value (``omitempty`` or not): the zero value of that struct, recursively;
* a scalar without ``omitempty``: ``""``, ``0`` or ``false``; a slice or map without
  it: ``null`` (a nil slice or map).

Output::

    {"roots": {"Deployment": "V1Deployment", ...},
     "types": {"V1Deployment": {"zeros": {"status": {}, ...},
                                "refs": {"spec": "V1DeploymentSpec", ...}}, ...}}

``refs`` names the nested types that have zeros somewhere below, in the field table's
notation (``V1PodSpec``, ``[]V1Container`` for a list, ``{}V1X`` for a map), so the
encoder can walk kubeprio's models alongside. Run::

    .venv/bin/python tools/gen_go_zeros.py --api DIR --apimachinery DIR

after ``gen_upstream_fields.py``, and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from upstream_go import GoTypes, release_arguments

ROOT = Path(__file__).resolve().parent.parent
FIELDS = ROOT / "src/kubeprio/apiserver/upstream_fields.json"
OUT = ROOT / "src/kubeprio/api/go_zeros.json"

# Struct types of apimachinery whose MarshalJSON writes their zero value specially.
NULL_WHEN_ZERO = {"metav1.Time", "metav1.MicroTime", "Time", "MicroTime", "runtime.RawExtension"}
SCALAR_ZEROS: dict[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "quantity": "0",
    "int-or-string": 0,
}


def _target(field_type: str) -> str:
    while field_type.startswith(("[]", "{}")):
        field_type = field_type[2:]
    return field_type


class Zeros:
    """The zero values of the table's types, computed once each."""

    def __init__(self, table: dict[str, Any], release: GoTypes) -> None:
        self.types: dict[str, Any] = table["types"]
        self.release = release
        self._zero: dict[str, dict[str, Any]] = {}

    def field_zero(self, type_name: str, json_name: str) -> tuple[bool, Any]:
        """(whether Go writes the field when it is unset, what it writes)."""
        tags = self.release.field_tags(self.types[type_name]["schema"]) or {}
        if json_name not in tags:
            return False, None
        go_type, omitempty = tags[json_name]
        field_type = self.types[type_name]["fields"][json_name]
        if go_type.startswith("*"):
            return False, None
        if go_type in NULL_WHEN_ZERO:
            return True, None
        if field_type.startswith(("[]", "{}")) or field_type in ("byte", "object"):
            return (False, None) if omitempty else (True, None)
        if field_type in SCALAR_ZEROS:
            if field_type in ("quantity", "int-or-string"):
                return True, SCALAR_ZEROS[field_type]
            return (False, None) if omitempty else (True, SCALAR_ZEROS[field_type])
        if field_type == "date-time":
            return True, None  # a metav1.Time under another spelling
        if field_type in self.types:
            return True, self.struct_zero(field_type)
        raise ValueError(f"{type_name}.{json_name}: {go_type} / {field_type}")

    def struct_zero(self, type_name: str) -> dict[str, Any]:
        """The JSON object Go writes for the zero value of ``type_name``."""
        if type_name not in self._zero:
            zero: dict[str, Any] = {}
            for json_name in self.types[type_name]["fields"]:
                written, value = self.field_zero(type_name, json_name)
                if written:
                    zero[json_name] = value
            self._zero[type_name] = zero
        return self._zero[type_name]

    def has_zeros_below(self, type_name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``type_name`` or a type it refers to writes anything for an unset field."""
        if type_name in seen:
            return False
        if self.struct_zero(type_name):
            return True
        return any(
            self.has_zeros_below(_target(field_type), seen | {type_name})
            for field_type in self.types[type_name]["fields"].values()
            if _target(field_type) in self.types
        )


def main() -> None:
    args = release_arguments(__doc__.splitlines()[0])
    table = json.loads(FIELDS.read_text())
    zeros = Zeros(table, GoTypes(args.api, args.apimachinery, args.ref))
    out: dict[str, Any] = {}
    for name, entry in sorted(table["types"].items()):
        field_zeros = zeros.struct_zero(name)
        refs: dict[str, str] = {}
        for json_name, field_type in entry["fields"].items():
            target = _target(field_type)
            if target in table["types"] and zeros.has_zeros_below(target):
                refs[json_name] = field_type
        if field_zeros or refs:
            out[name] = {"zeros": field_zeros, "refs": refs}
    roots = {kind: name for kind, name in table["roots"].items() if name in out}
    OUT.write_text(json.dumps({"roots": roots, "types": out}, indent=0) + "\n")
    print(f"wrote {OUT} ({len(out)} types)")


if __name__ == "__main__":
    main()
