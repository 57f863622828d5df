"""PATCH semantics over plain JSON documents: merge patch, JSON patch, strategic merge patch.

What it is: pure functions that apply the bodies of the four PATCH content types to a
JSON object (``dict``) and return a new one, plus a plain merge-patch diff for clients
and tests:

- ``apply_merge_patch``: RFC 7386 (``application/merge-patch+json``).
- ``apply_json_patch``: RFC 6902 with RFC 6901 pointers (``application/json-patch+json``);
  the error texts follow gopkg.in/evanphx/json-patch.v4, which the apiserver uses.
- ``apply_strategic_merge_patch``: what ``StrategicMergeMapPatch`` in
  k8s.io/apimachinery/pkg/util/strategicpatch/patch.go does for built-in kinds, driven by
  a table of the ``patchStrategy``/``patchMergeKey`` struct tags of k8s.io/api.
- ``apply_patch``: dispatch on ``PatchType``. ``application/apply-patch+yaml`` is
  **simplified**: the applied object is merged onto the live one as if it were a strategic
  merge patch (fields it sets replace, lists with a merge key merge by key, finalizers merge
  as a set). There is no field ownership, so fields dropped from the applied configuration
  are not removed and conflicts are never reported.
- ``create_two_way_merge_patch``: the RFC 7386 diff of two documents.

Who drives it: the API service's patch verb, which loads the stored object, applies the
body here, then validates and stores the result; clients and tests build patches with the
diff. Callers parse the body (JSON or YAML) first; nothing here does I/O or imports beyond
the standard library and ``kubeprio.errors``.

Guarantee: inputs are never mutated and results share no containers with them. Every
public function deep-copies first, so the store's copy stays intact when a patch fails
halfway. Every failure is a ``PatchError`` whose ``code`` is the HTTP status upstream
answers with: 400 when the patch is malformed, 422 when it does not apply.

Strategic merge in brief (directives come from the patch, never from the stored object):

- ``{"$patch": "replace", ...}`` in a map replaces the map; ``{"$patch": "delete"}``
  empties it. Upstream rejects ``"merge"`` in a map, and so does this module.
- In a list with a merge key, ``{"$patch": "delete", <key>: v}`` removes the elements with
  that key, and ``{"$patch": "replace"}`` makes the other patch elements the whole list.
  ``"merge"`` is rejected, as upstream does.
- ``$setElementOrder/<field>`` orders a merged list, ``$deleteFromPrimitiveList/<field>``
  removes scalars, and ``$retainKeys`` drops the map's keys that it does not list.
- Lists with ``patchStrategy: merge`` and a key merge element-wise by that key. Without
  a key (finalizers, podCIDRs) they merge as sets of scalars. Every other list is
  replaced whole. An unknown kind has no table, so it gets JSON merge semantics, and the
  directives above still work.

Where this deliberately differs from upstream (all on inputs kubectl never sends):
``Go`` keeps directive keys and nulls inside elements that it copies in unmerged and
relies on the typed decode to drop them; here they are dropped at once. A few errors that
upstream leaves as plain Go errors (HTTP 500), such as a missing merge key, are 422 here.
A ``$setElementOrder`` list over an empty list is accepted instead of failing with
"no elements in any of the given slices".
"""

from __future__ import annotations

import copy
import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from kubeprio import errors

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

JsonDict = dict[str, Any]
"""A JSON object as ``json.loads`` returns it."""

_BAD_REQUEST: Final = 400
_UNSUPPORTED_MEDIA_TYPE: Final = 415
_UNPROCESSABLE: Final = 422

# A sentinel for "no such key" where null is a legal JSON value.
_MISSING: Final = object()


