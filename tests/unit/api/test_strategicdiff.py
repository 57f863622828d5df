"""Two-way strategic merge patches (``api.strategicdiff``).

Upstream: ``CreateTwoWayMergePatch`` in k8s.io/apimachinery/pkg/util/strategicpatch/
patch.go (``diffMaps``, ``handleSliceDiff``, ``diffLists``, ``diffListsOfMaps``,
``diffListsOfScalars``) with ``SetElementOrder`` on, as the kubelet's
``PatchNodeStatus`` and the TTL controller call it; the patches are checked as that
function writes them and, for every case, by applying them back
(``api.strategicpatch``): the result must be the modified document.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api.patch import apply_strategic_merge_patch
from kubeprio.api.strategicdiff import create_two_way_strategic_merge_patch

READY = {"type": "Ready", "status": "True"}
MEMORY = {"type": "MemoryPressure", "status": "False"}

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ("equal documents: empty patch", {"a": 1}, {"a": 1}, {}),
    ("scalar changed, member removed", {"a": 1, "b": 2}, {"a": 3}, {"a": 3, "b": None}),
    (
        "nested maps diffed member by member (a label added)",
        {"metadata": {"labels": {"x": "1"}, "name": "n"}},
        {"metadata": {"labels": {"x": "1", "y": "2"}, "name": "n"}},
        {"metadata": {"labels": {"y": "2"}}},
    ),
    (
        "a keyed list: the changed element as its diff plus its key, and the order",
        {"status": {"conditions": [MEMORY, READY]}},
        {"status": {"conditions": [MEMORY, {"type": "Ready", "status": "False"}]}},
        {
            "status": {
                "$setElementOrder/conditions": [{"type": "MemoryPressure"}, {"type": "Ready"}],
                "conditions": [{"type": "Ready", "status": "False"}],
            }
        },
    ),
    (
        "a keyed list: an element added whole, one gone as a delete directive",
        {"status": {"conditions": [MEMORY]}},
        {"status": {"conditions": [READY]}},
        {
            "status": {
                "$setElementOrder/conditions": [{"type": "Ready"}],
                "conditions": [READY, {"$patch": "delete", "type": "MemoryPressure"}],
            }
        },
    ),
    (
        "a keyed list only reordered: the order alone",
        {"status": {"conditions": [MEMORY, READY]}},
        {"status": {"conditions": [READY, MEMORY]}},
        {
            "status": {
                "$setElementOrder/conditions": [{"type": "Ready"}, {"type": "MemoryPressure"}]
            }
        },
    ),
    (
        "a list of scalars with merge: additions, removals and the order",
        {"metadata": {"finalizers": ["a", "b"]}},
        {"metadata": {"finalizers": ["b", "c"]}},
        {
            "metadata": {
                "$setElementOrder/finalizers": ["b", "c"],
                "finalizers": ["c"],
                "$deleteFromPrimitiveList/finalizers": ["a"],
            }
        },
    ),
    (
        "an atomic list is sent whole",
        {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}},
        {"spec": {"taints": []}},
        {"spec": {"taints": []}},
    ),
]


@pytest.mark.parametrize(("case", "original", "modified", "expected"), CASES)
def test_two_way_patch(
    case: str, original: dict[str, Any], modified: dict[str, Any], expected: dict[str, Any]
) -> None:
    patch = create_two_way_strategic_merge_patch(original, modified, kind="Node")
    assert patch == expected, case
    assert apply_strategic_merge_patch(original, patch, kind="Node") == modified, case


_conditions = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"])},
        optional={"status": st.sampled_from(["True", "False", "Unknown"]), "reason": st.text()},
    ),
    max_size=4,
    unique_by=lambda c: c["type"],
)
_labels = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.text(max_size=3), max_size=3)
_nodes = st.fixed_dictionaries(
    {"metadata": st.fixed_dictionaries({"name": st.just("n"), "labels": _labels})},
    optional={"status": st.fixed_dictionaries({"conditions": _conditions})},
)


@given(_nodes, _nodes)
def test_applying_the_patch_gives_the_modified_node(
    original: dict[str, Any], modified: dict[str, Any]
) -> None:
    """Invariant of ``CreateTwoWayMergePatch``: ``apply(original, diff) == modified``."""
    patch = create_two_way_strategic_merge_patch(original, modified, kind="Node")
    assert apply_strategic_merge_patch(original, patch, kind="Node") == modified
