"""Kubernetes strategic merge patch over plain JSON documents.

What it is: ``apply_strategic_merge_patch``, which does what ``StrategicMergeMapPatch`` in
k8s.io/apimachinery/pkg/util/strategicpatch/patch.go does for built-in kinds, driven by a
table of the ``patchStrategy``/``patchMergeKey`` struct tags of k8s.io/api. The public
entry point is the facade ``api.patch``; errors are ``jsonpatch.PatchError``.

Directives (they come from the patch, never from the stored object):

- ``{"$patch": "replace", ...}`` in a map replaces the map; ``{"$patch": "delete"}``
  empties it. ``"merge"`` is rejected in a map, as upstream does.
- In a list with a merge key, ``{"$patch": "delete", <key>: v}`` removes the elements with
  that key, and ``{"$patch": "replace"}`` makes the other patch elements the whole list.
  ``"merge"`` is rejected here too ("merging lists cannot yet be specified").
- ``$setElementOrder/<field>`` orders a merged list, ``$deleteFromPrimitiveList/<field>``
  removes scalars, and ``$retainKeys`` drops the map's keys that it does not list.

Lists with ``patchStrategy: merge`` and a key merge element-wise by that key. Without a
key (finalizers, podCIDRs) they merge as deduplicated sets of scalars. Every other list is
replaced whole. Merged lists follow upstream's order: ``$setElementOrder``, then the
patch's order, then the live order. An element the live list lacks therefore comes before
the server-only ones. An unknown kind has no table, so it gets JSON merge semantics, and
the directives still work. (Upstream refuses strategic merge for custom resources;
kubectl sends them merge patches.)

Where this deliberately differs from upstream, on inputs kubectl never sends: Go keeps
directive keys and nulls in values that it copies in unmerged and relies on the typed
decode to drop them; here they are dropped at once. Errors that upstream leaves as plain
Go errors carry ``plain=True``: the apiserver answers them as upstream does, a 500 with
the text (values printed as Go's ``%v``). A ``$setElementOrder``
over an empty list is accepted instead of failing with "no elements in any of the given
slices". And ``$deleteFromPrimitiveList`` over a list of maps is a 400, where upstream
would run a keyed merge.

Rules: no I/O; standard library, ``kubeprio.errors`` and ``api.jsonpatch`` only. The input
documents are deep-copied first and never mutated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from kubeprio.api.gotext import go_value, json_kind
from kubeprio.api.jsonpatch import (
    JsonDict,
    PatchError,
    cannot_unmarshal,
    identical,
    json_copy,
)

__all__ = ["PatchMeta", "apply_strategic_merge_patch", "patch_schema"]

_BAD_REQUEST: Final = 400

# A sentinel for "no such key" where null is a legal JSON value.
_MISSING: Final = object()


# --- The struct-tag table (k8s.io/api) -----------------------------------------------------


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

PatchMeta = _PatchMeta
"""The struct tags of a field, for ``api.strategicdiff`` (which builds patches from them)."""


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
        "Endpoints": _METADATA_ONLY,  # subsets are atomic
        "EndpointSlice": _METADATA_ONLY,  # endpoints and ports are atomic
        "ControllerRevision": _METADATA_ONLY,  # data is a RawExtension, replaced whole
    }
)


def patch_schema(kind: str) -> _PatchMeta:
    """The struct tags of ``kind`` (a kind without a table: none, JSON merge semantics)."""
    return _KINDS.get(kind, _PLAIN)


# --- The algorithm (strategicpatch/patch.go) ------------------------------------------------

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
        raise PatchError(cannot_unmarshal(patch, "map[string]interface {}"), code=_BAD_REQUEST)
    schema = _KINDS.get(kind, _PLAIN)
    return _merge_map(json_copy(doc), json_copy(patch), schema)


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
        raise PatchError(f"unknown patch type: {directive} in map: {_show(patch)}", plain=True)

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
                raise PatchError(
                    f"expected a list in {name}, but received {json_kind(value)}", plain=True
                )
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
                    f"expected a map in {_show(patch_list)}, but received {json_kind(item)}",
                    plain=True,
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
            f"The order in patch list:\n{_show(patch_list)}\n doesn't match {_SET_ORDER} list:\n{_show(order)}\n",
            plain=True,
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
        raise PatchError(f"cannot merge lists without merge key for {name}", plain=True)

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
            raise PatchError("merging lists cannot yet be specified in the patch", plain=True)
        else:
            raise PatchError(
                f"unknown patch type: {directive} in map: {_show(element)}", plain=True
            )
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
    return [item for item in current if not any(identical(item, d) for d in doomed)]


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
            found = any(identical(item, other) for other in by)
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
            if identical(item.get(merge_key) if isinstance(item, dict) else None, wanted):
                return i
        return -1
    return next((i for i, item in enumerate(items) if identical(item, value)), -1)


def _same_element(item: object, other: object, merge_key: str) -> bool:
    """Upstream ``mergeKeyValueEqual``."""
    if not merge_key:
        return identical(item, other)
    return identical(_merge_key_value(item, merge_key), _merge_key_value(other, merge_key))


def _merge_key_value(item: object, merge_key: str) -> object:
    """The merge key of a list element; a missing key is an error, as upstream."""
    element = _as_map(item)
    if merge_key not in element:
        raise PatchError(
            f"map: {_show(element)} does not contain declared merge key: {merge_key}", plain=True
        )
    return element[merge_key]


def _as_map(item: object) -> JsonDict:
    if not isinstance(item, dict):
        raise PatchError(
            f"expected a map, but received {json_kind(item)}: {_show(item)}", plain=True
        )
    return item


def _has_key_value(item: object, merge_key: str, value: object) -> bool:
    return isinstance(item, dict) and merge_key in item and identical(item[merge_key], value)


def _is_delete(item: object) -> bool:
    return isinstance(item, dict) and item.get(_PATCH) == "delete"


def _element_type(items: list[object]) -> type | None:
    """Upstream ``sliceElementType``: the one type of all elements, or an error."""
    types = {type(item) for item in items}
    if list in types:
        raise PatchError("lists of lists are not supported")
    if len(types) > 1:
        raise PatchError(f"list element types are not identical: {_show(items)}", plain=True)
    return types.pop() if types else None


def _dedupe(items: list[object]) -> list[object]:
    result: list[object] = []
    for item in items:
        if not any(identical(item, seen) for seen in result):
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


def _show(value: object) -> str:
    """A value in an error message, as upstream's ``%v`` prints it."""
    return go_value(value)
