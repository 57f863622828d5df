"""CronJob defaulting, validation and warnings, with upstream's paths and texts.

Rules and texts: ``pkg/apis/batch/v1/defaults.go`` (``SetDefaults_CronJob``) and the
generated ``SetObjectDefaults_CronJob``; ``pkg/apis/batch/validation/validation.go``
(v1.32: ``ValidateCronJobCreate``, ``ValidateCronJobUpdate``, ``validateCronJobSpec``,
``validateConcurrencyPolicy``, ``validateScheduleFormat``, ``validateTimeZone``,
``ValidateJobTemplateSpec``); ``pkg/registry/batch/cronjob/strategy.go`` (status reset,
generation, status updates keep the spec and are not validated, warnings).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.batch import CronJob, CronJobStatus
from kubeprio.api.core import ObjectReference
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.service import ApiService
from tests.manifests import causes, create, rejected, template_doc, with_path

JsonDict = dict[str, Any]


def cron_job_doc(name: str = "nightly", schedule: str = "0 2 * * *") -> JsonDict:
    """A minimal valid CronJob (restartPolicy OnFailure, as ``kubectl create cronjob``)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {"spec": {"template": template_doc(labels={}, restart="OnFailure")}},
        },
    }


# --- defaulting -------------------------------------------------------------------------------


def test_set_defaults_cron_job(api: ApiService) -> None:
    """SetDefaults_CronJob: Allow, suspend false, history 3 and 1; the job template's pod
    spec gets the pod-template defaults, but no SetDefaults_Job (completions, parallelism,
    backoffLimit stay unset: that function is registered for Job, not JobSpec)."""
    created = to_dict(create(api, cron_job_doc()))
    spec = created["spec"]
    assert spec["concurrencyPolicy"] == "Allow"
    assert spec["suspend"] is False
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    job_spec = spec["jobTemplate"]["spec"]
    assert set(job_spec) == {"template"}
    pod_spec = job_spec["template"]["spec"]
    assert pod_spec["schedulerName"] == "default-scheduler"
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    assert pod_spec["restartPolicy"] == "OnFailure"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.concurrencyPolicy", "Forbid"),
        ("spec.suspend", True),
        ("spec.successfulJobsHistoryLimit", 0),
        ("spec.failedJobsHistoryLimit", 5),
    ],
)
def test_set_values_are_kept(api: ApiService, path: str, value: Any) -> None:
    created = to_dict(create(api, with_path(cron_job_doc(), path, value)))
    assert created["spec"][path.split(".")[1]] == value


