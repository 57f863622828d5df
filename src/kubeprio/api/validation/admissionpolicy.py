"""Validation of ValidatingAdmissionPolicies and ValidatingAdmissionPolicyBindings.

Mirrors upstream v1.32 ``pkg/apis/admissionregistration/validation/validation.go``:
``validateValidatingAdmissionPolicySpec`` (failurePolicy, paramKind, matchConstraints
with at least one resource rule, matchConditions, variables, validations or
auditAnnotations), each CEL expression compiled as kube-apiserver compiles it, its error
reported at the expression's field path as ``Invalid value: "<expr>": compilation
failed: ERROR: <input>:...`` (``convertCELErrorToValidationError``; ``api.celexpr``);
``validateValidatingAdmissionPolicyBindingSpec`` (policyName, paramRef, matchResources
at upstream's misspelt path ``spec.matchResouces``, validationActions); the status rules
of the ``status`` subresource. An update whose paramKind and matchConditions are
unchanged does not recompile the match conditions (``ignoreValidatingAdmission
PolicyMatchConditions``). Match rules are in ``api.validation.admissionrules``.
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.admissionpolicy import (
    ALLOW_ACTION,
    AUDIT,
    DENY,
    WARN,
    ParamKind,
    ParamRef,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec,
)
from kubeprio.api.celexpr import CompileError, ResultType, compile_expression
from kubeprio.api.errors import FieldError
from kubeprio.api.gosyntax import GoSlice, GoStruct
from kubeprio.api.validation.admissionrules import validate_match_resources
from kubeprio.api.validation.matchconditions import validate_match_conditions
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    dns1035_label_errors,
    dns1123_subdomain_errors,
    index,
    name_is_dns_subdomain,
    path_segment_errors,
    qualified_name_errors,
    validate_label_selector,
)

SUPPORTED_FAILURE_POLICIES: Final = ("Fail", "Ignore")
SUPPORTED_REASONS: Final = ("Forbidden", "Invalid", "RequestEntityTooLarge")
VALIDATION_ACTIONS: Final = (AUDIT, DENY, WARN)
MAX_AUDIT_ANNOTATIONS: Final = 20
MAX_VALUE_EXPRESSION_LENGTH: Final = 5 * 1024

_CEL_IDENTIFIER: Final = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_CEL_RESERVED: Final = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_NEWLINES: Final = re.compile(r"[\n\r]+")


def _compile_errors(
    text: str, result: ResultType, *, with_params: bool, path: str
) -> list[FieldError]:
    try:
        compile_expression(text, result, with_params=with_params)
    except CompileError as failure:
        return [errors.invalid(path, text, failure.detail)]
    return []


def _parse_group_version(text: str) -> tuple[str, str] | None:
    if text in ("", "/"):
        return ("", "")
    if text.count("/") == 0:
        return ("", text)
    if text.count("/") == 1:
        group, _, version = text.partition("/")
        return (group, version)
    return None


def _validate_param_kind(kind: ParamKind, path: str) -> list[FieldError]:
    """``validateParamKind``."""
    found: list[FieldError] = []
    api_version = kind.api_version or ""
    version_path = child(path, "apiVersion")
    parsed = _parse_group_version(api_version)
    if not api_version:
        found.append(errors.required(version_path))
    elif parsed is None:
        found.append(
            errors.invalid(
                version_path, api_version, f"unexpected GroupVersion string: {api_version}"
            )
        )
    else:
        group, version = parsed
        if group and (problems := dns1123_subdomain_errors(group)):
            found.append(errors.invalid(version_path, group, ",".join(problems)))
        if not version:
            found.append(errors.invalid(version_path, api_version, "version must be specified"))
        elif problems := dns1035_label_errors(version):
            found.append(errors.invalid(version_path, version, ",".join(problems)))
    name = kind.kind or ""
    if not name:
        found.append(errors.required(child(path, "kind")))
    elif problems := dns1035_label_errors(name.lower()):
        found.append(
            errors.invalid(
                child(path, "kind"),
                name,
                "may have mixed case, but should otherwise match: " + ",".join(problems),
            )
        )
    return found


def _validate_validations(spec: ValidatingAdmissionPolicySpec, path: str) -> list[FieldError]:
    """``validateValidation`` for each entry."""
    found: list[FieldError] = []
    with_params = spec.param_kind is not None
    for position, validation in enumerate(spec.validations or ()):
        item = index(path, position)
        expression = validation.expression or ""
        if not expression.strip():
            found.append(errors.required(child(item, "expression"), "expression is not specified"))
        else:
            found.extend(
                _compile_errors(
                    expression,
                    ResultType.BOOL,
                    with_params=with_params,
                    path=child(item, "expression"),
                )
            )
        message_expression = validation.message_expression or ""
        if message_expression and not message_expression.strip():
            found.append(
                errors.invalid(
                    child(item, "messageExpression"),
                    message_expression,
                    "must be non-empty if specified",
                )
            )
        elif message_expression.strip():
            found.extend(
                _compile_errors(
                    message_expression,
                    ResultType.STRING,
                    with_params=with_params,
                    path=child(item, "messageExpression"),
                )
            )
        message = validation.message or ""
        if message and not message.strip():
            found.append(
                errors.invalid(
                    child(item, "message"), message, "message must be non-empty if specified"
                )
            )
        elif _NEWLINES.search(message.strip()):
            found.append(
                errors.invalid(
                    child(item, "message"), message, "message must not contain line breaks"
                )
            )
        if validation.reason is not None and validation.reason not in SUPPORTED_REASONS:
            found.append(
                errors.not_supported(child(item, "reason"), validation.reason, SUPPORTED_REASONS)
            )
    return found


def _validate_variables(spec: ValidatingAdmissionPolicySpec, path: str) -> list[FieldError]:
    """``validateVariable``: a CEL identifier and an expression of any type."""
    found: list[FieldError] = []
    for position, variable in enumerate(spec.variables or ()):
        item = index(path, position)
        name = variable.name or ""
        if not name.strip():
            found.append(errors.required(child(item, "name"), "name is not specified"))
        elif not _CEL_IDENTIFIER.match(name) or name in _CEL_RESERVED:
            found.append(
                errors.invalid(child(item, "name"), name, "name is not a valid CEL identifier")
            )
        expression = variable.expression or ""
        if not expression.strip():
            found.append(errors.required(child(item, "expression"), "expression is not specified"))
        else:
            found.extend(
                _compile_errors(
                    expression,
                    ResultType.ANY,
                    with_params=spec.param_kind is not None,
                    path=child(item, "expression"),
                )
            )
    return found


def _validate_audit_annotations(
    policy_name: str, spec: ValidatingAdmissionPolicySpec, path: str
) -> list[FieldError]:
    """``validateAuditAnnotation`` for each entry, at most 20, keys unique."""
    annotations = spec.audit_annotations or ()
    found: list[FieldError] = []
    if len(annotations) > MAX_AUDIT_ANNOTATIONS:
        found.append(
            errors.invalid(
                path,
                GoSlice(
                    "[]admissionregistration.AuditAnnotation",
                    [
                        GoStruct(
                            "admissionregistration.AuditAnnotation",
                            (("Key", a.key or ""), ("ValueExpression", a.value_expression or "")),
                        )
                        for a in annotations
                    ],
                ),
                f"must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations",
            )
        )
    keys: set[str] = set()
    for position, annotation in enumerate(annotations):
        item = index(path, position)
        key = annotation.key or ""
        if policy_name:
            found.extend(qualified_name_errors(f"{policy_name}/{key}", child(item, "key")))
        else:
            found.append(
                errors.invalid(child(item, "key"), key, "requires metadata.name be non-empty")
            )
        value_expression = (annotation.value_expression or "").strip()
        value_path = child(item, "valueExpression")
        if not value_expression:
            found.append(errors.required(value_path, "valueExpression is not specified"))
        elif len(value_expression) > MAX_VALUE_EXPRESSION_LENGTH:
            found.append(
                errors.required(
                    value_path, f"must not exceed {MAX_VALUE_EXPRESSION_LENGTH} bytes in length"
                )
            )
        else:
            try:
                compile_expression(
                    value_expression,
                    ResultType.STRING_OR_NULL,
                    with_params=spec.param_kind is not None,
                )
            except CompileError as failure:
                found.append(
                    errors.invalid(value_path, annotation.value_expression, failure.detail)
                )
        if key in keys:
            found.append(errors.duplicate(child(item, "key"), key))
        keys.add(key)
    return found


def _validate_policy_spec(
    policy: ValidatingAdmissionPolicy, *, check_match_conditions: bool
) -> list[FieldError]:
    spec = policy.spec or ValidatingAdmissionPolicySpec()
    found: list[FieldError] = []
    if spec.failure_policy is None:
        found.append(errors.required("spec.failurePolicy"))
    elif spec.failure_policy not in SUPPORTED_FAILURE_POLICIES:
        found.append(
            errors.not_supported(
                "spec.failurePolicy", spec.failure_policy, SUPPORTED_FAILURE_POLICIES
            )
        )
    if spec.param_kind is not None:
        found.extend(_validate_param_kind(spec.param_kind, "spec.paramKind"))
    if spec.match_constraints is None:
        found.append(errors.required("spec.matchConstraints"))
    else:
        found.extend(validate_match_resources(spec.match_constraints, "spec.matchConstraints"))
        if not spec.match_constraints.resource_rules:
            found.append(errors.required("spec.matchConstraints.resourceRules"))
    if check_match_conditions:
        found.extend(
            validate_match_conditions(
                spec.match_conditions or (),
                "spec.matchConditions",
                with_params=spec.param_kind is not None,
            )
        )
    found.extend(_validate_variables(spec, "spec.variables"))
    if not spec.validations and not spec.audit_annotations:
        detail = "validations or auditAnnotations must contain at least one item"
        found.append(errors.required("spec.validations", detail))
        found.append(errors.required("spec.auditAnnotations", detail))
    else:
        found.extend(_validate_validations(spec, "spec.validations"))
        found.extend(
            _validate_audit_annotations(policy.metadata.name or "", spec, "spec.auditAnnotations")
        )
    return found


def validate_policy(policy: ValidatingAdmissionPolicy) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicy`` (metadata is checked by the caller)."""
    return _validate_policy_spec(policy, check_match_conditions=True)


