"""A webhook's ``matchConditions``: CEL expressions that must all hold for it to be called.

Mirrors v1.32's ``staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions``
(``matcher.Match``) as ``generic/webhook.go`` ``ShouldCallHook`` uses it, once the rules
matched: the conditions run in order on ``object``, ``oldObject`` (null when absent) and
``request`` (the ``admission.k8s.io/v1`` AdmissionRequest the webhook would be sent); the
first one that is not ``true`` means the webhook is skipped; when none is false but some
failed, the request is refused, ``403 <resource> "<name>" is forbidden: expression '...'
resulted in error: ...`` (several errors ``utilerrors.NewAggregate``-joined), whatever the
failure policy (upstream fails closed here). The expressions are compiled and run by
``api.celexpr`` (shared with ValidatingAdmissionPolicy), ``authorizer`` included: the
caller binds it to the request's user (``admission.policyauthorizer``). No I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubeprio.api import errors
from kubeprio.api.celexpr import (
    OBJECT,
    OLD_OBJECT,
    REQUEST,
    CompileError,
    ResultType,
    compile_expression,
    evaluate,
)
from kubeprio.api.webhookconfiguration import AnyWebhook


def conditions_hold(
    webhook: AnyWebhook,
    activation: Mapping[str, object],
    *,
    resource: str,
    group: str,
    name: str,
    functions: Sequence[Any] = (),
) -> bool:
    """Whether every condition holds; raises the Forbidden refusal when none is false but
    some failed."""
    failures: list[str] = []
    for condition in webhook.match_conditions or ():
        expression = condition.expression or ""
        try:
            outcome = evaluate(
                compile_expression(expression, ResultType.BOOL, with_params=False),
                activation,
                functions,
            )
        except CompileError as failure:
            failures.append(failure.detail)
            continue
        if outcome.error is not None:
            failures.append(f"expression '{expression}' resulted in error: {outcome.error}")
        elif outcome.value is not True:
            return False
    if failures:
        detail = failures[0] if len(failures) == 1 else "[" + ", ".join(failures) + "]"
        raise errors.forbidden_error(resource, group, name, detail)
    return True


def activation_of(
    obj: dict[str, object] | None, old: dict[str, object] | None, request: dict[str, object]
) -> dict[str, object]:
    """The variables a condition sees."""
    return {OBJECT: obj, OLD_OBJECT: old, REQUEST: request}
