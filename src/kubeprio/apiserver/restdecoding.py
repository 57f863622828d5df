"""Request decoding for the REST verbs: a request body to the object (or patch) it carries.

What it is: the steps of upstream's handlers (``staging/src/k8s.io/apiserver/pkg/
endpoints/handlers/create.go``, ``update.go``, ``patch.go``, ``delete.go``) between
reading the body and calling ``ApiService``, in upstream's words:

* bodies: JSON (also without a Content-Type), YAML, or Kubernetes protobuf
  (``apiserver.protobuf``); any other media type is a 415;
* a body whose version and kind cannot be read is a 400 (``apiserver.decodeerrors``),
  malformed JSON a 400 with Go's syntax error, a decode failure a 400
  ``Pod in version "v1" cannot be handled as a Pod: ...``;
* strict field validation (``fieldValidation``, ``apiserver.fieldvalidation``);
* the URL's name and namespace: an empty ``metadata.namespace`` is filled in, a
  different one (or name) is a 400;
* the patch type from the Content-Type, apply bodies as JSON or YAML, and the
  ``DeleteOptions`` of a DELETE (query parameters win over the body).

Who drives it: the REST handlers (``apiserver.rest``, ``restreads``, ``restwrites``,
``restsubresources``). Pure: no store access, no HTTP imports.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from kubeprio.api import errors, gojson
from kubeprio.api.manifest import ManifestError, load_yaml
from kubeprio.api.meta import DeleteOptions
from kubeprio.api.model import JsonDict
from kubeprio.api.patch import PatchType
from kubeprio.api.serialization import DecodeError, from_dict
from kubeprio.apiserver import decodeerrors, fieldvalidation, protobuf
from kubeprio.apiserver.fieldvalidation import FieldValidation
from kubeprio.apiserver.negotiation import dry_run, integer, media_type
from kubeprio.apiserver.patchapply import decoding_error
from kubeprio.apiserver.restmessages import RestRequest, to_storage
from kubeprio.client.protocol import DeleteRequest

PATCH_MEDIA_TYPES: Final = {member.value: member for member in PatchType}
JSON_TYPE: Final = "application/json"
YAML_TYPE: Final = "application/yaml"
OBJECT_MEDIA_TYPES: Final = (JSON_TYPE, YAML_TYPE, protobuf.CONTENT_TYPE)
"""What upstream decodes an object body from (CBOR is behind a feature gate in 1.32)."""


def _unsupported_media_type(accepted: Iterable[str]) -> errors.StatusError:
    """Upstream's 415 for a body of a media type the endpoint does not take."""
    return errors.UnsupportedMediaTypeError.build(
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted)
    )


def parse_body(request: RestRequest, kind: str) -> tuple[Any, list[str]]:
    """The decoded object body (of a ``kind``) and its duplicate-key problems: JSON
    (also without a Content-Type, as upstream takes the first supported type), YAML or
    protobuf; anything else is upstream's 415. A body whose version and kind cannot be
    read is upstream's 400 (``apiserver.decodeerrors``)."""
    content_type = media_type(request.content_type)
    if content_type == YAML_TYPE:
        data: Any = _parse_yaml(request.body)
        duplicates: list[str] = []
    elif content_type == protobuf.CONTENT_TYPE:
        return protobuf.decode(request.body), []
    elif content_type not in ("", JSON_TYPE):
        raise _unsupported_media_type(OBJECT_MEDIA_TYPES)
    else:
        data, duplicates = parse_json(request.body, kind)
    cause = decodeerrors.interpret_cause(data)
    if cause is not None:
        raise decodeerrors.unrecognized(kind, cause, request.body)
    # A null body reads as an empty object, as Go unmarshals null into one.
    return ({} if data is None else data), duplicates


