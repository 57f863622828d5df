"""Applying a PATCH body to a stored object's JSON, and the checks on what comes out.

What it is: the pure steps of ``ApiService.patch_object`` (``apiserver.servicewrites``)
between reading the object and writing it back. A merge or strategic merge patch changes
each top-level member on its own (RFC 7386 ``MergePatch``, upstream ``mergeMap``), so only
the members it names are encoded, patched and decoded (``top_level_keys``,
``apply_patch_members``); a JSON patch, or a top-level ``$`` directive, patches the whole
document. The patched object must keep the URL's name and namespace (``check_patched_name``),
and a patch failure maps to the Status upstream answers with (``patch_error``).

Who drives it: ``apiserver.servicewrites``. No store access, no clock.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api import patch as patching
from kubeprio.api.jsonpatch import cannot_unmarshal
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.meta import ObjectMeta, StatusDetails
from kubeprio.api.model import JsonDict, evolve
from kubeprio.client.protocol import PatchType


def check_patched_name(obj: Any, info: ResourceInfo, name: str, namespace: str) -> Any:
    """``checkName`` + ``EnsureObjectNamespaceMatchesRequestNamespace`` for a patched object.

    The object must keep the name on the URL (400 otherwise); an emptied namespace is
    filled in from the request, a different one is a 400.
    """
    meta: ObjectMeta = obj.metadata
    if (meta.name or "") != name:
        raise errors.bad_request(
            f"the name of the object ({meta.name or ''}) does not match the name on the URL ({name})"
        )
    if info.namespaced:
        if not meta.namespace:
            return evolve(obj, metadata=evolve(meta, namespace=namespace))
        if meta.namespace != namespace:
            raise errors.bad_request(
                f"the namespace of the object ({meta.namespace}) does not match the namespace on "
                f"the request ({namespace})"
            )
    return obj


def top_level_keys(patch: object, patch_type: PatchType | str) -> frozenset[str] | None:
    """The top-level keys a merge or strategic merge patch can change, or None when it may
    change anything (a JSON patch, or a top-level ``$`` directive such as ``$retainKeys``)."""
    if patch_type not in (
        PatchType.MERGE_PATCH,
        PatchType.STRATEGIC_MERGE_PATCH,
        PatchType.APPLY_PATCH,
    ) or not isinstance(patch, dict):
        return None
    if any(key.startswith("$") for key in patch):
        return None
    return frozenset(patch)


def apply_patch_members(
    document: JsonDict,
    patch: object,
    patch_type: PatchType | str,
    kind: str,
    touched: frozenset[str] | None,
) -> JsonDict:
    """``patching.apply_patch`` on ``document``; with ``touched`` known, only those top-level
    members are copied and patched (both patch kinds merge each top-level key on its own),
    the others are passed through untouched, in the same key order."""
    if touched is None:
        return patching.apply_patch(document, patch, patch_type=patch_type, kind=kind)
    part = {key: value for key, value in document.items() if key in touched}
    patched_part = patching.apply_patch(part, patch, patch_type=patch_type, kind=kind)
    result: JsonDict = {}
    for key, value in document.items():
        if key not in touched:
            result[key] = value
        elif key in patched_part:
            result[key] = patched_part[key]
    for key, value in patched_part.items():
        if key not in result:
            result[key] = value
    return result


REJECTED_PATCH: Final = "the server rejected our request due to an error in our request"
"""``NewGenericServerResponse``'s text for a 422: what upstream answers, and all kubectl
shows ("The request is invalid: ..."), when a well-formed patch does not apply."""


def patch_error(exc: patching.PatchError, info: ResourceInfo, name: str) -> errors.StatusError:
    """Map a patch failure to the Status upstream answers with.

    * 415 for an unknown patch type, 400 for a malformed patch (its own text);
    * a strategic merge error that upstream's ``interpretStrategicMergePatchError`` passes
      on as a plain Go error (``exc.plain``: a missing merge key, an unknown directive...)
      is a 500 with its text and no reason: kubectl prints "Error from server: <text>";
    * any other patch that does not apply (a JSON patch operation, or a list of lists) is
      ``NewGenericServerResponse(422)``, as ``applyJSPatch`` and
      ``interpretStrategicMergePatchError`` answer: reason Invalid, empty details, and the
      generic text, the operation's own error dropped.
    """
    if exc.code == errors.UnsupportedMediaTypeError.code:
        return errors.UnsupportedMediaTypeError.build(str(exc))
    if exc.plain:
        return errors.plain_error(str(exc))
    if exc.code == errors.InvalidError.code:
        return errors.InvalidError.build(REJECTED_PATCH, details=StatusDetails())
    return errors.bad_request(str(exc))


def decoding_error(
    patch: object, patch_type: PatchType | str, strict_decoding: bool
) -> errors.StatusError | None:
    """``applyJSPatch``'s strict decode of a JSON or merge patch (``fieldValidation`` Warn,
    the default, or Strict): a body of the wrong shape is a 400 "error decoding patch: ..."
    naming the Go type it was decoded into (None when it fits, or the patch is another type
    or decoded leniently)."""
    if not strict_decoding:
        return None
    if patch_type == PatchType.JSON_PATCH:
        if not isinstance(patch, list):
            return errors.bad_request(
                f"error decoding patch: {cannot_unmarshal(patch, '[]handlers.jsonPatchOp')}"
            )
        for op in patch:
            if not isinstance(op, dict):
                return errors.bad_request(
                    f"error decoding patch: {cannot_unmarshal(op, 'handlers.jsonPatchOp')}"
                )
    elif patch_type == PatchType.MERGE_PATCH and not isinstance(patch, dict):
        go_type = "map[string]interface {}"
        return errors.bad_request(f"error decoding patch: {cannot_unmarshal(patch, go_type)}")
    return None