def validate_policy_update(
    new: ValidatingAdmissionPolicy, old: ValidatingAdmissionPolicy
) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicyUpdate``: match conditions are rechecked only
    when they or the paramKind changed."""
    new_spec = new.spec or ValidatingAdmissionPolicySpec()
    old_spec = old.spec or ValidatingAdmissionPolicySpec()
    unchanged = (
        new_spec.param_kind == old_spec.param_kind
        and new_spec.match_conditions == old_spec.match_conditions
    )
    return _validate_policy_spec(new, check_match_conditions=not unchanged)


def validate_policy_status_update(
    new: ValidatingAdmissionPolicy, old: ValidatingAdmissionPolicy
) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicyStatusUpdate``: each type-checking warning has
    a ``warning`` and a ``fieldRef``."""
    found: list[FieldError] = []
    checking = new.status.type_checking if new.status is not None else None
    warnings = checking.expression_warnings if checking is not None else None
    for position, warning in enumerate(warnings or ()):
        item = index("status.typeChecking.expressionWarnings", position)
        if not warning.warning:
            found.append(errors.required(child(item, "warning")))
        if not (warning.field_ref or "").strip():
            found.append(errors.required(child(item, "fieldRef")))
    return found


def _validate_param_ref(ref: ParamRef | None, path: str) -> list[FieldError]:
    """``validateParamRef``: name xor selector, and a parameterNotFoundAction."""
    if ref is None:
        return []
    found: list[FieldError] = []
    exclusive = "name and selector are mutually exclusive"
    if ref.name:
        found.extend(
            errors.invalid(child(path, "name"), ref.name, message)
            for message in path_segment_errors(ref.name)
        )
        if ref.selector is not None:
            found.append(errors.forbidden(child(path, "name"), exclusive))
    if ref.selector is not None:
        found.extend(validate_label_selector(ref.selector, child(path, "selector")))
        if ref.name:
            found.append(errors.forbidden(child(path, "selector"), exclusive))
    if not ref.name and ref.selector is None:
        found.append(errors.required(path, "one of name or selector must be specified"))
    action = ref.parameter_not_found_action
    if not action:
        found.append(errors.required(child(path, "parameterNotFoundAction")))
    elif action not in (DENY, ALLOW_ACTION):
        found.append(
            errors.not_supported(
                child(path, "parameterNotFoundAction"), action, (DENY, ALLOW_ACTION)
            )
        )
    return found


