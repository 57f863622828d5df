"""The ``scale`` subresource of custom resources: an autoscaling/v1 ``Scale`` read from and
written to the paths the CRD names.

Mirrors v1.32's ``apiextensions-apiserver/pkg/registry/customresource/etcd.go``
(``ScaleREST``, ``scaleFromCustomResource``, ``scaleUpdatedObjectInfo``) and
``validator.go`` (``ValidateScaleSpec``, ``ValidateScaleStatus``):

* the Scale's ``spec.replicas`` is the integer at ``specReplicasPath``, its
  ``status.replicas`` the one at ``statusReplicasPath`` (0 when absent), its
  ``status.selector`` the string at ``labelSelectorPath`` (when declared); name,
  namespace, uid, resourceVersion and creationTimestamp are the object's;
* a GET of an object without a value at ``specReplicasPath`` is a 500 (``the spec
  replicas field ".spec.replicas" does not exist``); a value of the wrong type is the
  accessor error (``.spec.replicas accessor error: x is of the type string, expected
  int64``);
* a PUT sets the value at ``specReplicasPath`` (creating missing maps on the way) and
  writes the object through its normal update (schema validation, resourceVersion
  precondition when the Scale carries one); a PATCH applies to the current Scale, and
  when the object had no replicas and the patch sets none it is a 400 (``the spec
  replicas field ".spec.replicas" cannot be empty``);
* every write of an object whose CRD declares the subresource checks the paths'
  values (``.spec.replicas: Invalid value: -1: should be a non-negative integer``; the
  field path keeps the leading dot, as upstream's ``field.NewPath(path)``).

Admission sees a write as one of these Scales (``apiserver.crscaleadmission``).

Who drives it: ``apiserver.crwrites``, ``apiserver.crbodies`` and
``apiserver.crscaleadmission``. Pure functions of their arguments (and the request).
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors, gotext
from kubeprio.api.apiextensions import CustomResourceSubresourceScale
from kubeprio.api.apps import Scale, ScaleSpec, ScaleStatus
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict

INT32_MAX: Final = 2**31 - 1
UNSET_REPLICAS: Final = -(2**31)
"""``invalidSpecReplicas``: the replicas of the Scale a patch starts from when the
object has none (a patch that sets none leaves it, and is refused)."""


class ScalePathError(Exception):
    """A path's value is not of the type the Scale needs (``NestedInt64``'s error)."""


def split_path(path: str) -> list[str]:
    """``splitReplicasPath``: ``.spec.replicas`` -> ``["spec", "replicas"]``."""
    return path.removeprefix(".").split(".")


def _go_type(value: object) -> str:
    """Go's ``%T`` of a decoded JSON value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return "<nil>"


def _nested(document: JsonDict, fields: list[str], expected: str) -> tuple[Any, bool]:
    """``NestedFieldNoCopy`` plus the type check of ``NestedInt64``/``NestedString``."""
    value: Any = document
    for index, field in enumerate(fields):
        if not isinstance(value, dict):
            path = "." + ".".join(fields[:index])
            raise ScalePathError(
                f"{path} accessor error: {gotext.go_value(value)} is of the type {_go_type(value)}, "
                "expected map[string]interface{}"
            )
        if field not in value:
            return None, False
        value = value[field]
    wanted = int if expected == "int64" else str
    if not isinstance(value, wanted) or isinstance(value, bool):
        raise ScalePathError(
            f"{'.' + '.'.join(fields)} accessor error: {gotext.go_value(value)} is of the type "
            f"{_go_type(value)}, expected {expected}"
        )
    return value, True


def nested_int(document: JsonDict, path: str) -> tuple[int, bool]:
    """The integer at ``path`` and whether it is there (0 when not)."""
    value, found = _nested(document, split_path(path), "int64")
    return (value if found else 0), found


def nested_string(document: JsonDict, path: str) -> str:
    """The string at ``path`` (``""`` when not there)."""
    value, found = _nested(document, split_path(path), "string")
    return value if found else ""