def test_pod_failure_policy_patterns_in_the_template_default_to_true(api: ApiService) -> None:
    """SetObjectDefaults_CronJob reaches the template's onPodConditions patterns."""
    doc = cron_job_doc()
    doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    doc["spec"]["jobTemplate"]["spec"]["podFailurePolicy"] = {
        "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
    }
    created = to_dict(create(api, doc))
    [rule] = created["spec"]["jobTemplate"]["spec"]["podFailurePolicy"]["rules"]
    assert rule["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]


def test_create_resets_status_and_sets_generation(api: ApiService) -> None:
    """cronJobStrategy.PrepareForCreate: status reset, generation 1."""
    doc = cron_job_doc()
    doc["status"] = {"lastScheduleTime": "2026-01-01T00:00:00Z"}
    created = create(api, doc)
    assert isinstance(created, CronJob)
    assert created.status is None
    assert created.metadata.generation == 1


def test_unmodelled_fields_round_trip(api: ApiService) -> None:
    doc = cron_job_doc()
    doc["spec"]["futureField"] = {"x": 1}
    doc["spec"]["jobTemplate"]["metadata"] = {"labels": {"team": "data"}, "annotations": {"a": "b"}}
    created = to_dict(create(api, doc))
    assert created["spec"]["futureField"] == {"x": 1}
    assert created["spec"]["jobTemplate"]["metadata"] == {
        "creationTimestamp": None,  # a zero metav1.Time value, which Go writes as null
        "labels": {"team": "data"},
        "annotations": {"a": "b"},
    }


# --- validation -------------------------------------------------------------------------------

INVALID: list[tuple[str, str, Any, list[str]]] = [
    (
        "schedule required",
        "spec.schedule",
        "",
        ["spec.schedule: Required value"],
    ),
    (
        "schedule parse error",
        "spec.schedule",
        "*/0 * * * *",
        [
            'spec.schedule: Invalid value: "*/0 * * * *": step of range should be a positive number: */0'
        ],
    ),
    (
        "wrong number of fields",
        "spec.schedule",
        "0 2 * *",
        ['spec.schedule: Invalid value: "0 2 * *": expected exactly 5 fields, found 4: [0 2 * *]'],
    ),
    (
        "TZ in schedule",
        "spec.schedule",
        "TZ=UTC 0 2 * * *",
        [
            'spec.schedule: Invalid value: "TZ=UTC 0 2 * * *": cannot use TZ or CRON_TZ in '
            "schedule, use timeZone field instead"
        ],
    ),
    (
        "CRON_TZ with an unknown zone: both errors",
        "spec.schedule",
        "CRON_TZ=Mars/Base 0 2 * * *",
        [
            'spec.schedule: Invalid value: "CRON_TZ=Mars/Base 0 2 * * *": provided bad location '
            "Mars/Base: unknown time zone Mars/Base",
            'spec.schedule: Invalid value: "CRON_TZ=Mars/Base 0 2 * * *": cannot use TZ or '
            "CRON_TZ in schedule, use timeZone field instead",
        ],
    ),
    (
        "negative starting deadline",
        "spec.startingDeadlineSeconds",
        -1,
        ["spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "unsupported concurrency policy",
        "spec.concurrencyPolicy",
        "Sometimes",
        [
            'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: '
            '"Allow", "Forbid", "Replace"'
        ],
    ),
    (
        "negative successful history",
        "spec.successfulJobsHistoryLimit",
        -1,
        ["spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "negative failed history",
        "spec.failedJobsHistoryLimit",
        -2,
        ["spec.failedJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0"],
    ),
    (
        "empty time zone",
        "spec.timeZone",
        "",
        ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string'],
    ),
    (
        "unknown time zone",
        "spec.timeZone",
        "Mars/Olympus_Mons",
        ['spec.timeZone: Invalid value: "Mars/Olympus_Mons": unknown time zone Mars/Olympus_Mons'],
    ),
    (
        "time zone part longer than 14",
        "spec.timeZone",
        "America/Argentina_Buenos_Aires",
        [
            'spec.timeZone: Invalid value: "America/Argentina_Buenos_Aires": unknown time zone '
            "America/Argentina_Buenos_Aires"
        ],
    ),
    (
        "time zone with dot-dot",
        "spec.timeZone",
        "../etc",
        ['spec.timeZone: Invalid value: "../etc": unknown time zone ../etc'],
    ),
    (
        "time zone with a leading slash",
        "spec.timeZone",
        "/UTC",
        ['spec.timeZone: Invalid value: "/UTC": unknown time zone /UTC'],
    ),
    (
        "Local is refused",
        "spec.timeZone",
        "Local",
        [
            'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as '
            "defined in https://www.iana.org/time-zones"
        ],
    ),
    (
        "local (any case) is refused and does not load",
        "spec.timeZone",
        "local",
        [
            'spec.timeZone: Invalid value: "local": timeZone must be an explicit time zone as '
            "defined in https://www.iana.org/time-zones",
            'spec.timeZone: Invalid value: "local": unknown time zone local',
        ],
    ),
    (
        "template restart policy Always",
        "spec.jobTemplate.spec.template.spec.restartPolicy",
        "Always",
        [
            "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "
            '"OnFailure", "Never"'
        ],
    ),
    (
        "template selector",
        "spec.jobTemplate.spec.selector",
        {"matchLabels": {"a": "b"}},
        [
            "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:"
            'map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
            "`selector` will be auto-generated"
        ],
    ),
    (
        "template manual selector",
        "spec.jobTemplate.spec.manualSelector",
        True,
        [
            'spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"'
        ],
    ),
    (
        "template job spec counts",
        "spec.jobTemplate.spec.backoffLimit",
        -1,
        [
            "spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"
        ],
    ),
    (
        "name of 53 characters",
        "metadata.name",
        "n" * 53,
        [f'metadata.name: Invalid value: "{"n" * 53}": must be no more than 52 characters'],
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_cron_job(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    assert causes(rejected(api, with_path(cron_job_doc(), path, value))) == expected


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.timeZone", "Europe/Berlin"),
        ("spec.timeZone", "Etc/GMT+5"),
        ("spec.timeZone", "UTC"),
        ("spec.schedule", "@every 90m"),
        ("spec.schedule", "30 6-16/4 * * mon-FRI"),
        ("spec.startingDeadlineSeconds", 0),
        ("spec.jobTemplate.spec.manualSelector", False),
        ("metadata.name", "n" * 52),
    ],
)
def test_valid_cron_job(api: ApiService, path: str, value: Any) -> None:
    create(api, with_path(cron_job_doc(), path, value))


def test_invalid_message_names_the_kind(api: ApiService) -> None:
    error = rejected(api, with_path(cron_job_doc(), "spec.schedule", "bad"))
    assert error.message == (
        'CronJob.batch "nightly" is invalid: spec.schedule: Invalid value: "bad": expected '
        "exactly 5 fields, found 1: [bad]"
    )


def _update(api: ApiService, cron_job: CronJob, **spec_changes: Any) -> CronJob:
    assert cron_job.spec is not None
    changed = dataclasses.replace(cron_job, spec=dataclasses.replace(cron_job.spec, **spec_changes))
    return api.update(changed)


def _stored_with_tz_schedule(api: ApiService, schedule: str) -> CronJob:
    """A CronJob from before TZ was refused: stored directly, as an old cluster has it."""
    cron_job = create(api, cron_job_doc())
    assert cron_job.spec is not None
    old = dataclasses.replace(cron_job, spec=dataclasses.replace(cron_job.spec, schedule=schedule))
    return _force(api, old)


def _force(api: ApiService, obj: CronJob) -> CronJob:
    """Write ``obj`` to the store past validation (what an older server let through)."""
    key = api._key(api_info(), obj.metadata.name, obj.metadata.namespace)
    revision = int(obj.metadata.resource_version or 0)
    return api.store.update(key, obj, expected_revision=revision)


def api_info() -> Any:
    from kubeprio.api import kinds

    return kinds.for_model(CronJob)


def test_update_keeps_tz_allowed_if_the_old_schedule_had_it(api: ApiService) -> None:
    """validateCronJobSpec: allowTZInSchedule comes from the old schedule; with it, only a
    timeZone next to TZ is refused. TZ is then warned about (under spec.spec.schedule)."""
    old = _stored_with_tz_schedule(api, "TZ=UTC 0 2 * * *")
    result = api.update_object(
        dataclasses.replace(old, spec=dataclasses.replace(old.spec, suspend=True))
    )
    assert result.warnings == (
        "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
    )
    with pytest.raises(errors.InvalidError) as raised:
        _update(api, result.obj, time_zone="UTC")
    assert causes(raised.value) == [
        'spec.schedule: Invalid value: "TZ=UTC 0 2 * * *": cannot use both timeZone field and '
        "TZ or CRON_TZ in schedule"
    ]


def test_update_skips_the_name_length_limit(api: ApiService) -> None:
    """ValidateCronJobUpdate: no 52-character limit, so old long names can be edited."""
    long_name = "n" * 60
    doc = cron_job_doc(long_name)
    rejected(api, doc)
    stored = _stored_long(api, long_name)
    updated = _update(api, stored, suspend=True)
    assert updated.spec is not None
    assert updated.spec.suspend is True


def _stored_long(api: ApiService, name: str) -> CronJob:
    short = create(api, cron_job_doc("short"))
    long_one = dataclasses.replace(short, metadata=dataclasses.replace(short.metadata, name=name))
    key = api._key(api_info(), name, "default")
    return api.store.create(key, long_one)


def test_time_zone_is_checked_only_when_it_changes(api: ApiService) -> None:
    """``oldSpec == nil || !StringEqual(old.TimeZone, new.TimeZone)``: a stored zone that
    no longer loads does not block other edits."""
    cron_job = create(api, with_path(cron_job_doc(), "spec.timeZone", "Europe/Berlin"))
    assert cron_job.spec is not None
    stale = dataclasses.replace(
        cron_job, spec=dataclasses.replace(cron_job.spec, time_zone="Gone/Zone")
    )
    stored = _force(api, stale)
    updated = _update(api, stored, suspend=True)
    assert updated.spec is not None
    assert updated.spec.time_zone == "Gone/Zone"
    with pytest.raises(errors.InvalidError):
        _update(api, updated, time_zone="Other/Gone")


def test_spec_changes_move_generation(api: ApiService) -> None:
    cron_job = create(api, cron_job_doc())
    updated = _update(api, cron_job, schedule="0 3 * * *")
    assert updated.metadata.generation == 2


def test_status_update_keeps_the_spec_and_is_not_validated(api: ApiService) -> None:
    """cronJobStatusStrategy: PrepareForUpdate keeps the spec; ValidateUpdate returns nothing."""
    cron_job = create(api, cron_job_doc())
    assert cron_job.spec is not None
    ref = ObjectReference(kind="Job", namespace="default", name="nightly-1", uid="u")
    status = CronJobStatus(active=(ref,), last_schedule_time="not a time")
    changed = dataclasses.replace(
        cron_job,
        spec=dataclasses.replace(cron_job.spec, schedule="bad"),
        status=status,
    )
    written = api.update_status(changed)
    assert written.status == status
    assert written.spec == cron_job.spec


def test_warnings_name_the_template_path(api: ApiService) -> None:
    """WarningsForJobSpec: the pod template's warnings under spec.jobTemplate.spec.template."""
    from kubeprio.api import manifest

    doc = cron_job_doc()
    doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = -1
    result = api.create_object(manifest.decode_request(doc))
    assert any(w.startswith("spec.jobTemplate.spec.template.spec.") for w in result.warnings)
