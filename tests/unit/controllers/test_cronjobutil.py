"""CronJob schedule-time helpers: ``pkg/controller/cronjob/utils.go`` (v1.32).

``mostRecentScheduleTime`` cases follow upstream's ``TestMostRecentScheduleTime``
(earliest time, most recent unmet time, the missed-count approximation and its "many"
threshold, the error for schedules whose next two times are less than a second apart),
``nextScheduleTimeDuration`` with upstream's 100 ms padding, ``getJobName`` and the
scheduled-timestamp annotation.
"""

from __future__ import annotations

import pytest

from kubeprio.api import cronschedule
from kubeprio.api.batch import CronJob, CronJobSpec, CronJobStatus, Job, JobStatus
from kubeprio.api.meta import ObjectMeta
from kubeprio.clock import parse_rfc3339, rfc3339
from kubeprio.controllers import cronjobutil as cu

T0 = parse_rfc3339("2026-01-01T00:00:00Z")


def cron(schedule: str, *, last: float | None = None, deadline: int | None = None) -> CronJob:
    return CronJob(
        metadata=ObjectMeta(name="cj", namespace="default", creation_timestamp=rfc3339(T0)),
        spec=CronJobSpec(schedule=schedule, starting_deadline_seconds=deadline),
        status=CronJobStatus(last_schedule_time=None if last is None else rfc3339(last)),
    )


def recent(
    cj: CronJob, now: float, *, deadline: bool = False
) -> tuple[float, float | None, cu.Missed]:
    schedule = cronschedule.parse_standard(cj.spec.schedule or "")  # type: ignore[union-attr]
    result = cu.most_recent_schedule_time(cj, now, schedule, include_starting_deadline=deadline)
    return (
        result.earliest - T0,
        (None if result.most_recent is None else result.most_recent - T0),
        result.missed,
    )


CASES = [
    ("nothing due yet", cron("0 * * * *"), 1800, (0, None, cu.Missed.NONE)),
    ("one due", cron("0 * * * *"), 3700, (0, 3600, cu.Missed.NONE)),
    ("exactly at the time", cron("0 * * * *"), 3600, (0, 3600, cu.Missed.NONE)),
    ("several missed: the latest", cron("0 * * * *"), 5 * 3600 + 10, (0, 5 * 3600, cu.Missed.FEW)),
    (
        "from the last schedule time",
        cron("0 * * * *", last=T0 + 7200),
        7300,
        (7200, None, cu.Missed.NONE),
    ),
    (
        "irregular schedule: one interval back finds the latest",
        cron("30 6-16/4 * * 1-5"),
        11 * 3600,
        (0, 10 * 3600 + 1800, cu.Missed.FEW),
    ),
    # Upstream's approximation (4 h steps from 06:30) lands on 14:30 itself, and Next is
    # strictly after it: the 14:30 run is not found (no catch-up), as in v1.32.
    (
        "irregular schedule across its long gap: nothing found, as upstream",
        cron("30 6-16/4 * * 1-5"),
        20 * 3600,
        (0, None, cu.Missed.FEW),
    ),
    ("@every", cron("@every 90m"), 3 * 3600 + 60, (0, 3 * 3600, cu.Missed.FEW)),
    ("101 missed is many", cron("*/5 * * * *"), 101 * 300, (0, 101 * 300, cu.Missed.MANY)),
    ("100 missed is few", cron("*/5 * * * *"), 100 * 300 + 299, (0, 100 * 300, cu.Missed.FEW)),
]


@pytest.mark.parametrize(
    ("cj", "now", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_most_recent_schedule_time(cj: CronJob, now: float, expected: tuple) -> None:
    assert recent(cj, T0 + now) == expected


def test_starting_deadline_moves_the_earliest_time() -> None:
    cj = cron("0 * * * *", deadline=600)
    assert recent(cj, T0 + 3 * 3600 + 700, deadline=True) == (
        3 * 3600 + 100,
        None,
        cu.Missed.NONE,
    )
    assert recent(cj, T0 + 3 * 3600 + 500, deadline=True)[1] == 3 * 3600


def test_a_day_that_never_comes_is_an_invalid_schedule() -> None:
    """``59 23 31 2 *`` parses, but there is no 31 February: upstream's error."""
    schedule = cronschedule.parse_standard("59 23 31 2 *")
    with pytest.raises(cu.InvalidScheduleError) as raised:
        cu.most_recent_schedule_time(
            cron("59 23 31 2 *"), T0 + 86400, schedule, include_starting_deadline=False
        )
    assert str(raised.value) == "time difference between two schedules is less than 1 second"


@pytest.mark.parametrize(
    ("cj", "now", "expected"),
    [
        (cron("*/5 * * * *"), T0 + 10, 290.1),
        (cron("*/5 * * * *", last=T0 + 300), T0 + 300, 300.1),
        # Missed times and none run: aim at the next time from now.
        (cron("*/5 * * * *"), T0 + 1000, 200.1),
    ],
)
def test_next_schedule_time_duration_with_upstreams_padding(
    cj: CronJob, now: float, expected: float
) -> None:
    schedule = cronschedule.parse_standard(cj.spec.schedule or "")  # type: ignore[union-attr]
    assert cu.next_schedule_time_duration(cj, now, schedule) == pytest.approx(expected)


def test_job_name_is_the_scheduled_minute() -> None:
    assert cu.job_name(cron("@hourly"), int(T0) + 3600) == f"cj-{(int(T0) + 3600) // 60}"


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        (None, "2026-01-01T09:00:00Z"),
        ("Europe/Berlin", "2026-01-01T10:00:00+01:00"),
        ("Europe/London", "2026-01-01T09:00:00Z"),
        ("America/St_Johns", "2026-01-01T05:30:00-03:30"),
    ],
)
def test_scheduled_timestamp_is_rfc3339_in_the_zone(zone: str | None, expected: str) -> None:
    assert cu.scheduled_timestamp(int(T0) + 9 * 3600, zone) == expected


def test_jobs_sort_by_start_time_then_name() -> None:
    def job(name: str, start: str | None) -> Job:
        return Job(metadata=ObjectMeta(name=name), status=JobStatus(start_time=start))

    jobs = [
        job("b", None),
        job("a", None),
        job("late", "2026-01-01T02:00:00Z"),
        job("y", "2026-01-01T01:00:00Z"),
        job("x", "2026-01-01T01:00:00Z"),
    ]
    assert [j.metadata.name for j in sorted(jobs, key=cu.start_time_key)] == [
        "x",
        "y",
        "late",
        "a",
        "b",
    ]