def read_object(
    request: RestRequest,
    model: type[Any],
    *,
    expect_name: bool,
    api_version: str | None = None,
) -> tuple[Any, list[str]]:
    """Decode the body of a create or update into ``model`` (the target's kind)."""
    info = request.target.info
    expected = api_version or info.api_version
    kind = model.__name__
    version = expected.rsplit("/", 1)[-1]
    cannot = f'{kind} in version "{version}" cannot be handled as a {kind}'
    data, duplicates = parse_body(request, kind)
    converted = model is info.model and bool(info.storage_version)
    data, warnings = validate_fields(
        request,
        info.schema_key if converted else kind,
        data,
        duplicates,
        prefix=f"{cannot}: ",
    )
    given = data.get("apiVersion")
    if given and given != expected:
        raise errors.bad_request(
            f"the API version in the data ({given}) does not match the expected "
            f"API version ({expected})"
        )
    if data.get("kind") and data["kind"] != kind:
        raise errors.bad_request(
            f"{cannot}: the object provided is unrecognized (must be of type {kind})"
        )
    data = fill_metadata(request, data, expect_name=expect_name)
    if converted:
        data = to_storage(info, data)
    try:
        obj = from_dict(model, data)
    except DecodeError as exc:
        raise errors.bad_request(f"{cannot}: {exc.message}") from exc
    return obj, warnings


def validate_fields(
    request: RestRequest,
    kind: str,
    data: JsonDict,
    duplicates: list[str],
    *,
    prefix: str,
    patch: bool = False,
) -> tuple[JsonDict, list[str]]:
    """Unknown and duplicate fields per ``fieldValidation``: a 400 (Strict), warnings
    (Warn) or nothing (Ignore); unknown fields are pruned unless Strict refused them."""
    mode = FieldValidation.parse(request.query.get("fieldValidation"))
    pruned, unknown = fieldvalidation.check(kind, data, patch=patch)
    problems = fieldvalidation.strict_problems(duplicates, unknown)
    if not problems:
        return data, []
    if mode is FieldValidation.STRICT:
        raise errors.bad_request(prefix + fieldvalidation.strict_error(problems))
    return pruned, problems if mode is FieldValidation.WARN else []


def fill_metadata(request: RestRequest, data: JsonDict, *, expect_name: bool) -> JsonDict:
    """The URL's namespace in ``metadata`` (a different one is a 400); with ``expect_name``
    the body must name the URL's object."""
    target = request.target
    metadata = data.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        return data  # the decoder reports the type error
    metadata = dict(metadata)
    namespace = metadata.get("namespace") or ""
    if target.info.namespaced:
        if namespace and target.namespace and namespace != target.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent "
                "on the request"
            )
        metadata["namespace"] = target.namespace or namespace
    else:
        metadata.pop("namespace", None)
    if expect_name:
        name = metadata.get("name") or ""
        if name != target.name:
            raise errors.bad_request(
                f"the name of the object ({name}) does not match the name on the URL "
                f"({target.name})"
            )
    return {**data, "metadata": metadata}


def parse_apply_body(request: RestRequest) -> tuple[Any, list[str]]:
    """An apply body: JSON (what kubectl sends) or YAML."""
    try:
        return fieldvalidation.parse_json(request.body)
    except (ValueError, UnicodeDecodeError):
        return _parse_yaml(request.body), []


def parse_patch_body(request: RestRequest, patch_type: PatchType) -> tuple[Any, list[str]]:
    """A JSON, merge or strategic merge patch body. Under ``fieldValidation`` Warn (the
    default) or Strict, upstream's ``applyJSPatch`` first decodes a JSON or merge patch
    strictly into its Go type, so a body that is not JSON, or not that shape, is a 400
    "error decoding patch: ..." (``patchapply.decoding_error``)."""
    strict = patch_type in (PatchType.JSON_PATCH, PatchType.MERGE_PATCH) and (
        FieldValidation.parse(request.query.get("fieldValidation")) is not FieldValidation.IGNORE
    )
    try:
        body, duplicates = parse_json(request.body)
    except errors.BadRequestError as exc:
        if not strict:
            raise
        raise errors.bad_request(f"error decoding patch: {exc.message}") from exc
    shape = decoding_error(body, patch_type, strict)
    if shape is not None:
        raise shape
    return body, duplicates


def patch_type_of(request: RestRequest) -> PatchType:
    """The patch type the Content-Type names; any other is upstream's 415."""
    content_type = media_type(request.content_type)
    patch_type = PATCH_MEDIA_TYPES.get(content_type)
    if patch_type is None:
        raise _unsupported_media_type(PATCH_MEDIA_TYPES)
    return patch_type


