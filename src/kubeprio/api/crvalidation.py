"""Validating a custom resource against its CRD version's OpenAPI v3 schema.

Mirrors what v1.32 runs on every custom resource write: kube-openapi's
``pkg/validation/validate`` schema validator (type, then string, number, array, enum and
object checks; messages of ``pkg/validation/errors/schema.go``, ``<path> in body ...``),
whose results ``apiextensions-apiserver/pkg/apiserver/validation/validation.go``
(``kubeOpenAPIResultToFieldErrors``) turns into field errors:

* a wrong type: ``spec.replicas: Invalid value: "string": spec.replicas in body must be of
  type integer: "string"`` (the bad value is the JSON type found, ``null`` for a null in
  a field that is not ``nullable``);
* ``required``: ``spec.x: Required value``; ``enum``: ``Unsupported value`` listing the
  allowed values; ``maxLength``: ``Too long: may not be more than N bytes``; ``maxItems``
  and ``maxProperties``: ``Too many: <n>: must have at most N items``;
* everything else an ``Invalid value`` with kube-openapi's text (``should be less than or
  equal to 10``, ``should match '^a'``, ``should be at least 2 chars long``, ...).

``x-kubernetes-int-or-string`` accepts integers and strings (``must be of type
integer,string``). Not checked here: ``format``, the ``allOf``/``anyOf``/``oneOf``/``not``
junctors (beyond the int-or-string pattern) and CEL ``x-kubernetes-validations``.
Properties are checked in the schema's order (upstream ranges over a Go map). Pure.
"""

from __future__ import annotations

import math
import re
from typing import Any

from kubeprio.api import errors
from kubeprio.api.errors import ErrorType, FieldError, go_json

IN_BODY = "in body"


def validate_custom_object(data: Any, schema: dict[str, Any]) -> list[FieldError]:
    """Every schema violation of ``data`` (the whole object; ``metadata`` is not walked)."""
    found: list[FieldError] = []
    if isinstance(data, dict) and isinstance(schema, dict):
        body = {k: v for k, v in data.items() if k != "metadata"}
        properties = {k: v for k, v in (schema.get("properties") or {}).items() if k != "metadata"}
        _object(body, {**schema, "properties": properties}, "", found)
    return found


def json_type(value: Any) -> str:
    """The JSON type kube-openapi infers for a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def go_number(value: float | int) -> str:
    """A number as Go's ``%v`` prints it (``10``, ``1.5``, ``1e+21``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    return text.replace("e+0", "e+").replace("e-0", "e-")


def _display(path: str) -> str:
    return path.lstrip(".")


def _bad_value(value: Any) -> Any:
    """The bad value as a field error shows it: numbers as ``%v``, others as they are."""
    if isinstance(value, float) and not isinstance(value, bool):
        return errors.GoValue(go_number(value))
    return value


def _types(schema: dict[str, Any]) -> list[str]:
    if schema.get("x-kubernetes-int-or-string") is True:
        return ["integer", "string"]
    kind = schema.get("type")
    return [kind] if isinstance(kind, str) and kind else []


def _type_matches(found: str, value: Any, wanted: list[str]) -> bool:
    if found in wanted:
        return True
    if found == "number" and "integer" in wanted and float(value).is_integer():
        return True
    return found == "integer" and "number" in wanted


def _check(value: Any, schema: dict[str, Any], path: str, found: list[FieldError]) -> None:
    """One schema node (kube-openapi's ``SchemaValidator.Validate``)."""
    name = _display(path)
    wanted = _types(schema)
    kind = json_type(value)
    if value is None:
        if wanted and not schema.get("nullable"):
            found.append(_type_error(name, wanted, "null"))
        _enum(value, schema, name, found)
        return
    if wanted and not _type_matches(kind, value, wanted):
        found.append(_type_error(name, wanted, kind))
        return
    if kind == "string":
        _string(value, schema, name, found)
    elif kind in ("integer", "number"):
        _number(value, schema, name, found)
    elif kind == "array":
        _array(value, schema, path, found)
    _enum(value, schema, name, found)
    if kind == "object":
        _object(value, schema, path, found)


