"""CRD validation rules (``x-kubernetes-validations``): compiling them, and running them
on custom resources.

Mirrors v1.32's ``apiextensions-apiserver/pkg/apiserver/schema/cel``:

* ``compilation.go`` (``compileRule``): a rule compiles in an environment with ``self``
  and ``oldSelf`` (``compilation failed: `` + cel-go's issues, or ``cel expression must
  evaluate to a bool``), its ``messageExpression`` likewise (``messageExpression
  compilation failed: ...``, ``messageExpression must evaluate to a string``); whether it
  uses ``oldSelf`` makes it a transition rule; ``fieldPath`` is normalized by
  ``ValidFieldPath``.
* ``validation.go`` (``Validator.validate``): the object is walked with its schema
  (properties, ``additionalProperties``, ``items``); null values are not validated; at
  each node with rules, every rule runs with ``self`` the value there and ``oldSelf``
  the correlated old value: the same key of an object (``x-kubernetes-map-type``
  granular or atomic), the item of an ``x-kubernetes-list-type: map`` list with the same
  keys; a transition rule is skipped where there is no old value. A false rule is
  ``Invalid value: "<schema type>": <message>`` at the node's path (plus ``fieldPath``),
  or ``Forbidden``/``Required``/``Duplicate`` per ``reason``; the message is
  ``message``, the ``messageExpression``'s value, or ``failed rule: <rule>``. Errors of
  the rule itself read ``<error> evaluating rule: <rule>``. A rule on the root reports at
  ``<nil>`` (upstream validates with a nil field path). Ratcheting
  (``CRDValidationRatcheting``, on in v1.32): a failing rule that does not use
  ``oldSelf`` on a value equal to its old value is not an error (upstream sends a
  warning instead; not sent here).

Differences: ``self`` and ``oldSelf`` are ``dyn``, not typed from the schema, so a rule
whose result is ``dyn`` (``self.enabled``) is accepted and must be a bool when it runs,
and type errors upstream reports at CRD write appear when the rule runs. No cost limits;
``optionalOldSelf`` rules run as transition rules (``oldSelf`` cannot be optional here).
Pure: no I/O; compiled rules are cached.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, Final

from cel_expr_python import cel

from kubeprio.api import celexpr, errors
from kubeprio.api.celexpr import Compiled, CompileError
from kubeprio.api.errors import ErrorType, FieldError

SELF: Final = "self"
OLD_SELF: Final = "oldSelf"
ROOT_PATH: Final = "<nil>"
REASONS: Final = (
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
)
"""``supportedValidationReason``, sorted as ``sets.String.List`` returns them."""


@dataclasses.dataclass(frozen=True, slots=True)
class CompiledRule:
    """One rule's compilation result (upstream ``CompilationResult``)."""

    program: Compiled | None = None
    error: str | None = None
    uses_old_self: bool = False
    message_program: Compiled | None = None
    message_error: str | None = None


@functools.cache
def _environment(with_old_self: bool) -> Any:
    declared = {SELF: cel.Type.DYN}
    if with_old_self:
        declared[OLD_SELF] = cel.Type.DYN
    return celexpr.new_environment(declared)


def _returns(compiled: Compiled, kind: Any) -> bool:
    found = compiled.program.return_type()
    return bool(found == kind or found == cel.Type.DYN)


@functools.lru_cache(maxsize=4096)
def compile_rule(rule: str, message_expression: str = "") -> CompiledRule:
    """Compile a rule and its message expression (``compileRule``)."""
    if not rule.strip():
        return CompiledRule()
    try:
        program = celexpr.compile_in(_environment(True), rule)
    except CompileError as failure:
        return CompiledRule(error=failure.detail)
    if not _returns(program, cel.Type.BOOL):
        return CompiledRule(error="cel expression must evaluate to a bool")
    try:
        celexpr.compile_in(_environment(False), rule)
        uses_old_self = False
    except CompileError:
        uses_old_self = True
    if not message_expression:
        return CompiledRule(program, uses_old_self=uses_old_self)
    try:
        message = celexpr.compile_in(
            _environment(True), message_expression, "messageExpression compilation failed: "
        )
    except CompileError as failure:
        return CompiledRule(program, uses_old_self=uses_old_self, message_error=failure.detail)
    if not _returns(message, cel.Type.STRING):
        return CompiledRule(
            program,
            uses_old_self=uses_old_self,
            message_error="messageExpression must evaluate to a string",
        )
    return CompiledRule(program, uses_old_self=uses_old_self, message_program=message)


