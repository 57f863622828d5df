"""The CronJob controller against the in-process API, on a manual clock.

Each test names the rule of ``pkg/controller/cronjob/cronjob_controllerv2.go`` /
``utils.go`` (v1.32) it checks. Jobs are finished by writing their status (the Job
controller and kubelets are not needed to see what the CronJob controller does).
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from kubeprio.api import kinds
from kubeprio.api.batch import (
    CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION,
    CronJob,
    CronJobSpec,
    Job,
    JobCondition,
    JobSpec,
    JobStatus,
    JobTemplateSpec,
)
from kubeprio.api.core import Container, Event, PodSpec, PodTemplateSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import DeleteRequest
from kubeprio.clock import rfc3339
from kubeprio.controllers.cronjob import CronJobController
from kubeprio.controllers.garbagecollector import GarbageCollector
from kubeprio.controllers.podutil import new_controller_ref
from tests.conftest import EPOCH, ManualClock
from tests.driving import Driver

MINUTES_AT_EPOCH = int(EPOCH) // 60  # 2026-01-01T00:00:00Z in minutes


class World:
    def __init__(self, api: ApiService, clock: ManualClock) -> None:
        self.api = api
        self.clock = clock
        self.cron_jobs: Informer[CronJob] = Informer(api, CronJob)
        self.jobs: Informer[Job] = Informer(api, Job)
        self.controller = CronJobController(
            api, clock=clock, rng=random.Random(0), cron_jobs=self.cron_jobs, jobs=self.jobs
        )
        self.driver = Driver(clock, [self.cron_jobs, self.jobs], [self.controller])
        self.cron_jobs.start()
        self.jobs.start()

    def create(self, **spec: Any) -> CronJob:
        created = self.api.create(make_cron_job("nightly", **spec))
        self.driver.settle()
        return created

    def get(self, name: str = "nightly") -> CronJob:
        return self.api.get(CronJob, name, "default")

    def jobs_by_name(self) -> list[str]:
        return sorted(j.metadata.name or "" for j in self.api.list(Job, "default").items)

    def events(self, reason: str | None = None) -> list[Event]:
        items = sorted(
            self.api.list(Event, "default").items, key=lambda e: e.metadata.creation_timestamp or ""
        )
        return [e for e in items if reason is None or e.reason == reason]

    def messages(self, reason: str) -> list[str]:
        return [e.message or "" for e in self.events(reason)]

    def finish(self, name: str, condition: str = "Complete", at: float | None = None) -> None:
        """Write a finished status on Job ``name`` (what the Job controller would)."""
        job = self.api.get(Job, name, "default")
        when = rfc3339(self.clock.now() if at is None else at)
        status = JobStatus(
            start_time=(job.metadata.creation_timestamp or when),
            conditions=(JobCondition(type=condition, status="True"),),
            completion_time=when if condition == "Complete" else None,
            succeeded=1 if condition == "Complete" else 0,
            failed=1 if condition == "Failed" else 0,
        )
        self.api.update_status(dataclasses.replace(job, status=status))
        self.driver.settle()


def make_cron_job(name: str, *, schedule: str = "*/5 * * * *", **spec: Any) -> CronJob:
    template = PodTemplateSpec(
        metadata=ObjectMeta(labels={"app": "report"}),
        spec=PodSpec(
            restart_policy="OnFailure",
            priority_class_name="batch-low",
            containers=(Container(name="c", image="busybox"),),
        ),
    )
    job_template = JobTemplateSpec(
        metadata=ObjectMeta(labels={"team": "data"}, annotations={"owner": "data-team"}),
        spec=JobSpec(template=template),
    )
    return CronJob(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=CronJobSpec(schedule=schedule, job_template=job_template, **spec),
    )


@pytest.fixture
def world(api: ApiService, clock: ManualClock) -> World:
    return World(api, clock)


# --- scheduling -----------------------------------------------------------------------------


def test_an_hour_of_every_five_minutes_makes_twelve_jobs(world: World) -> None:
    """syncCronJob + nextScheduleTimeDuration: one Job per schedule time, named
    ``<cronjob>-<scheduled minute>``, created at the scheduled instant (the requeue is
    driven by the clock alone)."""
    world.create(successful_jobs_history_limit=100)
    world.driver.advance(3600)
    expected = sorted(f"nightly-{MINUTES_AT_EPOCH + 5 * i}" for i in range(1, 13))
    assert world.jobs_by_name() == expected
    assert world.controller.next_wakeup() == EPOCH + 3900
    created = world.messages("SuccessfulCreate")
    assert created[0] == f"Created job nightly-{MINUTES_AT_EPOCH + 5}"
    # client-go's EventAggregator (events_cache.go): from the tenth distinct message within
    # 600 s, the events go into one combined event, which shows the latest message.
    assert len(created) == 10
    assert created[-1] == f"(combined from similar events): Created job {expected[-1]}"
    assert [e.count for e in world.events("SuccessfulCreate")][-1] == 3


def test_job_from_template(world: World) -> None:
    """getJobFromTemplate2: template labels and annotations, the scheduled-timestamp
    annotation, a controller reference, the template's spec (priority class included)."""
    world.create()
    world.driver.advance(300)
    job = world.api.get(Job, f"nightly-{MINUTES_AT_EPOCH + 5}", "default")
    assert job.metadata.labels is not None
    assert job.metadata.labels["team"] == "data"
    assert job.metadata.annotations == {
        "owner": "data-team",
        CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION: "2026-01-01T00:05:00Z",
    }
    [owner] = job.metadata.owner_references or ()
    cron = world.get()
    assert (owner.api_version, owner.kind, owner.name, owner.uid) == (
        "batch/v1",
        "CronJob",
        "nightly",
        cron.metadata.uid,
    )
    assert owner.controller is True
    assert owner.block_owner_deletion is True
    assert job.spec is not None
    assert job.spec.template is not None
    assert job.spec.template.spec is not None
    assert job.spec.template.spec.priority_class_name == "batch-low"
    assert cron.status is not None
    [active] = cron.status.active or ()
    assert (active.kind, active.name, active.uid) == ("Job", job.metadata.name, job.metadata.uid)
    assert cron.status.last_schedule_time == "2026-01-01T00:05:00Z"


