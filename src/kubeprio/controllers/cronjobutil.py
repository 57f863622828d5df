"""CronJob helpers: schedule times, the Job made from the template, history order.

Mirrors ``pkg/controller/cronjob/utils.go`` (v1.32): ``mostRecentScheduleTime`` (the
last schedule time, or the creation time, as the earliest time; the most recent
unmet schedule time by upstream's approximation over the interval between the next two
schedule times, with more than 100 missed counting as "many"), ``nextScheduleTime``,
``nextScheduleTimeDuration`` (the next schedule time plus 100 ms, upstream's
``nextScheduleDelta``), ``getJobFromTemplate2`` and ``getJobName``
(``<cronjob>-<scheduled time in minutes since the epoch>``), ``byJobStartTime``, and
``formatSchedule`` from ``cronjob_controllerv2.go`` (a ``timeZone`` becomes a ``TZ=``
prefix). Times are Unix seconds (floats, as the injected clock gives them). Pure: no I/O.
"""

from __future__ import annotations

import datetime
import enum
import functools
from dataclasses import dataclass
from typing import Final

from kubeprio.api import cronschedule
from kubeprio.api.batch import (
    CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION,
    CronJob,
    CronJobSpec,
    Job,
    JobSpec,
)
from kubeprio.api.core import ObjectReference
from kubeprio.api.meta import ObjectMeta
from kubeprio.clock import parse_rfc3339
from kubeprio.controllers import podutil

NEXT_SCHEDULE_DELTA: Final = 0.1
"""``nextScheduleDelta``: a requeue lands 100 ms after the schedule time (clock skew)."""
MANY_MISSED: Final = 100
"""More missed start times than this is "too many" (a ``TooManyMissedTimes`` warning)."""
TOO_MANY_MISSED_MESSAGE: Final = (
    "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
)
UNSUPPORTED_SCHEDULE_MESSAGE: Final = (
    "CRON_TZ or TZ used in schedule {schedule} is not officially supported, see "
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
)


class Missed(enum.Enum):
    """``missedSchedulesType``."""

    NONE = "none"
    FEW = "few"
    MANY = "many"


class InvalidScheduleError(ValueError):
    """A schedule that parses but never makes sense (two runs less than a second apart)."""


@dataclass(frozen=True, slots=True)
class RecentSchedule:
    """What ``mostRecentScheduleTime`` returns (its error is raised instead)."""

    earliest: float
    """The last schedule time, else the creation time (moved up to the deadline)."""
    most_recent: int | None
    """The most recent schedule time not after now, or None."""
    missed: Missed


def _spec(cron_job: CronJob) -> CronJobSpec:
    return cron_job.spec or CronJobSpec()


