"""RFC 7386 JSON merge patch and RFC 6902 JSON patch over plain JSON documents.

What it is: pure functions that apply a merge patch (``application/merge-patch+json``)
or a JSON patch (``application/json-patch+json``) to a JSON object and return a new one,
the RFC 7386 diff of two documents for clients and tests, and ``PatchError``, the one
exception of every patch module. The public entry point is the facade ``api.patch``.

Upstream: the apiserver applies both with gopkg.in/evanphx/json-patch.v4 (``MergePatch``
and ``Patch.Apply``), so the error texts follow that library. Where v4 is laxer than the
RFCs (it treats ``replace`` of a missing member as ``add``, lets ``test`` pass on a missing
member when the value is null, and accepts ``-1`` and ``01`` as array indices), this module
follows the RFCs. A merge patch is applied exactly as RFC 7386 says: nulls inside arrays
are kept.

Rules: no I/O; standard library and ``kubeprio.errors`` only. Inputs are never mutated and
results share no containers with them: every public function deep-copies first, so the
store's copy survives a patch that fails halfway, and a JSON patch applies all or nothing.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from kubeprio import errors
from kubeprio.api.gotext import json_kind

__all__ = [
    "JsonDict",
    "PatchError",
    "apply_json_patch",
    "apply_merge_patch",
    "cannot_unmarshal",
    "create_two_way_merge_patch",
    "identical",
    "json_copy",
]

JsonDict = dict[str, Any]
"""A JSON object as ``json.loads`` returns it."""

_BAD_REQUEST: Final = 400
_UNPROCESSABLE: Final = 422

# A sentinel for "no such key" where null is a legal JSON value.
_MISSING: Final = object()


class PatchError(errors.KubeprioError, ValueError):
    """A patch body could not be decoded or does not apply to the document.

    ``code`` is the HTTP status the Kubernetes apiserver answers with: 400 (BadRequest)
    for a malformed patch, 422 (Invalid) for a well-formed one that does not apply, and
    415 for an unknown patch type. ``apiserver`` turns it into a Status. Both
    ``jsonpatch`` and ``strategicpatch`` raise it, and nothing else.
    """

    def __init__(self, message: str, *, code: int = _UNPROCESSABLE, plain: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.plain = plain
        """An error upstream's patch handler passes on as a plain Go error (no Status of
        its own): the apiserver answers 500 with the text, where a 422 says nothing."""


_ATOMS: Final = (str, int, float, bool, type(None))


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value: new dicts and lists all the way down, scalars shared.

    Several times faster than ``copy.deepcopy`` (no memo, no dispatch), and it never
    aliases: a container reached twice is copied twice, as two JSON subtrees are two
    values. Anything else is handed to ``copy.deepcopy``.
    """
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


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
        raise PatchError(cannot_unmarshal(patch, "map[string]interface {}"), code=_BAD_REQUEST)
    merged = _merge_owned(json_copy(doc), json_copy(patch))
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
        elif old is _MISSING or not identical(old, new):
            patch[name] = json_copy(new)
    return patch


# --- RFC 6902 JSON patch ----------------------------------------------------------------


def apply_json_patch(doc: JsonDict, ops: object) -> JsonDict:
    """Apply an RFC 6902 JSON patch (a list of operations) atomically.

    Supports add, remove, replace, move, copy and test; RFC 6901 pointers with ``~0`` and
    ``~1`` escapes; ``-`` to append to an array. Array indices must be canonical
    (no sign, no leading zero). The result must still be a JSON object.
    """
    if not isinstance(ops, list):
        raise PatchError(cannot_unmarshal(ops, "jsonpatch.Patch"), code=_BAD_REQUEST)
    for op in ops:
        if not isinstance(op, dict):
            raise PatchError(cannot_unmarshal(op, "jsonpatch.Operation"), code=_BAD_REQUEST)
    root: object = json_copy(doc)
    for op in ops:
        root = _apply_operation(root, op)
    if not isinstance(root, dict):
        raise PatchError(f"the patched document is {json_kind(root)}, not an object")
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
        return _add(root, path, json_copy(value), "copy")
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
    return json_copy(op["value"])


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


# --- JSON helpers, shared with strategicpatch -----------------------------------------------


def identical(a: object, b: object) -> bool:
    """Equality that also requires equal JSON types (1, 1.0 and true all differ),
    like Go's ``==`` on decoded values."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(map(identical, a, b))
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


def cannot_unmarshal(value: object, go_type: str) -> str:
    """The text Go's ``encoding/json`` gives when a body has the wrong JSON type."""
    return f"json: cannot unmarshal {json_kind(value)} into Go value of type {go_type}"
