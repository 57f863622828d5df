"""Emptied ``metadata`` lists and maps are not served (``apiserver.metaomitempty``).

Upstream: ``ObjectMeta`` in ``k8s.io/apimachinery/pkg/apis/meta/v1/types.go`` marks
``labels``, ``annotations``, ``ownerReferences`` and ``finalizers`` ``omitempty``.
"""

from __future__ import annotations

import pytest

from kubeprio.api.configmap import ConfigMap
from kubeprio.api.meta import ObjectMeta, OwnerReference
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import PatchType

EMPTIED = ["labels", "annotations", "ownerReferences", "finalizers"]


@pytest.mark.parametrize("patch_type", [PatchType.MERGE_PATCH, PatchType.STRATEGIC_MERGE_PATCH])
def test_a_patch_that_empties_them_leaves_them_out(api: ApiService, patch_type: PatchType) -> None:
    owner = OwnerReference(api_version="v1", kind="ConfigMap", name="o", uid="u1")
    api.create(
        ConfigMap(
            metadata=ObjectMeta(
                name="c",
                namespace="default",
                labels={"a": "b"},
                annotations={"x": "y"},
                owner_references=(owner,),
                finalizers=("example.com/f",),
            )
        )
    )
    patch = {"metadata": {"labels": {"a": None}, "annotations": {"x": None}}}
    if patch_type is PatchType.MERGE_PATCH:
        patch["metadata"] |= {"ownerReferences": [], "finalizers": []}
    else:
        patch["metadata"] |= {
            "ownerReferences": [{"$patch": "delete", "uid": "u1"}],
            "$deleteFromPrimitiveList/finalizers": ["example.com/f"],
        }
    result = api.patch(ConfigMap, "c", patch, namespace="default", patch_type=patch_type)
    served = to_dict(result)["metadata"]
    assert [key for key in EMPTIED if key in served] == []
    assert [key for key in EMPTIED if key in to_dict(api.get(ConfigMap, "c", "default"))] == []


def test_a_create_with_empty_ones_is_stored_without_them(api: ApiService) -> None:
    meta = ObjectMeta(name="c", namespace="default", labels={}, finalizers=())
    created = api.create(ConfigMap(metadata=meta))
    assert "labels" not in to_dict(created)["metadata"]
    assert "finalizers" not in to_dict(created)["metadata"]
