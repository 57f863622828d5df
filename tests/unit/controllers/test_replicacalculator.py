"""The HPA's replica calculator (``pkg/controller/podautoscaler/replica_calculator.go``).

Cases follow upstream's ``replica_calculator_test.go``: the 0.1 tolerance keeps the count,
``ceil(ratio * ready pods)`` otherwise; Pending and (for cpu) not-yet-ready pods are
unready and count as using nothing on a scale up; pods with no metric count as using
nothing on a scale up and their full request on a scale down; a change that would flip
the direction keeps the count; the metrics are what the resource metrics API reports
(running pods on answering nodes, ``kubeprio.io/usage`` in milli-units).
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api.core import PHASE_PENDING, PHASE_RUNNING, Pod, PodCondition, PodStatus
from kubeprio.clock import rfc3339
from kubeprio.controllers import replicacalculator as rc
from tests.builders import pod

NOW = 1_800_000_000.0
LONG_AGO = rfc3339(NOW - 3600)
CALC = rc.Calculator()


def running(name: str, *, cpu: str = "1", usage: str | None = None, ready: bool = True,
            started: str = LONG_AGO, ready_since: str = LONG_AGO) -> Pod:  # fmt: skip
    builder = pod(name).requests(cpu=cpu).on("n1").phase(PHASE_RUNNING).started(started)
    if usage is not None:
        builder = builder.annotate("kubeprio.io/usage", usage)
    built = builder.build()
    condition = PodCondition(
        type="Ready", status="True" if ready else "False", last_transition_time=ready_since
    )
    status = dataclasses.replace(built.status or PodStatus(), conditions=(condition,))
    return dataclasses.replace(built, status=status)


def pending(name: str) -> Pod:
    return pod(name).requests(cpu="1").phase(PHASE_PENDING).build()


def replicas(pods: list[Pod], target: int, current: int | None = None) -> rc.Proposal:
    metrics = rc.resource_metrics(pods, "cpu", "", now=NOW, node_answers=lambda _n: True)
    return rc.resource_replicas(
        CALC,
        current_replicas=len(pods) if current is None else current,
        target_utilization=target,
        resource="cpu",
        container="",
        pods=pods,
        metrics=metrics,
        now=NOW,
    )


@pytest.mark.parametrize(
    ("usages", "target", "expected", "utilization"),
    [
        (["500m", "500m"], 50, 2, 50),  # exactly at target
        (["540m", "540m"], 50, 2, 54),  # ratio 1.08: within the tolerance
        (["560m", "560m"], 50, 3, 56),  # ratio 1.12: ceil(1.12 * 2) = 3
        (["900m", "900m", "900m"], 60, 5, 90),  # ceil(1.5 * 3)
        (["100m", "100m", "100m", "100m"], 50, 1, 10),  # scale down: ceil(0.2 * 4)
        (["460m", "460m"], 50, 2, 46),  # ratio 0.92: within the tolerance
    ],
    ids=[
        "at-target",
        "within-tolerance-up",
        "above",
        "well-above",
        "down",
        "within-tolerance-down",
    ],
)
def test_ratio_times_ready_pods_outside_the_tolerance(usages, target, expected, utilization):
    pods = [running(f"p{i}", usage=f"cpu={u}") for i, u in enumerate(usages)]
    proposal = replicas(pods, target)
    assert (proposal.replicas, proposal.utilization) == (expected, utilization)


def test_raw_average_is_the_mean_milli_usage():
    pods = [running("a", usage="cpu=300m"), running("b", usage="cpu=500m")]
    assert replicas(pods, 50).raw == 400


def test_pending_pods_count_as_using_nothing_on_a_scale_up():
    # upstream TestReplicaCalcScaleUpUnreadyLessScale: 2 ready at 90 %, 1 pending, target 50:
    # the pending pod counts as 0, ratio 1.2 over 3 pods -> 4.
    pods = [running("a", usage="cpu=900m"), running("b", usage="cpu=900m"), pending("c")]
    assert replicas(pods, 50).replicas == 4


def test_pods_not_ready_within_the_cpu_initialization_period_are_unready():
    fresh = rfc3339(NOW - 60)
    pods = [
        running("a", usage="cpu=900m"),
        running("b", usage="cpu=900m", ready=False, started=fresh, ready_since=fresh),
    ]
    groups = rc.group_pods(
        pods,
        rc.resource_metrics(pods, "cpu", "", now=NOW, node_answers=lambda _n: True),
        "cpu",
        CALC,
        NOW,
    )
    assert (groups.ready, groups.unready) == (1, {"b"})


def test_a_pod_ready_for_less_than_one_window_is_unready_in_its_first_minutes():
    started = rfc3339(NOW - 100)
    just_ready = rfc3339(NOW - 5)
    pods = [running("a", usage="cpu=1", started=started, ready_since=just_ready)]
    metrics = rc.resource_metrics(pods, "cpu", "", now=NOW, node_answers=lambda _n: True)
    assert rc.group_pods(pods, metrics, "cpu", CALC, NOW).unready == {"a"}


def test_memory_ignores_readiness():
    fresh = rfc3339(NOW - 60)
    pods = [running("a", usage="memory=1Gi", ready=False, started=fresh, ready_since=fresh)]
    metrics = rc.resource_metrics(pods, "memory", "", now=NOW, node_answers=lambda _n: True)
    assert rc.group_pods(pods, metrics, "memory", CALC, NOW).ready == 1


def test_missing_pods_count_as_using_their_request_on_a_scale_down():
    # b's node does not answer: no metric. a at 10 % asks to scale down; b counted at 100 %
    # gives (10 + 100) / 2 = 55 % against 50: within tolerance -> keep 2.
    pods = [running("a", usage="cpu=100m"), running("b")]
    metrics = rc.resource_metrics(pods, "cpu", "", now=NOW, node_answers=lambda _n: True)
    del metrics["b"]
    proposal = rc.resource_replicas(
        CALC, current_replicas=2, target_utilization=50, resource="cpu", container="",
        pods=pods, metrics=metrics, now=NOW,
    )  # fmt: skip
    assert proposal.replicas == 2


def test_missing_pods_count_as_using_nothing_on_a_scale_up():
    pods = [running("a", usage="cpu=1"), running("b"), running("c")]
    metrics = rc.resource_metrics(pods, "cpu", "", now=NOW, node_answers=lambda _n: True)
    del metrics["b"], metrics["c"]
    # a at 200 % of target 50; b and c at 0: (100 + 0 + 0) / 3 = 33 % -> direction flips: keep 3.
    proposal = rc.resource_replicas(
        CALC, current_replicas=3, target_utilization=50, resource="cpu", container="",
        pods=pods, metrics=metrics, now=NOW,
    )  # fmt: skip
    assert proposal.replicas == 3


@pytest.mark.parametrize(
    ("pods", "message"),
    [
        ([pending("a")], "no metrics returned from resource metrics API"),
        (
            [running("a", usage="cpu=1", ready=False, started=rfc3339(NOW - 10),
                     ready_since=rfc3339(NOW - 10))],
            "did not receive metrics for targeted pods (pods might be unready)",
        ),
        (
            [dataclasses.replace(running("a", usage="cpu=1"),
                                 spec=pod("a").on("n1").container().build().spec)],
            "missing request for cpu in container c of Pod a",
        ),
    ],
    ids=["no-running-pod", "all-unready", "no-request"],
)  # fmt: skip
def test_errors_carry_upstreams_texts(pods, message):
    with pytest.raises(rc.MetricsError) as caught:
        replicas(pods, 50)
    assert str(caught.value) == message


def test_only_running_pods_on_answering_nodes_have_metrics():
    pods = [running("a", usage="cpu=1"), pending("b")]
    with pytest.raises(rc.MetricsError):
        rc.resource_metrics(pods, "cpu", "", now=NOW, node_answers=lambda n: n != "n1")
    metrics = rc.resource_metrics(pods, "cpu", "", now=NOW, node_answers=lambda _n: True)
    assert set(metrics) == {"a"}
    assert metrics["a"].value == 1000


@given(
    usages=st.lists(st.integers(min_value=0, max_value=4000), min_size=1, max_size=8),
    target=st.integers(min_value=1, max_value=200),
)
def test_a_ratio_within_the_tolerance_never_rescales(usages, target):
    """Property (upstream's tolerance rule): all pods ready with metrics, |1 - ratio| <= 0.1
    keeps the current count; outside it, the count is ceil(ratio * pods)."""
    pods = [running(f"p{i}", usage=f"cpu={u}m") for i, u in enumerate(usages)]
    proposal = replicas(pods, target)
    utilization = sum(usages) * 100 // (1000 * len(usages))
    ratio = utilization / target
    if abs(1 - ratio) <= 0.1:
        assert proposal.replicas == len(pods)
    else:
        assert proposal.replicas == -(-ratio * len(pods) // 1)
