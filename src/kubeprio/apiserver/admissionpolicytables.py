"""The Tables of ValidatingAdmissionPolicies (NAME VALIDATIONS PARAMKIND AGE) and their
Bindings (NAME POLICYNAME PARAMREF AGE).

Mirrors upstream v1.32 ``pkg/printers/internalversion/printers.go``
(``printValidatingAdmissionPolicy``: the number of validations, ``apiVersion/kind`` of
the paramKind or ``<unset>``; ``printValidatingAdmissionPolicyBinding``: the policy name,
``namespace/name`` of the paramRef, ``*/name`` when it names no namespace, the selector
as its generated protobuf ``String()`` when it has no name, ``<unset>`` without one).
Column descriptions are upstream's, typos included. Who drives it: ``apiserver.tables``
(the printer registry). Pure; ``now`` is the caller's.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.admissionpolicy import (
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
)
from kubeprio.api.meta import LabelSelector
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

UNSET: Final = "<unset>"

POLICY_COLUMNS: Final = (
    name_column(),
    Column(
        "Validations",
        "integer",
        "Validations indicates the number of validation rules defined in this configuration",
    ),
    Column(
        "ParamKind",
        "string",
        "ParamKind specifies the kind of resources used to parameterize this policy",
    ),
    age_column(),
)

BINDING_COLUMNS: Final = (
    name_column(),
    Column(
        "PolicyName",
        "string",
        "PolicyName indicates the policy definition which the policy binding binded to",
    ),
    Column(
        "ParamRef",
        "string",
        "ParamRef indicates the param resource which sets the configration param",
    ),
    age_column(),
)


def print_policy(policy: ValidatingAdmissionPolicy, now: float) -> tuple[Cells, RowConditions]:
    """``printValidatingAdmissionPolicy``."""
    spec = policy.spec
    kind = spec.param_kind if spec is not None else None
    param_kind = UNSET if kind is None else f"{kind.api_version or ''}/{kind.kind or ''}"
    validations = len(spec.validations or ()) if spec is not None else 0
    return [
        policy.metadata.name or "",
        validations,
        param_kind,
        since(policy.metadata.creation_timestamp, now),
    ], None


def selector_string(selector: LabelSelector) -> str:
    """``metav1.LabelSelector``'s generated ``String()``: labels sorted by key."""
    labels = "".join(
        f"{key}: {value}," for key, value in sorted((selector.match_labels or {}).items())
    )
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{item.key or ''},Operator:{item.operator or ''},"
        f"Values:[{' '.join(item.values or ())}],}},"
        for item in selector.match_expressions or ()
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )


def print_binding(
    binding: ValidatingAdmissionPolicyBinding, now: float
) -> tuple[Cells, RowConditions]:
    """``printValidatingAdmissionPolicyBinding``."""
    spec = binding.spec
    ref = spec.param_ref if spec is not None else None
    param = UNSET
    if ref is not None:
        if ref.name:
            param = f"{ref.namespace}/{ref.name}" if ref.namespace else f"*/{ref.name}"
        elif ref.selector is not None:
            param = selector_string(ref.selector)
    return [
        binding.metadata.name or "",
        (spec.policy_name if spec is not None else None) or "",
        param,
        since(binding.metadata.creation_timestamp, now),
    ], None
