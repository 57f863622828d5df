"""PATCH applied to the touched top-level members only gives the full patch's result.

``ApiService.patch_object`` encodes, copies, patches and decodes only the top-level members
a merge or strategic merge patch names (both patch kinds merge each top-level key on its
own: RFC 7386 ``MergePatch``, upstream ``mergeMap``), and takes the others from the stored
object as they are. The result must be what patching the whole encoded object and decoding
it gives — object, key order of unknown members, and errors alike.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio.api import patch as patching
from kubeprio.api.core import Pod
from kubeprio.api.serialization import (
    DecodeError,
    decode_changes,
    encode_for_change,
    from_dict,
    to_dict,
)
from kubeprio.apiserver.patchapply import apply_patch_members as _apply_patch
from kubeprio.apiserver.patchapply import top_level_keys as _top_level_keys
from kubeprio.client.protocol import PatchType

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "namespace": "default",
        "labels": {"app": "a"},
        "annotations": {"x": "1"},
        "uid": "u",
        "resourceVersion": "7",
    },
    "spec": {
        "nodeName": "n1",
        "priority": 5,
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
    },
    "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
        "startTime": "2026-01-01T00:00:00Z",
    },
    "unknownTop": {"kept": [1, 2]},
    "alsoUnknown": None,
}

MEMBERS: list[tuple[str, Any]] = [
    ("status", {"conditions": [{"type": "DisruptionTarget", "status": "True"}]}),
    ("status", {"conditions": [{"type": "Ready", "status": "False"}]}),
    ("status", {"nominatedNodeName": "n2", "phase": None}),
    ("status", None),
    ("metadata", {"labels": {"app": None, "b": "c"}}),
    ("metadata", {"annotations": None}),
    ("spec", {"priority": 7}),
    ("spec", {"priority": "seven"}),
    ("spec", {"containers": [{"name": "c", "image": "j"}]}),
    ("unknownTop", None),
    ("unknownTop", {"kept": None, "new": 1}),
    ("brandNew", {"a": 1}),
    ("alsoUnknown", 3),
    ("status", [1]),
    ("status", "x"),
]

PATCH_TYPES = [PatchType.MERGE_PATCH, PatchType.STRATEGIC_MERGE_PATCH, PatchType.APPLY_PATCH]


def _full(current: Pod, patch: dict[str, Any], patch_type: PatchType) -> Any:
    try:
        patched = patching.apply_patch(to_dict(current), patch, patch_type=patch_type, kind="Pod")
        return from_dict(Pod, patched), list(patched)
    except (patching.PatchError, DecodeError) as exc:
        return type(exc), str(exc)


def _partial(current: Pod, patch: dict[str, Any], patch_type: PatchType) -> Any:
    touched = _top_level_keys(patch, patch_type)
    assert touched is not None
    try:
        document = encode_for_change(current, touched)
        patched = _apply_patch(document, patch, patch_type, "Pod", touched)
        return decode_changes(current, patched, touched), list(patched)
    except (patching.PatchError, DecodeError) as exc:
        return type(exc), str(exc)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(MEMBERS), min_size=1, max_size=4),
    st.sampled_from(PATCH_TYPES),
)
def test_patching_touched_members_only_equals_patching_everything(
    members: list[tuple[str, Any]], patch_type: PatchType
) -> None:
    current = from_dict(Pod, POD)
    patch = dict(members)
    assert _partial(current, patch, patch_type) == _full(current, patch, patch_type)


@pytest.mark.parametrize(
    ("patch", "patch_type"),
    [
        ({"$patch": "replace", "status": {}}, PatchType.STRATEGIC_MERGE_PATCH),
        ({"$retainKeys": ["status"], "status": {}}, PatchType.STRATEGIC_MERGE_PATCH),
        ([{"op": "add", "path": "/status/phase", "value": "x"}], PatchType.JSON_PATCH),
        ("not a map", PatchType.MERGE_PATCH),
    ],
    ids=["patch-directive", "retain-keys", "json-patch", "not-a-map"],
)
def test_patches_that_may_touch_anything_take_the_full_path(
    patch: object, patch_type: PatchType
) -> None:
    assert _top_level_keys(patch, patch_type) is None
