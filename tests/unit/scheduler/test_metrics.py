"""The scheduler's counters move as kube-scheduler's metrics would.

Upstream: ``pkg/scheduler/schedule_one.go`` (``PodScheduled`` with
``PodSchedulingAttempts`` and ``PodSchedulingSLIDuration`` after a bind;
``handleSchedulingFailure``'s ``PodUnschedulable``/``PodScheduleError``),
``plugins/defaultpreemption`` (``PreemptionAttempts`` on every PostFilter call),
``framework/preemption`` (``PreemptionVictims`` once the victims are evicted) and the
scheduling queue (``SchedulerQueueIncomingPods``, the ``pending_pods`` recorders). Each
scenario runs the real scheduler over the in-process API (``preemption_harness``).
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Pod
from kubeprio.histogram import Histogram
from kubeprio.scheduler.framework import Code, Status
from kubeprio.scheduler.metrics import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    attempts_label,
)
from tests.builders import pod
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LOW,
    Harness,
    both_paths,  # noqa: F401
    node_obj,
)

pytestmark = pytest.mark.usefixtures("both_paths")

POD_ADD = "UnschedulablePodAdd"
"""The queue's label for a new pending pod (upstream's ``EventUnscheduledPodAdd``)."""


def _counts(h: Harness) -> dict[str, int]:
    return {
        result: histogram.count
        for result, histogram in h.scheduler.metrics.attempt_duration.items()
    }


def _cpu_node(name: str, cpu: str = "1"):
    return node_obj(name, {"cpu": cpu, "memory": "4Gi"})


def _bucket_counts(histogram: Histogram) -> dict[float, int]:
    return dict(histogram.cumulative())


def test_a_bound_pod_counts_one_scheduled_attempt_and_its_first_try():
    h = Harness().start()
    h.add_nodes(_cpu_node("node1"))
    ticks = iter([10.0, 10.25])
    h.scheduler.stopwatch = lambda: next(ticks)
    h.add_pod(pod("p").priority(LOW).requests(cpu="500m").build())
    h.clock.advance(3)  # queued at t, bound at t+3: the SLI measures the wait
    h.settle()

    metrics = h.scheduler.metrics
    assert h.node_of("p") == "node1"
    assert _counts(h) == {RESULT_SCHEDULED: 1, RESULT_UNSCHEDULABLE: 0, RESULT_ERROR: 0}
    assert metrics.attempt_duration[RESULT_SCHEDULED].sum == pytest.approx(0.25)
    assert _bucket_counts(metrics.pod_scheduling_attempts)[1] == 1
    assert list(metrics.sli_duration) == ["1"]
    assert metrics.sli_duration["1"].sum == pytest.approx(3.0)
    assert metrics.preemption_attempts == 0
    assert h.scheduler.queue.incoming == {("active", POD_ADD): 1}
    assert h.scheduler.queue.pending_counts() == {
        "active": 0,
        "backoff": 0,
        "unschedulable": 0,
        "gated": 0,
    }


def test_an_unschedulable_pod_counts_an_unschedulable_attempt_and_a_preemption_attempt():
    h = Harness().start()
    h.add_nodes(_cpu_node("node1"))
    h.add_pod(pod("big").priority(LOW).requests(cpu="2").build())
    h.settle()

    metrics = h.scheduler.metrics
    assert _counts(h) == {RESULT_SCHEDULED: 0, RESULT_UNSCHEDULABLE: 1, RESULT_ERROR: 0}
    # PostFilter ran (preemption cannot help): an attempt, no victims.
    assert metrics.preemption_attempts == 1
    assert metrics.preemption_victims.count == 0
    assert metrics.pod_scheduling_attempts.count == 0
    assert h.scheduler.queue.incoming == {
        ("active", POD_ADD): 1,
        ("unschedulable", "ScheduleAttemptFailure"): 1,
        # The scheduler's own PodScheduled=False write comes back as an update that no
        # hint cares about: upstream's Update requeues it to the pool and counts it too.
        ("unschedulable", "UnschedulablePodUpdate"): 1,
    }
    assert h.scheduler.queue.pending_counts()["unschedulable"] == 1


@pytest.mark.parametrize("victims", [1, 2, 3], ids=lambda n: f"{n}-victims")
def test_a_preemption_observes_its_victims_and_the_preemptor_binds_on_its_second_attempt(
    victims,
):
    h = Harness().start()
    h.add_nodes(_cpu_node("node1", cpu=str(victims)))
    for i in range(victims):
        h.add_pod(pod(f"low{i}").priority(LOW).requests(cpu="1").on("node1").build())
    h.add_pod(pod("high").priority(HIGH).requests(cpu=str(victims)).build())
    h.settle()

    metrics = h.scheduler.metrics
    assert h.nominated("high") == "node1"
    assert metrics.preemption_attempts == 1
    assert metrics.preemption_victims.count == 1
    assert metrics.preemption_victims.sum == victims
    buckets = _bucket_counts(metrics.preemption_victims)
    assert buckets[float(victims if victims != 3 else 4)] == 1  # upstream's 1, 2, 4, ... bounds
    assert buckets[1.0] == (1 if victims == 1 else 0)
    assert _counts(h)[RESULT_UNSCHEDULABLE] == 1

    for i in range(victims):
        h.force_delete(f"low{i}")
    h.advance(2)  # the preemptor's backoff (1 s) ends

    assert h.node_of("high") == "node1"
    assert _counts(h) == {RESULT_SCHEDULED: 1, RESULT_UNSCHEDULABLE: 1, RESULT_ERROR: 0}
    assert metrics.pod_scheduling_attempts.sum == 2
    assert list(metrics.sli_duration) == ["2"]


def test_a_failed_binding_counts_an_error_attempt(monkeypatch):
    h = Harness().start()
    h.add_nodes(_cpu_node("node1"))
    monkeypatch.setattr(
        h.scheduler.framework,
        "run_bind_plugins",
        lambda *args: Status(Code.ERROR, ("binding refused",)),
    )
    h.add_pod(pod("p").priority(LOW).requests(cpu="500m").build())
    h.schedule_one()

    assert _counts(h) == {RESULT_SCHEDULED: 0, RESULT_UNSCHEDULABLE: 0, RESULT_ERROR: 1}
    assert h.scheduler.metrics.preemption_attempts == 0
    # An error goes to backoff, counted under the attempt's event.
    assert h.scheduler.queue.incoming[("backoff", "ScheduleAttemptFailure")] == 1
    assert h.scheduler.queue.pending_counts()["backoff"] == 1


def test_a_gated_pod_is_pending_as_gated_until_its_gates_are_removed():
    h = Harness().start()
    h.add_nodes(_cpu_node("node1"))
    gated = (
        pod("g")
        .priority(LOW)
        .requests(cpu="500m")
        .spec(extra={"schedulingGates": [{"name": "example.com/wait"}]})
        .build()
    )
    h.add_pod(gated)
    h.settle()

    queue = h.scheduler.queue
    assert queue.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    # Parked by its gate: no incoming count (as upstream's moveToActiveQ in v1.32).
    assert queue.incoming == {}
    assert _counts(h) == {RESULT_SCHEDULED: 0, RESULT_UNSCHEDULABLE: 0, RESULT_ERROR: 0}

    h.api.patch(Pod, "g", {"spec": {"schedulingGates": None}}, namespace="default")
    h.pump()
    h.settle()

    assert h.node_of("g") == "node1"
    assert queue.pending_counts()["gated"] == 0
    assert sum(count for (q, _), count in queue.incoming.items() if q == "active") == 1


def test_a_node_added_while_the_pod_backs_off_sends_it_to_backoff():
    h = Harness().start()
    h.add_nodes(_cpu_node("node1"))
    h.add_pod(pod("big").priority(LOW).requests(cpu="2").build())
    h.settle()
    h.add_nodes(_cpu_node("node2", cpu="4"))  # delivered: the pod moves, nothing runs yet

    queue = h.scheduler.queue
    assert queue.incoming[("backoff", "NodeAdd")] == 1
    assert queue.pending_counts() == {"active": 0, "backoff": 1, "unschedulable": 0, "gated": 0}
    h.settle()  # activeQ is empty: popped straight from backoffQ (SchedulerPopFromBackoffQ)
    assert h.node_of("big") == "node2"
    assert queue.pending_counts()["backoff"] == 0
    assert h.scheduler.metrics.pod_scheduling_attempts.sum == 2


@pytest.mark.parametrize(("attempts", "label"), [(1, "1"), (14, "14"), (15, "15+"), (40, "15+")])
def test_attempts_labels_are_capped_as_upstream(attempts, label):
    assert attempts_label(attempts) == label
