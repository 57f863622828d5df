"""The CronJob controller: a Job from the template at each schedule time.

Mirrors ``pkg/controller/cronjob/cronjob_controllerv2.go`` (``ControllerV2``, v1.32):

* ``sync``: the CronJob's Jobs (found through the ``controller-uid`` index of the Job
  informer, never by scanning), ``cleanupFinishedJobs`` (the oldest finished Jobs beyond
  ``successfulJobsHistoryLimit``/``failedJobsHistoryLimit`` deleted, ``SuccessfulDelete``),
  then ``syncCronJob``, then one status write if anything changed;
* ``syncCronJob``: finished Jobs leave ``status.active`` (``SawCompletedJob``) and a
  succeeded one moves ``lastSuccessfulTime``; an unfinished Job it does not list is
  reported (``UnexpectedJob``); an active Job that is gone is dropped (``MissingJob``);
  then, unless the CronJob is being deleted, its ``timeZone`` does not load
  (``UnknownTimeZone``), it is suspended, or the schedule does not parse
  (``UnparseableSchedule``) or makes no sense (``InvalidSchedule``): the most recent
  unmet schedule time is run, unless it is past ``startingDeadlineSeconds``
  (``MissSchedule``), already run, or ``Forbid`` finds a Job active (``JobAlreadyActive``);
  ``Replace`` deletes the active Jobs first. The Job is ``<cronjob>-<minutes>`` with the
  ``batch.kubernetes.io/cronjob-scheduled-timestamp`` annotation, the template's labels,
  annotations and spec, and a controller reference to the CronJob (``SuccessfulCreate``;
  ``FailedCreate`` when the API refuses it, for example a tenant's allowlist). More than
  100 missed start times warn ``TooManyMissedTimes``; only the most recent one runs;
* the key is requeued for the next schedule time; a change of schedule or time zone
  requeues it for the new schedule's next time.

Time is the injected clock only: in ``simulate`` the requeue is a virtual-time wakeup, in
``serve`` a real one. The Jobs run their pods through the Job controller, so the pods
carry the template's ``priorityClassName`` and preempt or are preempted as any other.

Deviations: no 100 ms padding on the requeue (upstream's ``nextScheduleDelta`` absorbs
clock skew between the controller manager and the API server; here both share one
clock), so in virtual time a Job is created at its scheduled instant (``schedule_delta``
restores the padding); Jobs are found by the UID in their controller reference (upstream lists the
namespace's Jobs and matches the controller's name); there is no namespace-terminating
cause here, so a refused create is always a ``FailedCreate``; a schedule without a
``timeZone`` is read in UTC. Must not import ``apiserver``, ``store`` or ``admission``.
"""

from __future__ import annotations

import datetime
import random
from typing import Final

from kubeprio.api import cronschedule, errors
from kubeprio.api.batch import (
    FORBID_CONCURRENT,
    REPLACE_CONCURRENT,
    CronJob,
    CronJobSpec,
    CronJobStatus,
    Job,
)
from kubeprio.api.core import ObjectReference
from kubeprio.api.gotext import go_quote
from kubeprio.api.meta import ApiObject, OwnerReference
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client, DeleteRequest
from kubeprio.clock import Clock, rfc3339
from kubeprio.controllers import cronjobutil as cu
from kubeprio.controllers import jobutil as ju
from kubeprio.controllers.base import (
    CONTROLLER_INDEX,
    Controller,
    by_controller,
    object_key,
    resolve_controller_ref,
    split_key,
)
from kubeprio.errors import KubeprioError

KIND: Final = "CronJob"
BACKGROUND: Final = "Background"


class ReplaceError(KubeprioError):
    """``could not replace job``: a Replace run could not delete an active Job (retried)."""


