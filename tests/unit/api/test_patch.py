"""Tests for kubeprio.api.patch and the modules behind it (jsonpatch, strategicpatch).

Cases come from the RFC appendices, from upstream
k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go (the ``mergeItem`` fields are
mapped onto real pod fields), and from what kubectl v1.32 sends on the wire.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio import errors
from kubeprio.api import patch
from kubeprio.api.patch import (
    PatchError,
    PatchType,
    apply_json_patch,
    apply_merge_patch,
    apply_patch,
    apply_strategic_merge_patch,
    create_two_way_merge_patch,
)


def _same(a: Any, b: Any) -> bool:
    """Structural equality that also tells 1, 1.0 and True apart."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def _nest(path: str, leaf: Any) -> dict[str, Any]:
    """Build ``{"a": {"b": leaf}}`` from ``"a.b"``; ``containers[c]`` is a one-element list."""
    head, _, rest = path.partition(".")
    inner = _nest(rest, leaf) if rest else leaf
    if head.endswith("]"):
        name, _, element = head[:-1].partition("[")
        return {name: [{"name": element, **inner}]}
    return {head: inner}


# --- RFC 7386 ---------------------------------------------------------------------------

# RFC 7386 Appendix A. Rows whose target or patch is not an object are nested under "x",
# because a Kubernetes object stays an object.
MERGE_PATCH_CASES = [
    ("replace-member", {"a": "b"}, {"a": "c"}, {"a": "c"}),
    ("add-member", {"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ("null-removes", {"a": "b"}, {"a": None}, {}),
    ("null-removes-one", {"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ("scalar-replaces-array", {"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ("array-replaces-scalar", {"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ("nested-merge", {"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ("array-replaced-whole", {"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ("nested-array-replaces-array", {"x": ["a", "b"]}, {"x": ["c", "d"]}, {"x": ["c", "d"]}),
    ("nested-array-replaces-object", {"x": {"a": "b"}}, {"x": ["c"]}, {"x": ["c"]}),
    ("nested-scalar-replaces-object", {"x": {"a": "foo"}}, {"x": "bar"}, {"x": "bar"}),
    ("existing-null-kept", {"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ("object-patch-onto-array", {"x": [1, 2]}, {"x": {"a": "b", "c": None}}, {"x": {"a": "b"}}),
    ("nulls-in-new-object-dropped", {}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ("nulls-inside-arrays-kept", {}, {"a": [{"b": None}]}, {"a": [{"b": None}]}),
    ("empty-patch", {"a": 1}, {}, {"a": 1}),
]


@pytest.mark.parametrize(
    ("doc", "merge_patch", "expected"),
    [case[1:] for case in MERGE_PATCH_CASES],
    ids=[case[0] for case in MERGE_PATCH_CASES],
)
def test_merge_patch_follows_rfc7386(doc, merge_patch, expected):
    assert _same(apply_merge_patch(doc, merge_patch), expected)


@pytest.mark.parametrize(
    ("merge_patch", "message"),
    [
        (None, "Invalid JSON Patch"),
        (["c"], "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("bar", "json: cannot unmarshal string into Go value of type map[string]interface {}"),
    ],
    ids=["null", "array", "string"],
)
def test_merge_patch_that_is_not_an_object_is_a_bad_request(merge_patch, message):
    with pytest.raises(PatchError, match="^" + message.replace("[", r"\[")) as caught:
        apply_merge_patch({"a": "foo"}, merge_patch)
    assert caught.value.code == 400


# --- RFC 6902 ---------------------------------------------------------------------------

# RFC 6902 Appendix A (A.13 is about JSON parsing, which happens before this module).
JSON_PATCH_CASES = [
    (
        "A1-add-object-member",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux"}],
        {"baz": "qux", "foo": "bar"},
    ),
    (
        "A2-add-array-element",
        {"foo": ["bar", "baz"]},
        [{"op": "add", "path": "/foo/1", "value": "qux"}],
        {"foo": ["bar", "qux", "baz"]},
    ),
    (
        "A3-remove-object-member",
        {"baz": "qux", "foo": "bar"},
        [{"op": "remove", "path": "/baz"}],
        {"foo": "bar"},
    ),
    (
        "A4-remove-array-element",
        {"foo": ["bar", "qux", "baz"]},
        [{"op": "remove", "path": "/foo/1"}],
        {"foo": ["bar", "baz"]},
    ),
    (
        "A5-replace",
        {"baz": "qux", "foo": "bar"},
        [{"op": "replace", "path": "/baz", "value": "boo"}],
        {"baz": "boo", "foo": "bar"},
    ),
    (
        "A6-move-value",
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    (
        "A7-move-array-element",
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    (
        "A8-test-success",
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [
            {"op": "test", "path": "/baz", "value": "qux"},
            {"op": "test", "path": "/foo/1", "value": 2},
        ],
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    (
        "A10-add-nested-member",
        {"foo": "bar"},
        [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
        {"foo": "bar", "child": {"grandchild": {}}},
    ),
    (
        "A11-unrecognized-members-ignored",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
        {"foo": "bar", "baz": "qux"},
    ),
    (
        "A14-escape-ordering",
        {"/": 9, "~1": 10},
        [{"op": "test", "path": "/~01", "value": 10}],
        {"/": 9, "~1": 10},
    ),
    (
        "A16-add-array-value",
        {"foo": ["bar"]},
        [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
        {"foo": ["bar", ["abc", "def"]]},
    ),
    (
        "add-at-end-index",
        {"foo": ["bar"]},
        [{"op": "add", "path": "/foo/1", "value": "baz"}],
        {"foo": ["bar", "baz"]},
    ),
    (
        "add-replaces-existing-member",
        {"foo": "bar"},
        [{"op": "add", "path": "/foo", "value": 1}],
        {"foo": 1},
    ),
    (
        "replace-whole-document",
        {"foo": "bar"},
        [{"op": "replace", "path": "", "value": {"baz": 1}}],
        {"baz": 1},
    ),
    (
        "copy",
        {"a": {"b": [1]}},
        [{"op": "copy", "from": "/a", "path": "/c"}],
        {"a": {"b": [1]}, "c": {"b": [1]}},
    ),
    (
        "move-to-same-path",
        {"a": 1},
        [{"op": "move", "from": "/a", "path": "/a"}],
        {"a": 1},
    ),
    (
        "test-numbers-by-value",
        {"a": 1},
        [{"op": "test", "path": "/a", "value": 1.0}],
        {"a": 1},
    ),
    (
        "test-objects-ignore-member-order",
        {"a": {"x": 1, "y": [True, None]}},
        [{"op": "test", "path": "/a", "value": {"y": [True, None], "x": 1}}],
        {"a": {"x": 1, "y": [True, None]}},
    ),
    (
        "add-at-root-replaces-document",
        {"foo": "bar"},
        [{"op": "add", "path": "", "value": {"baz": 1}}],
        {"baz": 1},
    ),
    (
        "replace-array-element",
        {"a": [1, 2, 3]},
        [{"op": "replace", "path": "/a/1", "value": {"b": None}}],
        {"a": [1, {"b": None}, 3]},
    ),
    (
        "kubectl-managed-fields-migration",
        {"metadata": {"name": "p", "resourceVersion": "7", "managedFields": [{"manager": "a"}]}},
        [
            {"op": "replace", "path": "/metadata/managedFields", "value": [{"manager": "b"}]},
            {"op": "replace", "path": "/metadata/resourceVersion", "value": "7"},
        ],
        {"metadata": {"name": "p", "resourceVersion": "7", "managedFields": [{"manager": "b"}]}},
    ),
]


@pytest.mark.parametrize(
    ("doc", "ops", "expected"),
    [case[1:] for case in JSON_PATCH_CASES],
    ids=[case[0] for case in JSON_PATCH_CASES],
)
def test_json_patch_follows_rfc6902(doc, ops, expected):
    assert _same(apply_json_patch(doc, ops), expected)


# RFC 6901 section 5: every pointer into its example document.
POINTER_DOC = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}
POINTERS = [
    ("", POINTER_DOC),
    ("/foo", ["bar", "baz"]),
    ("/foo/0", "bar"),
    ("/", 0),
    ("/a~1b", 1),
    ("/c%d", 2),
    ("/e^f", 3),
    ("/g|h", 4),
    ("/i\\j", 5),
    ('/k"l', 6),
    ("/ ", 7),
    ("/m~0n", 8),
]


@pytest.mark.parametrize(("pointer", "value"), POINTERS, ids=[p or "root" for p, _ in POINTERS])
def test_json_pointer_resolves_rfc6901_examples(pointer, value):
    ops = [{"op": "test", "path": pointer, "value": value}]
    assert _same(apply_json_patch(POINTER_DOC, ops), POINTER_DOC)


JSON_PATCH_ERRORS = [
    (
        "A9-test-fails",
        {"baz": "qux"},
        [{"op": "test", "path": "/baz", "value": "bar"}],
        422,
        "testing value /baz failed: test failed",
    ),
    (
        "A12-add-to-missing-parent",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz/bat", "value": "qux"}],
        422,
        'add operation does not apply: doc is missing path: "/baz/bat": missing value',
    ),
    (
        "A15-string-is-not-number",
        {"/": 9, "~1": 10},
        [{"op": "test", "path": "/~01", "value": "10"}],
        422,
        "testing value /~01 failed: test failed",
    ),
    (
        "test-true-is-not-1",
        {"a": 1},
        [{"op": "test", "path": "/a", "value": True}],
        422,
        "testing value /a failed: test failed",
    ),
    (
        "test-missing-path",
        {"a": 1},
        [{"op": "test", "path": "/b", "value": None}],
        422,
        "test operation does not apply: is missing path: /b: missing value",
    ),
    (
        "ops-not-a-list",
        {},
        {"op": "add"},
        400,
        "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
    ),
    (
        "op-not-an-object",
        {},
        ["add"],
        400,
        "json: cannot unmarshal string into Go value of type jsonpatch.Operation",
    ),
    (
        "ops-a-number",
        {},
        5,
        400,
        "json: cannot unmarshal number into Go value of type jsonpatch.Patch",
    ),
    (
        "op-a-bool",
        {},
        [True],
        400,
        "json: cannot unmarshal bool into Go value of type jsonpatch.Operation",
    ),
    (
        "test-index-past-end",
        {"a": [1]},
        [{"op": "test", "path": "/a/1", "value": 1}],
        422,
        "test operation does not apply: is missing path: /a/1: missing value",
    ),
    (
        "replace-index-past-end",
        {"a": [1]},
        [{"op": "replace", "path": "/a/1", "value": 1}],
        422,
        "replace operation does not apply: doc is missing key: /a/1: missing value",
    ),
    (
        "add-below-a-scalar",
        {"a": 1},
        [{"op": "add", "path": "/a/b", "value": 1}],
        422,
        'add operation does not apply: doc is missing path: "/a/b": missing value',
    ),
    ("unknown-op", {}, [{"op": "frobnicate", "path": "/a"}], 422, "Unexpected kind: frobnicate"),
    ("missing-op", {}, [{"path": "/a"}], 422, "Unexpected kind: unknown"),
    (
        "missing-path",
        {},
        [{"op": "add", "value": 1}],
        400,
        "add operation failed to decode path: operation missing path field: missing value",
    ),
    (
        "missing-value",
        {},
        [{"op": "add", "path": "/a"}],
        400,
        "add operation, missing value field: missing value",
    ),
    (
        "missing-from",
        {"a": 1},
        [{"op": "move", "path": "/b"}],
        400,
        "move operation failed to decode from: operation missing from field: missing value",
    ),
    (
        "pointer-without-slash",
        {"a": 1},
        [{"op": "remove", "path": "a"}],
        422,
        'remove operation does not apply: invalid JSON pointer "a"',
    ),
    (
        "remove-missing-member",
        {"a": {"b": 1}},
        [{"op": "remove", "path": "/a/c"}],
        422,
        "error in remove for path: '/a/c': Unable to remove nonexistent key: c: missing value",
    ),
    (
        "remove-missing-parent",
        {"a": 1},
        [{"op": "remove", "path": "/x/y"}],
        422,
        'remove operation does not apply: doc is missing path: "/x/y": missing value',
    ),
    (
        "remove-index-out-of-range",
        {"a": [1]},
        [{"op": "remove", "path": "/a/1"}],
        422,
        "Unable to access invalid index: 1: invalid index referenced",
    ),
    (
        "remove-negative-index",
        {"a": [1]},
        [{"op": "remove", "path": "/a/-1"}],
        422,
        "Unable to access invalid index: -1: invalid index referenced",
    ),
    (
        "add-index-past-end",
        {"a": [1]},
        [{"op": "add", "path": "/a/2", "value": 0}],
        422,
        "error in add for path: '/a/2': Unable to access invalid index: 2: invalid index referenced",
    ),
    (
        "add-index-leading-zero",
        {"a": [1, 2]},
        [{"op": "add", "path": "/a/01", "value": 0}],
        422,
        "Unable to access invalid index: 01: invalid index referenced",
    ),
    (
        "replace-missing-member",
        {"a": {}},
        [{"op": "replace", "path": "/a/b", "value": 1}],
        422,
        "replace operation does not apply: doc is missing key: /a/b: missing value",
    ),
    (
        "replace-missing-parent",
        {},
        [{"op": "replace", "path": "/a/b", "value": 1}],
        422,
        "replace operation does not apply: doc is missing path: /a/b: missing value",
    ),
    (
        "replace-document-with-array",
        {"a": 1},
        [{"op": "replace", "path": "", "value": [1]}],
        422,
        "the patched document is array, not an object",
    ),
    (
        "move-missing-from",
        {"a": 1},
        [{"op": "move", "from": "/b", "path": "/c"}],
        422,
        "error in move for path: '/b': Unable to remove nonexistent key: b: missing value",
    ),
    (
        "move-into-own-child",
        {"a": {"b": 1}},
        [{"op": "move", "from": "/a", "path": "/a/b/c"}],
        422,
        'move operation does not apply: "from" /a is a proper prefix of "path" /a/b/c',
    ),
    (
        "copy-missing-from",
        {"a": 1},
        [{"op": "copy", "from": "/b", "path": "/c"}],
        422,
        "copy operation does not apply: doc is missing from path: /b: missing value",
    ),
]


@pytest.mark.parametrize(
    ("doc", "ops", "code", "message"),
    [case[1:] for case in JSON_PATCH_ERRORS],
    ids=[case[0] for case in JSON_PATCH_ERRORS],
)
def test_json_patch_errors_carry_upstream_text_and_status(doc, ops, code, message):
    before = copy.deepcopy(doc)
    with pytest.raises(PatchError) as caught:
        apply_json_patch(doc, ops)
    assert message in str(caught.value)
    assert caught.value.code == code
    assert _same(doc, before)


def test_json_patch_is_atomic_when_a_later_operation_fails():
    doc = {"metadata": {"labels": {"a": "1"}}, "spec": {"items": [1, 2]}}
    before = copy.deepcopy(doc)
    ops = [
        {"op": "add", "path": "/metadata/labels/b", "value": "2"},
        {"op": "remove", "path": "/spec/items/0"},
        {"op": "replace", "path": "/spec/missing", "value": 1},
    ]
    with pytest.raises(PatchError):
        apply_json_patch(doc, ops)
    assert _same(doc, before)


def test_json_patch_result_shares_nothing_with_its_inputs():
    doc = {"a": {"b": [1]}}
    value = {"c": [2]}
    result = apply_json_patch(doc, [{"op": "add", "path": "/d", "value": value}])
    result["a"]["b"].append(99)
    result["d"]["c"].append(99)
    assert doc == {"a": {"b": [1]}}
    assert value == {"c": [2]}


# --- strategic merge patch ------------------------------------------------------------------

WIRE_LIVE_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "finalizers": ["a/b", "c/d"],
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{old}\n"},
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            },
            {"name": "d", "image": "busybox"},
        ],
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
}
# kubectl-wire.md section 5.4, as kubectl v1.32 sends it.
WIRE_PATCH = {
    "metadata": {
        "$deleteFromPrimitiveList/finalizers": ["c/d"],
        "$setElementOrder/finalizers": ["a/b"],
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{new}\n"},
    },
    "spec": {
        "$setElementOrder/containers": [{"name": "c"}],
        "containers": [
            {
                "name": "c",
                "$setElementOrder/env": [{"name": "B"}],
                "env": [{"$patch": "delete", "name": "A"}],
            },
            {"$patch": "delete", "name": "d"},
        ],
    },
}
WIRE_RESULT = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "finalizers": ["a/b"],
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{new}\n"},
    },
    "spec": {
        "containers": [{"name": "c", "image": "busybox", "env": [{"name": "B", "value": "2"}]}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
}


def _pod_spec(**spec: Any) -> dict[str, Any]:
    return {"spec": spec}


def _names(*names: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"name": name, **extra} for name in names]


SMP_CASES = [
    ("kubectl-wire-example", "Pod", WIRE_LIVE_POD, WIRE_PATCH, WIRE_RESULT),
    (
        "kubectl-priorityclass-three-way",
        "PriorityClass",
        {"metadata": {"name": "low", "annotations": {"x": "{}"}}, "value": 10},
        {"metadata": {"annotations": {"x": '{"value":20}\n'}}, "value": 20},
        {"metadata": {"name": "low", "annotations": {"x": '{"value":20}\n'}}, "value": 20},
    ),
    # Ported from upstream customStrategicMergePatchTestCaseData.
    (
        "unique-scalars-when-merging-lists",
        "Pod",
        {"metadata": {"finalizers": ["1", "2"]}},
        {"metadata": {"finalizers": ["2", "3"]}},
        {"metadata": {"finalizers": ["1", "2", "3"]}},
    ),
    (
        "delete-map-from-nested-map",
        "Pod",
        _pod_spec(nodeSelector={"key1": "1", "key2": "1"}),
        _pod_spec(nodeSelector={"$patch": "delete"}),
        _pod_spec(nodeSelector={}),
    ),
    (
        "delete-all-items-from-merging-list",
        "Pod",
        _pod_spec(containers=_names("1", "2")),
        _pod_spec(containers=[{"$patch": "replace"}]),
        _pod_spec(containers=[]),
    ),
    (
        "merge-empty-merging-lists",
        "Pod",
        _pod_spec(containers=[]),
        _pod_spec(containers=[]),
        _pod_spec(containers=[]),
    ),
    (
        "delete-all-keys-from-map",
        "Pod",
        _pod_spec(nodeName="n", priority=1),
        _pod_spec(**{"$patch": "replace"}),
        _pod_spec(),
    ),
    (
        "add-key-and-delete-all-keys-from-map",
        "Pod",
        _pod_spec(nodeName="n", priority=1),
        _pod_spec(**{"$patch": "replace", "schedulerName": "a"}),
        _pod_spec(schedulerName="a"),
    ),
    (
        "delete-all-duplicate-entries-in-a-merging-list",
        "Pod",
        _pod_spec(
            containers=[
                {"name": "1"},
                {"name": "1"},
                {"name": "2", "image": "a"},
                {"name": "3"},
                {"name": "3"},
            ]
        ),
        _pod_spec(
            containers=[{"name": "1", "$patch": "delete"}, {"name": "3", "$patch": "delete"}]
        ),
        _pod_spec(containers=[{"name": "2", "image": "a"}]),
    ),
    (
        "retain-keys-map-without-directive-merges",
        "Deployment",
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
        {"spec": {"strategy": {"rollingUpdate": {"maxSurge": 2}}}},
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}}}},
    ),
    (
        "retain-keys-map-clears-unlisted-field",
        "Deployment",
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        {"spec": {"strategy": {"type": "Recreate"}}},
    ),
    (
        "retain-keys-list-of-maps-clears-a-field",
        "Pod",
        _pod_spec(volumes=[{"name": "v", "hostPath": {"path": "/x"}}, {"name": "w"}]),
        _pod_spec(volumes=[{"name": "v", "$retainKeys": ["emptyDir", "name"], "emptyDir": {}}]),
        _pod_spec(volumes=[{"name": "v", "emptyDir": {}}, {"name": "w"}]),
    ),
    (
        "retain-keys-list-can-delete-a-field-without-directive",
        "Pod",
        _pod_spec(volumes=[{"name": "bar"}, {"name": "foo", "emptyDir": {}}]),
        _pod_spec(volumes=[{"name": "foo", "emptyDir": None}]),
        _pod_spec(volumes=[{"name": "bar"}, {"name": "foo"}]),
    ),
    (
        "preserve-the-order-from-the-patch-in-a-merging-list",
        "Pod",
        _pod_spec(containers=[{"name": "1"}, {"name": "2", "image": "b"}, {"name": "3"}]),
        _pod_spec(
            containers=[
                {"name": "3", "image": "c"},
                {"name": "1", "image": "a"},
                {"name": "2", "tty": True},
            ]
        ),
        _pod_spec(
            containers=[
                {"name": "3", "image": "c"},
                {"name": "1", "image": "a"},
                {"name": "2", "image": "b", "tty": True},
            ]
        ),
    ),
    (
        "preserve-the-order-from-the-patch-in-a-merging-list-2",
        "Pod",
        _pod_spec(containers=[{"name": "1"}, {"name": "2", "image": "b"}, {"name": "3"}]),
        _pod_spec(containers=[{"name": "3", "image": "c"}, {"name": "1", "image": "a"}]),
        _pod_spec(
            containers=[
                {"name": "2", "image": "b"},
                {"name": "3", "image": "c"},
                {"name": "1", "image": "a"},
            ]
        ),
    ),
    (
        "preserve-the-order-from-the-patch-in-a-merging-int-list",
        "Pod",
        {"metadata": {"finalizers": ["1", "2", "3"]}},
        {"metadata": {"finalizers": ["3", "1", "2"]}},
        {"metadata": {"finalizers": ["3", "1", "2"]}},
    ),
    (
        "preserve-the-order-from-the-patch-in-a-merging-int-list-2",
        "Pod",
        {"metadata": {"finalizers": ["1", "2", "3"]}},
        {"metadata": {"finalizers": ["3", "1"]}},
        {"metadata": {"finalizers": ["2", "3", "1"]}},
    ),
    # Ported from upstream customStrategicMergePatchRawTestCases.
    (
        "set-element-order-names-an-absent-item",
        "Pod",
        _pod_spec(containers=_names("1", "3")),
        _pod_spec(
            **{
                "$setElementOrder/containers": _names("3", "2", "1"),
                "containers": [{"name": "3", "image": "3"}, {"name": "1", "image": "1"}],
            }
        ),
        _pod_spec(containers=[{"name": "3", "image": "3"}, {"name": "1", "image": "1"}]),
    ),
    (
        "set-element-order-names-an-absent-item-int-list",
        "Pod",
        {"metadata": {"finalizers": ["1", "3"]}},
        {"metadata": {"$setElementOrder/finalizers": ["3", "2", "1"]}},
        {"metadata": {"finalizers": ["3", "1"]}},
    ),
    (
        "delete-from-primitive-list-ignores-absent-item",
        "Pod",
        {"metadata": {"finalizers": ["1", "2"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["3"]}},
        {"metadata": {"finalizers": ["1", "2"]}},
    ),
    (
        "delete-from-primitive-list-on-empty-list",
        "Pod",
        {"metadata": {"finalizers": []}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["3"]}},
        {"metadata": {"finalizers": []}},
    ),
    (
        "delete-from-primitive-list-does-not-create-the-list",
        "Pod",
        {"metadata": {"labels": {"a": "b"}}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["3"]}},
        {"metadata": {"labels": {"a": "b"}}},
    ),
    (
        "delete-from-primitive-list-with-merge-strategy",
        "Pod",
        {"metadata": {"finalizers": ["1", "2", "3"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["2"]}},
        {"metadata": {"finalizers": ["1", "3"]}},
    ),
    (
        "delete-from-primitive-list-without-merge-strategy",
        "Pod",
        _pod_spec(containers=[{"name": "c", "args": ["1", "2", "3"]}]),
        _pod_spec(containers=[{"name": "c", "$deleteFromPrimitiveList/args": ["2"]}]),
        _pod_spec(containers=[{"name": "c", "args": ["1", "3"]}]),
    ),
    # Ported from upstream strategicMergePatchRawTestCases (two-way results).
    (
        "nested-patch-merge-with-empty-list",
        "Pod",
        {"metadata": {"name": "hi"}},
        _pod_spec(containers=[{"name": "hello"}, {"$patch": "delete", "name": "doesntexist"}]),
        {"metadata": {"name": "hi"}, "spec": {"containers": [{"name": "hello"}]}},
    ),
    (
        "set-element-order-and-patch-list-keep-server-only-items",
        "Pod",
        _pod_spec(containers=[{"name": "hello2"}]),
        _pod_spec(
            **{
                "$setElementOrder/containers": _names("hello", "doesntexist"),
                "containers": [{"name": "hello"}],
            }
        ),
        _pod_spec(containers=[{"name": "hello"}, {"name": "hello2"}]),
    ),
    (
        "set-elements-order-in-a-list",
        "Pod",
        _pod_spec(
            containers=[
                {"name": "1", "image": "a"},
                {"name": "3", "image": "3"},
                {"name": "4", "image": "4"},
                {"name": "2", "image": "2"},
            ]
        ),
        _pod_spec(**{"$setElementOrder/containers": _names("4", "2", "3", "1")}),
        _pod_spec(
            containers=[
                {"name": "4", "image": "4"},
                {"name": "2", "image": "2"},
                {"name": "3", "image": "3"},
                {"name": "1", "image": "a"},
            ]
        ),
    ),
    (
        "set-elements-order-with-server-only-items",
        "Pod",
        _pod_spec(containers=_names("1", "3", "4", "2", "9")),
        _pod_spec(**{"$setElementOrder/containers": _names("4", "2", "3", "1")}),
        _pod_spec(containers=_names("4", "2", "3", "1", "9")),
    ),
    (
        "set-elements-order-with-server-only-items-2",
        "Pod",
        _pod_spec(containers=_names("1", "2", "9", "3", "4")),
        _pod_spec(**{"$setElementOrder/containers": _names("2", "1", "4", "3")}),
        _pod_spec(containers=_names("2", "1", "9", "4", "3")),
    ),
    (
        "set-elements-order-with-server-only-items-3",
        "Pod",
        _pod_spec(containers=_names("1", "2", "7", "9", "8", "3", "4")),
        _pod_spec(**{"$setElementOrder/containers": _names("2", "1", "4", "3")}),
        _pod_spec(containers=_names("2", "1", "7", "9", "8", "4", "3")),
    ),
    (
        "set-elements-order-in-an-int-list-with-server-only-items-2",
        "Pod",
        {"metadata": {"finalizers": ["1", "2", "9", "3", "4"]}},
        {"metadata": {"$setElementOrder/finalizers": ["2", "1", "4", "3"]}},
        {"metadata": {"finalizers": ["2", "1", "9", "4", "3"]}},
    ),
    (
        "set-element-order-for-a-merging-list-with-duplicate",
        "Pod",
        _pod_spec(
            containers=[
                {"name": "1"},
                {"name": "2", "image": "dup1"},
                {"name": "3"},
                {"name": "2", "image": "dup2"},
                {"name": "4"},
            ]
        ),
        _pod_spec(**{"$setElementOrder/containers": _names("2", "1", "4", "3", "2")}),
        _pod_spec(
            containers=[
                {"name": "2", "image": "dup1"},
                {"name": "2", "image": "dup2"},
                {"name": "1"},
                {"name": "4"},
                {"name": "3"},
            ]
        ),
    ),
    (
        "set-element-order-for-a-merging-int-list-with-duplicate",
        "Pod",
        {"metadata": {"finalizers": ["1", "2", "3", "2", "4"]}},
        {"metadata": {"$setElementOrder/finalizers": ["2", "1", "4", "3", "2"]}},
        {"metadata": {"finalizers": ["2", "2", "1", "4", "3"]}},
    ),
    (
        "delete-and-reorder-in-one-list-reorder-in-another",
        "Pod",
        _pod_spec(
            containers=[{"name": "a", "image": "a"}, {"name": "b", "image": "b"}],
            initContainers=[{"name": "c", "image": "c"}, {"name": "d", "image": "d"}],
        ),
        _pod_spec(
            **{
                "$setElementOrder/containers": _names("b"),
                "$setElementOrder/initContainers": _names("d", "c"),
                "containers": [{"$patch": "delete", "name": "a"}],
            }
        ),
        _pod_spec(
            containers=[{"name": "b", "image": "b"}],
            initContainers=[{"name": "d", "image": "d"}, {"name": "c", "image": "c"}],
        ),
    ),
    (
        "add-finalizer-and-delete-another",
        "Pod",
        {"metadata": {"finalizers": ["a", "b"]}},
        {
            "metadata": {
                "$setElementOrder/finalizers": ["a", "c"],
                "$deleteFromPrimitiveList/finalizers": ["b"],
                "finalizers": ["c"],
            }
        },
        {"metadata": {"finalizers": ["a", "c"]}},
    ),
    (
        "set-element-order-with-a-list-the-live-object-lacks",
        "Pod",
        _pod_spec(nodeName="n"),
        _pod_spec(
            **{
                "$setElementOrder/containers": _names("b", "a"),
                "containers": [{"name": "b"}, {"name": "a", "image": None}],
            }
        ),
        _pod_spec(nodeName="n", containers=_names("b", "a")),
    ),
    (
        "set-element-order-skips-a-replace-marker",
        "Pod",
        _pod_spec(containers=_names("x")),
        _pod_spec(
            **{
                "$setElementOrder/containers": _names("b", "a"),
                "containers": [{"$patch": "replace"}, {"name": "b"}, {"name": "a"}],
            }
        ),
        _pod_spec(containers=_names("b", "a")),
    ),
    (
        "set-element-order-without-any-list-is-a-no-op",
        "Pod",
        _pod_spec(nodeName="n"),
        _pod_spec(**{"$setElementOrder/containers": []}),
        _pod_spec(nodeName="n"),
    ),
    (
        "set-element-order-over-an-empty-patch-list",
        "Pod",
        _pod_spec(containers=_names("a", "b")),
        _pod_spec(**{"$setElementOrder/containers": _names("b", "a"), "containers": []}),
        _pod_spec(containers=_names("b", "a")),
    ),
    (
        "retain-keys-ignores-directive-keys",
        "Pod",
        _pod_spec(nodeName="n", containers=_names("a", "b")),
        _pod_spec(
            **{
                "$retainKeys": ["containers"],
                "$setElementOrder/containers": _names("b", "a"),
            }
        ),
        _pod_spec(containers=_names("b", "a")),
    ),
    (
        "delete-from-primitive-list-both-empty",
        "Pod",
        {"metadata": {"finalizers": []}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": []}},
        {"metadata": {"finalizers": []}},
    ),
    (
        "null-delete-list-removes-the-field",
        "Pod",
        {"metadata": {"finalizers": ["a"], "name": "p"}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": None}},
        {"metadata": {"name": "p"}},
    ),
    (
        "directive-map-without-a-live-value-vanishes",
        "Pod",
        _pod_spec(nodeName="n"),
        _pod_spec(affinity={"$patch": "delete"}),
        _pod_spec(nodeName="n"),
    ),
    (
        "new-value-loses-nested-directive-maps",
        "Pod",
        _pod_spec(nodeName="n"),
        _pod_spec(affinity={"nodeAffinity": {"$patch": "replace", "x": 1}, "podAffinity": {}}),
        _pod_spec(nodeName="n", affinity={"podAffinity": {}}),
    ),
    # Null handling (the apiserver ignores unmatched nulls).
    (
        "null-deletes-a-field",
        "Pod",
        _pod_spec(nodeName="n", priority=1),
        _pod_spec(nodeName=None),
        _pod_spec(priority=1),
    ),
    (
        "unmatched-null-is-ignored",
        "Pod",
        _pod_spec(priority=1),
        _pod_spec(nodeName=None, affinity={"nodeAffinity": None}),
        _pod_spec(priority=1, affinity={}),
    ),
    (
        "new-element-loses-nulls-and-directives",
        "Pod",
        _pod_spec(containers=_names("a")),
        _pod_spec(
            containers=[
                {
                    "name": "b",
                    "image": None,
                    "$setElementOrder/env": [{"name": "X"}],
                    "env": [{"name": "X"}, {"$patch": "delete", "name": "Y"}],
                }
            ]
        ),
        # A new element goes before server-only ones, as upstream mergeSortedSlice does.
        _pod_spec(containers=[{"name": "b", "env": [{"name": "X"}]}, {"name": "a"}]),
    ),
    (
        "replace-directive-drops-nested-directives",
        "Pod",
        _pod_spec(containers=_names("a", "b")),
        _pod_spec(containers=[{"$patch": "replace"}, {"name": "c", "image": None}]),
        _pod_spec(containers=[{"name": "c"}]),
    ),
    (
        "top-level-delete-directive-empties-the-object",
        "Pod",
        {"metadata": {"name": "p"}},
        {"$patch": "delete"},
        {},
    ),
    (
        "type-change-replaces",
        "Pod",
        _pod_spec(containers=_names("a")),
        _pod_spec(containers={"name": "x"}),
        _pod_spec(containers={"name": "x"}),
    ),
    (
        "node-pod-cidrs-merge-as-a-set",
        "Node",
        {"spec": {"podCIDRs": ["10.0.0.0/24"]}},
        {"spec": {"podCIDRs": ["fd00::/64"]}},
        # Without $setElementOrder a patch item not in the live list goes first (upstream).
        {"spec": {"podCIDRs": ["fd00::/64", "10.0.0.0/24"]}},
    ),
    # Kinds without a table fall back to JSON merge semantics (plus directives).
    (
        "unknown-kind-replaces-lists",
        "Widget",
        _pod_spec(containers=_names("a", "b")),
        _pod_spec(containers=[{"name": "b", "image": "x"}]),
        _pod_spec(containers=[{"name": "b", "image": "x"}]),
    ),
    (
        "unknown-kind-merges-maps-and-honours-directives",
        "Widget",
        {"metadata": {"finalizers": ["a"], "labels": {"a": "1", "b": "2"}}, "data": {"x": 1}},
        {"metadata": {"finalizers": ["b"], "labels": {"b": None}}, "data": {"$patch": "delete"}},
        {"metadata": {"finalizers": ["b"], "labels": {"a": "1"}}, "data": {}},
    ),
]


@pytest.mark.parametrize(
    ("kind", "original", "smp", "expected"),
    [case[1:] for case in SMP_CASES],
    ids=[case[0] for case in SMP_CASES],
)
def test_strategic_merge_patch(kind, original, smp, expected):
    before = copy.deepcopy((original, smp))
    result = apply_strategic_merge_patch(original, smp, kind=kind)
    assert _same(result, expected), json.dumps(result)
    assert _same((original, smp), before)


# Every keyed list in the table: (kind, dotted path to the list, merge key). Verified
# against the patchStrategy/patchMergeKey tags in k8s.io/api and apimachinery meta/v1.
KEYED_LISTS = [
    ("Pod", "metadata.ownerReferences", "uid"),
    ("Pod", "spec.containers", "name"),
    ("Pod", "spec.initContainers", "name"),
    ("Pod", "spec.ephemeralContainers", "name"),
    ("Pod", "spec.volumes", "name"),
    ("Pod", "spec.imagePullSecrets", "name"),
    ("Pod", "spec.hostAliases", "ip"),
    ("Pod", "spec.topologySpreadConstraints", "topologyKey"),
    ("Pod", "spec.schedulingGates", "name"),
    ("Pod", "spec.resourceClaims", "name"),
    ("Pod", "spec.containers[c].env", "name"),
    ("Pod", "spec.containers[c].ports", "containerPort"),
    ("Pod", "spec.containers[c].volumeMounts", "mountPath"),
    ("Pod", "spec.containers[c].volumeDevices", "devicePath"),
    ("Pod", "spec.initContainers[c].env", "name"),
    ("Pod", "spec.ephemeralContainers[c].volumeMounts", "mountPath"),
    ("Pod", "status.conditions", "type"),
    ("Pod", "status.podIPs", "ip"),
    ("Pod", "status.hostIPs", "ip"),
    ("Pod", "status.resourceClaimStatuses", "name"),
    ("Node", "metadata.ownerReferences", "uid"),
    ("Node", "status.conditions", "type"),
    ("Node", "status.addresses", "type"),
    ("Namespace", "status.conditions", "type"),
    ("PodDisruptionBudget", "status.conditions", "type"),
    ("PriorityClass", "metadata.ownerReferences", "uid"),
    ("Event", "metadata.ownerReferences", "uid"),
    ("Deployment", "spec.template.spec.containers", "name"),
    ("Deployment", "spec.template.spec.containers[c].env", "name"),
    ("Deployment", "spec.template.metadata.ownerReferences", "uid"),
    ("Deployment", "status.conditions", "type"),
    ("ReplicaSet", "spec.template.spec.volumes", "name"),
    ("ReplicaSet", "status.conditions", "type"),
    ("StatefulSet", "spec.template.spec.containers", "name"),
    ("DaemonSet", "spec.template.spec.tolerations", None),
    ("Job", "spec.template.spec.containers", "name"),
    ("Job", "status.conditions", "type"),
    ("CronJob", "spec.jobTemplate.spec.template.spec.containers", "name"),
    ("PodTemplate", "template.spec.containers", "name"),
    ("Service", "spec.ports", "port"),
    ("ServiceAccount", "secrets", "name"),
    # Atomic lists (no patchStrategy upstream): the patch list replaces the live one.
    ("Pod", "spec.tolerations", None),
    ("Pod", "spec.readinessGates", None),
    ("Pod", "spec.containers[c].envFrom", None),
    ("Pod", "spec.containers[c].resources.claims", None),
    ("Pod", "status.containerStatuses", None),
    ("Node", "spec.taints", None),
    ("Node", "status.images", None),
    ("Deployment", "spec.selector.matchExpressions", None),
    ("Widget", "spec.containers", None),
]


@pytest.mark.parametrize(
    ("kind", "path", "merge_key"),
    KEYED_LISTS,
    ids=[f"{kind}-{path}-{key or 'atomic'}" for kind, path, key in KEYED_LISTS],
)
def test_list_fields_merge_by_their_upstream_key_or_replace(kind, path, merge_key):
    key = merge_key or "key"
    original = _nest(path, [{key: "k1", "x": 1}, {key: "k2", "x": 2}])
    smp = _nest(path, [{key: "k2", "y": 3}])
    merged = _nest(path, [{key: "k1", "x": 1}, {key: "k2", "x": 2, "y": 3}])
    expected = merged if merge_key else smp
    assert _same(apply_strategic_merge_patch(original, smp, kind=kind), expected)


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("Pod", "metadata.finalizers"),
        ("Namespace", "metadata.finalizers"),
        ("Deployment", "spec.template.metadata.finalizers"),
        ("Node", "spec.podCIDRs"),
    ],
    ids=["pod", "namespace", "pod-template", "node-pod-cidrs"],
)
def test_scalar_merge_lists_merge_as_sets(kind, path):
    original = _nest(path, ["a", "b", "a"])
    smp = _nest(path, ["c", "b"])
    result = apply_strategic_merge_patch(original, smp, kind=kind)
    # Deduplicated; "c" (new) leads, then "a" which the live list had before "b".
    assert _same(result, _nest(path, ["c", "a", "b"]))


@pytest.mark.parametrize(
    ("kind", "expected_selector"),
    [
        ("PodDisruptionBudget", {"matchLabels": {"b": "2"}}),
        ("Deployment", {"matchLabels": {"a": "1", "b": "2"}}),
    ],
    ids=["pdb-selector-is-replaced", "deployment-selector-merges"],
)
def test_pdb_selector_has_patch_strategy_replace(kind, expected_selector):
    original = {"spec": {"selector": {"matchLabels": {"a": "1"}}}}
    smp = {"spec": {"selector": {"matchLabels": {"b": "2"}}}}
    result = apply_strategic_merge_patch(original, smp, kind=kind)
    assert _same(result, {"spec": {"selector": expected_selector}})


SMP_ERRORS = [
    (
        "missing-merge-key",
        _pod_spec(containers=[{"name": "1", "image": "a"}]),
        _pod_spec(containers=[{"image": "b"}]),
        422,
        "map: map[image:b] does not contain declared merge key: name",
    ),
    (
        "live-element-without-merge-key",
        _pod_spec(containers=[{"image": "a"}]),
        _pod_spec(containers=[{"name": "b"}]),
        422,
        "does not contain declared merge key: name",
    ),
    (
        "set-element-order-does-not-match-patch-list",
        _pod_spec(containers=_names("1", "3", "2")),
        _pod_spec(
            **{
                "$setElementOrder/containers": _names("1", "2", "3"),
                "containers": _names("3", "1"),
            }
        ),
        422,
        "doesn't match $setElementOrder list",
    ),
    (
        "set-element-order-does-not-match-int-patch-list",
        {"metadata": {"finalizers": ["1", "3", "2"]}},
        {
            "metadata": {
                "$setElementOrder/finalizers": ["1", "2", "3"],
                "finalizers": ["3", "1"],
            }
        },
        422,
        "doesn't match $setElementOrder list",
    ),
    (
        "merge-directive-in-a-map",
        _pod_spec(nodeSelector={"a": "b"}),
        _pod_spec(nodeSelector={"$patch": "merge"}),
        422,
        "unknown patch type: merge in map: map[$patch:merge]",
    ),
    (
        "merge-directive-in-a-list",
        _pod_spec(containers=_names("a")),
        _pod_spec(containers=[{"$patch": "merge"}]),
        422,
        "merging lists cannot yet be specified in the patch",
    ),
    (
        "unknown-directive-in-a-list",
        _pod_spec(containers=_names("a")),
        _pod_spec(containers=[{"$patch": "frobnicate", "name": "a"}]),
        422,
        "unknown patch type: frobnicate in map",
    ),
    (
        "delete-directive-without-merge-key",
        _pod_spec(containers=_names("a")),
        _pod_spec(containers=[{"$patch": "delete"}]),
        422,
        "does not contain declared merge key: name",
    ),
    (
        "mixed-element-types",
        {"metadata": {"finalizers": ["a"]}},
        {"metadata": {"finalizers": [1]}},
        422,
        "list element types are not identical",
    ),
    (
        "list-of-lists",
        {"metadata": {"finalizers": [["a"]]}},
        {"metadata": {"finalizers": [["b"]]}},
        422,
        "lists of lists are not supported",
    ),
    (
        "keyed-merge-of-maps-without-a-key",
        {"metadata": {"finalizers": [{"a": 1}]}},
        {"metadata": {"finalizers": [{"a": 2}]}},
        422,
        "cannot merge lists without merge key for finalizers",
    ),
    (
        "retain-keys-not-a-list",
        _pod_spec(nodeName="n"),
        _pod_spec(**{"$retainKeys": "nodeName"}),
        400,
        "invalid patch format of retainKeys",
    ),
    (
        "retain-keys-omits-a-patched-field",
        _pod_spec(nodeName="n"),
        _pod_spec(**{"$retainKeys": ["nodeName"], "priority": 1}),
        400,
        "invalid patch format of retainKeys",
    ),
    (
        "set-element-order-without-field",
        _pod_spec(containers=_names("a")),
        _pod_spec(**{"$setElementOrder": _names("a")}),
        400,
        "invalid patch format of setElementOrder list",
    ),
    (
        "set-element-order-not-a-list",
        _pod_spec(containers=_names("a")),
        _pod_spec(**{"$setElementOrder/containers": "a"}),
        400,
        "invalid patch format of setElementOrder list",
    ),
    (
        "set-element-order-over-a-non-list",
        _pod_spec(containers={"name": "a"}),
        _pod_spec(**{"$setElementOrder/containers": _names("a")}),
        422,
        "expected a list in containers, but received object",
    ),
    (
        "set-element-order-with-a-scalar-for-a-keyed-list",
        _pod_spec(containers=_names("a")),
        _pod_spec(**{"$setElementOrder/containers": ["a"]}),
        422,
        "expected a map, but received string: a",
    ),
    (
        "set-element-order-with-a-scalar-patch-element",
        _pod_spec(containers=_names("a")),
        _pod_spec(**{"$setElementOrder/containers": _names("a"), "containers": ["a"]}),
        422,
        "expected a map in [a], but received string",
    ),
    (
        "delete-from-primitive-list-without-field",
        {"metadata": {"finalizers": ["a"]}},
        {"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}},
        400,
        "invalid patch format of primitive list",
    ),
    (
        "delete-from-primitive-list-of-maps",
        _pod_spec(containers=_names("a")),
        _pod_spec(**{"$deleteFromPrimitiveList/containers": _names("a")}),
        400,
        "invalid patch format of primitive list",
    ),
]


@pytest.mark.parametrize(
    ("original", "smp", "code", "message"),
    [case[1:] for case in SMP_ERRORS],
    ids=[case[0] for case in SMP_ERRORS],
)
def test_strategic_merge_patch_errors_leave_the_input_unchanged(original, smp, code, message):
    before = copy.deepcopy((original, smp))
    with pytest.raises(PatchError) as caught:
        apply_strategic_merge_patch(original, smp, kind="Pod")
    assert message in str(caught.value)
    assert caught.value.code == code
    assert _same((original, smp), before)


def test_strategic_merge_patch_result_shares_nothing_with_its_inputs():
    live = copy.deepcopy(WIRE_LIVE_POD)
    smp = {"spec": {"containers": [{"name": "e", "env": [{"name": "Z"}]}]}}
    result = apply_strategic_merge_patch(live, smp, kind="Pod")
    for container in result["spec"]["containers"]:
        container.setdefault("env", []).append({"name": "MUTATED"})
    result["metadata"]["finalizers"].append("MUTATED")
    result["spec"]["tolerations"][0]["key"] = "MUTATED"
    assert _same(live, WIRE_LIVE_POD)
    assert smp == {"spec": {"containers": [{"name": "e", "env": [{"name": "Z"}]}]}}


def test_strategic_merge_patch_rejects_a_non_object_patch():
    with pytest.raises(PatchError, match="cannot unmarshal array") as caught:
        apply_strategic_merge_patch({}, [], kind="Pod")  # type: ignore[arg-type]
    assert caught.value.code == 400


# --- create_two_way_merge_patch --------------------------------------------------------------

TWO_WAY_CASES = [
    ("identical", {"a": 1, "b": {"c": [1]}}, {"a": 1, "b": {"c": [1]}}, {}),
    ("changed-scalar", {"a": 1}, {"a": 2}, {"a": 2}),
    ("removed-member", {"a": 1, "b": 2}, {"a": 1}, {"b": None}),
    ("added-member", {}, {"a": {"b": 1}}, {"a": {"b": 1}}),
    ("nested-change", {"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}}, {"a": {"c": 3}}),
    ("array-sent-whole", {"a": [1, 2]}, {"a": [1, 3]}, {"a": [1, 3]}),
    ("int-to-float-is-a-change", {"a": 1}, {"a": 1.0}, {"a": 1.0}),
    ("number-to-bool-is-a-change", {"a": 1}, {"a": True}, {"a": True}),
    ("object-to-scalar", {"a": {"b": 1}}, {"a": 1}, {"a": 1}),
    ("scalar-to-empty-object", {"a": 1}, {"a": {}}, {"a": {}}),
]


@pytest.mark.parametrize(
    ("original", "modified", "expected"),
    [case[1:] for case in TWO_WAY_CASES],
    ids=[case[0] for case in TWO_WAY_CASES],
)
def test_create_two_way_merge_patch(original, modified, expected):
    assert _same(create_two_way_merge_patch(original, modified), expected)
    assert _same(apply_merge_patch(original, expected), modified)


_keys = st.sampled_from(["a", "b", "c", "$x"])
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=3)
    | st.floats(allow_nan=False, allow_infinity=False, width=16)
    | st.text(alphabet="xy", max_size=2)
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # RFC 7386 cannot express a null member, so objects hold no nulls (arrays may).
    members = children.filter(lambda v: v is not None)
    return st.lists(children, max_size=3) | st.dictionaries(_keys, members, max_size=3)


_json_values = st.recursive(_scalars, _containers, max_leaves=12)
_documents = st.dictionaries(_keys, _json_values.filter(lambda v: v is not None), max_size=4)


@settings(max_examples=300, deadline=None)
@given(original=_documents, modified=_documents)
def test_two_way_merge_patch_round_trips(original, modified):
    before = copy.deepcopy((original, modified))
    merge_patch = create_two_way_merge_patch(original, modified)
    assert _same(apply_merge_patch(original, merge_patch), modified)
    assert _same((original, modified), before)


@settings(max_examples=200, deadline=None)
@given(original=_documents, modified=_documents)
def test_strategic_merge_of_unknown_kind_agrees_with_rfc7386(original, modified):
    merge_patch = create_two_way_merge_patch(original, modified)
    # "$x" keys are not directives, so both readings of the patch agree.
    assert _same(apply_strategic_merge_patch(original, merge_patch, kind="Widget"), modified)


@settings(max_examples=200, deadline=None)
@given(
    doc=_documents,
    additions=st.lists(st.tuples(_keys, _json_values), max_size=3),
    failing=st.sampled_from(
        [
            {"op": "remove", "path": "/nope"},
            {"op": "replace", "path": "/nope/deeper", "value": 1},
            {"op": "test", "path": "", "value": "not-an-object"},
            {"op": "bogus"},
        ]
    ),
)
def test_failing_json_patch_leaves_the_input_unchanged(doc, additions, failing):
    before = copy.deepcopy(doc)
    ops = [{"op": "add", "path": "/" + key, "value": value} for key, value in additions]
    ops += [{"op": "remove", "path": "/" + key} for key in list(doc)[:1]]
    with pytest.raises(PatchError):
        apply_json_patch(doc, [*ops, failing])
    assert _same(doc, before)


# --- apply_patch ------------------------------------------------------------------------------


LIVE = {
    "metadata": {"name": "p", "labels": {"a": "1"}},
    "spec": {"containers": [{"name": "c", "image": "old"}, {"name": "d", "image": "d"}]},
}
DISPATCH_CASES = [
    (
        "json-patch",
        PatchType.JSON_PATCH,
        [{"op": "replace", "path": "/spec/containers/0/image", "value": "new"}],
        {
            "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "new"}, {"name": "d", "image": "d"}]},
        },
    ),
    (
        "merge-patch-replaces-lists",
        PatchType.MERGE_PATCH,
        {"spec": {"containers": [{"name": "c", "image": "new"}]}},
        {
            "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "new"}]},
        },
    ),
    (
        "strategic-merge-patch-merges-by-key",
        PatchType.STRATEGIC_MERGE_PATCH,
        {"spec": {"containers": [{"name": "c", "image": "new"}]}},
        {
            "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "new"}, {"name": "d", "image": "d"}]},
        },
    ),
    (
        "apply-patch-merges-the-applied-object",
        PatchType.APPLY_PATCH,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"b": "2"}},
            "spec": {"containers": [{"name": "c", "image": "new"}]},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
            "spec": {"containers": [{"name": "c", "image": "new"}, {"name": "d", "image": "d"}]},
        },
    ),
    (
        "plain-string-content-type",
        "application/merge-patch+json",
        {"metadata": {"labels": None}},
        {
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "old"}, {"name": "d", "image": "d"}]},
        },
    ),
]


@pytest.mark.parametrize(
    ("patch_type", "body", "expected"),
    [case[1:] for case in DISPATCH_CASES],
    ids=[case[0] for case in DISPATCH_CASES],
)
def test_apply_patch_dispatches_on_content_type(patch_type, body, expected):
    result = apply_patch(LIVE, body, patch_type=patch_type, kind="Pod")
    assert _same(result, expected)


@pytest.mark.parametrize(
    ("patch_type", "body", "code"),
    [
        ("application/yaml", {}, 415),
        (PatchType.STRATEGIC_MERGE_PATCH, [], 400),
        (PatchType.APPLY_PATCH, "kind: Pod", 400),
        (PatchType.JSON_PATCH, {}, 400),
        (PatchType.MERGE_PATCH, None, 400),
    ],
    ids=["unknown-type", "smp-array", "apply-string", "json-patch-object", "merge-null"],
)
def test_apply_patch_rejects_bodies_of_the_wrong_shape(patch_type, body, code):
    with pytest.raises(PatchError) as caught:
        apply_patch(LIVE, body, patch_type=patch_type, kind="Pod")
    assert caught.value.code == code


def test_patch_type_values_are_the_wire_content_types():
    assert [t.value for t in PatchType] == [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ]


def test_patch_error_is_a_kubeprio_error_and_a_value_error():
    assert issubclass(PatchError, errors.KubeprioError)
    assert issubclass(PatchError, ValueError)
    assert patch.PatchError is PatchError
