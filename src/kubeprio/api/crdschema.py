"""Whether a CRD version's OpenAPI v3 schema is structural: the rules CRDs must follow.

Mirrors v1.32's ``apiextensions-apiserver``: ``specStandardValidatorV3.validate``
(``pkg/apis/apiextensions/validation/validation.go``: a known ``type``, no ``$ref``,
``id``, ``definitions``, ... , ``x-kubernetes-preserve-unknown-fields`` true or unset,
``properties`` and ``additionalProperties`` exclusive, ``items`` one schema) and
``validateStructuralInvariants`` (``pkg/apiserver/schema/validation.go``: every specified
field has a ``type``, arrays have ``items``, the root is an object without
``additionalProperties``, ``metadata`` may only constrain ``name`` and ``generateName``,
``anyOf``/``allOf``/``oneOf``/``not`` may not declare types). The schema is walked as raw
JSON. Property names are visited in sorted order (upstream ranges over a Go map, so its
order differs from run to run). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError

OPENAPI_TYPES: Final = ("array", "boolean", "integer", "number", "object", "string")
"""``openapiV3Types``, sorted."""

_UNSUPPORTED: Final = (
    ("id", "id is not supported"),
    ("additionalItems", "additionalItems is not supported"),
    ("patternProperties", "patternProperties is not supported"),
    ("definitions", "definitions is not supported"),
    ("dependencies", "dependencies is not supported"),
    ("$ref", "$ref is not supported"),
)

_JUNCTORS: Final = ("allOf", "anyOf", "oneOf", "not")

_FORBIDDEN_IN_JUNCTORS: Final = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)

ROOT, FIELD, ITEM = "root", "field", "item"


def validate_structural(schema: dict[str, Any], path: str) -> list[FieldError]:
    """The errors of a version's ``openAPIV3Schema`` at ``path``."""
    found = _standard(schema, path)
    if found:
        # Upstream reports the structural errors only when the standard ones are absent.
        return found
    return _invariants(schema, ROOT, path)


def _standard(schema: Any, path: str) -> list[FieldError]:
    if not isinstance(schema, dict):
        return []
    found: list[FieldError] = []
    kind = schema.get("type")
    if isinstance(kind, str) and kind and kind not in OPENAPI_TYPES:
        found.append(errors.not_supported(f"{path}.type", kind, OPENAPI_TYPES))
    for key, detail in _UNSUPPORTED:
        if key in schema:
            found.append(errors.forbidden(f"{path}.{key}", detail))
    if kind == "null":
        found.append(
            errors.forbidden(
                f"{path}.type", "type cannot be set to null, use nullable as an alternative"
            )
        )
    items = schema.get("items")
    if isinstance(items, list):
        found.append(
            errors.forbidden(f"{path}.items", "items must be a schema object and not an array")
        )
    if schema.get("properties") and "additionalProperties" in schema:
        additional = schema["additionalProperties"]
        if additional is not False:
            found.append(
                errors.forbidden(
                    f"{path}.additionalProperties",
                    "additionalProperties and properties are mutual exclusive",
                )
            )
    preserve = schema.get("x-kubernetes-preserve-unknown-fields")
    if preserve is False:
        found.append(
            errors.invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"
            )
        )
    for name in sorted(schema.get("properties") or {}):
        found.extend(_standard(schema["properties"][name], f"{path}.properties[{name}]"))
    if isinstance(items, dict):
        found.extend(_standard(items, f"{path}.items"))
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        found.extend(_standard(additional, f"{path}.additionalProperties"))
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(schema.get(junctor) or ()):
            found.extend(_standard(sub, f"{path}.{junctor}[{i}]"))
    if isinstance(schema.get("not"), dict):
        found.extend(_standard(schema["not"], f"{path}.not"))
    return found


def _is_int_or_string_any_of(schema: dict[str, Any]) -> bool:
    any_of = schema.get("anyOf")
    return (
        isinstance(any_of, list)
        and len(any_of) == 2
        and all(isinstance(s, dict) for s in any_of)
        and [s.get("type") for s in any_of] == ["integer", "string"]
    )


