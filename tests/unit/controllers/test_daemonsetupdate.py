"""The rolling update's choices, as ``rollingUpdate`` in ``pkg/controller/daemon/update.go``.

Cases follow ``update_test.go`` (``TestDaemonSetUpdatesPods``,
``TestDaemonSetUpdatesPodsWithMaxSurge``, ``TestDaemonSetUpdatesWhenNewPosIsNotReady``,
``TestDaemonSetUpdatesAllOldPodsNotReady``, ``TestGetUnavailableNumbers``) on a plain
table: per node, which pods it has (old or new, available or not, being deleted).
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.core import Pod, PodCondition, PodStatus
from kubeprio.api.daemonset import (
    DaemonSet,
    DaemonSetSpec,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.controllers import daemonsetupdate
from tests.builders import pod

NOW = 1_767_225_600.0
NEW, OLD = "new-hash", "old-hash"


def ds(max_unavailable: int | str = 1, max_surge: int | str = 0, min_ready: int = 0) -> DaemonSet:
    return DaemonSet(
        metadata=ObjectMeta(name="agent", namespace="default"),
        spec=DaemonSetSpec(
            min_ready_seconds=min_ready,
            update_strategy=DaemonSetUpdateStrategy(
                type="RollingUpdate",
                rolling_update=RollingUpdateDaemonSet(
                    max_unavailable=max_unavailable, max_surge=max_surge
                ),
            ),
        ),
    )


def daemon_pod(
    name: str,
    hash_: str,
    *,
    ready: bool = True,
    deleting: bool = False,
    ready_since: str = "2025-12-31T00:00:00Z",
) -> Pod:
    built = pod(name).labels(**{"controller-revision-hash": hash_}).build()
    condition = PodCondition(
        type="Ready", status="True" if ready else "False", last_transition_time=ready_since
    )
    built = dataclasses.replace(built, status=PodStatus(phase="Running", conditions=(condition,)))
    if deleting:
        built = dataclasses.replace(
            built,
            metadata=dataclasses.replace(built.metadata, deletion_timestamp="2026-01-01T00:00:01Z"),
        )
    return built


def plan(
    daemon: DaemonSet, nodes: dict[str, list[Pod]], should_run: dict[str, bool] | None = None
) -> daemonsetupdate.UpdatePlan:
    verdicts = should_run if should_run is not None else dict.fromkeys(nodes, True)
    return daemonsetupdate.rolling_update(daemon, NEW, None, verdicts, nodes, NOW)


def old_everywhere(count: int) -> dict[str, list[Pod]]:
    return {f"n{i}": [daemon_pod(f"old-{i}", OLD)] for i in range(1, count + 1)}


def test_max_unavailable_one_deletes_one_old_pod_per_step() -> None:
    """maxSurge 0: one available old pod at a time goes; the manage loop replaces it."""
    result = plan(ds(), old_everywhere(3))
    assert result.pods_to_delete == ["old-1"]
    assert result.nodes_to_create == []


def test_a_node_waiting_for_its_new_pod_counts_as_unavailable() -> None:
    """A node whose old pod is terminating has neither pod: unavailable, nothing else goes."""
    nodes = old_everywhere(3)
    nodes["n1"] = [daemon_pod("old-1", OLD, deleting=True)]
    assert plan(ds(), nodes).pods_to_delete == []
    nodes["n1"] = [daemon_pod("new-1", NEW, ready=False)]
    assert plan(ds(), nodes).pods_to_delete == []
    nodes["n1"] = [daemon_pod("new-1", NEW)]
    assert plan(ds(), nodes).pods_to_delete == ["old-2"]


def test_max_unavailable_scales_with_the_desired_nodes() -> None:
    """maxUnavailable 50% of 4 nodes: two old pods at once, in node-name order."""
    assert plan(ds(max_unavailable="50%"), old_everywhere(4)).pods_to_delete == [
        "old-1",
        "old-2",
    ]


def test_unavailable_old_pods_are_replaced_at_once() -> None:
    """An old pod that is not available is replaced whatever maxUnavailable says."""
    nodes = old_everywhere(3)
    nodes["n2"] = [daemon_pod("old-2", OLD, ready=False)]
    nodes["n3"] = [daemon_pod("old-3", OLD, ready=False)]
    assert plan(ds(), nodes).pods_to_delete == ["old-2", "old-3"]


def test_min_ready_seconds_keeps_a_ready_new_pod_unavailable() -> None:
    """IsPodAvailable: ready for minReadySeconds; until then the node is unavailable."""
    nodes = old_everywhere(2)
    nodes["n1"] = [daemon_pod("new-1", NEW, ready_since="2025-12-31T23:59:30Z")]
    assert plan(ds(min_ready=60), nodes).pods_to_delete == []
    nodes["n1"] = [daemon_pod("new-1", NEW, ready_since="2025-12-31T23:59:00Z")]
    assert plan(ds(min_ready=60), nodes).pods_to_delete == ["old-2"]


def test_a_node_with_two_pods_is_left_to_the_manage_loop() -> None:
    """findUpdatedPodsOnNode: two old pods on a node: skipped and counted unavailable."""
    nodes = old_everywhere(2)
    nodes["n1"].append(daemon_pod("old-1b", OLD))
    assert plan(ds(), nodes).pods_to_delete == []


def test_surge_creates_next_to_old_pods_then_deletes_them() -> None:
    """maxSurge 1: a new pod on one node first; its old pod goes once the new is available."""
    surge = ds(max_unavailable=0, max_surge=1)
    first = plan(surge, old_everywhere(3))
    assert (first.nodes_to_create, first.pods_to_delete) == (["n1"], [])
    nodes = old_everywhere(3)
    nodes["n1"].append(daemon_pod("new-1", NEW, ready=False))
    waiting = plan(surge, nodes)
    assert (waiting.nodes_to_create, waiting.pods_to_delete) == ([], [])
    nodes["n1"] = [daemon_pod("old-1", OLD), daemon_pod("new-1", NEW)]
    done = plan(surge, nodes)
    assert (done.nodes_to_create, done.pods_to_delete) == (["n2"], ["old-1"])


def test_surge_replaces_unavailable_old_pods_beyond_max_surge() -> None:
    """An old pod that is not available gets its new pod at once (allowedNewNodes)."""
    nodes = old_everywhere(3)
    nodes["n3"] = [daemon_pod("old-3", OLD, ready=False)]
    result = plan(ds(max_unavailable=0, max_surge=1), nodes)
    assert result.nodes_to_create == ["n3", "n1"]


def test_surge_keeps_pods_on_nodes_that_should_not_run_until_others_are_available() -> None:
    """With surge, a pod on a node that no longer should run it is deleted only while more
    pods are available than nodes want one (100% availability)."""
    nodes = old_everywhere(2)
    nodes["n1"] = [daemon_pod("new-1", NEW)]
    only_n1 = {"n1": True, "n2": False}
    result = plan(ds(max_unavailable=0, max_surge=1), nodes, only_n1)
    assert result.pods_to_delete == ["old-2"]
    nodes["n1"] = [daemon_pod("new-1", NEW, ready=False)]
    assert plan(ds(max_unavailable=0, max_surge=1), nodes, only_n1).pods_to_delete == []


def test_both_bounds_zero_still_allow_one_unavailable() -> None:
    """updatedDesiredNodeCounts: surge 0 and unavailable 0 with nodes to run on -> 1."""
    assert plan(ds(max_unavailable=0, max_surge=0), old_everywhere(2)).pods_to_delete == ["old-1"]


@pytest.mark.parametrize("bad", ["x", "5"])
def test_a_bound_that_is_not_a_percentage_fails(bad: str) -> None:
    """GetScaledValueFromIntOrPercent refuses a string without ``%``."""
    from kubeprio.controllers.daemonsetutil import BadIntOrPercentError

    with pytest.raises(BadIntOrPercentError):
        plan(ds(max_unavailable=bad), old_everywhere(1))
