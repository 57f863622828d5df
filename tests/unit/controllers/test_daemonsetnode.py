"""One node's decision, as ``podsShouldBeOnNode`` (``daemon_controller.go``) makes it.

Cases follow ``daemon_controller_test.go`` (``TestDaemonKillFailedPods``,
``TestDeleteUnscheduledPodForNotExistingNode``-style pruning) and the surge rules of
``TestDaemonSetUpdatesPodsWithMaxSurge``.
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.core import Pod
from kubeprio.api.daemonset import (
    DaemonSet,
    DaemonSetSpec,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.controllers import daemonsetnode
from tests.unit.controllers.test_daemonsetupdate import NEW, NOW, OLD, daemon_pod

SURGE = DaemonSetUpdateStrategy(
    type="RollingUpdate", rolling_update=RollingUpdateDaemonSet(max_unavailable=0, max_surge=1)
)
NO_SURGE = DaemonSetUpdateStrategy(
    type="RollingUpdate", rolling_update=RollingUpdateDaemonSet(max_unavailable=1, max_surge=0)
)


def ds(strategy: DaemonSetUpdateStrategy = NO_SURGE) -> DaemonSet:
    return DaemonSet(
        metadata=ObjectMeta(name="agent", namespace="default"),
        spec=DaemonSetSpec(update_strategy=strategy),
    )


def with_phase(pod: Pod, phase: str, created: str = "2026-01-01T00:00:00Z") -> Pod:
    assert pod.status is not None
    return dataclasses.replace(
        pod,
        metadata=dataclasses.replace(pod.metadata, creation_timestamp=created),
        status=dataclasses.replace(pod.status, phase=phase),
    )


def decide(
    pods: list[Pod] | None,
    verdict: tuple[bool, bool] = (True, True),
    strategy: DaemonSetUpdateStrategy = NO_SURGE,
    *,
    may_replace: bool = True,
) -> tuple[bool, list[str], list[str]]:
    decision = daemonsetnode.pods_should_be_on_node(
        "n1", verdict, pods, ds(strategy), NEW, NOW, lambda: may_replace
    )
    return decision.create, decision.delete, [reason for _, reason, _ in decision.events]


def test_should_run_without_pods_creates_one() -> None:
    """``shouldRun && !exists``: create; a node it may only keep running gets nothing."""
    assert decide(None) == (True, [], [])
    assert decide(None, (False, True)) == (False, [], [])


def test_a_node_that_must_not_run_the_pod_loses_every_live_one() -> None:
    """!shouldContinueRunning: delete all daemon pods not already being deleted."""
    pods = [daemon_pod("a", OLD), daemon_pod("b", NEW, deleting=True)]
    assert decide(pods, (False, False)) == (False, ["a"], [])


@pytest.mark.parametrize(
    ("phase", "may_replace", "expected"),
    [
        ("Failed", True, (False, ["x"], ["FailedDaemonPod"])),
        ("Failed", False, (False, [], [])),
        ("Succeeded", False, (False, ["x"], ["SucceededDaemonPod"])),
    ],
    ids=["failed, backoff allows", "failed, in backoff", "succeeded (no backoff)"],
)
def test_finished_pods_are_deleted(phase: str, may_replace: bool, expected: object) -> None:
    """Failed pods go when the per-node backoff allows; Succeeded ones always. The next
    sync creates the replacement (the node then has no pod)."""
    pods = [with_phase(daemon_pod("x", NEW), phase)]
    assert decide(pods, may_replace=may_replace) == expected


def test_without_surge_only_the_oldest_running_pod_stays() -> None:
    """``!AllowsSurge``: of several running pods all but the oldest
    (``podByCreationTimestampAndPhase``) are deleted."""
    older = with_phase(daemon_pod("older", OLD), "Running", "2026-01-01T00:00:00Z")
    newer = with_phase(daemon_pod("newer", NEW), "Running", "2026-01-01T00:05:00Z")
    assert decide([newer, older]) == (False, ["newer"], [])


def test_with_surge_the_old_pod_stays_until_the_new_one_is_available() -> None:
    """Two pods are allowed while the new one is not available and the old one ready."""
    old = with_phase(daemon_pod("old", OLD), "Running", "2026-01-01T00:00:00Z")
    waiting = with_phase(daemon_pod("new", NEW, ready=False), "Running", "2026-01-01T00:05:00Z")
    assert decide([old, waiting], strategy=SURGE) == (False, [], [])
    ready = with_phase(daemon_pod("new", NEW), "Running", "2026-01-01T00:05:00Z")
    assert decide([old, ready], strategy=SURGE) == (False, ["old"], [])
    unready_old = with_phase(daemon_pod("old", OLD, ready=False), "Running")
    assert decide([unready_old, waiting], strategy=SURGE) == (False, ["old"], [])
    assert decide([], strategy=SURGE) == (True, [], [])