def _type_error(name: str, wanted: list[str], kind: str) -> FieldError:
    message = f"{name} {IN_BODY} must be of type {','.join(wanted)}: {go_json(kind)}"
    return FieldError(ErrorType.TYPE_INVALID, name, kind, message)


def _string(value: str, schema: dict[str, Any], name: str, found: list[FieldError]) -> None:
    length = len(value)
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and length > max_length:
        found.append(errors.too_long(name, max_length))
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and length < min_length:
        found.append(
            errors.invalid(
                name, value, f"{name} {IN_BODY} should be at least {min_length} chars long"
            )
        )
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True
        if not matched:
            found.append(errors.invalid(name, value, f"{name} {IN_BODY} should match '{pattern}'"))


def _number(value: float | int, schema: dict[str, Any], name: str, found: list[FieldError]) -> None:
    shown = _bad_value(value)
    maximum = schema.get("maximum")
    if isinstance(maximum, int | float) and not isinstance(maximum, bool):
        exclusive = schema.get("exclusiveMaximum") is True
        if value > maximum or (exclusive and value == maximum):
            relation = "less than" if exclusive else "less than or equal to"
            found.append(
                errors.invalid(
                    name, shown, f"{name} {IN_BODY} should be {relation} {go_number(maximum)}"
                )
            )
    minimum = schema.get("minimum")
    if isinstance(minimum, int | float) and not isinstance(minimum, bool):
        exclusive = schema.get("exclusiveMinimum") is True
        if value < minimum or (exclusive and value == minimum):
            relation = "greater than" if exclusive else "greater than or equal to"
            found.append(
                errors.invalid(
                    name, shown, f"{name} {IN_BODY} should be {relation} {go_number(minimum)}"
                )
            )
    factor = schema.get("multipleOf")
    if isinstance(factor, int | float) and not isinstance(factor, bool) and factor > 0:
        quotient = value / factor
        if not float(quotient).is_integer():
            found.append(
                errors.invalid(
                    name, shown, f"{name} {IN_BODY} should be a multiple of {go_number(factor)}"
                )
            )


def _array(value: list[Any], schema: dict[str, Any], path: str, found: list[FieldError]) -> None:
    name = _display(path)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _check(item, items, f"{path}[{i}]", found)
    size = len(value)
    min_items = schema.get("minItems")
    if isinstance(min_items, int) and size < min_items:
        found.append(
            errors.invalid(name, size, f"{name} {IN_BODY} should have at least {min_items} items")
        )
    max_items = schema.get("maxItems")
    if isinstance(max_items, int) and size > max_items:
        found.append(
            FieldError(ErrorType.TOO_MANY, name, size, f"must have at most {max_items} items")
        )


def _enum(value: Any, schema: dict[str, Any], name: str, found: list[FieldError]) -> None:
    allowed = schema.get("enum")
    if not isinstance(allowed, list) or not allowed:
        return
    if any(_same(value, option) for option in allowed):
        return
    shown = [option if isinstance(option, str) else go_json(option) for option in allowed]
    found.append(errors.not_supported(name, _bad_value(value), shown))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _object(
    value: dict[str, Any], schema: dict[str, Any], path: str, found: list[FieldError]
) -> None:
    name = _display(path)
    count = len(value)
    max_properties = schema.get("maxProperties")
    if isinstance(max_properties, int) and count > max_properties:
        found.append(
            FieldError(ErrorType.TOO_MANY, name, count, f"must have at most {max_properties} items")
        )
    min_properties = schema.get("minProperties")
    if isinstance(min_properties, int) and count < min_properties:
        found.append(
            errors.invalid(
                name, count, f"{name} {IN_BODY} should have at least {min_properties} properties"
            )
        )
    properties = schema.get("properties") or {}
    for key, sub in properties.items():
        if key in value and isinstance(sub, dict):
            _check(value[key], sub, f"{path}.{key}", found)
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        for key, item in value.items():
            if key not in properties:
                _check(item, additional, f"{path}.{key}", found)
    for key in schema.get("required") or ():
        if key not in value:
            found.append(errors.required(_display(f"{path}.{key}")))
