"""Evaluating one ValidatingAdmissionPolicy for one binding and parameter.

Mirrors upstream v1.32 ``k8s.io/apiserver/pkg/admission/plugin/policy/validating``
``validator.Validate`` and the CEL filter it runs (``plugin/cel/filter.go``):

* **matchConditions** run first, in order; any ``false`` means the policy does not
  apply (no decision), otherwise an error is a decision under the failure policy (its
  text: the evaluation errors, ``utilerrors.NewAggregate``-joined; matchconditions
  ``Matcher.Match``).
* **variables** are computed in order, each seeing the earlier ones as
  ``variables.<name>``; one that fails is absent, and an expression using it fails with
  the variable's error.
* **validations**: ``true`` admits; anything else denies with ``reason`` (``Invalid``
  when unset) and the first of: ``messageExpression``'s result (trimmed, not empty, one
  line, at most 5000 bytes), ``message`` (trimmed), ``failed expression: <expression>``.
  An evaluation error is ``expression '<expression>' resulted in error: <error>``: a
  denial when ``failurePolicy`` is ``Fail``, nothing when ``Ignore``.
* **auditAnnotations**: a string value is published as ``<policy>/<key>``, null or
  blank skipped, an error or another type a denial under ``Fail``.

The activation holds JSON forms: ``object``/``oldObject`` (null on create/delete),
``request`` (an ``admission.k8s.io/v1`` AdmissionRequest), ``params``,
``namespaceObject``. Driven by ``admission.validatingpolicy``; no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubeprio.api.admissionpolicy import FAIL, IGNORE, ValidatingAdmissionPolicySpec
from kubeprio.api.celexpr import (
    VARIABLES,
    CompileError,
    Outcome,
    ResultType,
    compile_expression,
    evaluate,
)

MAX_MESSAGE_BYTES: Final = 5000
"""``celconfig.MaxEvaluatedMessageExpressionSizeBytes``."""
DEFAULT_REASON: Final = "Invalid"


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """A failed validation (or an evaluation error under ``Fail``): what to report."""

    message: str
    reason: str = DEFAULT_REASON
    expression_index: int = 0


@dataclasses.dataclass(slots=True)
class Result:
    """The decisions of one evaluation and the audit annotations it publishes."""

    decisions: list[Decision] = dataclasses.field(default_factory=list)
    audit_annotations: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Scope:
    """What every expression of one evaluation shares besides the activation: whether
    the policy has ``params``, and the functions bound to the request (``authorizer``'s
    ``check``: ``admission.policyauthorizer``)."""

    with_params: bool
    functions: tuple[Any, ...] = ()


def _run(text: str, result: ResultType, activation: Mapping[str, object], scope: Scope) -> Outcome:
    try:
        compiled = compile_expression(text, result, with_params=scope.with_params)
    except CompileError as failure:
        # Stored policies compile (validation checked them); a library change could
        # still make one fail, which upstream reports as an evaluation error.
        return Outcome(error=failure.detail)
    return evaluate(compiled, activation, scope.functions)


def _failed(expression: str, outcome: Outcome) -> str:
    return f"expression '{expression}' resulted in error: {outcome.error}"


def _with_variables(
    spec: ValidatingAdmissionPolicySpec, activation: dict[str, object], scope: Scope
) -> tuple[dict[str, object], dict[str, str]]:
    values: dict[str, object] = {}
    failures: dict[str, str] = {}
    for variable in spec.variables or ():
        name = variable.name or ""
        outcome = _run(
            variable.expression or "",
            ResultType.ANY,
            {**activation, VARIABLES: values},
            scope,
        )
        if outcome.error is not None:
            failures[name] = _failed(variable.expression or "", outcome)
        else:
            values[name] = outcome.value
    return {**activation, VARIABLES: values}, failures


def _error_text(expression: str, outcome: Outcome, failures: Mapping[str, str]) -> str:
    """A failed variable the expression reads explains the failure better than the
    missing key it left behind."""
    for name, text in failures.items():
        if f"variables.{name}" in expression:
            return text
    return _failed(expression, outcome)


def _message(
    expression: str,
    message: str | None,
    message_expression: str | None,
    activation: Mapping[str, object],
    scope: Scope,
) -> str:
    if message_expression:
        outcome = _run(message_expression, ResultType.STRING, activation, scope)
        if outcome.error is None and isinstance(outcome.value, str):
            text = outcome.value.strip()
            if text and len(text.encode()) <= MAX_MESSAGE_BYTES and "\n" not in text:
                return text
    if message and message.strip():
        return message.strip()
    return f"failed expression: {expression.strip()}"


def _match_conditions(
    spec: ValidatingAdmissionPolicySpec, activation: Mapping[str, object], scope: Scope
) -> tuple[bool, str | None]:
    """Whether every condition holds; an error text when none is false but some failed."""
    errors: list[str] = []
    for condition in spec.match_conditions or ():
        expression = condition.expression or ""
        outcome = _run(expression, ResultType.BOOL, activation, scope)
        if outcome.error is not None:
            errors.append(_failed(expression, outcome))
        elif outcome.value is False:
            return False, None
    if errors:
        return True, errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return True, None


def validate(
    policy_name: str,
    spec: ValidatingAdmissionPolicySpec,
    activation: dict[str, object],
    *,
    with_params: bool,
    functions: Sequence[Any] = (),
) -> Result:
    """Evaluate the policy's expressions on ``activation`` (``validator.Validate``), with
    ``functions`` bound for the request."""
    scope = Scope(with_params, tuple(functions))
    fail = (spec.failure_policy or FAIL) != IGNORE
    result = Result()
    applies, condition_error = _match_conditions(spec, activation, scope)
    if not applies:
        return result
    if condition_error is not None:
        if fail:
            result.decisions.append(Decision(condition_error))
        return result
    activation, failures = _with_variables(spec, activation, scope)
    for position, validation in enumerate(spec.validations or ()):
        expression = validation.expression or ""
        outcome = _run(expression, ResultType.BOOL, activation, scope)
        if outcome.error is not None:
            if fail:
                text = _error_text(expression, outcome, failures)
                result.decisions.append(Decision(text, expression_index=position))
            continue
        if outcome.value is True:
            continue
        message = _message(
            expression, validation.message, validation.message_expression, activation, scope
        )
        result.decisions.append(
            Decision(message, validation.reason or DEFAULT_REASON, expression_index=position)
        )
    for annotation in spec.audit_annotations or ():
        expression = annotation.value_expression or ""
        outcome = _run(expression, ResultType.STRING_OR_NULL, activation, scope)
        if outcome.error is not None:
            if fail:
                result.decisions.append(Decision(_error_text(expression, outcome, failures)))
        elif isinstance(outcome.value, str):
            if outcome.value.strip():
                result.audit_annotations[f"{policy_name}/{annotation.key}"] = outcome.value.strip()
        elif outcome.value is not None and fail:
            result.decisions.append(
                Decision(
                    f"valueExpression '{expression}' resulted in unsupported return type: "
                    f"{type(outcome.value).__name__}. Return type must be either string or null."
                )
            )
    return result
