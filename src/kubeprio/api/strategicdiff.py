"""Building a two-way strategic merge patch: the change from one JSON object to another.

What it is: ``create_two_way_strategic_merge_patch``, which does for built-in kinds what
``CreateTwoWayMergePatch`` in k8s.io/apimachinery/pkg/util/strategicpatch/patch.go does
(``diffMaps``, ``handleSliceDiff``, ``diffLists``), reading the same struct-tag table as
``api.strategicpatch`` applies patches with (``strategicpatch.patch_schema``):

* a member only ``original`` has becomes null; one only ``modified`` has is sent whole;
* maps are diffed member by member, unless the field is ``patchStrategy: replace``;
* a merged list of maps (``patchMergeKey``) sends the elements that are new or changed
  (a changed one as its diff plus its key), ``{"$patch": "delete", <key>: v}`` for each
  element gone, and ``$setElementOrder/<field>`` (every element's key, in the new order)
  when anything in it changed or moved;
* a merged list of scalars (``finalizers``) sends the additions, the removals under
  ``$deleteFromPrimitiveList/<field>`` and the new order under ``$setElementOrder``;
* every other value is sent whole when it changed.

With no struct tags (``create_two_way_merge_patch``) the same diff is RFC 7386's two-way
merge patch. Equal documents give ``{}``. Used by clients that write the way upstream's
components do, with a patch computed from the object read and the object wanted (the
kubelet's Node status: ``client.nodestatuspatch``), so that a concurrent writer of other
fields never makes them conflict. Pure: no I/O; the inputs are never mutated.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.jsonpatch import JsonDict, PatchError, identical, json_copy
from kubeprio.api.strategicpatch import PatchMeta, patch_schema

__all__ = ["create_two_way_merge_patch", "create_two_way_strategic_merge_patch"]

_MISSING: Final = object()
_PATCH: Final = "$patch"
_SET_ORDER: Final = "$setElementOrder"
_DELETE_FROM: Final = "$deleteFromPrimitiveList"


def create_two_way_strategic_merge_patch(
    original: JsonDict, modified: JsonDict, *, kind: str
) -> JsonDict:
    """The strategic merge patch that turns ``original`` into ``modified`` (objects of
    ``kind``), as ``CreateTwoWayMergePatch`` builds it."""
    return _diff_maps(original, modified, patch_schema(kind))


def create_two_way_merge_patch(original: JsonDict, modified: JsonDict) -> JsonDict:
    """Return the RFC 7386 merge patch that turns ``original`` into ``modified``.

    The strategic diff of a type without struct tags: objects are diffed member by
    member; every other changed value (arrays included) is sent whole, and a removed
    member becomes null. As RFC 7386 says, an object member whose value is null in
    ``modified`` cannot be expressed and comes out removed.
    """
    return _diff_maps(original, modified, PatchMeta())


def _diff_maps(original: JsonDict, modified: JsonDict, meta: PatchMeta) -> JsonDict:
    patch: JsonDict = {key: None for key in original if key not in modified}
    for key, new in modified.items():
        old = original.get(key, _MISSING)
        if old is _MISSING:
            patch[key] = json_copy(new)
            continue
        child = meta.fields.get(key)
        if isinstance(old, dict) and isinstance(new, dict) and not (child and child.replace):
            nested = _diff_maps(old, new, child or PatchMeta())
            if nested:
                patch[key] = nested
        elif isinstance(old, list) and isinstance(new, list) and child and child.merge:
            if not identical(old, new):
                _diff_merged_list(patch, key, old, new, child)
        elif not identical(old, new):
            patch[key] = json_copy(new)
    return patch


def _diff_merged_list(
    patch: JsonDict, key: str, old: list[object], new: list[object], meta: PatchMeta
) -> None:
    """``handleSliceDiff`` of a ``patchStrategy: merge`` list: fill ``patch`` in place."""
    if meta.merge_key:
        changes, order = _diff_lists_of_maps(old, new, meta)
    else:
        changes, deletions = _diff_lists_of_scalars(old, new)
        if deletions:
            patch[f"{_DELETE_FROM}/{key}"] = deletions
        order = json_copy(new)
    if changes:
        patch[key] = changes
    if order:
        patch[f"{_SET_ORDER}/{key}"] = order


def _diff_lists_of_maps(
    old: list[object], new: list[object], meta: PatchMeta
) -> tuple[list[object], list[object]]:
    """``diffListsOfMaps``: the new and changed elements in the new order, then a delete
    directive per element gone; and the ``$setElementOrder`` list (empty when nothing
    changed and nothing moved)."""
    merge_key = meta.merge_key
    old_keys = [_key_of(item, merge_key) for item in old]
    old_by_key = dict(zip(old_keys, old, strict=True))
    new_keys = [_key_of(item, merge_key) for item in new]
    changes: list[object] = []
    for item_key, item in zip(new_keys, new, strict=True):
        assert isinstance(item, dict)
        before = old_by_key.get(item_key, _MISSING)
        if before is _MISSING:
            changes.append(json_copy(item))
            continue
        assert isinstance(before, dict)
        nested = _diff_maps(before, item, meta)
        if nested:
            changes.append({**nested, merge_key: json_copy(item[merge_key])})
    kept = set(new_keys)
    for item_key, item in old_by_key.items():
        if item_key not in kept:
            assert isinstance(item, dict)
            changes.append({_PATCH: "delete", merge_key: json_copy(item[merge_key])})
    moved = old_keys != new_keys
    if not changes and not moved:
        return changes, []
    order: list[object] = [
        {merge_key: json_copy(item[merge_key])} for item in new if isinstance(item, dict)
    ]
    return changes, order


def _diff_lists_of_scalars(
    old: list[object], new: list[object]
) -> tuple[list[object], list[object]]:
    """``diffListsOfScalars``: the additions (new order) and the removals."""
    old_set = {_scalar_key(item) for item in old}
    new_set = {_scalar_key(item) for item in new}
    additions = [item for item in new if _scalar_key(item) not in old_set]
    removals = [item for item in old if _scalar_key(item) not in new_set]
    return additions, removals


def _key_of(item: object, merge_key: str) -> str:
    """The merge key's value of a list element, as a comparable text."""
    if not isinstance(item, dict) or merge_key not in item:
        raise PatchError(f"map: {item} does not contain declared merge key: {merge_key}")
    return _scalar_key(item[merge_key])


def _scalar_key(value: object) -> str:
    return f"{type(value).__name__}:{value}"
