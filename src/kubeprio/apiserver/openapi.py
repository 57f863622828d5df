"""OpenAPI v3 documents, just enough for kubectl's server-side field validation.

What it is: ``/openapi/v3`` (the index of group versions) and ``/openapi/v3/<gv>`` (one
document per group version), built from ``api.kinds.RESOURCES``. kubectl 1.32 runs
``create -f`` and ``apply -f`` with ``--validate=strict``: it fetches these documents and
looks, per kind, for a PATCH operation tagged with ``x-kubernetes-group-version-kind``
whose parameters include ``fieldValidation``. Found, it sends ``fieldValidation=Strict``
and leaves validation to the server (``apiserver.fieldvalidation``); not found, it falls
back to client-side validation with the protobuf OpenAPI v2, which kubeprio does not
serve, and the command fails (shared/reference/kubectl-wire.md §4).

Deliberately absent: ``requestBody`` content types and component schemas. When a PATCH
operation lists ``application/strategic-merge-patch+json`` kubectl computes its
client-side-apply patches from ``components.schemas``, and an incomplete schema would
produce different patches than the compiled-in Go structs kubectl otherwise uses.
``kubectl explain`` therefore reports that the kind is not in the schema.

Who drives it: ``apiserver.http``. Rules: pure; documents are built once per app.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.model import JsonDict

OPENAPI_VERSION: Final = "3.0.0"


def gv_path(info: ResourceInfo) -> str:
    """``api/v1`` or ``apis/<group>/<version>`` (the key in the v3 index)."""
    return f"apis/{info.group}/{info.version}" if info.group else f"api/{info.version}"


def _parameter(name: str, location: str = "query", *, required: bool = False) -> JsonDict:
    entry: JsonDict = {"name": name, "in": location, "schema": {"type": "string"}}
    if required:
        entry["required"] = True
    return entry


def _operation(info: ResourceInfo, verb: str, action: str) -> JsonDict:
    parameters = [_parameter("dryRun"), _parameter("fieldManager")]
    if verb in ("post", "put", "patch"):
        parameters.append(_parameter("fieldValidation"))
    if verb == "patch":
        parameters.append(_parameter("force"))
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


def group_version_document(group_version: str, resources: list[ResourceInfo]) -> JsonDict:
    """The OpenAPI document of one group version: create/update/patch per kind."""
    paths: JsonDict = {}
    for info in resources:
        prefix = "/" + gv_path(info)
        collection = (
            f"{prefix}/namespaces/{{namespace}}/{info.plural}"
            if info.namespaced
            else f"{prefix}/{info.plural}"
        )
        item_params = [_parameter("name", "path", required=True)]
        if info.namespaced:
            item_params.append(_parameter("namespace", "path", required=True))
        paths[collection] = {"post": _operation(info, "post", "post")}
        paths[f"{collection}/{{name}}"] = {
            "parameters": item_params,
            "put": _operation(info, "put", "put"),
            "patch": _operation(info, "patch", "patch"),
        }
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }


def documents(resources: tuple[ResourceInfo, ...]) -> dict[str, bytes]:
    """Every group-version document, encoded, keyed by ``api/v1`` / ``apis/<g>/<v>``."""
    by_gv: dict[str, list[ResourceInfo]] = {}
    for info in resources:
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
