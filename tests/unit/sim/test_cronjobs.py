"""CronJobs in ``kubeprio simulate``: virtual time drives the schedule.

``*/5 * * * *`` for an hour of virtual time makes twelve Jobs at their scheduled instants,
the same for every seed; a CronJob from a snapshot keeps its status and goes on from its
``lastScheduleTime`` (without it, upstream's controller would run the most recent missed
time at once and warn about too many missed ones); without ``--until`` a run with
CronJobs ends a day after the last submission.
"""

from __future__ import annotations

import pytest

from kubeprio.api import manifest
from kubeprio.client.eventcorrelator import COMBINED_PREFIX
from kubeprio.sim.simulate import CRONJOB_HORIZON, simulate

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
"""


def cron_job(schedule: str, status: str = "", created: str = "") -> str:
    metadata = "{name: tick, namespace: default" + (
        f", creationTimestamp: '{created}', uid: u-1}}" if created else "}"
    )
    return f"""\
apiVersion: batch/v1
kind: CronJob
metadata: {metadata}
spec:
  schedule: "{schedule}"
  jobTemplate:
    spec:
      template:
        metadata:
          annotations: {{kubeprio.io/duration: 60s}}
        spec:
          restartPolicy: Never
          containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m}}}}}}]
{status}"""


def created_jobs(report: dict) -> list[tuple[float, str]]:
    return [
        (e["time"], e["message"])
        for e in report["events"]
        if e["reason"] == "SuccessfulCreate" and e["object"] == "CronJob/default/tick"
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_hour_of_every_five_minutes_makes_twelve_jobs(seed: int) -> None:
    text = "---\n".join((NODE, cron_job("*/5 * * * *")))
    report, _ = simulate(manifest.parse_text(text, "in.yaml"), seed=seed, until=3600)
    minute = 29_453_760  # 2026-01-01T00:00:00Z, the simulation's start, in minutes
    # client-go's EventAggregator (events_cache.go): the 10th distinct message of the
    # CronJob's SuccessfulCreate within 600 s and later ones go into the combined event,
    # each occurrence a count patch the report lists with the latest message.
    assert created_jobs(report) == [
        (300.0 * i, f"{COMBINED_PREFIX if i >= 10 else ''}Created job tick-{minute + 5 * i}")
        for i in range(1, 13)
    ]
    assert len(report["pods"]) == 12
    assert all(p["phase"] == "Succeeded" for p in report["pods"][:-1])


def test_a_snapshot_cron_job_goes_on_from_its_last_schedule_time() -> None:
    status = "status: {lastScheduleTime: '2025-12-31T23:00:00Z'}\n"
    text = "---\n".join((NODE, cron_job("0 * * * *", status, created="2025-06-01T00:00:00Z")))
    report, _ = simulate(manifest.parse_text(text, "in.yaml"), seed=0, until=7200)
    assert [t for t, _ in created_jobs(report)] == [0.0, 3600.0, 7200.0]
    assert not [e for e in report["events"] if e["reason"] == "TooManyMissedTimes"]


def test_a_snapshot_cron_job_without_status_catches_up_once_and_warns() -> None:
    text = "---\n".join((NODE, cron_job("0 * * * *", created="2025-06-01T00:00:00Z")))
    report, _ = simulate(manifest.parse_text(text, "in.yaml"), seed=0, until=100)
    assert [t for t, _ in created_jobs(report)] == [0.0]
    assert [e["reason"] for e in report["events"] if e["reason"] == "TooManyMissedTimes"] == [
        "TooManyMissedTimes"
    ]


def test_without_until_a_run_with_cron_jobs_ends_a_day_later() -> None:
    text = "---\n".join((NODE, cron_job("0 0 * * *")))
    report, _ = simulate(manifest.parse_text(text, "in.yaml"), seed=0)
    assert report["endTime"] == CRONJOB_HORIZON
    assert [t for t, _ in created_jobs(report)] == [CRONJOB_HORIZON]
