"""DefaultTolerationSeconds: every pod tolerates a lost node's ``NoExecute`` taints for 300 s.

Upstream ``plugin/pkg/admission/defaulttolerationseconds/admission.go`` (v1.32, on by
default): on a pod create or update, add ``node.kubernetes.io/not-ready`` and
``node.kubernetes.io/unreachable`` (``Exists``, ``NoExecute``, ``tolerationSeconds: 300``)
unless a toleration already matches the taint key (or has no key) with the ``NoExecute``
effect (or no effect). The cases follow upstream's ``admission_test.go``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.admission.defaulttolerationseconds import DefaultTolerations
from kubeprio.api.core import Pod
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.manifests import create

NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
OWN_NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}  # fmt: skip


@pytest.fixture
def api() -> ApiService:
    """The API service with kube-apiserver's default plugin set (``default_chain``)."""
    store = MemoryStore()
    return ApiService(
        store,
        clock=ManualClock(),
        rng=random.Random(0),
        admission=default_chain(StoreListers(store)),
    )


def _pod(name: str, tolerations: list[dict[str, Any]] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


CASES: list[tuple[str, list[dict[str, Any]] | None, list[dict[str, Any]]]] = [
    ("none: both added", None, [NOT_READY, UNREACHABLE]),
    (
        "unrelated toleration kept, both added",
        [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}, NOT_READY, UNREACHABLE],
    ),
    ("own not-ready kept, unreachable added", [OWN_NOT_READY], [OWN_NOT_READY, UNREACHABLE]),
    (
        "not-ready with no effect covers it",
        [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
        [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}, UNREACHABLE],
    ),
    (
        "not-ready NoSchedule does not cover the NoExecute taint",
        [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
        [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"},
            NOT_READY,
            UNREACHABLE,
        ],
    ),
    (
        "empty key and effect tolerate everything",
        [{"operator": "Exists"}],
        [{"operator": "Exists"}],
    ),
    (
        "empty key with NoExecute tolerates both",
        [{"operator": "Exists", "effect": "NoExecute"}],
        [{"operator": "Exists", "effect": "NoExecute"}],
    ),
]


@pytest.mark.parametrize(("given", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_created_pods_get_the_missing_lost_node_tolerations(
    api: ApiService, given: list[dict[str, Any]] | None, expected: list[dict[str, Any]]
) -> None:
    pod = create(api, _pod("p", given))
    assert isinstance(pod, Pod)
    assert to_dict(pod)["spec"]["tolerations"] == expected


def test_an_update_keeps_them_and_adds_nothing_more(api: ApiService) -> None:
    pod = create(api, _pod("p", None))
    assert isinstance(pod, Pod)
    relabelled = api.patch(Pod, "p", {"metadata": {"labels": {"a": "b"}}}, namespace="default")
    assert to_dict(relabelled)["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]


def test_the_flags_set_the_seconds() -> None:
    """kube-apiserver's ``--default-not-ready-toleration-seconds`` and
    ``--default-unreachable-toleration-seconds`` (``admission.go``'s two flags) set the
    added tolerations' seconds; a pod's own toleration still wins."""
    store = MemoryStore()
    api = ApiService(
        store,
        clock=ManualClock(),
        rng=random.Random(0),
        admission=default_chain(StoreListers(store), default_tolerations=DefaultTolerations(30, 0)),
    )
    fresh = create(api, _pod("fresh", None))
    own = create(api, _pod("own", [OWN_NOT_READY]))
    assert to_dict(fresh)["spec"]["tolerations"] == [
        {**NOT_READY, "tolerationSeconds": 30},
        {**UNREACHABLE, "tolerationSeconds": 0},
    ]
    assert to_dict(own)["spec"]["tolerations"] == [
        OWN_NOT_READY,
        {**UNREACHABLE, "tolerationSeconds": 0},
    ]
