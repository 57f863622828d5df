"""Job helpers: defaults, failure accounting, the pod failure policy, pod backoff.

Mirrors ``pkg/apis/batch/v1/defaults.go`` (``SetDefaults_Job``),
``pkg/controller/job/pod_failure_policy.go`` (``matchPodFailurePolicy``),
``pkg/controller/job/backoff_utils.go`` (the per-Job backoff before replacing failed
pods: 10 s doubling to 6 min, counted from the last failure after the last success)
and the pod predicates of ``job_controller.go`` (``isPodFailed``,
``onlyReplaceFailedPods``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api.batch import Job, JobCondition, JobSpec
from kubeprio.api.core import PHASE_FAILED, PHASE_SUCCEEDED, Pod
from kubeprio.clock import parse_rfc3339
from kubeprio.controllers import podutil

JOB_TRACKING_FINALIZER: Final = "batch.kubernetes.io/job-tracking"
CONTROLLER_UID_LABEL: Final = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL: Final = "controller-uid"
LEGACY_JOB_NAME_LABEL: Final = "job-name"
DEFAULT_BACKOFF_LIMIT: Final = 6
DEFAULT_POD_FAILURE_BACKOFF: Final = 10.0
MAX_POD_FAILURE_BACKOFF: Final = 360.0

COMPLETE: Final = "Complete"
FAILED: Final = "Failed"
FAILURE_TARGET: Final = "FailureTarget"
SUCCESS_CRITERIA_MET: Final = "SuccessCriteriaMet"
SUSPENDED: Final = "Suspended"
REASON_BACKOFF_LIMIT_EXCEEDED: Final = "BackoffLimitExceeded"
REASON_DEADLINE_EXCEEDED: Final = "DeadlineExceeded"
REASON_POD_FAILURE_POLICY: Final = "PodFailurePolicy"
REASON_COMPLETIONS_REACHED: Final = "CompletionsReached"
MESSAGE_BACKOFF_LIMIT: Final = "Job has reached the specified backoff limit"
MESSAGE_DEADLINE: Final = "Job was active longer than specified deadline"
MESSAGE_COMPLETIONS_REACHED: Final = "Reached expected number of succeeded pods"


@dataclass(frozen=True, slots=True)
class JobSettings:
    """``SetDefaults_Job`` applied: what the controller acts on."""

    parallelism: int
    completions: int | None
    backoff_limit: int
    only_replace_failed: bool
    suspended: bool
    active_deadline_seconds: int | None


def settings(job: Job) -> JobSettings:
    """The Job's spec with API defaults (completions and parallelism 1, backoffLimit 6)."""
    spec = job.spec or JobSpec()
    completions, parallelism = spec.completions, spec.parallelism
    if completions is None and parallelism is None:
        completions = parallelism = 1
    if parallelism is None:
        parallelism = 1
    policy = spec.extra.get("podReplacementPolicy")
    if policy is None:
        policy = "Failed" if spec.pod_failure_policy is not None else "TerminatingOrFailed"
    return JobSettings(
        parallelism=parallelism,
        completions=completions,
        backoff_limit=DEFAULT_BACKOFF_LIMIT if spec.backoff_limit is None else spec.backoff_limit,
        only_replace_failed=policy == "Failed" or spec.pod_failure_policy is not None,
        suspended=bool(spec.suspend),
        active_deadline_seconds=spec.active_deadline_seconds,
    )


def is_pod_failed(pod: Pod, only_replace_failed: bool) -> bool:
    """``isPodFailed``: Failed, or (unless only failed pods are replaced) being deleted."""
    phase = podutil.phase(pod)
    if phase == PHASE_FAILED:
        return True
    if only_replace_failed:
        return False
    return bool(pod.metadata.deletion_timestamp) and phase != PHASE_SUCCEEDED


def has_tracking_finalizer(pod: Pod) -> bool:
    """Whether the pod still carries ``batch.kubernetes.io/job-tracking``."""
    return JOB_TRACKING_FINALIZER in (pod.metadata.finalizers or ())


def _state(pod: Pod, name: str) -> dict[str, Any] | None:
    for status in (pod.status.container_statuses if pod.status else None) or ():
        if status.name == name:
            terminated = (status.extra.get("state") or {}).get("terminated")
            return terminated if isinstance(terminated, dict) else None
    return None


def match_pod_failure_policy(job: Job, pod: Pod) -> tuple[str | None, bool, str | None]:
    """``matchPodFailurePolicy``: (FailJob message, count against backoffLimit, action)."""
    policy = job.spec.pod_failure_policy if job.spec else None
    if policy is None:
        return None, True, None
    namespace, name = pod.metadata.namespace, pod.metadata.name
    for index, rule in enumerate(policy.rules or ()):
        action = rule.action or ""
        exit_codes = rule.extra.get("onExitCodes")
        if exit_codes is not None:
            matched = _match_exit_codes(pod, exit_codes)
            if matched is None:
                continue
            container, code = matched
            message = (
                f"Container {container} for pod {namespace}/{name} failed with exit code {code} "
                f"matching {action} rule at index {index}"
            )
        elif rule.on_pod_conditions is not None:
            condition = _match_conditions(pod, rule.on_pod_conditions)
            if condition is None:
                continue
            message = f"Pod {namespace}/{name} has condition {condition} matching {action} rule at index {index}"
        else:
            continue
        if action == "Ignore":
            return None, False, action
        if action == "Count":
            return None, True, action
        if action == "FailJob":
            return message, True, action
    return None, True, None


