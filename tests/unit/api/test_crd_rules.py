"""CRD ``x-kubernetes-validations``: checks on CRD write (``api.validation.crdrules``)
and evaluation on custom resource writes (``api.crdcel``).

Upstream (v1.32, apiextensions-apiserver): ``pkg/apis/apiextensions/validation/
validation.go`` (``ValidateCustomResourceDefinitionOpenAPISchema``: the rule checks and
compile errors), ``pkg/apiserver/schema/cel/compilation.go`` (``compileRule``),
``pkg/apiserver/schema/cel/validation.go`` (``validateExpressions``,
``fieldErrorForReason``, ``ruleMessageOrDefault``, ``ValidFieldPath``, correlation of
``oldSelf``) and ``pkg/registry/customresource/strategy.go`` (``hasBlockingErr``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import crdcel, errors
from kubeprio.api.validation.crdrules import validate_rules

ROOT = "spec.validation.openAPIV3Schema"


def schema_with(rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": rules,
                "properties": {
                    "replicas": {"type": "integer"},
                    "max": {"type": "integer"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "items": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                        **extra,
                    },
                },
            }
        },
    }


AT = f"{ROOT}.properties[spec].x-kubernetes-validations[0]"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"rule": "  "}, f"{AT}.rule: Required value: rule is not specified"),
        (
            {"rule": "true", "message": " "},
            f'{AT}.message: Invalid value: " ": message must be non-empty if specified',
        ),
        (
            {"rule": "true", "message": "a\nb"},
            f'{AT}.message: Invalid value: "a\\nb": message must not contain line breaks',
        ),
        (
            {"rule": "true &&\ntrue"},
            f"{AT}.message: Required value: message must be specified if rule contains line breaks",
        ),
        (
            {"rule": "true", "messageExpression": " "},
            f"{AT}.messageExpression: Required value: messageExpression must be non-empty if specified",
        ),
        (
            {"rule": "true", "reason": "Nope"},
            f'{AT}.reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", '
            '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
        ),
        (
            {"rule": "true", "fieldPath": ".nope"},
            f'{AT}.fieldPath: Invalid value: ".nope": fieldPath must be a valid path',
        ),
        # self is dyn here (see api.crdcel): a rule of dyn type compiles.
        ({"rule": "self.replicas"}, None),
        (
            {"rule": "self.replicas > 'a' + ", "message": "m"},
            f"{AT}.rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.replicas > 'a' + \", "
            'Message:"m", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
            'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:23: '
            "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
            "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
            " | self.replicas > 'a' + \n | ......................^",
        ),
        (
            {"rule": "true", "messageExpression": "1"},
            f'{AT}.messageExpression: Invalid value: apiextensions.ValidationRule{{Rule:"true", '
            'Message:"", MessageExpression:"1", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
            'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: messageExpression must evaluate to a string',
        ),
        (
            {"rule": "true", "optionalOldSelf": True},
            f"{AT}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
        ),
    ],
)
def test_rule_checks_on_crd_write(rule: dict[str, Any], message: str | None) -> None:
    found = [str(e) for e in validate_rules(schema_with([rule]), ROOT)]
    assert found == ([message] if message else [])


def test_old_self_under_an_atomic_list_is_refused() -> None:
    schema = schema_with([])
    items = schema["properties"]["spec"]["properties"]["items"]
    items["items"]["x-kubernetes-validations"] = [{"rule": "self.name == oldSelf.name"}]
    at = f"{ROOT}.properties[spec].properties[items]"
    assert [str(e) for e in validate_rules(schema, ROOT)] == [
        f'{at}.items.x-kubernetes-validations[0].rule: Invalid value: "self.name == oldSelf.name": '
        f"oldSelf cannot be used on the uncorrelatable portion of the schema within {at}"
    ]
    items["x-kubernetes-list-type"] = "map"
    items["x-kubernetes-list-map-keys"] = ["name"]
    assert validate_rules(schema, ROOT) == []


def obj(spec: dict[str, Any], name: str = "x") -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize(
    ("rule", "spec", "message"),
    [
        ({"rule": "self.replicas <= self.max"}, {"replicas": 5, "max": 3},
         'spec: Invalid value: "object": failed rule: self.replicas <= self.max'),
        ({"rule": "self.replicas <= self.max", "message": " too many "}, {"replicas": 5, "max": 3},
         'spec: Invalid value: "object": too many'),
        ({"rule": "self.replicas <= self.max", "messageExpression": "'%d > %d'.format([self.replicas, self.max])"},
         {"replicas": 5, "max": 3}, 'spec: Invalid value: "object": 5 > 3'),
        # A message expression that fails falls back to the message (validation.go).
        ({"rule": "false", "message": "m", "messageExpression": "self.nope"}, {},
         'spec: Invalid value: "object": m'),
        ({"rule": "false", "reason": "FieldValueForbidden", "message": "no"}, {},
         "spec: Forbidden: no"),
        ({"rule": "false", "reason": "FieldValueRequired", "message": "need"}, {},
         "spec: Required value: need"),
        ({"rule": "false", "reason": "FieldValueDuplicate", "message": "dup"}, {},
         'spec: Duplicate value: "object"'),
        ({"rule": "false", "fieldPath": ".replicas", "message": "m"}, {"replicas": 1},
         'spec.replicas: Invalid value: "object": m'),
        ({"rule": "false", "fieldPath": ".labels['a.b']", "message": "m"}, {},
         'spec.labels[a.b]: Invalid value: "object": m'),
        ({"rule": "self.nope == 1"}, {},
         'spec: Invalid value: "object": no such key: nope evaluating rule: self.nope == 1'),
        ({"rule": "self.replicas < 'a'"}, {"replicas": 1},
         "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a "
         "supported operator, function or macro signature for rule: self.replicas < 'a'"),
        ({"rule": "quantity('1Gi').isGreaterThan(quantity('1G'))"}, {}, None),
    ],
)  # fmt: skip
def test_rules_run_on_create(
    rule: dict[str, Any], spec: dict[str, Any], message: str | None
) -> None:
    found = crdcel.rule_errors(obj(spec), None, schema_with([rule]), [])
    assert [str(e) for e in found] == ([message] if message else [])


def test_a_root_rule_reports_at_nil_and_sees_only_name_in_metadata() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('a')", "message": "name"},
            {"rule": "!has(self.metadata.labels)", "message": "labels are hidden"},
        ],
    }
    data = obj({}, name="b")
    data["metadata"]["labels"] = {"x": "y"}
    assert [str(e) for e in crdcel.rule_errors(data, None, schema, [])] == [
        '<nil>: Invalid value: "object": name'
    ]


def test_transition_rules_need_a_correlated_old_value() -> None:
    rule = {"rule": "self >= oldSelf", "message": "no decrease"}
    schema = schema_with([])
    spec = schema["properties"]["spec"]
    spec["properties"]["replicas"]["x-kubernetes-validations"] = [rule]
    spec["properties"]["labels"]["additionalProperties"]["x-kubernetes-validations"] = [
        {"rule": "self == oldSelf", "message": "immutable"}
    ]
    new, old = (
        obj({"replicas": 1, "labels": {"a": "2"}}),
        obj({"replicas": 2, "labels": {"a": "1"}}),
    )
    assert crdcel.rule_errors(new, None, schema, []) == []
    # Fields are visited in the object's order (upstream ranges over a Go map).
    assert [str(e) for e in crdcel.rule_errors(new, old, schema, [])] == [
        'spec.replicas: Invalid value: "integer": no decrease',
        'spec.labels[a]: Invalid value: "string": immutable',
    ]


def test_list_map_items_correlate_by_key_and_unchanged_values_ratchet() -> None:
    schema = schema_with(
        [], **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
    )
    items = schema["properties"]["spec"]["properties"]["items"]["items"]
    items["x-kubernetes-validations"] = [
        {"rule": "self.name != 'legacy'", "message": "legacy"},
        {"rule": "self == oldSelf", "message": "changed"},
    ]
    old = obj({"items": [{"name": "legacy"}, {"name": "b"}]})
    new = obj({"items": [{"name": "c"}, {"name": "legacy"}]})
    # "legacy" is unchanged (correlated by key), so its failing rule ratchets; "c" has no
    # old item, so the transition rule is skipped for it.
    assert crdcel.rule_errors(new, old, schema, []) == []
    assert [str(e) for e in crdcel.rule_errors(new, None, schema, [])] == [
        'spec.items[1]: Invalid value: "object": legacy'
    ]


def test_blocking_schema_errors_stop_the_rules() -> None:
    earlier = [errors.required("spec.x")]
    found = crdcel.rule_errors(obj({}), None, schema_with([{"rule": "false"}]), earlier)
    assert [str(e) for e in found] == [
        "<nil>: Invalid value: null: some validation rules were not checked because the object "
        "was invalid; correct the existing errors to complete validation"
    ]
    assert crdcel.rule_errors(obj({}), None, {"type": "object"}, earlier) == []