class PatchError(errors.KubeprioError, ValueError):
    """A patch body could not be decoded or does not apply to the document.

    ``code`` is the HTTP status the Kubernetes apiserver answers with: 400 (BadRequest)
    for a malformed patch, 422 (Invalid) for a well-formed one that does not apply, and
    415 for an unknown patch type. ``apiserver`` turns it into a Status.
    """

    def __init__(self, message: str, *, code: int = _UNPROCESSABLE) -> None:
        super().__init__(message)
        self.code = code


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

    Server-side apply is approximated by a strategic merge (see the module docstring).
    """
    if patch_type == PatchType.JSON_PATCH:
        return apply_json_patch(doc, patch)
    if patch_type == PatchType.MERGE_PATCH:
        return apply_merge_patch(doc, patch)
    if patch_type in (PatchType.STRATEGIC_MERGE_PATCH, PatchType.APPLY_PATCH):
        if not isinstance(patch, dict):
            raise PatchError(_cannot_unmarshal(patch, "map[string]interface {}"), code=_BAD_REQUEST)
        return apply_strategic_merge_patch(doc, patch, kind=kind)
    raise PatchError(f"unsupported patch type: {patch_type}", code=_UNSUPPORTED_MEDIA_TYPE)


# --- RFC 7386 JSON merge patch ----------------------------------------------------------


def apply_merge_patch(doc: JsonDict, patch: object) -> JsonDict:
    """Apply an RFC 7386 merge patch: members set to null are removed, objects merge
    recursively, and any other value (arrays included) replaces the target.

    The patch must be an object, because the result must stay one; upstream turns a null
    patch into "Invalid JSON Patch" and fails to decode any other non-object result.
    """
    if patch is None:
        raise PatchError("Invalid JSON Patch", code=_BAD_REQUEST)
    if not isinstance(patch, dict):
        raise PatchError(_cannot_unmarshal(patch, "map[string]interface {}"), code=_BAD_REQUEST)
    merged = _merge_owned(copy.deepcopy(doc), copy.deepcopy(patch))
    assert isinstance(merged, dict)  # an object patch always yields an object
    return merged


def _merge_owned(target: object, patch: object) -> object:
    """RFC 7386 ``MergePatch``; both arguments are private copies that may be reused."""
    if not isinstance(patch, dict):
        return patch
    result = target if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = _merge_owned(result.get(name), value)
    return result


def create_two_way_merge_patch(original: JsonDict, modified: JsonDict) -> JsonDict:
    """Return the RFC 7386 merge patch that turns ``original`` into ``modified``.

    Objects are diffed member by member; every other changed value (arrays included) is
    sent whole, and a removed member becomes null. As RFC 7386 says, an object member
    whose value is null in ``modified`` cannot be expressed and comes out removed.
    """
    patch: JsonDict = {name: None for name in original if name not in modified}
    for name, new in modified.items():
        old = original.get(name, _MISSING)
        if isinstance(old, dict) and isinstance(new, dict):
            nested = create_two_way_merge_patch(old, new)
            if nested:
                patch[name] = nested
        elif old is _MISSING or not _identical(old, new):
            patch[name] = copy.deepcopy(new)
    return patch


# --- RFC 6902 JSON patch ----------------------------------------------------------------


def apply_json_patch(doc: JsonDict, ops: object) -> JsonDict:
    """Apply an RFC 6902 JSON patch (a list of operations) atomically.

    Supports add, remove, replace, move, copy and test; RFC 6901 pointers with ``~0`` and
    ``~1`` escapes; ``-`` to append to an array. Array indices must be canonical
    (no sign, no leading zero). The result must still be a JSON object.
    """
    if not isinstance(ops, list):
        raise PatchError(_cannot_unmarshal(ops, "jsonpatch.Patch"), code=_BAD_REQUEST)
    for op in ops:
        if not isinstance(op, dict):
            raise PatchError(_cannot_unmarshal(op, "jsonpatch.Operation"), code=_BAD_REQUEST)
    root: object = copy.deepcopy(doc)
    for op in ops:
        root = _apply_operation(root, op)
    if not isinstance(root, dict):
        raise PatchError(f"the patched document is {_json_type(root)}, not an object")
    return root


def _apply_operation(root: object, op: JsonDict) -> object:
    """Apply one operation to ``root`` (a private copy) and return the new root."""
    kind = op.get("op")
    if kind == "add":
        return _add(root, _pointer(op, "path", "add"), _value(op, "add"), "add")
    if kind == "remove":
        path = _pointer(op, "path", "remove")
        _remove(root, path, "remove")
        return root
    if kind == "replace":
        return _replace(root, _pointer(op, "path", "replace"), _value(op, "replace"))
    if kind == "move":
        source = _pointer(op, "from", "move")
        path = _pointer(op, "path", "move")
        if source == path:
            return root
        if path.startswith(source + "/") or not source:
            raise PatchError(
                f'move operation does not apply: "from" {source} is a proper prefix of "path" {path}'
            )
        return _add(root, path, _remove(root, source, "move"), "move")
    if kind == "copy":
        source = _pointer(op, "from", "copy")
        path = _pointer(op, "path", "copy")
        value = _get(root, source)
        if value is _MISSING:
            raise PatchError(
                f"copy operation does not apply: doc is missing from path: {source}: missing value"
            )
        return _add(root, path, copy.deepcopy(value), "copy")
    if kind == "test":
        path = _pointer(op, "path", "test")
        expected = _value(op, "test")
        actual = _get(root, path)
        if actual is _MISSING:
            raise PatchError(
                f"test operation does not apply: is missing path: {path}: missing value"
            )
        if not _json_equal(actual, expected):
            raise PatchError(f"testing value {path} failed: test failed")
        return root
    raise PatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")


def _pointer(op: JsonDict, member: str, kind: str) -> str:
    """Read the ``path`` or ``from`` member of an operation."""
    value = op.get(member)
    if not isinstance(value, str):
        what = "path field" if member == "path" else "from field"
        raise PatchError(
            f"{kind} operation failed to decode {member}: operation missing {what}: missing value",
            code=_BAD_REQUEST,
        )
    if value and not value.startswith("/"):
        raise PatchError(f'{kind} operation does not apply: invalid JSON pointer "{value}"')
    return value


def _value(op: JsonDict, kind: str) -> object:
    """Read the ``value`` member (a private copy) of an operation."""
    if "value" not in op:
        raise PatchError(f"{kind} operation, missing value field: missing value", code=_BAD_REQUEST)
    return copy.deepcopy(op["value"])


def _tokens(pointer: str) -> list[str]:
    """Split an RFC 6901 pointer into unescaped reference tokens ("" is the root)."""
    if not pointer:
        return []
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def _array_index(token: str) -> int | None:
    """The index named by ``token``, or None unless it is a canonical non-negative integer."""
    if token.isascii() and token.isdigit() and (token == "0" or not token.startswith("0")):
        return int(token)
    return None


def _child(container: object, token: str) -> object:
    """The member or element named by ``token``, or ``_MISSING``."""
    if isinstance(container, dict):
        return container.get(token, _MISSING)
    if isinstance(container, list):
        index = _array_index(token)
        if index is not None and index < len(container):
            return container[index]
    return _MISSING


def _get(root: object, pointer: str) -> object:
    """The value at ``pointer``, or ``_MISSING``."""
    node = root
    for token in _tokens(pointer):
        node = _child(node, token)
        if node is _MISSING:
            break
    return node


def _parent(root: object, tokens: list[str]) -> object:
    """The container holding the last token, or ``_MISSING`` (also for the root itself)."""
    if not tokens:
        return _MISSING
    node = root
    for token in tokens[:-1]:
        node = _child(node, token)
    return node if isinstance(node, dict | list) else _MISSING


def _add(root: object, path: str, value: object, kind: str) -> object:
    tokens = _tokens(path)
    if not tokens:
        return value
    parent = _parent(root, tokens)
    key = tokens[-1]
    if isinstance(parent, dict):
        parent[key] = value
    elif isinstance(parent, list):
        index = len(parent) if key == "-" else _array_index(key)
        if index is None or index > len(parent):
            raise PatchError(
                f"error in {kind} for path: '{path}': Unable to access invalid index: {key}: invalid index referenced"
            )
        parent.insert(index, value)
    else:
        raise PatchError(
            f'{kind} operation does not apply: doc is missing path: "{path}": missing value'
        )
    return root


def _remove(root: object, path: str, kind: str) -> object:
    """Remove and return the value at ``path``."""
    tokens = _tokens(path)
    parent = _parent(root, tokens)
    if isinstance(parent, dict):
        key = tokens[-1]
        if key not in parent:
            raise PatchError(
                f"error in {kind} for path: '{path}': Unable to remove nonexistent key: {key}: missing value"
            )
        return parent.pop(key)
    if isinstance(parent, list):
        index = _array_index(tokens[-1])
        if index is None or index >= len(parent):
            raise PatchError(
                f"error in {kind} for path: '{path}': Unable to access invalid index: {tokens[-1]}: invalid index referenced"
            )
        return parent.pop(index)
    raise PatchError(
        f'{kind} operation does not apply: doc is missing path: "{path}": missing value'
    )


def _replace(root: object, path: str, value: object) -> object:
    tokens = _tokens(path)
    if not tokens:
        return value
    parent = _parent(root, tokens)
    if parent is _MISSING:
        raise PatchError(
            f"replace operation does not apply: doc is missing path: {path}: missing value"
        )
    if _child(parent, tokens[-1]) is _MISSING:
        raise PatchError(
            f"replace operation does not apply: doc is missing key: {path}: missing value"
        )
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        index = _array_index(tokens[-1])
        assert index is not None  # _child found the element
        parent[index] = value
    return root


# --- strategic merge patch: the struct-tag table ------------------------------------------


@dataclass(frozen=True, slots=True)
class _PatchMeta:
    """The strategic-merge struct tags of one field (upstream ``PatchMeta``).

    ``merge`` is ``patchStrategy: merge`` on a list, ``merge_key`` its ``patchMergeKey``
    (empty for lists of scalars), ``replace`` is ``patchStrategy: replace`` on a map.
    ``fields`` describes the value's own fields, or each element's when it is a list.
    ``retainKeys`` needs no entry: the server honours a ``$retainKeys`` directive wherever
    it appears, and only patch generation reads that tag.
    """

    merge: bool = False
    merge_key: str = ""
    replace: bool = False
    fields: Mapping[str, _PatchMeta] = field(default_factory=lambda: MappingProxyType({}))


_PLAIN: Final = _PatchMeta()


def _struct(**fields: _PatchMeta) -> _PatchMeta:
    return _PatchMeta(fields=MappingProxyType(fields))


def _keyed(merge_key: str, element: _PatchMeta = _PLAIN) -> _PatchMeta:
    return _PatchMeta(merge=True, merge_key=merge_key, fields=element.fields)


_SCALAR_SET: Final = _PatchMeta(merge=True)
_REPLACED_MAP: Final = _PatchMeta(replace=True)

# Checked against k8s.io/api core/v1, apps/v1, batch/v1, policy/v1 and apimachinery
# meta/v1 types.go. Absent fields are atomic there too: tolerations, readinessGates,
# envFrom, args, command, node taints and images, containerStatuses, label-selector
# matchExpressions, namespace spec.finalizers.
_OBJECT_META: Final = _struct(ownerReferences=_keyed("uid"), finalizers=_SCALAR_SET)
_CONTAINER: Final = _struct(
    ports=_keyed("containerPort"),
    env=_keyed("name"),
    volumeMounts=_keyed("mountPath"),
    volumeDevices=_keyed("devicePath"),
)
_POD_SPEC: Final = _struct(
    volumes=_keyed("name"),  # patchStrategy "merge,retainKeys"
    initContainers=_keyed("name", _CONTAINER),
    containers=_keyed("name", _CONTAINER),
    ephemeralContainers=_keyed("name", _CONTAINER),
    imagePullSecrets=_keyed("name"),
    hostAliases=_keyed("ip"),
    topologySpreadConstraints=_keyed("topologyKey"),
    schedulingGates=_keyed("name"),
    resourceClaims=_keyed("name"),  # patchStrategy "merge,retainKeys"
)
_POD_STATUS: Final = _struct(
    conditions=_keyed("type"),
    hostIPs=_keyed("ip"),
    podIPs=_keyed("ip"),
    resourceClaimStatuses=_keyed("name"),  # patchStrategy "merge,retainKeys"
)
_POD_TEMPLATE: Final = _struct(metadata=_OBJECT_META, spec=_POD_SPEC)
_CONDITIONS: Final = _struct(conditions=_keyed("type"))
_METADATA_ONLY: Final = _struct(metadata=_OBJECT_META)


def _workload(**spec: _PatchMeta) -> _PatchMeta:
    """A controller whose ``spec.template`` is a pod template and whose status has conditions."""
    return _struct(
        metadata=_OBJECT_META, spec=_struct(template=_POD_TEMPLATE, **spec), status=_CONDITIONS
    )


_KINDS: Final[Mapping[str, _PatchMeta]] = MappingProxyType(
    {
        "Pod": _struct(metadata=_OBJECT_META, spec=_POD_SPEC, status=_POD_STATUS),
        "PodTemplate": _struct(metadata=_OBJECT_META, template=_POD_TEMPLATE),
        "Deployment": _workload(),  # spec.strategy is patchStrategy "retainKeys"
        "ReplicaSet": _workload(),
        "StatefulSet": _workload(),
        "DaemonSet": _workload(),
        "ReplicationController": _workload(),
        "Job": _workload(),
        "CronJob": _struct(
            metadata=_OBJECT_META,
            spec=_struct(
                jobTemplate=_struct(metadata=_OBJECT_META, spec=_struct(template=_POD_TEMPLATE))
            ),
        ),
        "Node": _struct(
            metadata=_OBJECT_META,
            spec=_struct(podCIDRs=_SCALAR_SET),
            status=_struct(conditions=_keyed("type"), addresses=_keyed("type")),
        ),
        "Namespace": _struct(metadata=_OBJECT_META, status=_CONDITIONS),
        "PodDisruptionBudget": _struct(
            metadata=_OBJECT_META, spec=_struct(selector=_REPLACED_MAP), status=_CONDITIONS
        ),
        "Service": _struct(
            metadata=_OBJECT_META, spec=_struct(ports=_keyed("port")), status=_CONDITIONS
        ),
        "ServiceAccount": _struct(metadata=_OBJECT_META, secrets=_keyed("name")),
        "PersistentVolumeClaim": _struct(metadata=_OBJECT_META, status=_CONDITIONS),
        "PriorityClass": _METADATA_ONLY,
        "Event": _METADATA_ONLY,
        "Binding": _METADATA_ONLY,
        "ConfigMap": _METADATA_ONLY,
        "Secret": _METADATA_ONLY,
        "Lease": _METADATA_ONLY,
    }
)

# --- strategic merge patch: the algorithm -------------------------------------------------

_PATCH: Final = "$patch"
_RETAIN_KEYS: Final = "$retainKeys"
_SET_ORDER: Final = "$setElementOrder"
_DELETE_FROM: Final = "$deleteFromPrimitiveList"

_BAD_PRIMITIVE_LIST: Final = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS: Final = "invalid patch format of retainKeys"
_BAD_SET_ORDER: Final = "invalid patch format of setElementOrder list"


def apply_strategic_merge_patch(doc: JsonDict, patch: JsonDict, *, kind: str) -> JsonDict:
    """Apply a strategic merge patch to ``doc``, an object of ``kind`` (upstream
    ``StrategicMergeMapPatch`` as the apiserver calls it: parallel lists merged and
    unmatched nulls ignored). See the module docstring for the directives.
    """
    if not isinstance(patch, dict):
        raise PatchError(_cannot_unmarshal(patch, "map[string]interface {}"), code=_BAD_REQUEST)
    schema = _KINDS.get(kind, _PLAIN)
    return _merge_map(copy.deepcopy(doc), copy.deepcopy(patch), schema)


def _merge_map(original: JsonDict, patch: JsonDict, meta: _PatchMeta) -> JsonDict:
    """Upstream ``mergeMap``; ``original`` and ``patch`` are private copies, and the
    result may reuse (and this function mutates) ``original``.
    """
    if _PATCH in patch:
        directive = patch[_PATCH]
        if directive == "replace":
            return _fresh_map({k: v for k, v in patch.items() if k != _PATCH})
        if directive == "delete":
            return {}
        raise PatchError(f"unknown patch type: {directive} in map: {_show(patch)}")

    _apply_retain_keys(original, patch)
    ordered = _apply_element_orders(original, patch, meta)

    deletions: list[tuple[str, object]] = []
    for key, value in patch.items():
        if key == _RETAIN_KEYS or key.startswith(_SET_ORDER) or key in ordered:
            continue
        if key.startswith(_DELETE_FROM):
            deletions.append((_directive_field(key, _DELETE_FROM), value))
            continue
        if value is None:
            original.pop(key, None)
            continue
        child = meta.fields.get(key, _PLAIN)
        current = original.get(key, _MISSING)
        if isinstance(current, dict) and isinstance(value, dict) and not child.replace:
            original[key] = _merge_map(current, value, child)
        elif isinstance(current, list) and isinstance(value, list) and child.merge:
            original[key] = _merge_list(current, value, child, key)
        else:
            fresh = _fresh(value)
            if fresh is _MISSING:
                original.pop(key, None)
            else:
                original[key] = fresh

    # Upstream visits these in Go map order; after the merge is the order kubectl's
    # patches (additions plus deletions of one list) are written for.
    for name, value in deletions:
        if value is None:
            original.pop(name, None)
            continue
        current = original.get(name)
        if isinstance(current, list) and isinstance(value, list):
            original[name] = _delete_from_primitive_list(current, value)
    return original


def _apply_retain_keys(original: JsonDict, patch: JsonDict) -> None:
    """Upstream ``applyRetainKeysDirective``: clear the keys the directive does not list."""
    if _RETAIN_KEYS not in patch:
        return
    retained = patch[_RETAIN_KEYS]
    if not isinstance(retained, list):
        raise PatchError(_BAD_RETAIN_KEYS, code=_BAD_REQUEST)
    keep = {key for key in retained if isinstance(key, str)}
    for key, value in patch.items():
        if value is None or key == _RETAIN_KEYS:
            continue
        if key.startswith(_DELETE_FROM) or key.startswith(_SET_ORDER):
            continue
        if key not in keep:
            raise PatchError(_BAD_RETAIN_KEYS, code=_BAD_REQUEST)
    for key in [key for key in original if key not in keep]:
        del original[key]


def _apply_element_orders(original: JsonDict, patch: JsonDict, meta: _PatchMeta) -> set[str]:
    """Upstream ``mergePatchIntoOriginal``: merge every list that has a
    ``$setElementOrder`` and order it; return the names of the lists done.

    Precedence of order: ``$setElementOrder`` > patch list > live list.
    """
    done: set[str] = set()
    for key, order in patch.items():
        if not key.startswith(_SET_ORDER):
            continue
        name = _directive_field(key, _SET_ORDER)
        if not isinstance(order, list):
            raise PatchError(_BAD_SET_ORDER, code=_BAD_REQUEST)
        child = meta.fields.get(name, _PLAIN)
        current = original.get(name, _MISSING)
        patch_list = patch.get(name, _MISSING)
        for value in (current, patch_list):
            if value is not _MISSING and not isinstance(value, list):
                raise PatchError(f"expected a list in {name}, but received {_json_type(value)}")
        if child.merge_key:
            for item in order:
                _merge_key_value(item, child.merge_key)
        if isinstance(patch_list, list):
            _check_order(patch_list, order, child.merge_key)

        if isinstance(current, list) and isinstance(patch_list, list):
            merged = (
                _merge_list(current, patch_list, child, name)
                if child.merge
                else _fresh_list(patch_list)
            )
        elif isinstance(current, list):
            merged = current
        elif isinstance(patch_list, list):
            merged = _fresh_list(patch_list)
        else:
            continue
        listed, server_only = _partition(merged, order, child.merge_key)
        live = current if isinstance(current, list) else []
        original[name] = _normalize_order(listed, server_only, order, live, child.merge_key)
        done.add(name)
    return done


def _check_order(patch_list: list[object], order: list[object], merge_key: str) -> None:
    """Upstream ``validatePatchWithSetOrderList``: the patch list must follow the order."""
    if not patch_list or not order:
        return
    items = patch_list
    if merge_key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise PatchError(
                    f"expected a map in {_show(patch_list)}, but received {_json_type(item)}"
                )
        items = [item for item in patch_list if not _is_delete(item)]
    i = j = 0
    while i < len(items) and j < len(order):
        item = items[i]
        if isinstance(item, dict) and _PATCH in item:
            i += 1
            continue
        if _same_element(item, order[j], merge_key):
            i += 1
        j += 1
    if i < len(items):
        raise PatchError(
            f"The order in patch list:\n{_show(patch_list)}\n doesn't match {_SET_ORDER} list:\n{_show(order)}\n"
        )


def _merge_list(
    original: list[object], patch: list[object], meta: _PatchMeta, name: str
) -> list[object]:
    """Upstream ``mergeSlice`` for a field with ``patchStrategy: merge``."""
    if not original and not patch:
        return original
    element_type = _element_type(original + patch)
    key = meta.merge_key
    if element_type is not dict:
        merged = _dedupe(original + patch)
        listed, server_only = _partition(merged, patch, "")
        return _normalize_order(listed, server_only, patch, original, "")
    if not key:
        raise PatchError(f"cannot merge lists without merge key for {name}")

    # Elements carrying $patch act on the list; upstream mergeSliceWithSpecialElements.
    plain: list[object] = []
    replace = False
    for element in patch:
        assert isinstance(element, dict)  # _element_type checked
        if _PATCH not in element:
            plain.append(element)
            continue
        directive = element[_PATCH]
        if directive == "delete":
            doomed = _merge_key_value(element, key)
            original = [e for e in original if not _has_key_value(e, key, doomed)]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch")
        else:
            raise PatchError(f"unknown patch type: {directive} in map: {_show(element)}")
    if replace:
        return _fresh_list(plain)

    merged = list(original)
    for element in plain:
        assert isinstance(element, dict)
        value = _merge_key_value(element, key)
        index = next((i for i, e in enumerate(merged) if _has_key_value(e, key, value)), None)
        if index is None:
            merged.append(_fresh_map(element))
        else:
            target = merged[index]
            assert isinstance(target, dict)
            merged[index] = _merge_map(target, element, meta)
    listed, server_only = _partition(merged, plain, key)
    return _normalize_order(listed, server_only, plain, original, key)


def _delete_from_primitive_list(current: list[object], doomed: list[object]) -> list[object]:
    """Upstream ``deleteFromSlice``: drop every scalar that ``doomed`` names."""
    if not current and not doomed:
        return current
    if _element_type(current + doomed) is dict:
        # Upstream would run a keyed merge here; no client sends it.
        raise PatchError(_BAD_PRIMITIVE_LIST, code=_BAD_REQUEST)
    return [item for item in current if not any(_identical(item, d) for d in doomed)]


def _partition(
    merged: list[object], by: list[object], merge_key: str
) -> tuple[list[object], list[object]]:
    """Split ``merged`` into the elements named in ``by`` and the server-only rest."""
    listed: list[object] = []
    server_only: list[object] = []
    for item in merged:
        if merge_key:
            value = _merge_key_value(item, merge_key)
            found = any(_has_key_value(_as_map(other), merge_key, value) for other in by)
        else:
            found = any(_identical(item, other) for other in by)
        (listed if found else server_only).append(item)
    return listed, server_only


def _normalize_order(
    listed: list[object],
    server_only: list[object],
    order: list[object],
    live: list[object],
    merge_key: str,
) -> list[object]:
    """Upstream ``normalizeElementOrder`` + ``mergeSortedSlice``.

    Sort the listed elements by ``order`` and the server-only ones by the live list, then
    interleave: a server-only element goes first when the live list put it before the
    next listed element.
    """

    left = _sorted_by(server_only, live, merge_key)
    right = _sorted_by(listed, order, merge_key)
    result: list[object] = []
    i = j = 0
    while i < len(left) and j < len(right):
        li = _index(live, left[i], merge_key)
        ri = _index(live, right[j], merge_key)
        if 0 <= li < ri:
            result.append(left[i])
            i += 1
        else:
            result.append(right[j])
            j += 1
    return result + left[i:] + right[j:]


def _sorted_by(items: list[object], reference: list[object], merge_key: str) -> list[object]:
    """Stable sort by position in ``reference``; elements it lacks go last."""

    def position(item: object) -> int:
        index = _index(reference, item, merge_key)
        return index if index >= 0 else len(reference)

    return sorted(items, key=position)


def _index(items: list[object], value: object, merge_key: str) -> int:
    """Position of ``value`` in ``items`` (by merge key when there is one), or -1."""
    if merge_key:
        wanted = value.get(merge_key) if isinstance(value, dict) else None
        for i, item in enumerate(items):
            if _identical(item.get(merge_key) if isinstance(item, dict) else None, wanted):
                return i
        return -1
    return next((i for i, item in enumerate(items) if _identical(item, value)), -1)


def _same_element(item: object, other: object, merge_key: str) -> bool:
    """Upstream ``mergeKeyValueEqual``."""
    if not merge_key:
        return _identical(item, other)
    return _identical(_merge_key_value(item, merge_key), _merge_key_value(other, merge_key))


def _merge_key_value(item: object, merge_key: str) -> object:
    """The merge key of a list element; a missing key is an error, as upstream."""
    element = _as_map(item)
    if merge_key not in element:
        raise PatchError(f"map: {_show(element)} does not contain declared merge key: {merge_key}")
    return element[merge_key]


def _as_map(item: object) -> JsonDict:
    if not isinstance(item, dict):
        raise PatchError(f"expected a map, but received {_json_type(item)}: {_show(item)}")
    return item


def _has_key_value(item: object, merge_key: str, value: object) -> bool:
    return isinstance(item, dict) and merge_key in item and _identical(item[merge_key], value)


def _is_delete(item: object) -> bool:
    return isinstance(item, dict) and item.get(_PATCH) == "delete"


def _element_type(items: list[object]) -> type | None:
    """Upstream ``sliceElementType``: the one type of all elements, or an error."""
    types = {type(item) for item in items}
    if list in types:
        raise PatchError("lists of lists are not supported")
    if len(types) > 1:
        raise PatchError(f"list element types are not identical: {_show(items)}")
    return types.pop() if types else None


def _dedupe(items: list[object]) -> list[object]:
    result: list[object] = []
    for item in items:
        if not any(_identical(item, seen) for seen in result):
            result.append(item)
    return result


def _directive_field(key: str, prefix: str) -> str:
    """Upstream ``extractKey``: ``$setElementOrder/containers`` -> ``containers``."""
    head, slash, name = key.partition("/")
    if not slash or head != prefix:
        message = _BAD_SET_ORDER if prefix == _SET_ORDER else _BAD_PRIMITIVE_LIST
        raise PatchError(message, code=_BAD_REQUEST)
    return name


def _fresh(value: object) -> object:
    """A patch value that lands where there is nothing to merge with.

    Upstream ``discardNullValuesFromPatch`` + ``removeDirectives``: null members vanish, a
    map carrying ``$patch`` vanishes from its parent (``_MISSING`` is returned for it),
    and the other directive keys are dropped, as the apiserver's typed decode would.
    """
    if isinstance(value, dict):
        if _PATCH in value:
            return _MISSING
        return _fresh_map(value)
    if isinstance(value, list):
        return _fresh_list(value)
    return value


def _fresh_map(value: JsonDict) -> JsonDict:
    result: JsonDict = {}
    for key, member in value.items():
        if member is None or key == _PATCH or _is_directive_key(key):
            continue
        fresh = _fresh(member)
        if fresh is not _MISSING:
            result[key] = fresh
    return result


def _fresh_list(value: list[object]) -> list[object]:
    return [fresh for fresh in map(_fresh, value) if fresh is not _MISSING]


def _is_directive_key(key: str) -> bool:
    return key == _RETAIN_KEYS or key.startswith((_SET_ORDER + "/", _DELETE_FROM + "/"))


# --- JSON helpers ---------------------------------------------------------------------------


def _identical(a: object, b: object) -> bool:
    """Equality that also requires equal JSON types (1, 1.0 and true all differ),
    like Go's ``==`` on decoded values."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(_identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(map(_identical, a, b))
    return a == b


def _json_equal(a: object, b: object) -> bool:
    """RFC 6902 section 4.6 equality: numbers compare by value, booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_json_equal, a, b))
    return type(a) is type(b) and a == b


def _json_type(value: object) -> str:
    """The JSON type name of a decoded value, as Go's decoder spells it in errors."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "null"


def _cannot_unmarshal(value: object, go_type: str) -> str:
    return f"json: cannot unmarshal {_json_type(value)} into Go value of type {go_type}"


def _show(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=repr)
