"""CRD validation: the ``x-kubernetes-validations`` rules of a version's schema.

Mirrors the end of v1.32's ``ValidateCustomResourceDefinitionOpenAPISchema``
(``apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go``). For each
schema node (children first: ``additionalProperties``, then ``properties``, then
``items``), each rule is checked:

* ``rule``: ``Required value: rule is not specified``; ``message``: ``message must be
  non-empty if specified``, ``message must not contain line breaks``, ``Required value:
  message must be specified if rule contains line breaks``; ``messageExpression``:
  ``messageExpression must be non-empty if specified``; ``reason``: one of the four
  ``FieldValue*`` reasons; ``fieldPath``: non-empty, one line, ``fieldPath must be a
  valid path`` (``ValidFieldPath``);
* then, when no such error was found at the node or below, the rules are compiled
  (``api.crdcel.compile_rule``): a compile error is ``Invalid value:
  apiextensions.ValidationRule{...}: compilation failed: ...`` at ``.rule`` (or
  ``.messageExpression``); ``oldSelf`` under a list that is not ``x-kubernetes-list-type:
  map`` is ``oldSelf cannot be used on the uncorrelatable portion of the schema within
  <path>``; ``optionalOldSelf`` without ``oldSelf`` is ``may not be set if oldSelf is not
  used in rule``.

Where: upstream's v1-to-internal conversion hoists a schema that every version shares
to ``spec.validation``, so a CRD whose versions have one schema reports at
``spec.validation.openAPIV3Schema...``; otherwise at
``spec.versions[i].schema.openAPIV3Schema...``. A schema that is not structural
(``api.crdschema``) is not checked here: upstream skips the CEL step then too.

Every static error comes before every compile error (upstream keeps ``SchemaErrors`` and
``CELErrors`` apart and joins them at the end). Not checked: cost estimates. The
``%#v`` of a non-nil pointer field (``Reason``, ``OptionalOldSelf``) prints a fixed
address, as the real one cannot be reproduced. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubeprio.api import crdcel, errors
from kubeprio.api.apiextensions import CustomResourceDefinitionSpec
from kubeprio.api.crdschema import validate_structural
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gotext import go_quote

_ADDRESS = "0xc000a1e000"


@dataclasses.dataclass(slots=True)
class _Found:
    static: list[FieldError] = dataclasses.field(default_factory=list)
    compiled: list[FieldError] = dataclasses.field(default_factory=list)


def validate_spec_rules(spec: CustomResourceDefinitionSpec) -> list[FieldError]:
    """The rule errors of every version's schema, at the hoisted path when they share one."""
    schemas = [
        version.schema.open_apiv3_schema if version.schema is not None else None
        for version in spec.versions or ()
    ]
    if not schemas or any(not isinstance(schema, dict) for schema in schemas):
        return []
    if all(schema == schemas[0] for schema in schemas):
        return _checked(schemas[0], "spec.validation.openAPIV3Schema")
    found: list[FieldError] = []
    for i, schema in enumerate(schemas):
        found.extend(_checked(schema, f"spec.versions[{i}].schema.openAPIV3Schema"))
    return found


def _checked(schema: Any, path: str) -> list[FieldError]:
    if not isinstance(schema, dict) or validate_structural(schema, path):
        return []
    return validate_rules(schema, path)


def validate_rules(schema: dict[str, Any], path: str) -> list[FieldError]:
    """The rule errors of a version's ``openAPIV3Schema`` at ``path``."""
    found = _Found()
    _node(schema, path, None, found)
    return found.static + found.compiled


def _rule_value(rule: dict[str, Any]) -> GoValue:
    """``%#v`` of the internal ``apiextensions.ValidationRule``."""

    def text(key: str) -> str:
        value = rule.get(key)
        return go_quote(value if isinstance(value, str) else "")

    def pointer(key: str, go_type: str) -> str:
        return f"({go_type})({_ADDRESS if rule.get(key) is not None else 'nil'})"

    return GoValue(
        "apiextensions.ValidationRule{"
        f"Rule:{text('rule')}, Message:{text('message')}, "
        f"MessageExpression:{text('messageExpression')}, "
        f"Reason:{pointer('reason', '*apiextensions.FieldValueErrorReason')}, "
        f"FieldPath:{text('fieldPath')}, "
        f"OptionalOldSelf:{pointer('optionalOldSelf', '*bool')}"
        "}"
    )