def _validate_validation_actions(actions: tuple[str, ...], path: str) -> list[FieldError]:
    """``validateValidationActions``: known, unique, not both Deny and Warn, at least one."""
    found: list[FieldError] = []
    seen: set[str] = set()
    for position, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            found.append(errors.not_supported(index(path, position), action, VALIDATION_ACTIONS))
        if action in seen:
            found.append(errors.duplicate(index(path, position), action))
        seen.add(action)
    if DENY in seen and WARN in seen:
        found.append(
            errors.invalid(
                path,
                GoSlice("[]admissionregistration.ValidationAction", actions),
                "must not contain both Deny and Warn (repeating the same validation failure "
                "information in the API response and headers serves no purpose)",
            )
        )
    if not seen:
        found.append(errors.required(path, "at least one validation action is required"))
    return found


def validate_binding(binding: ValidatingAdmissionPolicyBinding) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicyBinding`` (metadata is checked by the caller);
    updates are validated alike."""
    spec = binding.spec or ValidatingAdmissionPolicyBindingSpec()
    found: list[FieldError] = []
    if not spec.policy_name:
        found.append(errors.required("spec.policyName"))
    else:
        found.extend(
            errors.invalid("spec.policyName", spec.policy_name, message)
            for message in name_is_dns_subdomain(spec.policy_name)
        )
    found.extend(_validate_param_ref(spec.param_ref, "spec.paramRef"))
    # Upstream's path really is misspelt ("matchResouces").
    found.extend(validate_match_resources(spec.match_resources, "spec.matchResouces"))
    found.extend(
        _validate_validation_actions(spec.validation_actions or (), "spec.validationActions")
    )
    return found


def validate_binding_update(
    new: ValidatingAdmissionPolicyBinding, old: ValidatingAdmissionPolicyBinding
) -> list[FieldError]:
    """``ValidateValidatingAdmissionPolicyBindingUpdate``: as on create."""
    return validate_binding(new)


CREATE: Final[dict[type[Any], KindValidator]] = {
    ValidatingAdmissionPolicy: validate_policy,
    ValidatingAdmissionPolicyBinding: validate_binding,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    ValidatingAdmissionPolicy: validate_policy_update,
    ValidatingAdmissionPolicyBinding: validate_binding_update,
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    ValidatingAdmissionPolicy: validate_policy_status_update,
}
