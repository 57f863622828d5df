"""The ``matchConditions`` of admission webhooks and ValidatingAdmissionPolicies.

Both kinds carry the same ``admissionregistration.k8s.io/v1`` ``MatchCondition`` list and
upstream checks it with one function (``validateMatchConditions`` in
``pkg/apis/admissionregistration/validation/validation.go``): at most 64 entries, each
named with a unique qualified name, each a CEL expression that compiles to a bool
(``params`` is declared only for a policy with a ``paramKind``).

Who drives it: ``validation.admissionpolicy`` and ``validation.webhookconfiguration``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.admissionpolicy import MatchCondition
from kubeprio.api.celexpr import CompileError, ResultType, compile_expression
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.meta import child, index, qualified_name_errors

MAX_MATCH_CONDITIONS: Final = 64


def validate_match_conditions(
    conditions: Sequence[MatchCondition], path: str, *, with_params: bool
) -> list[FieldError]:
    """``validateMatchConditions``: the count, each name, each expression compiled."""
    found: list[FieldError] = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        found.append(
            FieldError(
                errors.ErrorType.TOO_MANY,
                path,
                len(conditions),
                f"must have at most {MAX_MATCH_CONDITIONS} items",
            )
        )
    names: set[str] = set()
    for position, condition in enumerate(conditions):
        item = index(path, position)
        expression = (condition.expression or "").strip()
        if not expression:
            found.append(errors.required(child(item, "expression")))
        else:
            try:
                compile_expression(expression, ResultType.BOOL, with_params=with_params)
            except CompileError as failure:
                found.append(errors.invalid(child(item, "expression"), expression, failure.detail))
        name = condition.name or ""
        if not name:
            found.append(errors.required(child(item, "name")))
        else:
            found.extend(qualified_name_errors(name, child(item, "name")))
            if name in names:
                found.append(errors.duplicate(child(item, "name"), name))
            names.add(name)
    return found