def _node(schema: Any, path: str, uncorrelatable: str | None, found: _Found) -> None:
    if not isinstance(schema, dict):
        return
    static_before = len(found.static)
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        _node(additional, f"{path}.additionalProperties", uncorrelatable, found)
    for name in sorted(schema.get("properties") or {}):
        _node(schema["properties"][name], f"{path}.properties[{name}]", uncorrelatable, found)
    items = schema.get("items")
    if isinstance(items, dict):
        inner = uncorrelatable
        if inner is None and schema.get("x-kubernetes-list-type") != "map":
            inner = path
        _node(items, f"{path}.items", inner, found)
    rules = [r for r in schema.get("x-kubernetes-validations") or () if isinstance(r, dict)]
    for i, rule in enumerate(rules):
        found.static.extend(_static(rule, schema, f"{path}.x-kubernetes-validations[{i}]"))
    if rules and len(found.static) == static_before:
        for i, rule in enumerate(rules):
            at = f"{path}.x-kubernetes-validations[{i}]"
            found.compiled.extend(_compiled(rule, at, uncorrelatable))


def _string(rule: dict[str, Any], key: str) -> str:
    value = rule.get(key)
    return value if isinstance(value, str) else ""


def _static(rule: dict[str, Any], schema: dict[str, Any], at: str) -> list[FieldError]:
    found: list[FieldError] = []
    text, message = _string(rule, "rule").strip(), _string(rule, "message")
    if not text:
        found.append(errors.required(f"{at}.rule", "rule is not specified"))
    elif message and not message.strip():
        found.append(
            errors.invalid(f"{at}.message", message, "message must be non-empty if specified")
        )
    elif "\n" in message.strip():
        found.append(
            errors.invalid(f"{at}.message", message, "message must not contain line breaks")
        )
    elif "\n" in text and not message.strip():
        found.append(
            errors.required(
                f"{at}.message", "message must be specified if rule contains line breaks"
            )
        )
    expression = _string(rule, "messageExpression")
    if expression and not expression.strip():
        found.append(
            errors.required(
                f"{at}.messageExpression", "messageExpression must be non-empty if specified"
            )
        )
    reason = rule.get("reason")
    if reason is not None and reason not in crdcel.REASONS:
        found.append(errors.not_supported(f"{at}.reason", reason, crdcel.REASONS))
    field_path = _string(rule, "fieldPath")
    if field_path and not field_path.strip():
        found.append(
            errors.invalid(
                f"{at}.fieldPath", field_path, "fieldPath must be non-empty if specified"
            )
        )
    if "\n" in field_path:
        found.append(
            errors.invalid(f"{at}.fieldPath", field_path, "fieldPath must not contain line breaks")
        )
    if field_path and crdcel.valid_field_path(field_path, schema) is None:
        found.append(
            errors.invalid(f"{at}.fieldPath", field_path, "fieldPath must be a valid path")
        )
    return found


def _compiled(rule: dict[str, Any], at: str, uncorrelatable: str | None) -> list[FieldError]:
    found: list[FieldError] = []
    result = crdcel.compile_rule(_string(rule, "rule"), _string(rule, "messageExpression"))
    if result.error is not None:
        found.append(errors.invalid(f"{at}.rule", _rule_value(rule), result.error))
    if result.message_error is not None:
        found.append(
            errors.invalid(f"{at}.messageExpression", _rule_value(rule), result.message_error)
        )
    if result.uses_old_self:
        if uncorrelatable is not None:
            found.append(
                errors.invalid(
                    f"{at}.rule",
                    _string(rule, "rule"),
                    "oldSelf cannot be used on the uncorrelatable portion of the schema within "
                    + uncorrelatable,
                )
            )
    elif rule.get("optionalOldSelf") is not None:
        found.append(
            errors.invalid(
                f"{at}.optionalOldSelf",
                rule.get("optionalOldSelf"),
                "may not be set if oldSelf is not used in rule",
            )
        )
    return found
