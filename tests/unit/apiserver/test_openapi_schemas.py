"""OpenAPI v3 component schemas, the part ``kubectl explain`` reads.

Rules checked (kubectl's explain template, staging/src/k8s.io/kubectl/pkg/explain/v2/
templates/plaintext.tmpl, and shared/reference/kubectl-wire.md §4):

* a kind is found by the schema whose ``x-kubernetes-group-version-kind`` **list** holds
  its group, version and kind, in the document of its group version;
* fields are walked through ``properties``, ``items``, ``additionalProperties`` and
  single-``$ref`` ``allOf`` wrappers, so every ``$ref`` must resolve inside the document;
* the shown type is the last dotted part of a referenced object schema's name (so
  IntOrString and Quantity must carry no ``type``), else the ``type`` keyword;
* no PATCH operation lists a request body, so kubectl's client-side apply keeps computing
  its patches from its compiled-in structs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubeprio.api import kinds
from kubeprio.apiserver import openapi, schemadocs, upstreamtable

DOCUMENTS = {path: json.loads(body) for path, body in openapi.documents(kinds.RESOURCES).items()}


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if "$ref" in node else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def _schema_of_kind(info: kinds.ResourceInfo) -> dict[str, Any]:
    doc = DOCUMENTS[openapi.gv_path(info)]
    gvk = {"group": info.group, "kind": info.kind, "version": info.version}
    matches = [
        schema
        for schema in doc["components"]["schemas"].values()
        if gvk in schema.get("x-kubernetes-group-version-kind", [])
    ]
    assert len(matches) == 1, info.kind
    return matches[0]


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Follow a ``$ref`` or a single-``$ref`` ``allOf``, as kubectl's typeGuess does."""
    if "allOf" in schema and len(schema["allOf"]) == 1:
        schema = schema["allOf"][0]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix(openapi.SCHEMA_REF)
        return doc["components"]["schemas"][name]
    return schema


def _field(info: kinds.ResourceInfo, path: str) -> dict[str, Any]:
    doc = DOCUMENTS[openapi.gv_path(info)]
    schema = _schema_of_kind(info)
    field: dict[str, Any] = {}
    for part in path.split("."):
        while "items" in schema:
            schema = _resolve(doc, schema["items"])
        field = schema["properties"][part]
        schema = _resolve(doc, field)
    return field


@pytest.mark.parametrize("info", kinds.RESOURCES, ids=lambda info: info.kind)
def test_every_served_kind_has_one_schema_tagged_with_its_gvk(info):
    schema = _schema_of_kind(info)
    assert {"apiVersion", "kind", "metadata"} <= set(schema["properties"])
    assert schema["description"] == schemadocs.TYPES[info.kind]


@pytest.mark.parametrize("path", sorted(DOCUMENTS))
def test_every_ref_resolves_inside_its_own_document(path):
    doc = DOCUMENTS[path]
    schemas = doc["components"]["schemas"]
    refs = _refs(doc)
    assert refs
    for ref in refs:
        assert ref.startswith(openapi.SCHEMA_REF)
        assert ref.removeprefix(openapi.SCHEMA_REF) in schemas, ref


@pytest.mark.parametrize("path", sorted(DOCUMENTS))
def test_no_operation_lists_a_request_body(path):
    for item in DOCUMENTS[path]["paths"].values():
        for verb in ("post", "put", "patch"):
            if verb in item:
                assert "requestBody" not in item[verb]


PC = kinds.for_name("priorityclass")
POD = kinds.for_name("pod")
PDB = kinds.for_name("pdb")
DEPLOY = kinds.for_name("deployment")
TENANT = kinds.for_name("tenant")


