"""Defaults and validation of ValidatingAdmissionPolicies and their Bindings.

Upstream v1.32 ``pkg/apis/admissionregistration/v1/defaults.go`` (failurePolicy Fail,
matchPolicy Equivalent, empty selectors, rule scope ``*``) and
``pkg/apis/admissionregistration/validation/validation.go``
(``validateValidatingAdmissionPolicySpec``, ``validateMatchResources``,
``validateRuleWithOperations``, ``validateValidation``, ``validateMatchCondition``,
``validateVariable``, ``validateValidatingAdmissionPolicyBindingSpec``,
``validateParamRef``, ``validateValidationActions``); CEL compile errors as
``plugin/cel/compile.go`` reports them (``compilation failed: `` + cel-go's issues, or
``must evaluate to bool``), at the expression's field path.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import kinds, serialization
from kubeprio.api.admissionpolicy import (
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
)
from kubeprio.api.defaults import default_object
from kubeprio.api.validation import validate_create

RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}


def _policy(spec: dict[str, Any], name: str = "p") -> ValidatingAdmissionPolicy:
    obj = serialization.from_dict(
        ValidatingAdmissionPolicy, {"metadata": {"name": name}, "spec": spec}
    )
    return default_object(obj)  # type: ignore[return-value]


def _errors(obj: Any) -> list[str]:
    return [str(error) for error in validate_create(obj, kinds.for_object(obj))]


def test_defaults_fill_failure_policy_match_policy_selectors_and_scope() -> None:
    policy = _policy(
        {"matchConstraints": {"resourceRules": [RULE]}, "validations": [{"expression": "true"}]}
    )
    spec = serialization.to_dict(policy)["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["matchConstraints"] == {
        "namespaceSelector": {}, "objectSelector": {}, "matchPolicy": "Equivalent",
        "resourceRules": [{**RULE, "scope": "*"}],
    }  # fmt: skip
    assert _errors(policy) == []


def _valid(**changes: Any) -> dict[str, Any]:
    return {
        "matchConstraints": {"resourceRules": [RULE]},
        "validations": [{"expression": "true"}],
        **changes,
    }


SYNTAX = (
    "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting "
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
    "STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^"
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"validations": [{"expression": "true"}]}, ["spec.matchConstraints: Required value"]),
        (_valid(matchConstraints={"resourceRules": []}),
         ["spec.matchConstraints.resourceRules: Required value"]),
        (_valid(validations=[]),
         ["spec.validations: Required value: validations or auditAnnotations must contain at least one item",
          "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item"]),
        (_valid(validations=[{"expression": "1 +"}]),
         [f'spec.validations[0].expression: Invalid value: "1 +": {SYNTAX}']),
        (_valid(validations=[{"expression": "params.maxReplicas > 1"}]),
         ['spec.validations[0].expression: Invalid value: "params.maxReplicas > 1": compilation '
          "failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n"
          " | params.maxReplicas > 1\n | ^"]),
        (_valid(validations=[{"expression": "'a'"}]),
         ['spec.validations[0].expression: Invalid value: "\'a\'": must evaluate to bool']),
        (_valid(validations=[{"expression": "true", "messageExpression": "1"}]),
         ['spec.validations[0].messageExpression: Invalid value: "1": must evaluate to string']),
        (_valid(validations=[{"expression": " "}]),
         ["spec.validations[0].expression: Required value: expression is not specified"]),
        (_valid(validations=[{"expression": "true", "message": "a\nb"}]),
         ['spec.validations[0].message: Invalid value: "a\\nb": message must not contain line breaks']),
        (_valid(validations=[{"expression": "true", "reason": "Conflict"}]),
         ['spec.validations[0].reason: Unsupported value: "Conflict": supported values: '
          '"Forbidden", "Invalid", "RequestEntityTooLarge"']),
        (_valid(failurePolicy="Maybe"),
         ['spec.failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"']),
        (_valid(matchConditions=[{"name": "a", "expression": "object"},
                                 {"name": "a", "expression": "true"}]),
         ['spec.matchConditions[0].expression: Invalid value: "object": must evaluate to bool',
          'spec.matchConditions[1].name: Duplicate value: "a"']),
        (_valid(variables=[{"name": "in", "expression": "1"}, {"name": "x", "expression": "1 +"}]),
         ['spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier',
          f'spec.variables[1].expression: Invalid value: "1 +": {SYNTAX}']),
        (_valid(paramKind={"apiVersion": "a/b/c", "kind": "Config_Map"}),
         ['spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
          'spec.paramKind.kind: Invalid value: "Config_Map": may have mixed case, but should '
          "otherwise match: a DNS-1035 label must consist of lower case alphanumeric "
          "characters or '-', start with an alphabetic character, and end with an alphanumeric "
          "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
          "'[a-z]([-a-z0-9]*[a-z0-9])?')"]),
        (_valid(matchConstraints={"resourceRules": [{**RULE, "operations": ["*", "CREATE"],
                                                     "resources": ["*", "pods"], "scope": "Any"}]}),
         ["spec.matchConstraints.resourceRules[0].operations: Invalid value: "
          '[]admissionregistration.OperationType{"*", "CREATE"}: if \'*\' is present, must not '
          "specify other operations",
          "spec.matchConstraints.resourceRules[0].resources: Invalid value: "
          '[]string{"*", "pods"}: if \'*\' is present, must not specify other resources without '
          "subresources",
          'spec.matchConstraints.resourceRules[0].scope: Unsupported value: "Any": supported '
          'values: "*", "Cluster", "Namespaced"']),
    ],
    ids=["no-match-constraints", "no-resource-rules", "nothing-to-check", "syntax-error",
         "params-without-param-kind", "not-bool", "message-not-string", "blank-expression",
         "multi-line-message", "unknown-reason", "failure-policy", "match-conditions",
         "variables", "param-kind", "rules"],
)  # fmt: skip
def test_policy_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert _errors(_policy(spec)) == expected


def test_params_compile_once_the_policy_has_a_param_kind() -> None:
    spec = _valid(
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        validations=[{"expression": "object.spec.replicas <= int(params.data.max)"}],
        matchConditions=[{"name": "has-params", "expression": "params != null"}],
    )
    assert _errors(_policy(spec)) == []


def _binding(spec: dict[str, Any]) -> ValidatingAdmissionPolicyBinding:
    obj = serialization.from_dict(
        ValidatingAdmissionPolicyBinding, {"metadata": {"name": "b"}, "spec": spec}
    )
    return default_object(obj)  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"policyName": "p", "validationActions": ["Deny"]}, []),
        ({}, ["spec.policyName: Required value",
              "spec.validationActions: Required value: at least one validation action is required"]),
        ({"policyName": "p", "validationActions": ["Deny", "Warn", "Deny", "Log"]},
         ['spec.validationActions[2]: Duplicate value: "Deny"',
          'spec.validationActions[3]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"',
          "spec.validationActions: Invalid value: []admissionregistration.ValidationAction"
          '{"Deny", "Warn", "Deny", "Log"}: must not contain both Deny and Warn (repeating the same '
          "validation failure information in the API response and headers serves no purpose)"]),
        ({"policyName": "p", "validationActions": ["Warn"],
          "paramRef": {"name": "a", "selector": {}}},
         ["spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
          "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
          "spec.paramRef.parameterNotFoundAction: Required value"]),
        ({"policyName": "p", "validationActions": ["Audit"], "paramRef": {"parameterNotFoundAction": "Skip"}},
         ["spec.paramRef: Required value: one of name or selector must be specified",
          'spec.paramRef.parameterNotFoundAction: Unsupported value: "Skip": supported values: '
          '"Deny", "Allow"']),
        ({"policyName": "p", "validationActions": ["Deny"],
          "matchResources": {"matchPolicy": "Loose"}},
         ['spec.matchResouces.matchPolicy: Unsupported value: "Loose": supported values: '
          '"Equivalent", "Exact"']),
    ],
    ids=["valid", "empty", "actions", "name-and-selector", "neither", "misspelt-match-path"],
)  # fmt: skip
def test_binding_validation(spec: dict[str, Any], expected: list[str]) -> None:
    assert _errors(_binding(spec)) == expected
