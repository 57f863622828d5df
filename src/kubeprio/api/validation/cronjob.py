"""Validation of batch/v1 CronJob.

Mirrors ``pkg/apis/batch/validation/validation.go`` (v1.32): ``ValidateCronJobCreate``
(object metadata with DNS-subdomain names, checked by the caller; the spec; a name of at
most 52 characters, because the controller appends ``-<minutes since epoch>`` and a Job
name is a 63-character label), ``ValidateCronJobUpdate`` (the spec again, the old
schedule deciding whether ``TZ=`` may stay, the time zone only checked when it changed,
no name length limit so old CronJobs can still be edited), ``validateCronJobSpec``,
``validateScheduleFormat`` (robfig's ``ParseStandard`` errors, ``api.cronschedule``),
``validateTimeZone`` (the IANA naming rules, ``Local`` refused, the name loaded from the
tz database) and ``ValidateJobTemplateSpec`` (the template's job spec as a Job's, with
no selector and no manual selector). A status update is not validated
(``cronJobStatusStrategy.ValidateUpdate`` returns nothing).

Warnings (``cronJobStrategy.WarningsOnCreate/Update``): the pod template's warnings under
``spec.jobTemplate.spec.template.spec``; on update, a schedule with ``TZ`` is warned about
under upstream's (misspelt) path ``spec.spec.schedule``. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Final

from kubeprio.api import cronschedule, errors
from kubeprio.api.batch import CONCURRENCY_POLICIES, CronJob, CronJobSpec, JobSpec, JobTemplateSpec
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.batch import validate_job_spec_fields
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindUpdateWarnings,
    KindValidator,
    KindWarnings,
    child,
    label_selector_value,
    validate_nonnegative,
)
from kubeprio.api.validation.podspec import pod_spec_warnings

MAX_NAME_LENGTH: Final = 52
"""``DNS1035LabelMaxLength - 11``: room for the Job name's ``-<minutes>`` suffix."""
_TIME_ZONE_PART: Final = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
"""``validTimeZoneCharacters``: one ``/``-separated part of an IANA name (digits and ``+``
tolerated for legacy names)."""
TZ_IN_SCHEDULE: Final = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
TZ_AND_TIME_ZONE: Final = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
TZ_UPDATE_WARNING: Final = (
    "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
)


def validate_schedule_format(
    schedule: str, *, allow_tz: bool, time_zone: str | None, path: str
) -> list[FieldError]:
    """``validateScheduleFormat``: parses, and ``TZ`` only where the old schedule had it."""
    found: list[FieldError] = []
    try:
        cronschedule.parse_standard(schedule)
    except cronschedule.ScheduleError as exc:
        found.append(errors.invalid(path, schedule, str(exc)))
    if allow_tz and "TZ" in schedule and time_zone is not None:
        found.append(errors.invalid(path, schedule, TZ_AND_TIME_ZONE))
    elif not allow_tz and "TZ" in schedule:
        found.append(errors.invalid(path, schedule, TZ_IN_SCHEDULE))
    return found


def validate_time_zone(time_zone: str | None, path: str) -> list[FieldError]:
    """``validateTimeZone``."""
    if time_zone is None:
        return []
    if not time_zone:
        return [errors.invalid(path, time_zone, "timeZone must be nil or non-empty string")]
    for part in time_zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.fullmatch(part):
            return [errors.invalid(path, time_zone, f"unknown time zone {time_zone}")]
    found: list[FieldError] = []
    if time_zone.lower() == "local":
        found.append(
            errors.invalid(
                path,
                time_zone,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            )
        )
    try:
        cronschedule.load_location(time_zone)
    except cronschedule.UnknownTimeZoneError as exc:
        found.append(errors.invalid(path, time_zone, str(exc)))
    return found


def validate_job_template_spec(template: JobTemplateSpec | None, path: str) -> list[FieldError]:
    """``ValidateJobTemplateSpec``: the job spec, without a selector of its own."""
    spec = (template.spec if template else None) or JobSpec()
    spec_path = child(path, "spec")
    found = validate_job_spec_fields(spec, spec_path)
    if spec.selector is not None:
        found.append(
            errors.invalid(
                child(spec_path, "selector"),
                label_selector_value(spec.selector),
                "`selector` will be auto-generated",
            )
        )
    if spec.manual_selector:
        found.append(
            errors.not_supported(child(spec_path, "manualSelector"), True, ("nil", "false"))
        )
    return found