def _match_conditions(pod: Pod, patterns: Sequence[Any]) -> str | None:
    for condition in (pod.status.conditions if pod.status else None) or ():
        for pattern in patterns:
            # ``status`` defaults to True in the API.
            if condition.type == pattern.type and condition.status == (pattern.status or "True"):
                return condition.type
    return None


def _match_exit_codes(pod: Pod, requirement: dict[str, Any]) -> tuple[str, int] | None:
    wanted_container = requirement.get("containerName")
    operator = requirement.get("operator")
    values = set(requirement.get("values") or ())
    for container in (pod.status.container_statuses if pod.status else None) or ():
        state = _state(pod, container.name or "")
        if state is None:
            continue
        if wanted_container is not None and wanted_container != container.name:
            continue
        code = int(state.get("exitCode", 0))
        if code == 0:
            continue
        if (operator == "In" and code in values) or (operator == "NotIn" and code not in values):
            return container.name or "", code
    return None


def finished_at(pod: Pod) -> float:
    """``getFinishedTime``: containers' last finish, Ready=False, deletion, or creation."""
    statuses = (pod.status.container_statuses if pod.status else None) or ()
    latest: float | None = None
    for status in statuses:
        terminated = (status.extra.get("state") or {}).get("terminated")
        stamp = terminated.get("finishedAt") if isinstance(terminated, dict) else None
        if not stamp:
            latest = None
            break
        when = parse_rfc3339(stamp)
        latest = when if latest is None or when > latest else latest
    if latest is not None and statuses:
        return latest
    for condition in (pod.status.conditions if pod.status else None) or ():
        if (
            condition.type == "Ready"
            and condition.status == "False"
            and condition.last_transition_time
        ):
            return parse_rfc3339(condition.last_transition_time)
    if pod.metadata.deletion_timestamp:
        return parse_rfc3339(pod.metadata.deletion_timestamp) - (
            pod.metadata.deletion_grace_period_seconds or 0
        )
    stamp = pod.metadata.creation_timestamp
    return parse_rfc3339(stamp) if stamp else 0.0


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    """``backoffRecord``: failures since the last success and when the last one was."""

    failures_after_last_success: int = 0
    last_failure_time: float | None = None

    def updated(self, succeeded: Sequence[Pod], failed: Sequence[Pod]) -> BackoffRecord:
        """``newBackoffRecord``."""
        failed_times = sorted(finished_at(p) for p in failed)
        if not succeeded:
            if not failed_times:
                return self
            return BackoffRecord(
                self.failures_after_last_success + len(failed_times), failed_times[-1]
            )
        last_success = max(finished_at(p) for p in succeeded)
        after = [t for t in failed_times if t > last_success]
        return BackoffRecord(len(after), after[-1] if after else None)

    def remaining(self, now: float) -> float:
        """``getRemainingTime``: how long until a replacement may be created."""
        if self.failures_after_last_success == 0 or self.last_failure_time is None:
            return 0.0
        backoff = DEFAULT_POD_FAILURE_BACKOFF
        for _ in range(1, self.failures_after_last_success):
            backoff *= 2
            if backoff >= MAX_POD_FAILURE_BACKOFF:
                backoff = MAX_POD_FAILURE_BACKOFF
                break
        elapsed = now - self.last_failure_time
        return 0.0 if backoff < elapsed else backoff - elapsed


def find_condition(job: Job, type_: str) -> JobCondition | None:
    """``findConditionByType``."""
    for condition in (job.status.conditions if job.status else None) or ():
        if condition.type == type_:
            return condition
    return None


def is_finished(job: Job) -> bool:
    """``IsJobFinished``: a true ``Complete`` or ``Failed`` condition."""
    return any(
        c.type in (COMPLETE, FAILED) and c.status == "True"
        for c in (job.status.conditions if job.status else None) or ()
    )


def new_condition(type_: str, reason: str, message: str, now: str) -> JobCondition:
    """``newCondition`` with status True."""
    return JobCondition(
        type=type_,
        status="True",
        last_probe_time=now,
        last_transition_time=now,
        reason=reason,
        message=message,
    )


def active_pods_less(p1: Pod, p2: Pod) -> bool:
    """``controller.ActivePods.Less``: the pods to delete first sort first."""
    n1 = (p1.spec.node_name if p1.spec else None) or ""
    n2 = (p2.spec.node_name if p2.spec else None) or ""
    if n1 != n2 and (not n1 or not n2):
        return not n1
    order = {"Pending": 0, "Unknown": 1, "Running": 2}
    o1, o2 = order.get(podutil.phase(p1), 0), order.get(podutil.phase(p2), 0)
    if o1 != o2:
        return o1 < o2
    r1, r2 = podutil.is_pod_ready(p1), podutil.is_pod_ready(p2)
    if r1 != r2:
        return not r1
    if r1 and r2:
        t1 = podutil.ready_condition_time(p1) or ""
        t2 = podutil.ready_condition_time(p2) or ""
        if t1 != t2:
            return not t1 or (bool(t2) and t1 > t2)
    c1 = max(
        (c.restart_count or 0 for c in (p1.status.container_statuses if p1.status else None) or ()),
        default=0,
    )
    c2 = max(
        (c.restart_count or 0 for c in (p2.status.container_statuses if p2.status else None) or ()),
        default=0,
    )
    if c1 != c2:
        return c1 > c2
    k1, k2 = p1.metadata.creation_timestamp or "", p2.metadata.creation_timestamp or ""
    if k1 != k2:
        return not k1 or (bool(k2) and k1 > k2)
    return False
