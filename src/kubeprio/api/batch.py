"""batch/v1 Job.

Mirrors ``k8s.io/api/batch/v1/types.go`` for completions, parallelism, backoffLimit and
``podFailurePolicy`` (so a Job can ignore pods that failed with a ``DisruptionTarget``
condition, i.e. were preempted). Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeprio.api.core import PodTemplateSpec
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