def scale_of(document: JsonDict, paths: CustomResourceSubresourceScale) -> tuple[Scale, bool]:
    """``scaleFromCustomResource``: the Scale view, and whether spec replicas were set."""
    spec_replicas, found = nested_int(document, paths.spec_replicas_path or "")
    status_replicas, _ = nested_int(document, paths.status_replicas_path or "")
    selector = (
        nested_string(document, paths.label_selector_path) if paths.label_selector_path else ""
    )
    metadata = document.get("metadata") or {}
    return (
        Scale(
            metadata=ObjectMeta(
                name=metadata.get("name"),
                namespace=metadata.get("namespace"),
                uid=metadata.get("uid"),
                resource_version=metadata.get("resourceVersion"),
                creation_timestamp=metadata.get("creationTimestamp"),
            ),
            # ``spec.replicas`` and ``status.selector`` are omitempty on the wire.
            spec=ScaleSpec(replicas=spec_replicas or None),
            status=ScaleStatus(replicas=status_replicas, selector=selector or None),
        ),
        found,
    )


def stored_scale(document: JsonDict, paths: CustomResourceSubresourceScale) -> tuple[Scale, bool]:
    """``scale_of`` on a stored object: a mistyped path is the server's fault (a 500)."""
    try:
        return scale_of(document, paths)
    except ScalePathError as exc:
        raise errors.internal_error(str(exc)) from None


def read_scale(document: JsonDict, paths: CustomResourceSubresourceScale) -> Scale:
    """``ScaleREST.Get``: the Scale, or a 500 when spec replicas are absent or mistyped."""
    scale, found = stored_scale(document, paths)
    if not found:
        raise errors.internal_error(
            f'the spec replicas field "{paths.spec_replicas_path}" does not exist'
        )
    return scale


def scale_to_patch(document: JsonDict, paths: CustomResourceSubresourceScale) -> Scale:
    """The Scale a PATCH applies to: replicas ``UNSET_REPLICAS`` when the object has none."""
    scale, found = stored_scale(document, paths)
    if not found:
        scale = Scale(
            metadata=scale.metadata, spec=ScaleSpec(replicas=UNSET_REPLICAS), status=scale.status
        )
    return scale


def with_replicas(
    document: JsonDict, scale: Scale, paths: CustomResourceSubresourceScale
) -> JsonDict:
    """``scaleUpdatedObjectInfo.UpdatedObject``: a copy of the object with the Scale's
    replicas at ``specReplicasPath`` and its resourceVersion, when given, as the
    precondition."""
    spec_path = paths.spec_replicas_path or ""
    replicas = scale.spec.replicas if scale.spec is not None else None
    if replicas == UNSET_REPLICAS:
        raise errors.bad_request(f'the spec replicas field "{spec_path}" cannot be empty')
    updated = _set_nested(document, split_path(spec_path), replicas or 0, [])
    if scale.metadata.resource_version:
        metadata = dict(updated.get("metadata") or {})
        metadata["resourceVersion"] = scale.metadata.resource_version
        updated["metadata"] = metadata
    return updated


def _set_nested(document: JsonDict, fields: list[str], value: int, walked: list[str]) -> JsonDict:
    """``SetNestedField`` on copies: missing steps become empty maps; a step that is not
    a map is upstream's error (a 500 from the update)."""
    copy = dict(document)
    field = fields[0]
    if len(fields) == 1:
        copy[field] = value
        return copy
    inner = copy.get(field, {})
    if not isinstance(inner, dict):
        path = "." + ".".join([*walked, field])
        raise errors.internal_error(
            f"value cannot be set because {path} is not a map[string]interface{{}}"
        )
    copy[field] = _set_nested(inner, fields[1:], value, [*walked, field])
    return copy


def _check_count(document: JsonDict, path: str) -> list[errors.FieldError]:
    try:
        count, _ = nested_int(document, path)
    except ScalePathError as exc:
        return [errors.invalid(path, 0, str(exc))]
    if count < 0:
        return [errors.invalid(path, count, "should be a non-negative integer")]
    if count > INT32_MAX:
        return [errors.invalid(path, count, f"should be less than or equal to {INT32_MAX}")]
    return []


def validate_scale_paths(
    document: JsonDict, paths: CustomResourceSubresourceScale
) -> list[errors.FieldError]:
    """``ValidateScaleSpec`` and ``ValidateScaleStatus`` of an object being written."""
    found = _check_count(document, paths.spec_replicas_path or "")
    found += _check_count(document, paths.status_replicas_path or "")
    selector_path = paths.label_selector_path
    if selector_path:
        try:
            nested_string(document, selector_path)
        except ScalePathError as exc:
            found.append(errors.invalid(selector_path, "", str(exc)))
    return found
