"""OpenAPI v3 documents: kubectl's server-side field validation and ``kubectl explain``.

What it is: ``/openapi/v3`` (the index of group versions) and ``/openapi/v3/<gv>`` (one
document per group version), built from ``api.kinds.RESOURCES``. Two kubectl features
read them (shared/reference/kubectl-wire.md §4):

* ``create -f`` and ``apply -f`` run with ``--validate=strict``: kubectl looks, per kind,
  for a PATCH operation tagged with ``x-kubernetes-group-version-kind`` whose parameters
  include ``fieldValidation``. Found, it sends ``fieldValidation=Strict`` and leaves
  validation to the server (``apiserver.fieldvalidation``); not found, it falls back to
  client-side validation with the protobuf OpenAPI v2, which kubeprio does not serve.
* ``kubectl explain`` finds the component schema whose ``x-kubernetes-group-version-kind``
  list holds the kind and walks its ``properties``, following ``$ref``. The shapes are
  upstream's (``apiserver.upstreamtable``: field names, types, required fields, schema
  names); the descriptions are kubeprio's own (``apiserver.schemadocs``).

Deliberately absent: ``requestBody`` content types. When a PATCH operation lists
``application/strategic-merge-patch+json``, kubectl computes its client-side-apply patches
from the schemas, which would then need upstream's ``x-kubernetes-patch-*`` list
extensions; without it kubectl uses its compiled-in Go structs, as against a real server.

Who drives it: ``apiserver.http``. Rules: pure; documents are built once per app.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.model import JsonDict
from kubeprio.apiserver import schemadocs, upstreamtable
from kubeprio.apiserver.upstreamtable import TypeEntry

OPENAPI_VERSION: Final = "3.0.0"
SCHEMA_REF: Final = "#/components/schemas/"
INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
READ_ONLY_VERBS: Final = frozenset({"get", "list", "watch"})

# Types without a type keyword, so kubectl names them (``<IntOrString>``, ``<Quantity>``).
_SPECIAL_SCHEMAS: Final[dict[str, JsonDict]] = {
    INT_OR_STRING: {
        "description": 'An integer or a string, such as 3 or "25%".',
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    },
    QUANTITY: {
        "description": "A resource amount, such as 500m (CPU) or 1Gi (memory).",
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
}
# The table's scalars that are upstream schemas of their own, referenced by name.
_SPECIAL_OF_SCALAR: Final = {"int-or-string": INT_OR_STRING, "quantity": QUANTITY}
_SCALARS: Final[dict[str, JsonDict]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "boolean": {"type": "boolean"},
    "date-time": {"type": "string", "format": "date-time"},
    "byte": {"type": "string", "format": "byte"},
    "object": {"type": "object"},
    **{scalar: {"$ref": SCHEMA_REF + name} for scalar, name in _SPECIAL_OF_SCALAR.items()},
}


def gv_path(info: ResourceInfo) -> str:
    """``api/v1`` or ``apis/<group>/<version>`` (the key in the v3 index)."""
    return f"apis/{info.group}/{info.version}" if info.group else f"api/{info.version}"


def parameter(name: str, location: str = "query", *, required: bool = False) -> JsonDict:
    entry: JsonDict = {"name": name, "in": location, "schema": {"type": "string"}}
    if required:
        entry["required"] = True
    return entry


def operation(info: ResourceInfo, verb: str, action: str) -> JsonDict:
    parameters = [parameter("dryRun"), parameter("fieldManager")]
    if verb in ("post", "put", "patch"):
        parameters.append(parameter("fieldValidation"))
    if verb == "patch":
        parameters.append(parameter("force"))
    return {
        "operationId": f"{action}{info.kind}",
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": info.group,
            "version": info.version,
            "kind": info.kind,
        },
        "parameters": parameters,
        "responses": {"200": {"description": "OK"}},
    }


def _short(schema_name: str) -> str:
    """``io.k8s.api.core.v1.PodSpec`` -> ``PodSpec`` (what kubectl shows as the type)."""
    return schema_name.rsplit(".", 1)[-1]


def _type_schema(ref: str, types: dict[str, TypeEntry]) -> JsonDict:
    if ref.startswith("[]"):
        return {"type": "array", "items": _type_schema(ref[2:], types)}
    if ref.startswith("{}"):
        return {"type": "object", "additionalProperties": _type_schema(ref[2:], types)}
    scalar = _SCALARS.get(ref)
    if scalar is not None:
        return dict(scalar)
    return {"$ref": SCHEMA_REF + types[ref]["schema"]}


def _property(
    owner: str, field: str, ref: str, types: dict[str, TypeEntry], *, root: bool
) -> JsonDict:
    schema = _type_schema(ref, types)
    if "$ref" in schema:
        # OpenAPI 3.0 ignores siblings of $ref, so upstream wraps a described ref in allOf.
        schema = {"allOf": [schema]}
    description = schemadocs.FIELDS.get((owner, field)) or (
        schemadocs.ROOT_FIELDS.get(field) if root else None
    )
    if description:
        schema["description"] = description
    enum = schemadocs.ENUMS.get((owner, field))
    if enum:
        schema["enum"] = list(enum)
    return schema


def _object_schema(entry: TypeEntry, types: dict[str, TypeEntry], *, root: bool) -> JsonDict:
    owner = _short(entry["schema"])
    schema: JsonDict = {
        "type": "object",
        "properties": {
            field: _property(owner, field, ref, types, root=root)
            for field, ref in entry["fields"].items()
        },
    }
    if entry["required"]:
        schema["required"] = list(entry["required"])
    description = schemadocs.TYPES.get(owner)
    if description:
        schema["description"] = description
    return schema


def component_schemas(resources: list[ResourceInfo]) -> JsonDict:
    """The schemas of ``resources`` and every type they reach, keyed by upstream's names.

    Each kind's schema carries ``x-kubernetes-group-version-kind`` as a list, which is
    how ``kubectl explain`` finds it.
    """
    table = upstreamtable.served()
    roots = table.roots
    types = table.types
    schemas: JsonDict = {}
    for info in resources:
        root = roots.get(info.schema_key)
        if root is None:
            continue
        schema = _object_schema(types[root], types, root=True)
        schema["x-kubernetes-group-version-kind"] = [
            {"group": info.group, "kind": info.kind, "version": info.version}
        ]
        schemas[types[root]["schema"]] = schema
        pending = [upstreamtable.element(ref) for ref in types[root]["fields"].values()]
        while pending:
            ref = pending.pop()
            if ref in _SCALARS:
                special = _SPECIAL_OF_SCALAR.get(ref)
                if special:
                    schemas[special] = _SPECIAL_SCHEMAS[special]
                continue
            entry = types[ref]
            if entry["schema"] in schemas:
                continue
            schemas[entry["schema"]] = _object_schema(entry, types, root=False)
            pending.extend(upstreamtable.element(child) for child in entry["fields"].values())
    return dict(sorted(schemas.items()))


def write_paths(info: ResourceInfo) -> JsonDict:
    """A kind's write operations, all kubectl reads: POST on the collection, PUT and PATCH
    on an object (the request body's schema is what ``kubectl apply`` validates against)."""
    prefix = "/" + gv_path(info)
    collection = (
        f"{prefix}/namespaces/{{namespace}}/{info.plural}"
        if info.namespaced
        else f"{prefix}/{info.plural}"
    )
    item_params = [parameter("name", "path", required=True)]
    if info.namespaced:
        item_params.append(parameter("namespace", "path", required=True))
    return {
        collection: {"post": operation(info, "post", "post")},
        f"{collection}/{{name}}": {
            "parameters": item_params,
            "put": operation(info, "put", "put"),
            "patch": operation(info, "patch", "patch"),
        },
    }


def group_version_document(group_version: str, resources: list[ResourceInfo]) -> JsonDict:
    """The OpenAPI document of one group version: create/update/patch per kind, schemas."""
    paths: JsonDict = {}
    for info in resources:
        paths.update(write_paths(info))
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": component_schemas(resources)},
    }


def documents(resources: tuple[ResourceInfo, ...]) -> dict[str, bytes]:
    """Every group-version document, encoded, keyed by ``api/v1`` / ``apis/<g>/<v>``.

    Read-only kinds (the resource metrics) have none: kubectl reads these documents only
    to validate and explain what it writes."""
    by_gv: dict[str, list[ResourceInfo]] = {}
    for info in resources:
        if READ_ONLY_VERBS.issuperset(info.verbs):
            continue
        by_gv.setdefault(gv_path(info), []).append(info)
    return {
        path: json.dumps(
            group_version_document(path, infos), separators=(",", ":"), sort_keys=True
        ).encode()
        for path, infos in by_gv.items()
    }


def index(docs: dict[str, bytes]) -> JsonDict:
    """``/openapi/v3``: each document's URL with a content hash (cache busting)."""
    return {
        "paths": {
            path: {
                "serverRelativeURL": f"/openapi/v3/{path}?hash="
                + hashlib.sha512(body).hexdigest()[:128].upper()
            }
            for path, body in docs.items()
        }
    }
