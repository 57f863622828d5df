"""batch/v1 Job and CronJob.

Mirrors ``k8s.io/api/batch/v1/types.go`` for completions, parallelism, backoffLimit and
``podFailurePolicy`` (so a Job can ignore pods that failed with a ``DisruptionTarget``
condition, i.e. were preempted), and for the CronJob's schedule, time zone, deadline,
concurrency policy, suspension, job template, history limits and status. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import ObjectReference, PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodFailurePolicyOnPodConditionsPattern:
    """Matches a pod condition by type and status."""

    type: str | None = None
    status: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodFailurePolicyRule:
    """One rule: ``action`` (FailJob, Ignore, Count, FailIndex) when the pattern matches."""

    action: str | None = None
    on_pod_conditions: tuple[PodFailurePolicyOnPodConditionsPattern, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodFailurePolicy:
    """``spec.podFailurePolicy``."""

    rules: tuple[PodFailurePolicyRule, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class JobSpec:
    """``spec`` of a Job."""

    parallelism: Int32 | None = None
    completions: Int32 | None = None
    active_deadline_seconds: int | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    backoff_limit: Int32 | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec | None = None
    ttl_seconds_after_finished: Int32 | None = None
    completion_mode: str | None = None
    suspend: bool | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class JobCondition:
    """A Job condition (Complete, Failed, ...)."""

    type: str | None = None
    status: str | None = None
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class JobStatus:
    """``status`` of a Job."""

    conditions: tuple[JobCondition, ...] | None = None
    start_time: str | None = None
    completion_time: str | None = None
    active: Int32 | None = None
    succeeded: Int32 | None = None
    failed: Int32 | None = None
    ready: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """A batch/v1 Job."""

    api_version: str | None = "batch/v1"
    kind: str | None = "Job"
    metadata: ObjectMeta = ObjectMeta()
    spec: JobSpec | None = None
    status: JobStatus | None = None
    extra: JsonDict = extra_field()


# --- CronJob ----------------------------------------------------------------------------------

ALLOW_CONCURRENT: Final = "Allow"
FORBID_CONCURRENT: Final = "Forbid"
REPLACE_CONCURRENT: Final = "Replace"
CONCURRENCY_POLICIES: Final = (ALLOW_CONCURRENT, FORBID_CONCURRENT, REPLACE_CONCURRENT)
"""``batchv1.ConcurrencyPolicy`` values, in the order upstream's validation lists them."""
CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION: Final = "batch.kubernetes.io/cronjob-scheduled-timestamp"
"""``batchv1.CronJobScheduledTimestampAnnotation``: a Job's scheduled time (RFC 3339, in the
CronJob's time zone)."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class JobTemplateSpec:
    """``spec.jobTemplate`` of a CronJob: the metadata and spec of each Job it creates."""

    metadata: ObjectMeta | None = None
    spec: JobSpec | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CronJobSpec:
    """``spec`` of a CronJob (``k8s.io/api/batch/v1`` ``CronJobSpec``)."""

    schedule: str | None = None
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    concurrency_policy: str | None = None
    suspend: bool | None = None
    job_template: JobTemplateSpec | None = None
    successful_jobs_history_limit: Int32 | None = None
    failed_jobs_history_limit: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CronJobStatus:
    """``status`` of a CronJob: the Jobs it runs now and when it last scheduled one."""

    active: tuple[ObjectReference, ...] | None = None
    last_schedule_time: str | None = None
    last_successful_time: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CronJob:
    """A batch/v1 CronJob: Jobs from a template on a cron schedule."""

    api_version: str | None = "batch/v1"
    kind: str | None = "CronJob"
    metadata: ObjectMeta = ObjectMeta()
    spec: CronJobSpec | None = None
    status: CronJobStatus | None = None
    extra: JsonDict = extra_field()


def workload_pod_template(obj: object) -> PodTemplateSpec | None:
    """The pod template of a workload: ``spec.template`` (Deployment, ReplicaSet,
    DaemonSet, Job), or a CronJob's ``spec.jobTemplate.spec.template``; None if absent."""
    spec = getattr(obj, "spec", None)
    if spec is None:
        return None
    if isinstance(spec, CronJobSpec):
        job_spec = spec.job_template.spec if spec.job_template else None
        return job_spec.template if job_spec else None
    template = getattr(spec, "template", None)
    return template if isinstance(template, PodTemplateSpec) else None