@pytest.mark.parametrize(
    ("info", "path", "shown_type"),
    [
        (PC, "value", "integer"),
        (PC, "preemptionPolicy", "string"),
        (POD, "spec", "PodSpec"),
        (POD, "spec.priority", "integer"),
        (POD, "status.nominatedNodeName", "string"),
        (POD, "metadata.creationTimestamp", "string"),
        (POD, "spec.containers.resources", "ResourceRequirements"),
        (PDB, "spec.minAvailable", "IntOrString"),
        (DEPLOY, "spec.strategy.rollingUpdate.maxSurge", "IntOrString"),
        (TENANT, "spec.priorityClasses.maxValue", "integer"),
        # An optional free-form object (the client models it as Optional[Dict]) is an
        # object, not the IntOrString union.
        (POD, "metadata.managedFields.fieldsV1", "object"),
    ],
)
def test_field_types_read_as_upstreams(info, path, shown_type):
    doc = DOCUMENTS[openapi.gv_path(info)]
    field = _field(info, path)
    target = field["allOf"][0] if "allOf" in field else field
    if "$ref" in target:
        resolved = _resolve(doc, target)
        assert resolved.get("type", "object") == "object"
        assert target["$ref"].rsplit(".", 1)[-1] == shown_type
    else:
        assert target["type"] == shown_type


def test_resource_lists_are_maps_of_quantity():
    limits = _field(POD, "spec.containers.resources.limits")
    assert limits["type"] == "object"
    assert limits["additionalProperties"]["$ref"].endswith(".Quantity")
    doc = DOCUMENTS["api/v1"]
    assert "type" not in doc["components"]["schemas"][openapi.QUANTITY]


def test_lists_and_required_fields_follow_the_upstream_table():
    containers = _field(POD, "spec.containers")
    assert containers["type"] == "array"
    container = _resolve(DOCUMENTS["api/v1"], containers["items"])
    assert container["required"] == ["name"]


@pytest.mark.parametrize(
    ("info", "path", "enum"),
    [
        (PC, "preemptionPolicy", ["Never", "PreemptLowerPriority"]),
        (POD, "spec.preemptionPolicy", ["Never", "PreemptLowerPriority"]),
        (PDB, "spec.unhealthyPodEvictionPolicy", ["AlwaysAllow", "IfHealthyBudget"]),
        (TENANT, "spec.enforcement", ["Audit", "Enforce"]),
    ],
)
def test_enums_are_the_validators_values(info, path, enum):
    assert _field(info, path)["enum"] == enum


def test_every_description_names_a_real_type_and_field():
    """A typo in ``schemadocs`` would silently describe nothing."""
    table = upstreamtable.served()
    fields: dict[str, set[str]] = {}
    for entry in table.types.values():
        fields[entry["schema"].rsplit(".", 1)[-1]] = set(entry["fields"])
    for type_name in schemadocs.TYPES:
        assert type_name in fields, type_name
    for type_name, field in [*schemadocs.FIELDS, *schemadocs.ENUMS]:
        assert field in fields[type_name], (type_name, field)


def test_a_described_field_shows_its_description():
    assert _field(POD, "status.nominatedNodeName")["description"].startswith(
        "The node where this pod preempted pods"
    )


@pytest.mark.parametrize(
    ("kind", "path", "schema"),
    [
        # metav1.Condition (PDB status), not a core type of the same short name.
        (
            "PodDisruptionBudget",
            "status.conditions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
        ),
        # core's ScaleIO volume source, not autoscaling's Scale.
        ("PersistentVolume", "spec.scaleIO", "io.k8s.api.core.v1.ScaleIOPersistentVolumeSource"),
    ],
)
def test_referenced_schemas_carry_upstreams_names(kind, path, schema):
    """kubectl explain prints the last dotted part of a field's schema name; the names are
    upstream's OpenAPI definition names (api/openapi-spec/v3 of v1.32)."""
    info = next(info for info in kinds.RESOURCES if info.kind == kind)
    field = _field(info, path)
    refs = _refs(field)
    assert refs, path
    assert refs[0].removeprefix(openapi.SCHEMA_REF) == schema


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("Pod", "spec.hostnameOverride"),
        ("Pod", "status.observedGeneration"),
        ("Node", "spec.podPreemptionPolicy"),
    ],
)
def test_fields_newer_than_v1_32_are_not_published(kind, path):
    """The schemas are v1.32's: a field a later release added is not in them."""
    info = next(info for info in kinds.RESOURCES if info.kind == kind)
    parent, _, name = path.rpartition(".")
    assert name not in _resolve(DOCUMENTS[openapi.gv_path(info)], _field(info, parent)).get(
        "properties", {}
    )
