"""The body of a custom resource write: decoded, pruned, defaulted and validated.

What it is: the parts of v1.32's ``customresource_handler.go`` and
``pkg/registry/customresource`` strategy that turn a request body into the object to
store: the JSON object check and upstream's ``cannot be handled as a`` text; the
``apiVersion``/``kind`` and namespace checks; pruning of fields the schema does not
specify, refused under ``fieldValidation=Strict`` (``strict decoding error: unknown field
"spec.foo"``) and warned under ``Warn``; the schema's defaults; then the validation of the
object about to be written (``api.crvalidation``, the scale paths, the CEL rules).

Who drives it: ``apiserver.crwrites``. Pure functions of their arguments.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import crdcel, errors
from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.crpruning import apply_defaults, prune
from kubeprio.api.crvalidation import validate_custom_object
from kubeprio.api.model import JsonDict
from kubeprio.api.patch import PatchType
from kubeprio.api.validation.meta import validate_object_meta, validate_object_meta_update
from kubeprio.apiserver import crscale, fieldvalidation
from kubeprio.apiserver.crwire import object_json
from kubeprio.apiserver.customresources import CustomVersion
from kubeprio.apiserver.fieldvalidation import FieldValidation
from kubeprio.apiserver.restdecoding import parse_json
from kubeprio.apiserver.restmessages import RestRequest

PATCH_TYPES: Final = {
    PatchType.JSON_PATCH.value: PatchType.JSON_PATCH,
    PatchType.MERGE_PATCH.value: PatchType.MERGE_PATCH,
    PatchType.APPLY_PATCH.value: PatchType.APPLY_PATCH,
}
"""What a custom resource takes (no strategic merge: there is no Go struct to read)."""


def read_body(request: RestRequest, found: CustomVersion) -> tuple[JsonDict, list[str]]:
    """The JSON object of a POST or PUT body, and the keys it repeats."""
    data, duplicates = parse_json(request.body, found.info.kind)
    if not isinstance(data, dict):
        raise errors.bad_request(cannot_handle(found, "object body expected"))
    return data, duplicates


def cannot_handle(found: CustomVersion, detail: str) -> str:
    """Upstream's decoding failure text for a body of ``found``'s kind."""
    info = found.info
    return f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {detail}'


def prepare_body(
    request: RestRequest, found: CustomVersion, data: JsonDict, duplicates: list[str]
) -> tuple[JsonDict, list[str]]:
    """Type, namespace, pruning (per ``fieldValidation``) and defaults of a body."""
    info = found.info
    data = dict(data)
    data.setdefault("apiVersion", info.api_version)
    data.setdefault("kind", info.kind)
    if data["apiVersion"] != info.api_version or data["kind"] != info.kind:
        raise errors.bad_request(
            f"the API version in the data ({data['apiVersion']}) does not match the expected "
            f"API version ({info.api_version})"
            if data["apiVersion"] != info.api_version
            else f"the kind in the data ({data['kind']}) does not match the expected kind ({info.kind})"
        )
    metadata = data.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, dict) else {}
    namespace = request.target.namespace
    if info.namespaced and namespace is not None:
        given = metadata.get("namespace")
        if given and given != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        metadata["namespace"] = namespace
    data["metadata"] = metadata
    pruned, unknown = prune(data, found.schema)
    mode = FieldValidation.parse(request.query.get("fieldValidation"))
    problems = fieldvalidation.strict_problems(
        duplicates, [f'unknown field "{p}"' for p in unknown]
    )
    warnings: list[str] = []
    if problems and mode is FieldValidation.STRICT:
        raise errors.bad_request(cannot_handle(found, fieldvalidation.strict_error(problems)))
    if problems and mode is FieldValidation.WARN:
        warnings = problems
    return apply_defaults(pruned, found.schema), warnings


def validate_written(found: CustomVersion, obj: CustomObject, old: CustomObject | None) -> None:
    """Metadata, schema, scale paths and CEL rules of an object about to be written
    (422 ``Widget.example.com "x" is invalid: ...``); ``old`` for an update."""
    info = found.info
    problems = (
        validate_object_meta(obj.metadata, info)
        if old is None
        else validate_object_meta_update(obj.metadata, old.metadata)
    )
    data = object_json(obj)
    problems += validate_custom_object(data, found.schema)
    if found.scale is not None:
        # customResourceValidator.Validate checks the scale paths before the CEL rules.
        problems += crscale.validate_scale_paths(data, found.scale)
    old_data = object_json(old) if old is not None else None
    problems += crdcel.rule_errors(data, old_data, found.schema, problems)
    if problems:
        name = obj.metadata.name or obj.metadata.generate_name or ""
        raise errors.invalid_error(info.kind, info.group, name, problems)