def test_time_zone_reads_the_schedule_in_that_zone(world: World) -> None:
    """formatSchedule prepends ``TZ=<timeZone>``; the annotation is RFC 3339 in the zone."""
    world.create(schedule="0 9 * * *", time_zone="Europe/Berlin")
    world.driver.advance(86400)
    [name] = world.jobs_by_name()
    assert name == f"nightly-{MINUTES_AT_EPOCH + 8 * 60}"  # 09:00 CET is 08:00Z
    job = world.api.get(Job, name, "default")
    assert job.metadata.annotation(CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION) == (
        "2026-01-01T09:00:00+01:00"
    )


def test_schedule_change_requeues_for_the_new_next_time(world: World) -> None:
    """updateCronJob: a new schedule enqueues the key after the new schedule's next time."""
    cron = world.create(schedule="0 * * * *")
    assert world.controller.next_wakeup() == EPOCH + 3600
    assert cron.spec is not None
    world.api.update(
        dataclasses.replace(cron, spec=dataclasses.replace(cron.spec, schedule="*/10 * * * *"))
    )
    world.driver.settle()
    assert world.controller.next_wakeup() == EPOCH + 600


def test_suspended_cron_job_creates_nothing(world: World) -> None:
    world.create(suspend=True)
    world.driver.advance(3600)
    assert world.jobs_by_name() == []
    assert world.controller.next_wakeup() is None


def test_resuming_runs_only_the_most_recent_missed_time(world: World) -> None:
    """mostRecentScheduleTime: after a suspension only the latest unmet time runs."""
    cron = world.create(suspend=True)
    world.driver.advance(1000)
    assert cron.spec is not None
    world.api.update(
        dataclasses.replace(world.get(), spec=dataclasses.replace(cron.spec, suspend=False))
    )
    world.driver.settle()
    assert world.jobs_by_name() == [f"nightly-{MINUTES_AT_EPOCH + 15}"]


def test_missed_start_past_the_deadline_is_skipped(world: World) -> None:
    """startingDeadlineSeconds: mostRecentScheduleTime starts looking at now - deadline, so
    a start missed by more than the deadline is not even seen: no Job, and (as in
    upstream v1.32, where the later ``tooLate`` check cannot trigger after that) no
    MissSchedule event; the key waits for the next time."""
    world.create(starting_deadline_seconds=10)
    world.clock.advance(330)  # the controller was away at 00:05:00
    world.driver.settle()
    assert world.jobs_by_name() == []
    assert world.messages("MissSchedule") == []
    assert world.controller.next_wakeup() == EPOCH + 600
    world.driver.advance(300)
    assert world.jobs_by_name() == [f"nightly-{MINUTES_AT_EPOCH + 10}"]