def delete_options(request: RestRequest) -> DeleteRequest:
    """A DELETE's options: its ``DeleteOptions`` body, whatever its content type, with the
    query's ``gracePeriodSeconds``, ``propagationPolicy`` and ``dryRun`` over it."""
    options = DeleteOptions()
    if request.body.strip():
        # Upstream's DeleteResource hands the decoder's error to scope.err as it is: a
        # plain Go error, so a malformed or mistyped body is a 500 with no reason
        # (``Error from server: json: ...``), not the 400 bodies of other verbs get.
        try:
            data = json.loads(request.body)
        except ValueError as exc:
            raise errors.plain_error(gojson.syntax_error(request.body) or str(exc)) from exc
        try:
            options = from_dict(DeleteOptions, data)
        except DecodeError as exc:
            raise errors.plain_error(exc.message) from exc
    query = request.query
    grace = integer(query, "gracePeriodSeconds")
    if grace is None:
        grace = options.grace_period_seconds
    propagation = query.get("propagationPolicy") or options.propagation_policy
    if options.orphan_dependents is not None and not propagation:
        # The legacy flag: true orphans, an explicit false deletes in the background.
        propagation = "Orphan" if options.orphan_dependents else "Background"
    is_dry_run = dry_run(query) or bool(options.dry_run and "All" in options.dry_run)
    return DeleteRequest(
        grace_period_seconds=grace,
        preconditions=options.preconditions,
        propagation_policy=propagation,
        dry_run=is_dry_run,
    )


def read_subresource(
    request: RestRequest, model: type[Any], *, name_from_body: bool = False
) -> tuple[Any, list[str]]:
    """The body of a ``pods/binding`` or ``pods/eviction`` POST, named as the URL (or, for
    the legacy ``bindings`` collection, naming the pod itself)."""
    target = request.target
    kind = model.__name__
    cannot = f'{kind} in version "v1" cannot be handled as a {kind}'
    data, duplicates = parse_body(request, kind)
    data, warnings = validate_fields(request, kind, data, duplicates, prefix=f"{cannot}: ")
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    name = (metadata or {}).get("name") or ""
    if not name_from_body and name != target.name:
        raise errors.bad_request(f"name in URL does not match name in {kind} object")
    namespace = (metadata or {}).get("namespace") or ""
    if namespace and namespace != target.namespace:
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    data = {**data, "metadata": {**(metadata or {}), "namespace": target.namespace}}
    try:
        return from_dict(model, data), warnings
    except DecodeError as exc:
        raise errors.bad_request(f"{cannot}: {exc.message}") from exc


def parse_json(body: bytes, kind: str | None = None) -> tuple[Any, list[str]]:
    """A JSON body (an object, or a patch already matched to its patch type) and its
    duplicate-key problems; malformed JSON is a 400 (``_json_failure``)."""
    try:
        return fieldvalidation.parse_json(body)
    except UnicodeDecodeError:
        # Go's decoder takes invalid UTF-8 inside strings as U+FFFD; Python's refuses it.
        text = body.decode("utf-8", "replace")
    except ValueError as exc:
        raise _json_failure(body, exc, kind) from exc
    try:
        return fieldvalidation.parse_json(text)
    except ValueError as exc:
        raise _json_failure(body, exc, kind) from exc


def _parse_yaml(body: bytes) -> Any:
    """A YAML body's one document as it loads (any type: the caller judges it)."""
    try:
        loaded = load_yaml(body.decode(), "request body")
    except (ManifestError, UnicodeDecodeError) as exc:
        raise errors.bad_request(str(exc)) from exc
    documents = [document for document in loaded if document is not None]
    if len(documents) > 1:
        raise errors.bad_request("error decoding YAML: expected one document")
    return documents[0] if documents else {}


def unmarshal_type_error(value: object, kind: str) -> str:
    """Go's ``json: cannot unmarshal ...`` for a body that is not an object."""
    shown = {list: "array", str: "string", bool: "bool", int: "number", float: "number"}.get(
        type(value), "value"
    )
    return f"json: cannot unmarshal {shown} into Go value of type v1.{kind}"


def _json_failure(body: bytes, exc: Exception, kind: str | None) -> errors.StatusError:
    """A body Python's decoder refused, in upstream's words: Go's syntax error (scanned
    only now, so correct bodies never pay for it), wrapped as ``transformDecodeError``
    words it when the body should be an object of ``kind``."""
    syntax = gojson.syntax_error(body)
    if syntax is not None and kind is not None:
        return decodeerrors.unrecognized(kind, decodeerrors.parse_cause(syntax), body)
    return errors.bad_request(syntax or str(exc))
