"""The Job controller counts pods as ``pkg/controller/job`` does, preemption included.

Upstream rules checked (``job_controller.go``, ``pod_failure_policy.go``,
``backoff_utils.go``): completions/parallelism; a pod deleted before it succeeded is a
failure unless a pod failure policy is set (``isPodFailed``); ``Ignore`` on
``DisruptionTarget`` keeps preempted pods out of the count; with a policy a
terminating pod is not replaced until it is Failed; replacements wait the pod failure
backoff (10 s, doubling); ``BackoffLimitExceeded`` via ``FailureTarget``;
``SuccessCriteriaMet`` then ``Complete`` with reason ``CompletionsReached``.
"""

from __future__ import annotations

import dataclasses

from kubeprio.api import annotations
from kubeprio.api.batch import (
    Job,
    JobSpec,
    PodFailurePolicy,
    PodFailurePolicyOnPodConditionsPattern,
    PodFailurePolicyRule,
)
from kubeprio.api.core import Pod, PodCondition, PodTemplateSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.controllers.job import JobController
from tests.builders import pod
from tests.unit.controllers.conftest import World, add_kubelet

IGNORE_DISRUPTIONS = PodFailurePolicy(
    rules=(
        PodFailurePolicyRule(
            action="Ignore",
            on_pod_conditions=(PodFailurePolicyOnPodConditionsPattern(type="DisruptionTarget"),),
        ),
    )
)


def job(
    *,
    completions: int | None = 1,
    parallelism: int | None = 1,
    backoff_limit: int | None = None,
    duration: str | None = None,
    policy: PodFailurePolicy | None = None,
) -> Job:
    template_pod = pod("t").spec(restart_policy="Never")
    if duration is not None:
        template_pod = template_pod.annotate(annotations.DURATION, duration)
    built = template_pod.build()
    return Job(
        metadata=ObjectMeta(name="batch", namespace="default"),
        spec=JobSpec(
            completions=completions,
            parallelism=parallelism,
            backoff_limit=backoff_limit,
            pod_failure_policy=policy,
            template=PodTemplateSpec(
                metadata=ObjectMeta(annotations=built.metadata.annotations), spec=built.spec
            ),
        ),
    )


def setup(world: World) -> JobController:
    controller = JobController(
        world.api, clock=world.clock, rng=world.rng, jobs=world.jobs, pods=world.pods
    )
    world.add(controller)
    add_kubelet(world)
    return controller


def preempt(world: World, name: str) -> None:
    """What the scheduler does to a victim: DisruptionTarget condition, graceful delete."""
    current = world.api.get(Pod, name, "default")
    status = current.status
    assert status is not None
    condition = PodCondition(
        type="DisruptionTarget",
        status="True",
        reason="PreemptionByScheduler",
        message="default-scheduler: preempting to accommodate a higher priority pod",
        last_transition_time="2026-01-01T00:00:00Z",
    )
    world.api.update_status(
        dataclasses.replace(
            current,
            status=dataclasses.replace(status, conditions=(*(status.conditions or ()), condition)),
        )
    )
    world.api.delete(Pod, name, "default")
    world.settle()


def job_status(world: World) -> tuple[int, int, int]:
    status = world.api.get(Job, "batch", "default").status
    assert status is not None
    return (status.active or 0, status.succeeded or 0, status.failed or 0)


def conditions(world: World) -> list[tuple[str, str, str]]:
    status = world.api.get(Job, "batch", "default").status
    return [
        (c.type or "", c.reason or "", c.message or "")
        for c in (status.conditions if status else None) or ()
    ]


def live_pods(world: World) -> list[Pod]:
    return [
        p
        for p in world.pod_list()
        if not p.metadata.deletion_timestamp
        and p.status
        and p.status.phase in ("Pending", "Running")
    ]