def _invariants(schema: Any, level: str, path: str) -> list[FieldError]:
    """``validateStructuralInvariants``."""
    if not isinstance(schema, dict):
        return []
    found: list[FieldError] = []
    kind = schema.get("type") or ""
    items = schema.get("items")
    if kind == "array" and items is None:
        found.append(errors.required(f"{path}.items", "must be specified"))
    if isinstance(items, dict):
        found.extend(_invariants(items, ITEM, f"{path}.items"))
    properties = schema.get("properties") or {}
    for name in sorted(properties):
        found.extend(_invariants(properties[name], FIELD, f"{path}.properties[{name}]"))
    additional = schema.get("additionalProperties")
    if additional is not None and additional is not False:
        if level == ROOT:
            found.append(
                errors.forbidden(f"{path}.additionalProperties", "must not be used at the root")
            )
        if isinstance(additional, dict):
            found.extend(_invariants(additional, FIELD, f"{path}.additionalProperties"))
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    if int_or_string and preserve:
        found.append(
            errors.invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields",
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    skip_any_of = _is_int_or_string_any_of(schema)
    for junctor in _JUNCTORS:
        subs = schema.get(junctor)
        if subs is None:
            continue
        entries = [subs] if junctor == "not" else list(subs)
        for i, sub in enumerate(entries):
            if junctor == "anyOf" and skip_any_of:
                continue
            sub_path = f"{path}.{junctor}" if junctor == "not" else f"{path}.{junctor}[{i}]"
            found.extend(_nested(sub, sub_path))
    if not kind and not int_or_string and not preserve:
        detail = {
            ROOT: "must not be empty at the root",
            ITEM: "must not be empty for specified array items",
            FIELD: "must not be empty for specified object fields",
        }[level]
        found.append(errors.required(f"{path}.type", detail))
    if level == ROOT and kind and kind != "object":
        found.append(errors.invalid(f"{path}.type", kind, "must be object at the root"))
    if level == ROOT:
        for name in ("kind", "apiVersion"):
            entry = properties.get(name)
            if isinstance(entry, dict) and entry.get("type") != "string":
                found.append(
                    errors.invalid(
                        f"{path}.properties[{name}].type", entry.get("type") or "", "must be string"
                    )
                )
    metadata = properties.get("metadata")
    if isinstance(metadata, dict):
        found.extend(_metadata(metadata, level, f"{path}.properties[metadata]"))
    return found


def _nested(schema: Any, path: str) -> list[FieldError]:
    """``validateNestedValueValidation``: value validations inside a junctor declare no types."""
    if not isinstance(schema, dict):
        return []
    found = [
        errors.forbidden(f"{path}.{key}", detail)
        for key, detail in _FORBIDDEN_IN_JUNCTORS
        if schema.get(key) not in (None, False, "", [], {})
    ]
    if "metadata" in (schema.get("properties") or {}):
        found.append(
            errors.forbidden(
                f"{path}.properties[metadata]", "must not be specified in a nested context"
            )
        )
    return found


def _metadata(schema: dict[str, Any], level: str, path: str) -> list[FieldError]:
    """``validateStructuralMetadataInvariants``: the root's metadata may only constrain
    ``name`` and ``generateName``."""
    found: list[FieldError] = []
    kind = schema.get("type") or ""
    if level == ROOT and kind != "object":
        found.append(errors.invalid(f"{path}.type", kind, "must be object"))
    if level == ROOT:
        rest = {k: v for k, v in schema.items() if k not in ("type", "default", "description")}
        properties = rest.pop("properties", None) or {}
        if set(properties) - {"name", "generateName"} or rest:
            found.append(
                errors.forbidden(
                    path,
                    "must not specify anything other than name and generateName, but metadata is "
                    "implicitly specified",
                )
            )
    return found