def test_missed_start_within_the_deadline_still_runs(world: World) -> None:
    world.create(starting_deadline_seconds=60)
    world.clock.advance(330)
    world.driver.settle()
    assert world.jobs_by_name() == [f"nightly-{MINUTES_AT_EPOCH + 5}"]


def test_too_many_missed_start_times_warn_and_run_the_latest(world: World) -> None:
    """More than 100 missed: TooManyMissedTimes, and only the most recent time runs."""
    world.create()
    world.clock.advance(101 * 300 + 30)
    world.driver.settle()
    assert world.messages("TooManyMissedTimes") == [
        "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check "
        "clock skew"
    ]
    assert world.jobs_by_name() == [f"nightly-{MINUTES_AT_EPOCH + 5 * 101}"]


def test_a_hundred_missed_start_times_do_not_warn(world: World) -> None:
    world.create()
    world.clock.advance(100 * 300 + 30)
    world.driver.settle()
    assert world.messages("TooManyMissedTimes") == []
    assert world.jobs_by_name() == [f"nightly-{MINUTES_AT_EPOCH + 5 * 100}"]


# --- concurrency ------------------------------------------------------------------------------


def test_allow_runs_jobs_side_by_side(world: World) -> None:
    world.create()
    world.driver.advance(600)
    cron = world.get()
    assert cron.status is not None
    assert len(cron.status.active or ()) == 2


def test_forbid_skips_runs_while_a_job_is_active(world: World) -> None:
    """ForbidConcurrent: JobAlreadyActive (Normal) and no Job while one is active; once it
    finishes, the skipped time is still the most recent unmet one and starts late (no
    startingDeadlineSeconds), then the schedule goes on."""
    world.create(concurrency_policy="Forbid")
    world.driver.advance(600)
    first = f"nightly-{MINUTES_AT_EPOCH + 5}"
    assert world.jobs_by_name() == [first]
    [skipped] = world.events("JobAlreadyActive")
    assert skipped.type == "Normal"
    assert skipped.message == (
        "Not starting job because prior execution is running and concurrency policy is Forbid"
    )
    world.clock.advance(30)
    world.finish(first)
    second = f"nightly-{MINUTES_AT_EPOCH + 10}"
    assert world.jobs_by_name() == [first, second]
    world.finish(second)
    world.driver.advance(300)
    assert world.jobs_by_name() == [first, second, f"nightly-{MINUTES_AT_EPOCH + 15}"]


def test_forbid_with_a_deadline_drops_the_skipped_run(world: World) -> None:
    """With startingDeadlineSeconds the skipped time falls out of the window instead."""
    world.create(concurrency_policy="Forbid", starting_deadline_seconds=20)
    world.driver.advance(600)
    first = f"nightly-{MINUTES_AT_EPOCH + 5}"
    world.clock.advance(30)
    world.finish(first)
    assert world.jobs_by_name() == [first]
    world.driver.advance(300)
    assert world.jobs_by_name() == [first, f"nightly-{MINUTES_AT_EPOCH + 15}"]


def test_replace_deletes_the_active_job_first(world: World) -> None:
    """ReplaceConcurrent: each active Job is deleted (SuccessfulDelete) before the new one."""
    world.create(concurrency_policy="Replace")
    world.driver.advance(600)
    assert world.jobs_by_name() == [f"nightly-{MINUTES_AT_EPOCH + 10}"]
    assert world.messages("SuccessfulDelete") == [f"Deleted job nightly-{MINUTES_AT_EPOCH + 5}"]
    cron = world.get()
    assert cron.status is not None
    assert [r.name for r in cron.status.active or ()] == [f"nightly-{MINUTES_AT_EPOCH + 10}"]


# --- status and history ---------------------------------------------------------------------


def test_completed_job_leaves_active_and_sets_last_successful_time(world: World) -> None:
    """SawCompletedJob ("condition: Complete"), active emptied (left out, omitempty),
    lastSuccessfulTime from the Job's completionTime."""
    world.create()
    world.driver.advance(300)
    name = f"nightly-{MINUTES_AT_EPOCH + 5}"
    world.clock.advance(42)
    world.finish(name)
    cron = world.get()
    assert cron.status is not None
    assert cron.status.active is None
    assert cron.status.last_successful_time == "2026-01-01T00:05:42Z"
    assert world.messages("SawCompletedJob") == [f"Saw completed job: {name}, condition: Complete"]