_FIELD_PATH_TOKEN: Final = re.compile(r"\.([^.\[\]']+)|\['((?:[^'\\]|\\.)*)'\]")


def valid_field_path(text: str, schema: dict[str, Any]) -> str | None:
    """``ValidFieldPath``: ``fieldPath`` (``.spec.x``, ``.labels['a.b']``) resolved
    through the schema's properties and ``additionalProperties`` to a field path
    (``spec.x``, ``labels[a.b]``), or ``None`` when it does not refer to a field."""
    path = ""
    at = 0
    node: Any = schema
    while at < len(text):
        token = _FIELD_PATH_TOKEN.match(text, at)
        if token is None or not isinstance(node, dict):
            return None
        name = token.group(1) if token.group(1) is not None else token.group(2)
        if token.group(2) is not None:
            name = re.sub(r"\\(.)", r"\1", name)
        at = token.end()
        properties = node.get("properties")
        if properties:
            if name not in properties:
                return None
            path = f"{path}.{name}" if path else name
            node = properties[name]
        elif isinstance(node.get("additionalProperties"), dict):
            path = f"{path}[{name}]"
            node = node["additionalProperties"]
        else:
            return None
    return path or None


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _display(path: str) -> str:
    return path or ROOT_PATH


def _rule_text(rule: dict[str, Any]) -> str:
    """``ruleErrorString``: the message if there is one, else the rule, trimmed."""
    message = rule.get("message") or ""
    return message.strip() if message else str(rule.get("rule") or "").strip()


def _error_for_reason(path: str, kind: str, detail: str, reason: object) -> FieldError:
    """``fieldErrorForReason``."""
    if reason == "FieldValueForbidden":
        return errors.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return errors.required(path, detail)
    if reason == "FieldValueDuplicate":
        return FieldError(ErrorType.DUPLICATE, path, kind)
    return errors.invalid(path, kind, detail)


def _message(rule: dict[str, Any], compiled: CompiledRule, activation: dict[str, Any]) -> str:
    """The failure's detail: the messageExpression's value when it gives a usable one,
    else ``message``, else ``failed rule: <rule>`` (``ruleMessageOrDefault``)."""
    if compiled.message_program is not None:
        outcome = celexpr.evaluate(compiled.message_program, activation)
        text = outcome.value.strip() if isinstance(outcome.value, str) else ""
        if outcome.error is None and text and "\n" not in text and len(text) <= 5 * 1024:
            return text
    message = rule.get("message") or ""
    return message.strip() if message else f"failed rule: {_rule_text(rule)}"


def _run_rules(
    value: Any, old: Any, schema: dict[str, Any], path: str, found: list[FieldError]
) -> None:
    kind = str(schema.get("type") or "")
    shown = _display(path)
    activation: dict[str, Any] = {SELF: value}
    if old is not None:
        activation[OLD_SELF] = old
    for rule in schema.get("x-kubernetes-validations") or ():
        if not isinstance(rule, dict):
            continue
        compiled = compile_rule(
            str(rule.get("rule") or ""), str(rule.get("messageExpression") or "")
        )
        if compiled.error is not None:
            found.append(errors.invalid(shown, kind, f"rule compile error: {compiled.error}"))
            continue
        if compiled.program is None or (compiled.uses_old_self and old is None):
            continue
        outcome = celexpr.evaluate(compiled.program, activation)
        if outcome.error is not None:
            found.append(_evaluation_error(shown, kind, outcome.error, _rule_text(rule)))
            continue
        if outcome.value is True:
            continue
        if not isinstance(outcome.value, bool):
            found.append(_evaluation_error(shown, kind, "no such overload", _rule_text(rule)))
            continue
        if not compiled.uses_old_self and old is not None and value == old:
            continue  # ratcheting: an unchanged value keeps passing
        target = path
        field_path = rule.get("fieldPath")
        if isinstance(field_path, str) and field_path:
            normalized = valid_field_path(field_path, schema)
            if normalized:
                target = f"{path}.{normalized}" if path else normalized
        detail = _message(rule, compiled, activation)
        found.append(_error_for_reason(_display(target), kind, detail, rule.get("reason")))


