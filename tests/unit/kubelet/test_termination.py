"""Graceful termination: a deleted pod keeps its resources until its containers exit.

docs/design.md: "A pod being deleted exits after kubeprio.io/termination-seconds when
set, otherwise after its full terminationGracePeriodSeconds (default 30)". Upstream:
the pod worker's ``calculateEffectiveGracePeriod`` (the API's deletion grace, which may
only shrink) and ``kuberuntime_container.go`` ``killContainer`` (SIGKILL after the grace
period, never sooner than ``minimumGracePeriodInSeconds`` = 2 s); the status manager then
deletes the pod with grace 0 and a UID precondition.
"""

from __future__ import annotations

import pytest

from kubeprio.api import annotations
from kubeprio.api.core import PHASE_FAILED, PHASE_RUNNING, PHASE_SUCCEEDED, Pod, PodStatus
from kubeprio.client.protocol import DeleteRequest
from tests.builders import node, pod
from tests.unit.kubelet.conftest import Cluster, bind, get_pod

NODE = node("n1").allocatable(cpu="2", memory="4Gi", pods="10")


def delete(cluster: Cluster, name: str, grace: int | None = None) -> None:
    cluster.api.delete(Pod, name, "default", options=DeleteRequest(grace_period_seconds=grace))
    cluster.driver.settle()


EXITS = [
    # (terminationGracePeriodSeconds, termination-seconds, delete grace, exits after, phase seen last)
    (30, None, None, 30.0),
    (30, "5", None, 5.0),
    (30, "7.5s", None, 7.5),
    (10, "20", None, 10.0),
    (60, None, 15, 15.0),
    (30, None, 1, 2.0),
    (30, "0.5", 1, 0.5),
]


@pytest.mark.parametrize(
    ("pod_grace", "termination", "delete_grace", "exits_after"),
    EXITS,
    ids=[
        "default-grace",
        "termination-seconds",
        "termination-duration",
        "sigkill-at-grace",
        "delete-grace-overrides",
        "minimum-two-seconds",
        "fast-exit-under-minimum",
    ],
)
def test_deleted_pod_holds_resources_until_it_exits(
    cluster: Cluster,
    pod_grace: int,
    termination: str | None,
    delete_grace: int | None,
    exits_after: float,
) -> None:
    kubelet = cluster.kubelet("n1", node=NODE.build())
    builder = pod("victim").requests(cpu="1").grace(pod_grace)
    if termination is not None:
        builder = builder.annotate(annotations.TERMINATION_SECONDS, termination)
    cluster.run(builder.build())
    delete(cluster, "victim", delete_grace)
    cluster.advance(exits_after - 0.01)
    still = cluster.pod("victim")
    assert still is not None
    assert still.metadata.deletion_timestamp is not None
    assert still.status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert kubelet.allocated() == {"cpu": 1000, "pods": 1}
    cluster.advance(0.01)
    assert cluster.pod("victim") is None
    assert kubelet.allocated() == {"cpu": 0, "pods": 0}


def test_terminating_pod_blocks_admission_until_it_exits(cluster: Cluster) -> None:
    """``GetActivePods`` counts terminating pods: a pod bound into their room is rejected."""
    cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("old").requests(cpu="1500m").build())
    delete(cluster, "old")
    rejected = cluster.run(pod("early").requests(cpu="1").build())
    assert rejected.status.reason == "OutOfcpu"  # type: ignore[union-attr]
    assert rejected.status.message == (  # type: ignore[union-attr]
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000"
    )
    cluster.advance(30)
    assert cluster.run(pod("later").requests(cpu="1").build()).status.phase == PHASE_RUNNING  # type: ignore[union-attr]


def test_pod_runs_for_its_duration_then_succeeds(cluster: Cluster) -> None:
    kubelet = cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("batch").requests(cpu="1").annotate(annotations.DURATION, "90s").build())
    cluster.advance(89)
    assert cluster.pod("batch").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    cluster.advance(1)
    done = cluster.pod("batch")
    assert done is not None
    status = done.status or PodStatus()
    assert status.phase == PHASE_SUCCEEDED
    (container,) = status.container_statuses or ()
    terminated = container.extra["state"]["terminated"]
    assert terminated["exitCode"] == 0
    assert terminated["reason"] == "Completed"
    assert terminated["finishedAt"] == "2026-01-01T00:01:30Z"
    ready = next(c for c in status.conditions or () if c.type == "Ready")
    assert (ready.status, ready.reason) == ("False", "PodCompleted")
    assert kubelet.allocated() == {"cpu": 0, "pods": 0}


def test_pod_without_duration_runs_until_deleted(cluster: Cluster) -> None:
    kubelet = cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("server").build())
    cluster.advance(10 * 24 * 3600)
    assert cluster.pod("server").status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert kubelet.next_wakeup() is None


