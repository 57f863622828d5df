"""The CronJob Table (``printCronJob`` in ``pkg/printers/internalversion/printers.go``, v1.32).

NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE; wide adds the job template's
CONTAINERS IMAGES SELECTOR. TIMEZONE and LAST SCHEDULE print ``<none>`` when unset,
SUSPEND ``<unset>`` for a nil pointer (``printBoolPtr``), LAST SCHEDULE is an age.
"""

from __future__ import annotations

import pytest

from kubeprio.api.batch import CronJob, CronJobSpec, CronJobStatus, JobSpec, JobTemplateSpec
from kubeprio.api.core import Container, ObjectReference, PodSpec, PodTemplateSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver import tables, workloadtables
from kubeprio.clock import parse_rfc3339

NOW = parse_rfc3339("2026-01-01T01:00:00Z")


def cron(**spec: object) -> CronJob:
    template = PodTemplateSpec(
        spec=PodSpec(
            containers=(
                Container(name="report", image="busybox:1.36"),
                Container(name="upload", image="rclone"),
            )
        )
    )
    return CronJob(
        metadata=ObjectMeta(name="nightly", creation_timestamp="2026-01-01T00:00:00Z"),
        spec=CronJobSpec(
            schedule="0 2 * * *",
            job_template=JobTemplateSpec(spec=JobSpec(template=template)),
            **spec,  # type: ignore[arg-type]
        ),
    )


def test_columns_are_upstreams() -> None:
    columns, printer = tables.PRINTERS[CronJob]
    assert printer is workloadtables.print_cron_job
    assert [(c.name, c.type, c.priority) for c in columns] == [
        ("Name", "string", 0),
        ("Schedule", "string", 0),
        ("Timezone", "string", 0),
        ("Suspend", "boolean", 0),
        ("Active", "integer", 0),
        ("Last Schedule", "string", 0),
        ("Age", "string", 0),
        ("Containers", "string", 1),
        ("Images", "string", 1),
        ("Selector", "string", 1),
    ]


@pytest.mark.parametrize(
    ("cron_job", "expected"),
    [
        (
            cron(suspend=False),
            ["nightly", "0 2 * * *", "<none>", "False", 0, "<none>", "60m"],
        ),
        (
            cron(),
            ["nightly", "0 2 * * *", "<none>", "<unset>", 0, "<none>", "60m"],
        ),
        (
            CronJob(
                metadata=cron().metadata,
                spec=CronJobSpec(schedule="@hourly", time_zone="Europe/Berlin", suspend=True),
                status=CronJobStatus(
                    active=(ObjectReference(name="a"), ObjectReference(name="b")),
                    last_schedule_time="2026-01-01T00:55:00Z",
                ),
            ),
            ["nightly", "@hourly", "Europe/Berlin", "True", 2, "5m", "60m"],
        ),
    ],
    ids=["defaults", "suspend unset", "zone, suspended, two active"],
)
def test_cells(cron_job: CronJob, expected: list[object]) -> None:
    cells, _ = workloadtables.print_cron_job(cron_job, NOW)
    assert cells[:7] == expected


def test_wide_cells_come_from_the_job_template() -> None:
    cells, _ = workloadtables.print_cron_job(cron(), NOW)
    assert cells[7:] == ["report,upload", "busybox:1.36,rclone", "<none>"]