def _evaluation_error(path: str, kind: str, error: str, rule: str) -> FieldError:
    if error.startswith("no such overload"):
        detail = (
            f"'{error}': call arguments did not match a supported operator, function or macro "
            f"signature for rule: {rule}"
        )
    else:
        detail = f"{error} evaluating rule: {rule}"
    return errors.invalid(path, kind, detail)


def _list_key(item: Any, keys: list[str]) -> tuple[Any, ...] | None:
    if not isinstance(item, dict):
        return None
    return tuple(repr(item.get(key)) for key in keys)


def _walk(value: Any, old: Any, schema: Any, path: str, found: list[FieldError]) -> None:
    if value is None or not isinstance(schema, dict):
        return
    if schema.get("x-kubernetes-validations"):
        _run_rules(value, old, schema, path, found)
    if isinstance(value, dict):
        correlatable = schema.get("x-kubernetes-map-type") in (None, "granular", "atomic")
        old_map = old if correlatable and isinstance(old, dict) else {}
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key, item in value.items():
                _walk(item, old_map.get(key), additional, f"{path}[{key}]", found)
        properties = schema.get("properties") or {}
        for key, item in value.items():
            if key in properties:
                _walk(item, old_map.get(key), properties[key], _child(path, key), found)
    elif isinstance(value, list):
        items = schema.get("items")
        keys = schema.get("x-kubernetes-list-map-keys") or []
        old_items: dict[tuple[Any, ...], Any] = {}
        if schema.get("x-kubernetes-list-type") == "map" and keys and isinstance(old, list):
            for item in old:
                key = _list_key(item, keys)
                if key is not None:
                    old_items.setdefault(key, item)
        for i, item in enumerate(value):
            key = _list_key(item, keys) if old_items else None
            _walk(item, old_items.get(key) if key else None, items, f"{path}[{i}]", found)


def has_rules(schema: Any) -> bool:
    """Whether any node of the schema carries ``x-kubernetes-validations``."""
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    children = [schema.get("items"), schema.get("additionalProperties")]
    children.extend((schema.get("properties") or {}).values())
    return any(has_rules(child) for child in children)


def validate_rules(data: Any, old: Any, schema: dict[str, Any]) -> list[FieldError]:
    """Every failing rule of the custom object ``data`` (``old`` on update, else None)."""
    found: list[FieldError] = []
    if has_rules(schema):
        _walk(data, old, schema, "", found)
    return found


BLOCKED: Final = (
    "some validation rules were not checked because the object was invalid; correct the "
    "existing errors to complete validation"
)
_BLOCKING: Final = frozenset(
    {
        ErrorType.NOT_SUPPORTED,
        ErrorType.REQUIRED,
        ErrorType.TOO_LONG,
        ErrorType.TOO_MANY,
        ErrorType.TYPE_INVALID,
    }
)


def rule_errors(
    data: dict[str, Any],
    old: dict[str, Any] | None,
    schema: dict[str, Any],
    earlier: list[FieldError],
) -> list[FieldError]:
    """The rules' errors for a custom resource write, after the schema's ``earlier``
    errors (``customResourceStrategy.Validate``/``ValidateUpdate``): when one of those is
    a blocking kind (``hasBlockingErr``), the rules are not run and one error says so."""
    if not has_rules(schema):
        return []
    if any(error.type in _BLOCKING for error in earlier):
        return [errors.invalid(ROOT_PATH, None, BLOCKED)]
    return validate_rules(_root_view(data), _root_view(old) if old is not None else None, schema)


def _root_view(data: dict[str, Any]) -> dict[str, Any]:
    """The root as rules see it (``model.WithTypeAndObjectMeta``): ``metadata`` holds
    only ``name`` and ``generateName``."""
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return data
    kept = {key: metadata[key] for key in ("name", "generateName") if key in metadata}
    return {**data, "metadata": kept}