def test_run_ending_during_shutdown_exits_successfully_then(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("job").annotate(annotations.DURATION, "10s").build())
    cluster.advance(4)
    # Deleting removes the pod once it exited; watch the last status through the events.
    seen: list[str] = []
    original = cluster.api.update_status

    def spy(obj: Pod) -> Pod:
        seen.append(obj.status.phase if obj.status else "")  # type: ignore[union-attr]
        return original(obj)

    cluster.api.update_status = spy  # type: ignore[method-assign]
    delete(cluster, "job")
    cluster.advance(5.99)
    assert cluster.pod("job") is not None
    cluster.advance(0.01)
    assert cluster.pod("job") is None
    assert seen == [PHASE_SUCCEEDED]


def test_kill_reports_failed_with_sigkill_exit_code(cluster: Cluster) -> None:
    """A pod with a finalizer stays after the kubelet's delete: its last status shows."""
    cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("held").grace(5).finalizers("example.com/hold").build())
    delete(cluster, "held")
    cluster.advance(5)
    held = get_pod(cluster.api, "held")
    assert held.status.phase == PHASE_FAILED  # type: ignore[union-attr]
    (container,) = held.status.container_statuses or ()  # type: ignore[union-attr]
    assert container.extra["state"]["terminated"]["exitCode"] == 137
    assert held.metadata.deletion_grace_period_seconds == 0


def test_sigterm_exit_code_when_the_pod_shuts_down_itself(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=NODE.build())
    cluster.run(
        pod("held")
        .grace(30)
        .annotate(annotations.TERMINATION_SECONDS, "3")
        .finalizers("example.com/hold")
        .build()
    )
    delete(cluster, "held")
    cluster.advance(3)
    status = get_pod(cluster.api, "held").status
    assert status.phase == PHASE_FAILED  # type: ignore[union-attr]
    assert status.container_statuses[0].extra["state"]["terminated"]["exitCode"] == 143  # type: ignore[index, union-attr]


@pytest.mark.parametrize(
    ("second_grace", "exits_after"),
    [(10, 10.0), (3, 2.0)],
    ids=["shorter grace", "shorter than the time already waited: 1 s, runtime minimum 2 s"],
)
def test_second_delete_with_shorter_grace_shortens_the_shutdown(
    cluster: Cluster, second_grace: int, exits_after: float
) -> None:
    """A shorter delete 5 s into a 30 s grace period restarts the shutdown with the API's
    new ``deletionGracePeriodSeconds`` (``calculateEffectiveGracePeriod`` in
    pkg/kubelet/pod_workers.go). ``rest.BeforeDelete`` never moves the deadline into the
    past: a grace of 3 s, already used up, becomes 1 s from now, which the runtime raises to
    its 2 s minimum (``minimumGracePeriodInSeconds``, kuberuntime_container.go)."""
    cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("p").grace(30).build())
    delete(cluster, "p")
    cluster.advance(5)
    delete(cluster, "p", second_grace)
    cluster.advance(exits_after - 0.01)
    assert cluster.pod("p") is not None
    cluster.advance(0.01)
    assert cluster.pod("p") is None


def test_force_deleted_pod_frees_admission_at_once(cluster: Cluster) -> None:
    """Removed from the API, a pod leaves the pod manager: admission stops counting it."""
    kubelet = cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("gone").requests(cpu="2").build())
    delete(cluster, "gone", 0)
    assert cluster.pod("gone") is None
    assert kubelet.allocated() == {"cpu": 0, "pods": 0}
    assert cluster.run(pod("next").requests(cpu="2").build()).status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert [p.metadata.name for p in kubelet.running()] == ["gone", "next"]
    cluster.advance(2)
    assert [p.metadata.name for p in kubelet.running()] == ["next"]


def test_running_pod_from_a_snapshot_is_adopted_with_its_start_time(cluster: Cluster) -> None:
    """A bound pod that already runs keeps running; its duration counts from startTime."""
    cluster.kubelet("n1", node=NODE.build())
    created = cluster.api.create(pod("old").annotate(annotations.DURATION, "60s").build())
    bind(cluster.api, created, "n1")
    current = get_pod(cluster.api, "old")
    cluster.api.update_status(
        current.__class__(
            metadata=current.metadata,
            spec=current.spec,
            status=PodStatus(phase=PHASE_RUNNING, start_time="2025-12-31T23:59:10Z"),
        )
    )
    cluster.driver.settle()
    adopted = get_pod(cluster.api, "old")
    assert adopted.status.phase == PHASE_RUNNING  # type: ignore[union-attr]
    assert adopted.status.start_time == "2025-12-31T23:59:10Z"  # type: ignore[union-attr]
    cluster.advance(10)
    assert get_pod(cluster.api, "old").status.phase == PHASE_SUCCEEDED  # type: ignore[union-attr]


def test_pod_deleted_before_it_started_is_failed_and_removed(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=NODE.build())
    created = cluster.api.create(pod("late").build())
    bind(cluster.api, created, "n1")
    cluster.api.delete(Pod, "late", "default")  # bound, so graceful: the kubelet finishes it
    cluster.driver.settle()
    assert cluster.pod("late") is None