def test_completions_and_parallelism(world: World) -> None:
    setup(world)
    world.api.create(job(completions=3, parallelism=2, duration="10s"))
    world.settle()
    assert job_status(world) == (2, 0, 0)
    created = world.pod_list()
    assert all(p.metadata.finalizers == ("batch.kubernetes.io/job-tracking",) for p in created)
    assert all(
        (p.metadata.labels or {}).get("batch.kubernetes.io/job-name") == "batch" for p in created
    )
    world.advance(10)
    assert job_status(world) == (1, 2, 0)
    world.advance(10)
    assert job_status(world) == (0, 3, 0)
    assert conditions(world) == [
        ("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
        ("Complete", "CompletionsReached", "Reached expected number of succeeded pods"),
    ]
    status = world.api.get(Job, "batch", "default").status
    assert status is not None
    assert status.completion_time == "2026-01-01T00:00:20Z"
    assert [e.message for e in world.events("Completed")] == ["Job completed"]
    assert all(not p.metadata.finalizers for p in world.pod_list())


def test_preempted_pods_count_against_backoff_limit_without_a_policy(world: World) -> None:
    """``isPodFailed``: deleted before it succeeded counts as failed, at once."""
    setup(world)
    world.api.create(job(backoff_limit=1))
    world.settle()
    (first,) = live_pods(world)
    preempt(world, first.metadata.name or "")
    assert job_status(world) == (0, 0, 1)
    assert live_pods(world) == []  # the replacement waits the 10 s pod failure backoff
    world.advance(10)
    (second,) = live_pods(world)
    preempt(world, second.metadata.name or "")
    assert job_status(world)[2] == 2
    assert conditions(world)[0] == (
        "FailureTarget",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    world.advance(30)  # the preempted pod finishes terminating
    assert conditions(world)[-1] == (
        "Failed",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    (event,) = world.events("BackoffLimitExceeded")
    assert (event.type, event.message) == ("Warning", "Job has reached the specified backoff limit")


def test_pod_failure_policy_ignores_preemption(world: World) -> None:
    setup(world)
    world.api.create(job(backoff_limit=0, policy=IGNORE_DISRUPTIONS, duration="60s"))
    world.settle()
    (first,) = live_pods(world)
    preempt(world, first.metadata.name or "")
    # Terminating pods are not replaced while a pod failure policy is set.
    assert live_pods(world) == []
    world.advance(30)  # grace period: the kubelet reports Failed, keeps DisruptionTarget
    assert job_status(world)[2] == 0
    assert not any(t in ("FailureTarget", "Failed") for t, _, _ in conditions(world))
    world.advance(10)  # the pod failure backoff
    (replacement,) = live_pods(world)
    assert replacement.metadata.name != first.metadata.name
    world.advance(60)
    assert job_status(world) == (0, 1, 0)
    assert conditions(world)[-1][0] == "Complete"


def test_a_failure_without_the_condition_still_counts_with_a_policy(world: World) -> None:
    setup(world)
    world.api.create(job(backoff_limit=0, policy=IGNORE_DISRUPTIONS))
    world.settle()
    (first,) = live_pods(world)
    world.api.delete(
        Pod, first.metadata.name or "", "default"
    )  # a plain delete: no DisruptionTarget
    world.settle()
    world.advance(30)
    assert job_status(world)[2] == 1
    assert conditions(world)[-1][:2] == ("Failed", "BackoffLimitExceeded")


def test_kubelet_eviction_is_a_disruption_too(world: World) -> None:
    """The kubelet's ``DisruptionTarget`` (``TerminationByKubelet``) matches the rule."""
    world.api.create(job(backoff_limit=0, policy=IGNORE_DISRUPTIONS))
    controller = JobController(
        world.api, clock=world.clock, rng=world.rng, jobs=world.jobs, pods=world.pods
    )
    world.add(controller)
    add_kubelet(world)
    world.settle()
    (first,) = live_pods(world)
    current = world.api.get(Pod, first.metadata.name or "", "default")
    status = current.status
    assert status is not None
    evicted = dataclasses.replace(
        status,
        phase="Failed",
        reason="Evicted",
        conditions=(
            *(status.conditions or ()),
            PodCondition(type="DisruptionTarget", status="True", reason="TerminationByKubelet"),
        ),
    )
    world.api.update_status(dataclasses.replace(current, status=evicted))
    world.settle()
    assert job_status(world)[2] == 0
    world.advance(10)
    assert len(live_pods(world)) == 1


def test_deleting_the_job_releases_its_pods_finalizers(world: World) -> None:
    setup(world)
    world.api.create(job(completions=2, parallelism=2))
    world.settle()
    world.api.delete(Job, "batch", "default")
    world.settle()
    assert all(not p.metadata.finalizers for p in world.pod_list())
