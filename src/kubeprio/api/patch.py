"""PATCH for the API service: the four content types, and one call that applies a body.

What it is: the facade over the patch modules. ``PatchType`` names the content types,
and ``apply_patch`` applies a decoded body to a stored object and returns a new one:

- ``application/json-patch+json``: RFC 6902 (``jsonpatch.apply_json_patch``);
- ``application/merge-patch+json``: RFC 7386 (``jsonpatch.apply_merge_patch``);
- ``application/strategic-merge-patch+json``: Kubernetes strategic merge patch
  (``strategicpatch.apply_strategic_merge_patch``);
- ``application/apply-patch+yaml`` (server-side apply), **simplified**: the applied
  object is merged onto the live one as if it were a strategic merge patch. Fields it sets
  replace, lists with a merge key merge by key, and finalizers merge as a set. There is no
  field ownership (managedFields), so fields dropped from the applied configuration are
  not removed and conflicts are never reported (``force`` has nothing to do).

The pieces are re-exported here, so callers import from ``kubeprio.api.patch`` alone.

Who drives it: the API service's patch verb loads the stored object, calls
``apply_patch``, then validates, defaults and stores the result. It creates the object
when an apply finds none. The HTTP adapter parses the body (JSON, or YAML for apply) and
strips parameters such as ``; charset=utf-8`` from the content type before calling.

Rules: pure, with no I/O. Inputs are never mutated, and a failure raises ``PatchError``
(``code`` 400, 415 or 422) with the stored object untouched.
"""

from __future__ import annotations

import enum

from kubeprio.api.jsonpatch import (
    JsonDict,
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    cannot_unmarshal,
)
from kubeprio.api.strategicdiff import create_two_way_merge_patch
from kubeprio.api.strategicpatch import apply_strategic_merge_patch

__all__ = [
    "JsonDict",
    "PatchError",
    "PatchType",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_patch",
    "apply_strategic_merge_patch",
    "create_two_way_merge_patch",
]


class PatchType(enum.StrEnum):
    """The PATCH content types, as in k8s.io/apimachinery/pkg/types ``PatchType``."""

    JSON_PATCH = "application/json-patch+json"
    MERGE_PATCH = "application/merge-patch+json"
    STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
    APPLY_PATCH = "application/apply-patch+yaml"


def apply_patch(
    doc: JsonDict, patch: object, *, patch_type: PatchType | str, kind: str
) -> JsonDict:
    """Apply a decoded PATCH body of ``patch_type`` to ``doc``, an object of ``kind``.

    ``kind`` selects the strategic-merge table and is ignored by the other types.
    An unknown ``patch_type`` is a 415. Server-side apply is approximated as the module
    docstring says.
    """
    if patch_type == PatchType.JSON_PATCH:
        return apply_json_patch(doc, patch)
    if patch_type == PatchType.MERGE_PATCH:
        return apply_merge_patch(doc, patch)
    if patch_type in (PatchType.STRATEGIC_MERGE_PATCH, PatchType.APPLY_PATCH):
        if not isinstance(patch, dict):
            raise PatchError(cannot_unmarshal(patch, "map[string]interface {}"), code=400)
        return apply_strategic_merge_patch(doc, patch, kind=kind)
    raise PatchError(f"unsupported patch type: {patch_type}", code=415)