class CronJobController(Controller):
    """``cronjob.ControllerV2``."""

    name = "cronjob-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        cron_jobs: Informer[CronJob],
        jobs: Informer[Job],
        recorder: record.EventRecorder | None = None,
        schedule_delta: float = 0.0,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.schedule_delta = schedule_delta
        self.cron_jobs = cron_jobs
        self.jobs = jobs
        jobs.add_index(CONTROLLER_INDEX, by_controller)
        cron_jobs.add_handler(
            FuncHandler(
                on_add=lambda cj: self.queue.add(object_key(cj)),
                on_update=self._cron_job_updated,
                on_delete=lambda cj: self.queue.add(object_key(cj)),
            )
        )
        jobs.add_handler(
            FuncHandler(
                on_add=self._job_added,
                on_update=self._job_updated,
                on_delete=self._enqueue_owner,
            )
        )

    # --- event handlers ----------------------------------------------------------------------

    def _owner(self, job: Job) -> CronJob | None:
        return resolve_controller_ref(job, KIND, self.cron_jobs)

    def _enqueue_owner(self, job: Job) -> None:
        """``deleteJob`` (and ``addJob``): wake the CronJob that controls the Job."""
        owner = self._owner(job)
        if owner is not None:
            self.queue.add(object_key(owner))

    def _job_added(self, job: Job) -> None:
        self._enqueue_owner(job)

    def _job_updated(self, old: Job, new: Job) -> None:
        """``updateJob``: the old controller too when the controller reference changed."""
        if old.metadata.resource_version == new.metadata.resource_version:
            return
        old_ref: OwnerReference | None = old.metadata.controller_ref()
        new_ref: OwnerReference | None = new.metadata.controller_ref()
        if old_ref != new_ref and old_ref is not None:
            self._enqueue_owner(old)
        if new_ref is not None:
            self._enqueue_owner(new)

    def _cron_job_updated(self, old: CronJob, new: CronJob) -> None:
        """``updateCronJob``: a new schedule or zone requeues for its next time."""
        old_spec, new_spec = old.spec or CronJobSpec(), new.spec or CronJobSpec()
        key = object_key(new)
        if old_spec.schedule == new_spec.schedule and old_spec.time_zone == new_spec.time_zone:
            self.queue.add(key)
            return
        text, _ = cu.format_schedule(new)
        try:
            schedule = cu.parse(text)
        except cronschedule.ScheduleError:
            self.recorder.event(
                new,
                record.EVENT_TYPE_WARNING,
                "UnParseableCronJobSchedule",
                f"unparseable schedule for cronjob: {new_spec.schedule or ''}",
            )
            return
        delay = cu.next_schedule_time_duration(
            new, self.clock.now(), schedule, delta=self.schedule_delta
        )
        if delay is not None:
            self.queue.add_after(key, delay)

    def event_target(self, key: str) -> ApiObject | None:
        """The CronJob of ``key``."""
        namespace, name = split_key(key)
        return self.cron_jobs.get(name, namespace)

    # --- sync --------------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        """``sync``: clean up history, run what is due, write the status, requeue."""
        namespace, name = split_key(key)
        cron_job = self.cron_jobs.get(name, namespace)
        if cron_job is None:
            return
        jobs = sorted(
            self.jobs.by_index(CONTROLLER_INDEX, cron_job.metadata.uid or ""),
            key=lambda j: j.metadata.name or "",
        )
        working = _Working(cron_job)
        if self._cleanup_finished_jobs(working, jobs):
            working.changed = True
        sync_error: KubeprioError | None = None
        try:
            delay = self._sync_cron_job(working, jobs)
        except KubeprioError as exc:
            delay, sync_error = None, exc
        if working.changed:
            self.client.update_status(working.object())
        if delay is not None:
            self.queue.add_after(key, delay)
        elif sync_error is not None:
            raise sync_error  # retried with backoff, as upstream's AddRateLimited

    def _cleanup_finished_jobs(self, working: _Working, jobs: list[Job]) -> bool:
        """``cleanupFinishedJobs``: keep the newest finished Jobs up to each limit."""
        spec = working.spec
        successful_limit = spec.successful_jobs_history_limit
        failed_limit = spec.failed_jobs_history_limit
        if successful_limit is None and failed_limit is None:
            return False
        successful: list[Job] = []
        failed: list[Job] = []
        for job in jobs:
            condition = _finished_condition(job)
            if condition == ju.COMPLETE:
                successful.append(job)
            elif condition == ju.FAILED:
                failed.append(job)
        changed = False
        for finished, limit in ((successful, successful_limit), (failed, failed_limit)):
            if limit is None or len(finished) <= limit:
                continue
            finished.sort(key=cu.start_time_key)
            for job in finished[: len(finished) - limit]:
                if self._delete_job(working, job):
                    changed = True
        return changed

    def _delete_job(self, working: _Working, job: Job) -> bool:
        """``deleteJob``: delete the Job (background propagation) and forget it."""
        try:
            self.client.delete(
                Job,
                job.metadata.name or "",
                job.metadata.namespace,
                options=DeleteRequest(propagation_policy=BACKGROUND),
            )
        except errors.StatusError as exc:
            self._event(
                working, record.EVENT_TYPE_WARNING, "FailedDelete", f"Deleted job: {exc.message}"
            )
            return False
        working.remove_active(job.metadata.uid or "")
        self._event(
            working,
            record.EVENT_TYPE_NORMAL,
            "SuccessfulDelete",
            f"Deleted job {job.metadata.name}",
        )
        return True

    def _event(self, working: _Working, event_type: str, reason: str, message: str) -> None:
        self.recorder.event(working.cron_job, event_type, reason, message)

    def _sync_cron_job(self, working: _Working, jobs: list[Job]) -> float | None:
        """``syncCronJob``: the requeue delay, or None; ``working.changed`` when the status
        must be written (also when it raises)."""
        now = self.clock.now()
        children: set[str] = set()
        for job in jobs:
            uid = job.metadata.uid or ""
            children.add(uid)
            found = working.in_active(uid)
            finished = ju.is_finished(job)
            if not found and not finished:
                fresh = self.client.get(CronJob, working.name, working.namespace)
                if cu.in_active_list(fresh, uid):
                    working.reset(fresh)
                    continue
                self._event(
                    working,
                    record.EVENT_TYPE_WARNING,
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {job.metadata.name}",
                )
            elif finished:
                if found:
                    working.remove_active(uid)
                    self._event(
                        working,
                        record.EVENT_TYPE_NORMAL,
                        "SawCompletedJob",
                        f"Saw completed job: {job.metadata.name}, condition: {_finished_condition(job)}",
                    )
                    working.changed = True
                if _finished_condition(job) == ju.COMPLETE:
                    completion = job.status.completion_time if job.status else None
                    if working.note_success(completion):
                        working.changed = True
        for ref in working.active():
            if (ref.uid or "") in children:
                continue
            try:
                self.client.get(Job, ref.name or "", ref.namespace)
            except errors.NotFoundError:
                self._event(
                    working,
                    record.EVENT_TYPE_NORMAL,
                    "MissingJob",
                    f"Active job went missing: {ref.name}",
                )
                working.remove_active(ref.uid or "")
                working.changed = True
        cron_job = working.cron_job
        if cron_job.metadata.deletion_timestamp:
            return None
        spec = working.spec
        if spec.time_zone is not None:
            try:
                cronschedule.load_location(spec.time_zone)
            except cronschedule.UnknownTimeZoneError as exc:
                self._event(
                    working,
                    record.EVENT_TYPE_WARNING,
                    "UnknownTimeZone",
                    f"invalid timeZone: {go_quote(spec.time_zone)}: {exc}",
                )
                return None
        if spec.suspend:
            return None
        text, own_tz = cu.format_schedule(cron_job)
        if own_tz:
            self._event(
                working,
                record.EVENT_TYPE_WARNING,
                "UnsupportedSchedule",
                cu.UNSUPPORTED_SCHEDULE_MESSAGE.format(schedule=go_quote(text)),
            )
        schedule_text = spec.schedule or ""
        try:
            schedule = cu.parse(text)
        except cronschedule.ScheduleError as exc:
            self._event(
                working,
                record.EVENT_TYPE_WARNING,
                "UnparseableSchedule",
                f"unparseable schedule: {go_quote(schedule_text)} : {exc}",
            )
            return None
        try:
            scheduled, missed = cu.next_schedule_time(cron_job, now, schedule)
        except cu.InvalidScheduleError as exc:
            self._event(
                working,
                record.EVENT_TYPE_WARNING,
                "InvalidSchedule",
                f"invalid schedule: {schedule_text} : {exc}",
            )
            return None
        if scheduled is not None and missed is cu.Missed.MANY:
            self._event(
                working, record.EVENT_TYPE_WARNING, "TooManyMissedTimes", cu.TOO_MANY_MISSED_MESSAGE
            )
        requeue = cu.next_schedule_time_duration(cron_job, now, schedule, delta=self.schedule_delta)
        if scheduled is None:
            return requeue
        deadline = spec.starting_deadline_seconds
        if deadline is not None and scheduled + deadline < now:
            self._event(
                working,
                record.EVENT_TYPE_WARNING,
                "MissSchedule",
                f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}",
            )
            return requeue
        name = cu.job_name(cron_job, scheduled)
        if working.in_active_by_name(name) or cu.last_schedule_time(cron_job) == scheduled:
            return requeue
        if spec.concurrency_policy == FORBID_CONCURRENT and working.active():
            self._event(
                working,
                record.EVENT_TYPE_NORMAL,
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            return requeue
        if spec.concurrency_policy == REPLACE_CONCURRENT:
            for ref in working.active():
                try:
                    active_job = self.client.get(Job, ref.name or "", ref.namespace)
                except errors.StatusError as exc:
                    self._event(
                        working, record.EVENT_TYPE_WARNING, "FailedGet", f"Get job: {exc.message}"
                    )
                    raise
                if not self._delete_job(working, active_job):
                    raise ReplaceError(
                        f"could not replace job {active_job.metadata.namespace}/{active_job.metadata.name}"
                    )
                working.changed = True
        request = cu.job_from_template(cron_job, scheduled)
        try:
            created = self.client.create(request)
        except errors.AlreadyExistsError:
            created = self.client.get(Job, name, working.namespace)
            owner = created.metadata.controller_ref()
            if owner is None or owner.uid != cron_job.metadata.uid:
                return None  # someone else's Job: assume they keep the status
            if working.in_active(created.metadata.uid or ""):
                return None
        except errors.StatusError as exc:
            self._event(
                working,
                record.EVENT_TYPE_WARNING,
                "FailedCreate",
                f"Error creating job: {exc.message}",
            )
            raise
        else:
            self._event(
                working,
                record.EVENT_TYPE_NORMAL,
                "SuccessfulCreate",
                f"Created job {created.metadata.name}",
            )
        working.add_active(record.object_reference(created), scheduled)
        working.changed = True
        return cu.next_schedule_time_duration(
            working.object(), now, schedule, delta=self.schedule_delta
        )


def _finished_condition(job: Job) -> str | None:
    """``FinishedCondition``: ``Complete`` or ``Failed`` when one is true, else None."""
    for condition in (job.status.conditions if job.status else None) or ():
        if condition.type in (ju.COMPLETE, ju.FAILED) and condition.status == "True":
            return condition.type
    return None


def _rfc1123z(seconds: int) -> str:
    """Go's ``time.RFC1123Z`` in UTC: ``Mon, 02 Jan 2006 15:04:05 +0000``."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%a, %d %b %Y %H:%M:%S +0000")


class _Working:
    """``cronJobCopy``: the CronJob whose status one sync changes, written once at the end."""

    def __init__(self, cron_job: CronJob) -> None:
        self.cron_job = cron_job
        self.status = cron_job.status or CronJobStatus()
        self.changed = False

    def reset(self, cron_job: CronJob) -> None:
        """Continue from a fresher copy read from the API (``cronJob = cjCopy``)."""
        self.cron_job = cron_job
        self.status = cron_job.status or CronJobStatus()

    @property
    def spec(self) -> CronJobSpec:
        return self.cron_job.spec or CronJobSpec()

    @property
    def name(self) -> str:
        return self.cron_job.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.cron_job.metadata.namespace or ""

    def active(self) -> tuple[ObjectReference, ...]:
        return self.status.active or ()

    def in_active(self, uid: str) -> bool:
        return any(ref.uid == uid for ref in self.active())

    def in_active_by_name(self, name: str) -> bool:
        return any(ref.name == name and ref.namespace == self.namespace for ref in self.active())

    def remove_active(self, uid: str) -> None:
        """``deleteFromActiveList``."""
        self.status = evolve(
            self.status, active=tuple(ref for ref in self.active() if ref.uid != uid)
        )

    def add_active(self, ref: ObjectReference, scheduled: int) -> None:
        self.status = evolve(
            self.status, active=(*self.active(), ref), last_schedule_time=rfc3339(scheduled)
        )

    def note_success(self, completion: str | None) -> bool:
        """Move ``lastSuccessfulTime`` to a later completion; whether it changed."""
        current = self.status.last_successful_time
        if current is None:
            self.status = evolve(self.status, last_successful_time=completion)
            return True
        if completion and cu.later(completion, current):
            self.status = evolve(self.status, last_successful_time=completion)
            return True
        return False

    def object(self) -> CronJob:
        """The CronJob with the working status."""
        status = self.status
        if status.active == ():
            status = evolve(status, active=None)  # Go's omitempty: an empty list is left out
        return evolve(self.cron_job, status=status)
