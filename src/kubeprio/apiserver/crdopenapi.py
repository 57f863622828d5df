"""OpenAPI v3 documents of custom resources: what ``kubectl apply`` and ``explain`` read.

Mirrors v1.32's ``apiextensions-apiserver/pkg/controller/openapi/builder``: one document per
custom group version (``/openapi/v3/apis/<group>/<version>``) with the create, replace and
patch operations of each kind (their ``fieldValidation`` parameter makes kubectl leave
validation to the server, ``apiserver.openapi``) and a component schema per kind named
``<reversed group>.<version>.<Kind>`` (``com.example.v1.Widget``): the version's
``openAPIV3Schema`` with ``apiVersion``, ``kind`` and ``metadata`` added and
``x-kubernetes-group-version-kind`` set. Who drives it: ``apiserver.customresources``,
whenever the CRDs change. Pure.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from kubeprio.api.model import JsonDict
from kubeprio.apiserver.openapi import OPENAPI_VERSION, SCHEMA_REF, gv_path, write_paths

if TYPE_CHECKING:
    from kubeprio.apiserver.customresources import CustomVersion

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def schema_name(group: str, version: str, kind: str) -> str:
    """``com.example.v1.Widget``: the group's labels reversed, then version and kind."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _kind_schema(found: CustomVersion) -> JsonDict:
    info = found.info
    schema: dict[str, Any] = copy.deepcopy(found.schema) or {"type": "object"}
    properties = dict(schema.get("properties") or {})
    properties["apiVersion"] = {"type": "string"}
    properties["kind"] = {"type": "string"}
    properties["metadata"] = {"allOf": [{"$ref": SCHEMA_REF + OBJECT_META}]}
    schema["properties"] = properties
    schema["x-kubernetes-group-version-kind"] = [
        {"group": info.group, "kind": info.kind, "version": info.version}
    ]
    return schema


def custom_documents(versions: list[CustomVersion]) -> dict[str, bytes]:
    """Every custom group version's document, encoded, keyed ``apis/<group>/<version>``."""
    by_gv: dict[str, list[CustomVersion]] = {}
    for found in versions:
        by_gv.setdefault(gv_path(found.info), []).append(found)
    documents: dict[str, bytes] = {}
    for path, found_versions in by_gv.items():
        paths: JsonDict = {}
        schemas: JsonDict = {OBJECT_META: {"type": "object"}}
        for found in found_versions:
            info = found.info
            paths.update(write_paths(info))
            schemas[schema_name(info.group, info.version, info.kind)] = _kind_schema(found)
        document = {
            "openapi": OPENAPI_VERSION,
            "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
            "paths": paths,
            "components": {"schemas": dict(sorted(schemas.items()))},
        }
        documents[path] = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
    return documents
