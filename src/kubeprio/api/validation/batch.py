"""Validation of batch/v1 Job.

Mirrors ``pkg/apis/batch/validation/validation.go``: ``ValidateJob`` (with
``validateGeneratedSelector``), ``ValidateJobSpec``/``validateJobSpec`` for the modelled
fields (counts, completion mode, pod failure policy, the template and its restart
policy), ``ValidateJobSpecUpdate`` (selector, template, completion mode and pod failure
policy immutable; completions immutable unless an Indexed job changes them together
with parallelism) and the status counters.

The API service generates a Job's selector and template labels before validation, as
upstream's job strategy does (``apiserver.strategy``). A template whose restart policy
is unset was defaulted to ``Always``, which a Job rejects: upstream reports that as
*Required* with the two valid values. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors, gotext, selectors
from kubeprio.api.batch import Job, JobSpec, PodFailurePolicy
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gosyntax import string_map
from kubeprio.api.serialization import to_sparse_dict
from kubeprio.api.validation.apps import template_selector_errors, template_warnings
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    KindWarnings,
    child,
    dns1123_label_errors,
    index,
    label_selector_value,
    qualified_name_errors,
    validate_immutable,
    validate_label_selector,
    validate_nonnegative,
)
from kubeprio.api.validation.podspec import validate_pod_template_spec

LEGACY_CONTROLLER_UID_LABEL: Final = "controller-uid"
LEGACY_JOB_NAME_LABEL: Final = "job-name"
CONTROLLER_UID_LABEL: Final = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"
COMPLETION_MODES: Final = ("NonIndexed", "Indexed")
MAX_PARALLELISM_FOR_INDEXED_JOB: Final = 100_000
MAX_POD_FAILURE_POLICY_RULES: Final = 20
MAX_ON_POD_CONDITIONS_PATTERNS: Final = 20
POD_FAILURE_POLICY_ACTIONS: Final = ("Count", "FailIndex", "FailJob", "Ignore")
CONDITION_STATUSES: Final = ("False", "True", "Unknown")
POD_REPLACEMENT_POLICIES: Final = ("Failed", "TerminatingOrFailed")


def _go_string_list(values: tuple[str, ...]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(gotext.go_quote(v) for v in values) + "]"


def _has_label(labels: dict[str, str], label: str, expected: str, path: str) -> list[FieldError]:
    """``ValidateHasLabel``."""
    if label not in labels:
        return [errors.required(f"{path}[{label}]", f"must be '{expected}'")]
    if labels[label] != expected:
        return [errors.invalid(f"{path}[{label}]", string_map(labels), f"must be '{expected}'")]
    return []


def validate_generated_selector(job: Job, *, require_prefixed_labels: bool) -> list[FieldError]:
    """``validateGeneratedSelector``: the server-generated selector and labels are intact."""
    spec = job.spec or JobSpec()
    if spec.manual_selector or spec.selector is None:
        return []
    found: list[FieldError] = []
    uid = job.metadata.uid or ""
    name = job.metadata.name or ""
    if not uid:
        found.append(errors.required("metadata.uid", ""))
    template = spec.template
    labels = dict((template.metadata.labels if template and template.metadata else None) or {})
    path = "spec.template.metadata.labels"
    found.extend(_has_label(labels, LEGACY_CONTROLLER_UID_LABEL, uid, path))
    found.extend(_has_label(labels, LEGACY_JOB_NAME_LABEL, name, path))
    expected = {LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name}
    if require_prefixed_labels:
        found.extend(_has_label(labels, CONTROLLER_UID_LABEL, uid, path))
        found.extend(_has_label(labels, JOB_NAME_LABEL, name, path))
        expected.update({CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name})
    try:
        parsed = selectors.label_selector_as_selector(spec.selector)
    except selectors.SelectorError:
        return found
    if not parsed.matches(expected):
        found.append(
            errors.invalid(
                "spec.selector",
                label_selector_value(spec.selector),
                "`selector` not auto-generated",
            )
        )
    return found


def _validate_pod_failure_policy(
    spec: JobSpec, policy: PodFailurePolicy, path: str
) -> list[FieldError]:
    """``validatePodFailurePolicy`` for the modelled parts (actions, onPodConditions)."""
    found: list[FieldError] = []
    rules = policy.rules or ()
    rules_path = child(path, "rules")
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        found.append(
            FieldError(
                errors.ErrorType.TOO_MANY,
                rules_path,
                len(rules),
                f"must have at most {MAX_POD_FAILURE_POLICY_RULES} items",
            )
        )
    per_index = spec.extra.get("backoffLimitPerIndex") is not None
    for position, rule in enumerate(rules):
        rule_path = index(rules_path, position)
        action = rule.action or ""
        if not action:
            found.append(
                errors.required(
                    child(rule_path, "action"),
                    f"valid values: {_go_string_list(POD_FAILURE_POLICY_ACTIONS)}",
                )
            )
        elif action == "FailIndex":
            if not per_index:
                found.append(
                    errors.invalid(
                        child(rule_path, "action"),
                        action,
                        "requires the backoffLimitPerIndex to be set",
                    )
                )
        elif action not in POD_FAILURE_POLICY_ACTIONS:
            found.append(
                errors.not_supported(child(rule_path, "action"), action, POD_FAILURE_POLICY_ACTIONS)
            )
        patterns = rule.on_pod_conditions or ()
        conditions_path = child(rule_path, "onPodConditions")
        if len(patterns) > MAX_ON_POD_CONDITIONS_PATTERNS:
            found.append(
                FieldError(
                    errors.ErrorType.TOO_MANY,
                    conditions_path,
                    len(patterns),
                    f"must have at most {MAX_ON_POD_CONDITIONS_PATTERNS} items",
                )
            )
        for p_index, pattern in enumerate(patterns):
            pattern_path = index(conditions_path, p_index)
            found.extend(qualified_name_errors(pattern.type or "", child(pattern_path, "type")))
            status = pattern.status or ""
            if not status:
                found.append(
                    errors.required(
                        child(pattern_path, "status"),
                        f"valid values: {_go_string_list(CONDITION_STATUSES)}",
                    )
                )
            elif status not in CONDITION_STATUSES:
                found.append(
                    errors.not_supported(child(pattern_path, "status"), status, CONDITION_STATUSES)
                )
        on_exit_codes = rule.extra.get("onExitCodes") is not None
        if on_exit_codes and patterns:
            found.append(
                errors.invalid(
                    rule_path,
                    errors.OMIT,
                    "specifying both OnExitCodes and OnPodConditions is not supported",
                )
            )
        if not on_exit_codes and not patterns:
            found.append(
                errors.invalid(
                    rule_path,
                    errors.OMIT,
                    "specifying one of OnExitCodes and OnPodConditions is required",
                )
            )
    return found


def validate_job_spec_fields(spec: JobSpec, path: str) -> list[FieldError]:
    """``validateJobSpec`` for the modelled fields."""
    found: list[FieldError] = []
    for attr, json_key in (
        ("parallelism", "parallelism"),
        ("completions", "completions"),
        ("active_deadline_seconds", "activeDeadlineSeconds"),
        ("backoff_limit", "backoffLimit"),
        ("ttl_seconds_after_finished", "ttlSecondsAfterFinished"),
    ):
        value = getattr(spec, attr)
        if value is not None:
            found.extend(validate_nonnegative(value, child(path, json_key)))
    mode = spec.completion_mode
    if mode is not None:
        if mode not in COMPLETION_MODES:
            found.append(
                errors.not_supported(child(path, "completionMode"), mode, COMPLETION_MODES)
            )
        if mode == "Indexed":
            if spec.completions is None:
                found.append(
                    errors.required(child(path, "completions"), "when completion mode is Indexed")
                )
            if spec.parallelism is not None and spec.parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
                found.append(
                    errors.invalid(
                        child(path, "parallelism"),
                        spec.parallelism,
                        f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed",
                    )
                )
    if spec.pod_failure_policy is not None:
        found.extend(
            _validate_pod_failure_policy(
                spec, spec.pod_failure_policy, child(path, "podFailurePolicy")
            )
        )
    replacement = spec.extra.get("podReplacementPolicy")
    if isinstance(replacement, str):
        if spec.pod_failure_policy is not None:
            if replacement != "Failed":
                found.append(
                    errors.not_supported(
                        child(path, "podReplacementPolicy"), replacement, ("Failed",)
                    )
                )
        elif replacement not in POD_REPLACEMENT_POLICIES:
            found.append(
                errors.not_supported(
                    child(path, "podReplacementPolicy"), replacement, POD_REPLACEMENT_POLICIES
                )
            )
    found.extend(validate_pod_template_spec(spec.template, child(path, "template")))
    template_spec = spec.template.spec if spec.template else None
    restart = (template_spec.restart_policy if template_spec else None) or ""
    restart_path = child(path, "template.spec.restartPolicy")
    if restart in ("Always", ""):
        found.append(errors.required(restart_path, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        found.append(errors.not_supported(restart_path, restart, ("OnFailure", "Never")))
    elif spec.pod_failure_policy is not None and restart != "Never":
        found.append(
            errors.invalid(
                restart_path,
                restart,
                'only "Never" is supported when podFailurePolicy is specified',
            )
        )
    return found


def validate_job_spec(spec: JobSpec, path: str) -> list[FieldError]:
    """``ValidateJobSpec``: the fields, a valid selector, and a template it selects."""
    found = validate_job_spec_fields(spec, path)
    if spec.selector is None:
        found.append(errors.required(child(path, "selector"), ""))
    else:
        found.extend(validate_label_selector(spec.selector, child(path, "selector")))
    try:
        parsed = selectors.label_selector_as_selector(spec.selector)
    except selectors.SelectorError:
        return found
    found.extend(template_selector_errors(spec.template, parsed, child(path, "template")))
    return found


def _require_prefixed_labels(old: Job | None) -> bool:
    """New Jobs need the ``batch.kubernetes.io/`` labels; old ones only if they had both."""
    if old is None:
        return True
    template = old.spec.template if old.spec else None
    labels = (template.metadata.labels if template and template.metadata else None) or {}
    return CONTROLLER_UID_LABEL in labels and JOB_NAME_LABEL in labels


def validate_job(job: Job, old: Job | None = None) -> list[FieldError]:
    """``ValidateJob`` (metadata is checked by the caller)."""
    found = validate_generated_selector(job, require_prefixed_labels=_require_prefixed_labels(old))
    spec = job.spec or JobSpec()
    found.extend(validate_job_spec(spec, "spec"))
    if spec.completion_mode == "Indexed" and spec.completions and spec.completions > 0:
        hostname = f"{job.metadata.name or ''}-{spec.completions - 1}"
        if dns1123_label_errors(hostname):
            found.append(
                errors.invalid(
                    "metadata.name",
                    job.metadata.name or "",
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return found


def _json(value: Any) -> Any:
    return None if value is None else to_sparse_dict(value)


def validate_job_update(new: Job, old: Job) -> list[FieldError]:
    """``ValidateJob`` + ``ValidateJobSpecUpdate`` (the job strategy runs both)."""
    found = validate_job(new, old)
    spec, old_spec = new.spec or JobSpec(), old.spec or JobSpec()
    found.extend(validate_job_spec(spec, "spec"))
    if spec.completions != old_spec.completions:
        if spec.completion_mode != "Indexed":
            found.extend(
                validate_immutable(spec.completions, old_spec.completions, "spec.completions")
            )
        elif spec.completions is not None and spec.completions != spec.parallelism:
            found.append(
                errors.invalid(
                    "spec.completions",
                    spec.completions,
                    "can only be modified in tandem with spec.parallelism",
                )
            )
    found.extend(
        validate_immutable(
            spec.selector,
            old_spec.selector,
            "spec.selector",
            None if spec.selector is None else label_selector_value(spec.selector),
        )
    )
    found.extend(_template_immutable(new, old))
    found.extend(
        validate_immutable(spec.completion_mode, old_spec.completion_mode, "spec.completionMode")
    )
    found.extend(
        validate_immutable(
            spec.pod_failure_policy,
            old_spec.pod_failure_policy,
            "spec.podFailurePolicy",
            GoValue(errors.go_json(_json(spec.pod_failure_policy))),
        )
    )
    return found


def _template_immutable(new: Job, old: Job) -> list[FieldError]:
    """``validatePodTemplateUpdate``: a suspended, never-started Job may change scheduling directives."""
    template, old_template = (
        new.spec.template if new.spec else None,
        old.spec.template if old.spec else None,
    )
    if template == old_template:
        return []
    new_doc, old_doc = _json(template) or {}, _json(old_template) or {}
    suspended = bool(old.spec and old.spec.suspend)
    never_started = not (old.status and old.status.start_time)
    if suspended and never_started:
        for doc in (new_doc, old_doc):
            doc_spec = doc.setdefault("spec", {})
            for json_key in ("nodeSelector", "tolerations", "schedulingGates"):
                doc_spec.pop(json_key, None)
            affinity = doc_spec.get("affinity")
            if isinstance(affinity, dict):
                affinity.pop("nodeAffinity", None)
                if not affinity:
                    doc_spec.pop("affinity")
            metadata = doc.setdefault("metadata", {})
            metadata.pop("labels", None)
            metadata.pop("annotations", None)
    if new_doc == old_doc:
        return []
    return [
        errors.invalid(
            "spec.template", GoValue(errors.go_json(_json(template))), "field is immutable"
        )
    ]


def validate_job_status_update(new: Job, old: Job) -> list[FieldError]:
    """``validateJobStatus``: the counters are non-negative."""
    status = new.status
    if status is None:
        return []
    found: list[FieldError] = []
    for attr in ("active", "succeeded", "failed", "ready"):
        value = getattr(status, attr)
        if value is not None:
            found.extend(validate_nonnegative(value, f"status.{attr}"))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {Job: validate_job}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {Job: validate_job_update}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {Job: validate_job_status_update}
WARNINGS: Final[dict[type[Any], KindWarnings]] = {Job: template_warnings}