def _timestamp(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return parse_rfc3339(text)
    except ValueError:
        return None


def last_schedule_time(cron_job: CronJob) -> float | None:
    """``status.lastScheduleTime`` in seconds, None if unset."""
    return _timestamp(cron_job.status.last_schedule_time if cron_job.status else None)


def most_recent_schedule_time(
    cron_job: CronJob,
    now: float,
    schedule: cronschedule.Schedule,
    *,
    include_starting_deadline: bool,
) -> RecentSchedule:
    """``mostRecentScheduleTime``; ``InvalidScheduleError`` when two schedule times are
    less than a second apart (a day that never comes, such as 31 February)."""
    earliest = _timestamp(cron_job.metadata.creation_timestamp) or 0.0
    last = last_schedule_time(cron_job)
    if last is not None:
        earliest = last
    deadline = _spec(cron_job).starting_deadline_seconds
    if include_starting_deadline and deadline is not None:
        # The controller is not going to schedule anything before this point.
        earliest = max(earliest, now - deadline)
    t1 = schedule.next(earliest)
    if t1 is None:
        raise InvalidScheduleError("time difference between two schedules is less than 1 second")
    if now < t1:
        return RecentSchedule(earliest, None, Missed.NONE)
    t2 = schedule.next(t1)
    if t2 is not None and now < t2:
        return RecentSchedule(earliest, t1, Missed.NONE)
    between = (t2 if t2 is not None else t1) - t1
    if between < 1:
        raise InvalidScheduleError("time difference between two schedules is less than 1 second")
    # Upstream's approximation: how many intervals of (t2 - t1) fit between t1 and now.
    missed_count = int(now - t1) // between + 1
    # Start one interval early and let the schedule find the real times (irregular
    # schedules such as "30 6-16/4 * * 1-5").
    cursor: int | None = t1 + (missed_count - 2) * between
    most_recent: int | None = None
    while cursor is not None:
        cursor = schedule.next(cursor)
        if cursor is None or cursor > now:
            break
        most_recent = cursor
    missed = Missed.MANY if missed_count > MANY_MISSED else Missed.FEW
    return RecentSchedule(earliest, most_recent, missed)


def next_schedule_time(
    cron_job: CronJob, now: float, schedule: cronschedule.Schedule
) -> tuple[int | None, Missed]:
    """``nextScheduleTime``: the unmet schedule time to run now (None: nothing due), and
    how many were missed (``Missed.MANY`` makes the caller warn)."""
    recent = most_recent_schedule_time(cron_job, now, schedule, include_starting_deadline=True)
    if recent.most_recent is None or recent.most_recent > now:
        return None, recent.missed
    return recent.most_recent, recent.missed


def next_schedule_time_duration(
    cron_job: CronJob,
    now: float,
    schedule: cronschedule.Schedule,
    *,
    delta: float = NEXT_SCHEDULE_DELTA,
) -> float | None:
    """``nextScheduleTimeDuration``: seconds from ``now`` to the next schedule time plus
    ``delta`` (upstream's 100 ms by default; None when the schedule has no next time
    within its search limit, where upstream would wait for a time in year 1, i.e. not at
    all)."""
    try:
        recent = most_recent_schedule_time(cron_job, now, schedule, include_starting_deadline=False)
    except InvalidScheduleError:
        base: float = now
    else:
        if recent.most_recent is not None:
            base = float(recent.most_recent)
        elif recent.missed is Missed.NONE:
            base = float(recent.earliest)
        else:
            base = now
    following = schedule.next(base)
    if following is None:
        return None
    return following + delta - now


def format_schedule(cron_job: CronJob) -> tuple[str, bool]:
    """``formatSchedule``: the schedule to parse (``TZ=<timeZone> `` prepended when the
    zone loads) and whether it carries its own ``TZ`` (an ``UnsupportedSchedule`` warning)."""
    spec = _spec(cron_job)
    schedule = spec.schedule or ""
    if "TZ" in schedule:
        return schedule, True
    if spec.time_zone is not None:
        try:
            cronschedule.load_location(spec.time_zone)
        except cronschedule.UnknownTimeZoneError:
            return schedule, False
        return f"TZ={spec.time_zone} {schedule}", False
    return schedule, False


def job_name(cron_job: CronJob, scheduled: int) -> str:
    """``getJobName``: ``<cronjob>-<scheduled time in minutes since the epoch>``."""
    return f"{cron_job.metadata.name or ''}-{scheduled // 60}"


def scheduled_timestamp(scheduled: int, time_zone: str | None) -> str:
    """The scheduled-timestamp annotation: RFC 3339 in the CronJob's zone (``Z`` at offset 0)."""
    zone = cronschedule.load_location(time_zone or "")
    moment = datetime.datetime.fromtimestamp(scheduled, zone or datetime.UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S%z")
    if text.endswith("+0000"):
        return text[:-5] + "Z"
    return f"{text[:-2]}:{text[-2:]}"


def job_from_template(cron_job: CronJob, scheduled: int) -> Job:
    """``getJobFromTemplate2``: the template's labels, annotations (plus the scheduled
    timestamp) and spec, named after the scheduled minute, controlled by the CronJob.
    ``cronschedule.UnknownTimeZoneError`` if the time zone does not load."""
    spec = _spec(cron_job)
    template = spec.job_template
    template_meta = (template.metadata if template else None) or ObjectMeta()
    annotations = dict(template_meta.annotations or {})
    annotations[CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION] = scheduled_timestamp(
        scheduled, spec.time_zone
    )
    labels = dict(template_meta.labels or {})
    return Job(
        metadata=ObjectMeta(
            name=job_name(cron_job, scheduled),
            namespace=cron_job.metadata.namespace,
            labels=labels or None,
            annotations=annotations,
            owner_references=(podutil.new_controller_ref(cron_job),),
        ),
        spec=(template.spec if template else None) or JobSpec(),
    )


def in_active_list(cron_job: CronJob, uid: str) -> bool:
    """``inActiveList``: a Job of this UID is in ``status.active``."""
    return any(ref.uid == uid for ref in _active(cron_job))


def in_active_list_by_name(cron_job: CronJob, name: str, namespace: str) -> bool:
    """``inActiveListByName``."""
    return any(ref.name == name and ref.namespace == namespace for ref in _active(cron_job))


def _active(cron_job: CronJob) -> tuple[ObjectReference, ...]:
    return (cron_job.status.active if cron_job.status else None) or ()


def start_time_key(job: Job) -> tuple[int, float, str]:
    """``byJobStartTime``: Jobs with a start time first, oldest first, then by name."""
    start = _timestamp(job.status.start_time if job.status else None)
    return (
        (1, 0.0, job.metadata.name or "") if start is None else (0, start, job.metadata.name or "")
    )


@functools.lru_cache(maxsize=512)
def parse(schedule: str) -> cronschedule.Schedule:
    """``cron.ParseStandard``, memoised (``ScheduleError`` propagates; errors are not cached)."""
    return cronschedule.parse_standard(schedule)


def later(first: str, second: str) -> bool:
    """Whether timestamp ``first`` is after ``second`` (unparsable: not later)."""
    a, b = _timestamp(first), _timestamp(second)
    return a is not None and b is not None and a > b