def validate_cron_job_spec(
    spec: CronJobSpec, old: CronJobSpec | None, path: str = "spec"
) -> list[FieldError]:
    """``validateCronJobSpec``."""
    found: list[FieldError] = []
    schedule = spec.schedule or ""
    if not schedule:
        found.append(errors.required(child(path, "schedule"), ""))
    else:
        allow_tz = old is not None and "TZ" in (old.schedule or "")
        found.extend(
            validate_schedule_format(
                schedule, allow_tz=allow_tz, time_zone=spec.time_zone, path=child(path, "schedule")
            )
        )
    if spec.starting_deadline_seconds is not None:
        found.extend(
            validate_nonnegative(
                spec.starting_deadline_seconds, child(path, "startingDeadlineSeconds")
            )
        )
    if old is None or old.time_zone != spec.time_zone:
        found.extend(validate_time_zone(spec.time_zone, child(path, "timeZone")))
    policy = spec.concurrency_policy or ""
    policy_path = child(path, "concurrencyPolicy")
    if not policy:
        found.append(errors.required(policy_path, ""))
    elif policy not in CONCURRENCY_POLICIES:
        found.append(errors.not_supported(policy_path, policy, CONCURRENCY_POLICIES))
    found.extend(validate_job_template_spec(spec.job_template, child(path, "jobTemplate")))
    for attr, json_key in (
        ("successful_jobs_history_limit", "successfulJobsHistoryLimit"),
        ("failed_jobs_history_limit", "failedJobsHistoryLimit"),
    ):
        value = getattr(spec, attr)
        if value is not None:  # zero is a valid limit
            found.extend(validate_nonnegative(value, child(path, json_key)))
    return found


def validate_cron_job(cron_job: CronJob) -> list[FieldError]:
    """``ValidateCronJobCreate`` (metadata is checked by the caller)."""
    found = validate_cron_job_spec(cron_job.spec or CronJobSpec(), None)
    name = cron_job.metadata.name or ""
    if len(name) > MAX_NAME_LENGTH:
        found.append(
            errors.invalid(
                "metadata.name", name, f"must be no more than {MAX_NAME_LENGTH} characters"
            )
        )
    return found


def validate_cron_job_update(new: CronJob, old: CronJob) -> list[FieldError]:
    """``ValidateCronJobUpdate`` (metadata is checked by the caller; no name length limit)."""
    return validate_cron_job_spec(new.spec or CronJobSpec(), old.spec or CronJobSpec())


def validate_cron_job_status_update(new: CronJob, old: CronJob) -> list[FieldError]:
    """``cronJobStatusStrategy.ValidateUpdate``: nothing."""
    return []


def cron_job_warnings(cron_job: CronJob) -> list[str]:
    """``WarningsOnCreate``'s pod template part (``WarningsForJobSpec``)."""
    job_template = cron_job.spec.job_template if cron_job.spec else None
    job_spec = job_template.spec if job_template else None
    template = job_spec.template if job_spec else None
    if template is None or template.spec is None:
        return []
    return pod_spec_warnings(template.spec, "spec.jobTemplate.spec.template.spec")


def cron_job_update_warnings(new: CronJob, old: CronJob) -> list[str]:
    """``WarningsOnUpdate``: the template's warnings when the spec changed, and ``TZ``."""
    found: list[str] = []
    if (new.metadata.generation or 0) != (old.metadata.generation or 0):
        found.extend(cron_job_warnings(new))
    if "TZ" in ((new.spec.schedule if new.spec else None) or ""):
        found.append(TZ_UPDATE_WARNING)
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {CronJob: validate_cron_job}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {CronJob: validate_cron_job_update}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    CronJob: validate_cron_job_status_update
}
WARNINGS: Final[dict[type[Any], KindWarnings]] = {CronJob: cron_job_warnings}
UPDATE_WARNINGS: Final[dict[type[Any], KindUpdateWarnings]] = {CronJob: cron_job_update_warnings}