def test_failed_job_does_not_move_last_successful_time(world: World) -> None:
    world.create()
    world.driver.advance(300)
    name = f"nightly-{MINUTES_AT_EPOCH + 5}"
    world.finish(name, "Failed")
    cron = world.get()
    assert cron.status is not None
    assert cron.status.last_successful_time is None
    assert world.messages("SawCompletedJob") == [f"Saw completed job: {name}, condition: Failed"]


def test_history_limits_delete_the_oldest_finished_jobs(world: World) -> None:
    """cleanupFinishedJobs/removeOldestJobs: keep the newest 2 successful, 1 failed
    (byJobStartTime), deleting the rest with SuccessfulDelete."""
    world.create(successful_jobs_history_limit=2, failed_jobs_history_limit=1)
    names = []
    for i in range(1, 6):
        world.driver.advance(300)
        name = f"nightly-{MINUTES_AT_EPOCH + 5 * i}"
        names.append(name)
        world.finish(name, "Failed" if i in (2, 4) else "Complete")
    assert world.jobs_by_name() == sorted([names[2], names[3], names[4]])
    assert world.messages("SuccessfulDelete") == [
        f"Deleted job {names[1]}",  # the second failure pushes out the first
        f"Deleted job {names[0]}",  # the third success pushes out the first success
    ]


def test_zero_history_deletes_every_finished_job(world: World) -> None:
    world.create(successful_jobs_history_limit=0)
    world.driver.advance(300)
    world.finish(f"nightly-{MINUTES_AT_EPOCH + 5}")
    world.driver.settle()
    assert world.jobs_by_name() == []
    cron = world.get()
    assert cron.status is not None
    assert cron.status.last_successful_time is not None


def test_active_job_that_went_missing_is_dropped(world: World) -> None:
    """MissingJob: an active Job the API no longer has leaves status.active."""
    world.create()
    world.driver.advance(300)
    name = f"nightly-{MINUTES_AT_EPOCH + 5}"
    # Background, as kubectl sends: a batch/v1 Job deleted without a policy is orphaned
    # and stays (with the ``orphan`` finalizer) until the garbage collector is done.
    world.api.delete(Job, name, "default", options=DeleteRequest(propagation_policy="Background"))
    world.driver.settle()
    assert world.messages("MissingJob") == [f"Active job went missing: {name}"]
    cron = world.get()
    assert cron.status is not None
    assert cron.status.active is None


def test_unfinished_job_it_did_not_create_is_reported(world: World) -> None:
    """UnexpectedJob: an unfinished Job controlled by the CronJob, not in its active list."""
    cron = world.create()
    stray = Job(
        metadata=ObjectMeta(
            name="stray",
            namespace="default",
            owner_references=(new_controller_ref(cron),),
        ),
        spec=cron.spec.job_template.spec,  # type: ignore[union-attr]
    )
    world.api.create(stray)
    world.driver.settle()
    assert world.messages("UnexpectedJob") == [
        "Saw a job that the controller did not create or forgot: stray"
    ]


def test_unparseable_stored_schedule_is_reported_and_not_requeued(world: World) -> None:
    """UnparseableSchedule: a schedule an older server let through is never run."""
    cron = world.create()
    assert cron.spec is not None
    bad = dataclasses.replace(cron, spec=dataclasses.replace(cron.spec, schedule="61 * * * *"))
    key = world.api._key(kinds.for_model(CronJob), "nightly", "default")
    world.api.store.update(key, bad, expected_revision=int(cron.metadata.resource_version or 0))
    world.driver.settle()
    assert world.messages("UnParseableCronJobSchedule") == [
        "unparseable schedule for cronjob: 61 * * * *"
    ]
    world.controller.queue.add("default/nightly")
    world.driver.settle()
    assert world.messages("UnparseableSchedule") == [
        'unparseable schedule: "61 * * * *" : end of range (61) above maximum (59): 61'
    ]
    assert world.controller.next_wakeup() is None


def test_deleting_the_cron_job_collects_its_jobs(world: World) -> None:
    """The garbage collector deletes Jobs whose controller (the CronJob) was deleted."""
    gc = GarbageCollector(
        world.api,
        clock=world.clock,
        rng=random.Random(0),
        owners=[world.cron_jobs],
        dependents=[world.jobs],
    )
    world.driver.add(gc)
    world.create()
    world.driver.advance(600)
    assert len(world.jobs_by_name()) == 2
    world.api.delete(CronJob, "nightly", "default")
    world.driver.settle()
    assert world.jobs_by_name() == []
