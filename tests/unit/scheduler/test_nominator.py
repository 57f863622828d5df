"""The nominator (upstream ``backend/queue/nominator.go``, semantics §3.6).

Upstream's tests live in ``scheduling_queue_test.go``: ``TestPriorityQueue_NominatedPodsForNode``,
``TestPriorityQueue_UpdateNominatedPodForNode``, ``TestPriorityQueue_NominatedPodDeleted``.
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.core import Binding, ObjectReference, Pod, PodStatus
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nominator import NominatingInfo, NominatingMode, Nominator
from tests.builders import pod


def _pod(name: str, *, nominated: str | None = None, bound: str | None = None) -> Pod:
    builder = pod(name)
    if bound:
        builder = builder.on(bound)
    built = builder.build()
    built = dataclasses.replace(
        built, metadata=dataclasses.replace(built.metadata, uid=f"uid-{name}")
    )
    if nominated is not None:
        built = dataclasses.replace(built, status=PodStatus(nominated_node_name=nominated))
    return built


def _info(name: str, **kwargs: str | None) -> PodInfo:
    return PodInfo.of(_pod(name, **kwargs))


def _names(infos: list[PodInfo]) -> list[str]:
    return [info.pod.metadata.name or "" for info in infos]


@pytest.mark.parametrize(
    ("status_node", "info", "expected_node"),
    [
        ("node1", None, "node1"),
        ("node1", NominatingInfo("node2"), "node2"),
        ("node1", NominatingInfo("", NominatingMode.OVERRIDE), None),
        ("node1", NominatingInfo("node2", NominatingMode.NOOP), "node1"),
        (None, None, None),
        (None, NominatingInfo("node2"), "node2"),
    ],
    ids=[
        "no-info-uses-status",
        "override-wins-over-status",
        "override-with-empty-clears",
        "noop-uses-status",
        "nothing-to-nominate",
        "override-without-status",
    ],
)
def test_add_takes_node_from_info_or_status(
    status_node: str | None, info: NominatingInfo | None, expected_node: str | None
) -> None:
    nominator = Nominator()
    nominator.add_nominated_pod(_info("a", nominated=status_node), info)
    assert nominator.nominated_node("uid-a") == expected_node
    if expected_node:
        assert _names(nominator.nominated_pods_for_node(expected_node)) == ["a"]
    assert len(nominator) == (1 if expected_node else 0)


def test_add_replaces_previous_nomination() -> None:
    # addNominatedPodUnlocked always deletes the pod's entry first: never two entries.
    nominator = Nominator()
    nominator.add_nominated_pod(_info("a"), NominatingInfo("node1"))
    nominator.add_nominated_pod(_info("a"), NominatingInfo("node2"))
    assert nominator.nominated_pods_for_node("node1") == []
    assert _names(nominator.nominated_pods_for_node("node2")) == ["a"]
    assert nominator.nodes() == ["node2"]


def test_nominated_pods_keep_nomination_order() -> None:
    nominator = Nominator()
    for name in ("c", "a", "b"):
        nominator.add_nominated_pod(_info(name), NominatingInfo("node1"))
    assert _names(nominator.nominated_pods_for_node("node1")) == ["c", "a", "b"]
    nominator.add_nominated_pod(_info("c"), NominatingInfo("node1"))  # re-nominated: goes last
    assert _names(nominator.nominated_pods_for_node("node1")) == ["a", "b", "c"]


# UpdateNominatedPod: the three cases where the nomination is taken from the objects, and
# the one where the in-memory nomination survives (the preemption/status-patch race).
@pytest.mark.parametrize(
    ("old_node", "new_node", "expected"),
    [
        (None, None, "memory"),
        (None, "node2", "node2"),
        ("node1", "node2", "node2"),
        ("node1", None, None),
    ],
    ids=[
        "neither-object-has-one-keep-memory",
        "nomination-added",
        "nomination-changed",
        "nomination-removed",
    ],
)
def test_update_keeps_in_memory_nomination_only_when_objects_have_none(
    old_node: str | None, new_node: str | None, expected: str | None
) -> None:
    nominator = Nominator()
    nominator.add_nominated_pod(_info("a"), NominatingInfo("memory"))
    nominator.update_nominated_pod(_pod("a", nominated=old_node), _info("a", nominated=new_node))
    assert nominator.nominated_node("uid-a") == expected


def test_update_refreshes_pod_info() -> None:
    nominator = Nominator()
    nominator.add_nominated_pod(_info("a", nominated="node1"))
    newer = dataclasses.replace(
        _pod("a", nominated="node1"),
        metadata=ObjectMeta(name="a", namespace="default", uid="uid-a", labels={"v": "2"}),
    )
    nominator.update_nominated_pod(_pod("a", nominated="node1"), PodInfo.of(newer))
    (info,) = nominator.nominated_pods_for_node("node1")
    assert info.pod.metadata.labels == {"v": "2"}


def test_delete_removes_nomination() -> None:
    nominator = Nominator()
    nominator.add_nominated_pod(_info("a"), NominatingInfo("node1"))
    nominator.add_nominated_pod(_info("b"), NominatingInfo("node1"))
    nominator.delete_nominated_pod_if_exists(_pod("a"))
    nominator.delete_nominated_pod_if_exists(_pod("never-nominated"))
    assert _names(nominator.nominated_pods_for_node("node1")) == ["b"]
    nominator.delete_nominated_pod_if_exists(_pod("b"))
    assert nominator.nodes() == []
    assert len(nominator) == 0


def test_lister_blocks_nominating_deleted_or_bound_pods(api: ApiService) -> None:
    # addNominatedPodUnlocked: "If the pod was removed or if it was already scheduled,
    # don't nominate it." -- checked against the informer cache.
    for name in ("pending", "bound", "gone"):
        api.create(pod(name).build())
    api.bind(
        Binding(
            metadata=ObjectMeta(name="bound", namespace="default"),
            target=ObjectReference(kind="Node", name="node1"),
        )
    )
    informer = Informer(api, Pod)
    informer.start()
    api.delete(Pod, "gone", "default")
    informer.pump()
    nominator = Nominator(pod_lister=informer)
    for name in ("pending", "bound", "gone"):
        cached = informer.get(name, "default") or _pod(name)
        nominator.add_nominated_pod(PodInfo.of(cached), NominatingInfo("node2"))
    assert _names(nominator.nominated_pods_for_node("node2")) == ["pending"]
