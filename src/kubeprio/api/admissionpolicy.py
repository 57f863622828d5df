"""admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and its Binding.

Mirrors ``k8s.io/api/admissionregistration/v1/types.go`` (GA since v1.30): a policy
holds CEL ``validations`` (and ``matchConditions``, ``variables``, ``auditAnnotations``)
and the requests it can apply to (``matchConstraints``); a binding puts a policy in force
for some requests (``matchResources``), with a parameter object (``paramRef``) and what a
failed validation does (``validationActions``: Deny, Warn, Audit). Both kinds are
cluster-scoped. Defaults are in ``api.admissionpolicydefaults``, validation in
``api.validation.admissionpolicy``, evaluation in ``admission.validatingpolicy``.
Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import Condition, LabelSelector, ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

GROUP: Final = "admissionregistration.k8s.io"
API_VERSION: Final = "admissionregistration.k8s.io/v1"

FAIL: Final = "Fail"
IGNORE: Final = "Ignore"
EQUIVALENT: Final = "Equivalent"
EXACT: Final = "Exact"
ALL_SCOPES: Final = "*"
DENY: Final = "Deny"
WARN: Final = "Warn"
AUDIT: Final = "Audit"
ALLOW_ACTION: Final = "Allow"
"""``parameterNotFoundAction: Allow`` (``Deny`` is ``DENY``)."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NamedRuleWithOperations:
    """``NamedRuleWithOperations``: operations x groups x versions x resources, optionally
    narrowed to some object names (the embedded ``RuleWithOperations`` is inlined)."""

    resource_names: tuple[str, ...] | None = None
    operations: tuple[str, ...] | None = None
    api_groups: tuple[str, ...] | None = None
    api_versions: tuple[str, ...] | None = None
    resources: tuple[str, ...] | None = None
    scope: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MatchResources:
    """Which requests a policy (``matchConstraints``) or binding (``matchResources``) is about."""

    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    resource_rules: tuple[NamedRuleWithOperations, ...] | None = None
    exclude_resource_rules: tuple[NamedRuleWithOperations, ...] | None = None
    match_policy: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ParamKind:
    """The kind of a policy's parameter objects."""

    api_version: str | None = None
    kind: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Validation:
    """One CEL rule: ``expression`` must be true, else ``message``/``messageExpression``."""

    expression: str | None = None
    message: str | None = None
    reason: str | None = None
    message_expression: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MatchCondition:
    """A CEL precondition (all must be true for the policy to apply)."""

    name: str | None = None
    expression: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Variable:
    """A named CEL expression, read by later ones as ``variables.<name>``."""

    name: str | None = None
    expression: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class AuditAnnotation:
    """An audit annotation ``<policy>/<key>`` whose value a CEL expression computes."""

    key: str | None = None
    value_expression: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatingAdmissionPolicySpec:
    """What the policy checks and where it may apply."""

    param_kind: ParamKind | None = None
    match_constraints: MatchResources | None = None
    validations: tuple[Validation, ...] | None = None
    failure_policy: str | None = None
    audit_annotations: tuple[AuditAnnotation, ...] | None = None
    match_conditions: tuple[MatchCondition, ...] | None = None
    variables: tuple[Variable, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ExpressionWarning:
    """A type-checking warning about one expression (``fieldRef`` is its JSON path)."""

    field_ref: str | None = None
    warning: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TypeChecking:
    """The results of type-checking the policy's expressions."""

    expression_warnings: tuple[ExpressionWarning, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatingAdmissionPolicyStatus:
    """``status``: the generation checked, its type-checking, conditions."""

    observed_generation: int | None = None
    type_checking: TypeChecking | None = None
    conditions: tuple[Condition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatingAdmissionPolicy:
    """An admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (cluster-scoped)."""

    api_version: str | None = API_VERSION
    kind: str | None = "ValidatingAdmissionPolicy"
    metadata: ObjectMeta = ObjectMeta()
    spec: ValidatingAdmissionPolicySpec | None = None
    status: ValidatingAdmissionPolicyStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ParamRef:
    """Which parameter object(s) a binding evaluates its policy with."""

    name: str | None = None
    namespace: str | None = None
    selector: LabelSelector | None = None
    parameter_not_found_action: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatingAdmissionPolicyBindingSpec:
    """The policy bound, its parameters, the requests, and what a failure does."""

    policy_name: str | None = None
    param_ref: ParamRef | None = None
    match_resources: MatchResources | None = None
    validation_actions: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatingAdmissionPolicyBinding:
    """An admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding (cluster-scoped)."""

    api_version: str | None = API_VERSION
    kind: str | None = "ValidatingAdmissionPolicyBinding"
    metadata: ObjectMeta = ObjectMeta()
    spec: ValidatingAdmissionPolicyBindingSpec | None = None
    extra: JsonDict = extra_field()
