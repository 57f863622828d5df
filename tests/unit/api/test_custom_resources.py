"""CustomResourceDefinition validation and custom resource schema checks, pruning and
defaulting, each row citing the upstream rule it reproduces (v1.32):

* ``apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go``
  (``ValidateCustomResourceDefinition``, ``ValidateCustomResourceDefinitionNames``,
  ``ValidateCustomResourceColumnDefinition``, ``ValidateCustomResourceDefinitionSubresources``);
* ``pkg/apiserver/schema/validation.go`` (``validateStructuralInvariants``);
* kube-openapi ``pkg/validation/errors/schema.go`` texts through
  ``pkg/apiserver/validation/validation.go`` (``kubeOpenAPIResultToFieldErrors``);
* ``pkg/apiserver/schema/pruning/algorithm.go`` and ``defaulting/algorithm.go``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.crdschema import validate_structural
from kubeprio.api.crpruning import apply_defaults, prune
from kubeprio.api.crvalidation import validate_custom_object
from kubeprio.api.serialization import from_dict
from kubeprio.api.validation.apiextensions import validate_custom_resource_definition

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["color"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
                "color": {"type": "string", "enum": ["red", "green"]},
                "name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
                "size": {"x-kubernetes-int-or-string": True},
                "tags": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 2,
                    "items": {"type": "string"},
                },
                "ratio": {"type": "number", "nullable": True},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    },
}


def _crd(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "listKind": "WidgetList",
        },
        "versions": [
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA}}
        ],
    }
    base.update(spec)
    return {"metadata": {"name": "widgets.example.com"}, "spec": base}


def _crd_errors(data: dict[str, Any]) -> list[str]:
    crd = from_dict(CustomResourceDefinition, data)
    return [str(error) for error in validate_custom_resource_definition(crd)]


def test_a_valid_crd_has_no_errors():
    assert _crd_errors(_crd()) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # ValidateCustomResourceDefinition's nameValidationFn
        (
            {"metadata": {"name": "gadgets.example.com"}},
            'metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group',
        ),
        # validateCustomResourceDefinitionSpec: group with a dot
        (
            {"group": "example"},
            'spec.group: Invalid value: "example": should be a domain with at least one dot',
        ),
        # validateEnumStrings on scope
        (
            {"scope": "Global"},
            'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        ),
        # a schema for every version (requireOpenAPISchema)
        (
            {"versions": [{"name": "v1", "served": True, "storage": True}]},
            "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
        ),
        # ValidateCustomResourceDefinitionNames: kind and listKind differ
        (
            {
                "names": {
                    "plural": "widgets",
                    "singular": "widget",
                    "kind": "Widget",
                    "listKind": "Widget",
                }
            },
            'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same',
        ),
        # the four names are required
        (
            {"names": {"plural": "widgets", "kind": "Widget", "listKind": "WidgetList"}},
            "spec.names.singular: Required value",
        ),
    ],
)
def test_crd_validation_texts(change, expected):
    data = _crd()
    if "metadata" in change:
        data["metadata"] = change["metadata"]
    else:
        data["spec"].update(change)
    assert expected in _crd_errors(data)


def test_exactly_one_storage_version():
    """``must have exactly one version marked as storage version``."""
    versions = [
        {"name": "v1", "served": True, "storage": False, "schema": {"openAPIV3Schema": SCHEMA}}
    ]
    found = _crd_errors(_crd(versions=versions))
    assert any(
        e.startswith("spec.versions: Invalid value: ")
        and e.endswith("must have exactly one version marked as storage version")
        for e in found
    )


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        # validateStructuralInvariants: types everywhere, arrays with items, object root
        (
            {"type": "object", "properties": {"a": {}}},
            "s.properties[a].type: Required value: must not be empty for specified object fields",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array"}}},
            "s.properties[a].items: Required value: must be specified",
        ),
        ({"type": "string"}, 's.type: Invalid value: "string": must be object at the root'),
        # specStandardValidatorV3: known types, no $ref
        (
            {"type": "object", "properties": {"a": {"type": "float"}}},
            's.properties[a].type: Unsupported value: "float": supported values: "array", "boolean", "integer", "number", "object", "string"',
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/x"}}},
            "s.properties[a].$ref: Forbidden: $ref is not supported",
        ),
    ],
)
def test_structural_schema_rules(schema, expected):
    assert expected in [str(e) for e in validate_structural(schema, "s")]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"color": "red", "replicas": "x"},
            'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        ),
        (
            {"color": "red", "replicas": 11},
            "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
        ),
        (
            {"color": "red", "replicas": -1},
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
        ),
        (
            {"color": "blue"},
            'spec.color: Unsupported value: "blue": supported values: "red", "green"',
        ),
        ({}, "spec.color: Required value"),
        (
            {"color": "red", "name": "a"},
            'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long',
        ),
        ({"color": "red", "name": "abcde"}, "spec.name: Too long: may not be more than 4 bytes"),
        (
            {"color": "red", "name": "A1"},
            "spec.name: Invalid value: \"A1\": spec.name in body should match '^[a-z]+$'",
        ),
        (
            {"color": "red", "tags": []},
            "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items",
        ),
        (
            {"color": "red", "tags": ["a", "b", "c"]},
            "spec.tags: Too many: 3: must have at most 2 items",
        ),
        (
            {"color": "red", "size": True},
            'spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"',
        ),
        (
            {"color": None},
            'spec.color: Invalid value: "null": spec.color in body must be of type string: "null"',
        ),
    ],
)
def test_custom_resource_schema_errors(spec, expected):
    found = [str(e) for e in validate_custom_object({"spec": spec}, SCHEMA)]
    assert expected in found


@pytest.mark.parametrize(
    "spec",
    [
        {"color": "red", "size": 3},
        {"color": "red", "size": "50%"},
        {"color": "red", "ratio": None},
        {"color": "red", "replicas": 2.0},
        {"color": "green", "free": {"anything": [1, {"x": 2}]}},
    ],
)
def test_valid_custom_resources(spec):
    assert validate_custom_object({"spec": spec}, SCHEMA) == []


def test_pruning_drops_unspecified_fields_and_keeps_preserved_ones():
    data = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "junk": 1},
        "spec": {"color": "red", "typo": 1, "free": {"x": {"y": 1}}},
        "extra": True,
    }
    pruned, dropped = prune(data, SCHEMA)
    assert dropped == ["spec.typo", "extra"]
    assert pruned["spec"] == {"color": "red", "free": {"x": {"y": 1}}}
    assert pruned["metadata"] == {"name": "w", "junk": 1}  # metadata is not the schema's
    assert data["spec"]["typo"] == 1  # the input is untouched


def test_defaulting_fills_absent_and_null_fields():
    assert apply_defaults({"spec": {"color": "red"}}, SCHEMA)["spec"]["replicas"] == 1
    assert apply_defaults({"spec": {"replicas": None}}, SCHEMA)["spec"]["replicas"] == 1
    assert apply_defaults({"spec": {"replicas": 4}}, SCHEMA)["spec"]["replicas"] == 4
