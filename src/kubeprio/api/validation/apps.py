"""Validation of apps/v1 Deployment and ReplicaSet, and the int-or-percent helpers.

Mirrors ``pkg/apis/apps/validation/validation.go`` (``ValidateDeploymentSpec``,
``ValidateReplicaSetSpec``, ``ValidatePodTemplateSpecForReplicaSet``,
``ValidateDeploymentStrategy``, ``ValidatePositiveIntOrPercent``,
``IsNotMoreThan100Percent``, the status validators) and the selector immutability
that ``pkg/registry/apps/*/strategy.go`` adds for apps/v1 updates.

Upstream quirks kept: a missing selector gives both *Required* and "`selector` does
not match template `labels`" (a nil selector matches nothing); a ReplicaSet's empty
selector is reported as "empty selector is invalid for deployment"; a Deployment
template with ``activeDeadlineSeconds`` is "not Supported" *in ReplicaSet*.
Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Final

from kubeprio.api import errors, selectors
from kubeprio.api.apps import Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec
from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gosyntax import GoMap, GoPointer, GoStruct, int_or_string, string_map
from kubeprio.api.meta import LabelSelector
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    KindWarnings,
    child,
    label_selector_value,
    selector_is_empty,
    validate_immutable,
    validate_label_selector,
    validate_nonnegative,
)
from kubeprio.api.validation.podspec import pod_spec_warnings, validate_pod_template_spec

IntOrString = int | str

PERCENT_ERROR: Final = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
"""``IsValidPercent``'s message (``RegexError`` with its doubled space before ``or``)."""
_PERCENT: Final = re.compile(r"[0-9]+%")
_ATOI: Final = re.compile(r"[+-]?[0-9]+")
"""What ``strconv.Atoi`` parses (a sign, then decimal digits)."""
SELECTOR_MISMATCH: Final = "`selector` does not match template `labels`"


# --- int or percent (also used by PodDisruptionBudgets) ------------------------------------


def validate_positive_int_or_percent(value: IntOrString, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``: a percent string, or an int >= 0."""
    if isinstance(value, str):
        if _PERCENT.fullmatch(value) is None:
            return [errors.invalid(path, int_or_string(value), PERCENT_ERROR)]
        return []
    return validate_nonnegative(value, path)


def percent_value(value: IntOrString) -> int | None:
    """``getPercentValue``: the number of a valid percent string, else None."""
    if isinstance(value, str) and _PERCENT.fullmatch(value):
        return int(value[:-1])
    return None


def int_value(value: IntOrString) -> int:
    """``intstr.IntOrString.IntValue``: the int, or a string's number as ``strconv.Atoi``
    reads it (0 when it has none: no spaces, no underscores)."""
    if isinstance(value, int):
        return value
    return int(value) if _ATOI.fullmatch(value) else 0


def int_or_percent_value(value: IntOrString) -> int:
    """``getIntOrPercentValue``: a valid percent's number, else ``IntValue`` ("5" is 5)."""
    percent = percent_value(value)
    return percent if percent is not None else int_value(value)


def is_not_more_than_100_percent(value: IntOrString, path: str) -> list[FieldError]:
    """``IsNotMoreThan100Percent``."""
    percent = percent_value(value)
    if percent is None or percent <= 100:
        return []
    return [errors.invalid(path, int_or_string(value), "must not be greater than 100%")]


# --- templates and selectors ---------------------------------------------------------------


def selector_errors(selector: LabelSelector | None, path: str, kind: str) -> list[FieldError]:
    """The selector part of the Deployment/ReplicaSet spec checks: required, valid, non-empty."""
    if selector is None:
        return [errors.required(path, "")]
    found = validate_label_selector(selector, path)
    if selector_is_empty(selector):
        found.append(
            errors.invalid(
                path, label_selector_value(selector), f"empty selector is invalid for {kind}"
            )
        )
    return found


def template_labels_value(template: PodTemplateSpec | None) -> GoMap:
    """The template's labels as a bad value: a ``map[string]string``, nil when absent."""
    labels = template.metadata.labels if template and template.metadata else None
    return string_map(labels)


def parse_selector(
    selector: LabelSelector | None, path: str
) -> tuple[selectors.Selector | None, list[FieldError]]:
    """``metav1.LabelSelectorAsSelector``; an unconvertible selector is "invalid label selector"."""
    try:
        return selectors.label_selector_as_selector(selector), []
    except selectors.SelectorError:
        shown = label_selector_value(selector) if selector else None
        return None, [errors.invalid(path, shown, "invalid label selector")]


def template_selector_errors(
    template: PodTemplateSpec | None, parsed: selectors.Selector, path: str
) -> list[FieldError]:
    """ "`selector` does not match template `labels`" (``path``: the template's), as every
    workload spec checks it; an empty selector matches anything, a nil one nothing."""
    labels = template.metadata.labels if template and template.metadata else None
    if parsed.is_empty() or parsed.matches(labels or {}):
        return []
    return [
        errors.invalid(
            child(path, "metadata.labels"), template_labels_value(template), SELECTOR_MISMATCH
        )
    ]


def collision_count_errors(new: int | None, old: int | None) -> list[FieldError]:
    """``status.collisionCount`` may never go down (``IsDecremented`` in the workloads'
    status-update validation)."""
    if old is None or (new is not None and new >= old):
        return []
    return [errors.invalid("status.collisionCount", new or 0, "cannot be decremented")]


def validate_template_for_replica_set(
    template: PodTemplateSpec | None, parsed: selectors.Selector, path: str
) -> list[FieldError]:
    """``ValidatePodTemplateSpecForReplicaSet`` (also used for Deployments)."""
    found = template_selector_errors(template, parsed, path)
    found.extend(validate_pod_template_spec(template, path))
    spec = template.spec if template else None
    restart = (spec.restart_policy if spec else None) or ""
    if restart != "Always":
        found.append(errors.not_supported(child(path, "spec.restartPolicy"), restart, ("Always",)))
    if spec is not None and spec.active_deadline_seconds is not None:
        found.append(
            errors.forbidden(
                child(path, "spec.activeDeadlineSeconds"),
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            )
        )
    return found


# --- deployments -------------------------------------------------------------------------------


def _strategy_value(strategy: dict[str, Any]) -> GoValue:
    """The internal ``apps.DeploymentStrategy`` as ``%#v`` prints it; with a
    ``rollingUpdate`` (a pointer, printed as an address) its ``json.Marshal`` form."""
    rolling = strategy.get("rollingUpdate")
    kind = strategy.get("type") or ""
    shown: dict[str, Any] = {"Type": kind, "RollingUpdate": None}
    if isinstance(rolling, dict):
        shown["RollingUpdate"] = {
            "MaxUnavailable": rolling.get("maxUnavailable", 0),
            "MaxSurge": rolling.get("maxSurge", 0),
        }
    pointer = GoPointer("*apps.RollingUpdateDeployment", shown["RollingUpdate"])
    typed = GoStruct("apps.DeploymentStrategy", (("Type", kind), ("RollingUpdate", pointer)))
    return errors.go_value(typed, shown)


def validate_deployment_strategy(spec: DeploymentSpec, path: str) -> list[FieldError]:
    """``ValidateDeploymentStrategy`` on the (unmodelled) ``strategy`` kept in ``extra``."""
    strategy = spec.extra.get("strategy")
    strategy = strategy if isinstance(strategy, dict) else {}
    kind = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [
                errors.forbidden(
                    child(path, "rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        if not isinstance(rolling, dict):
            return [
                errors.required(
                    child(path, "rollingUpdate"), "this should be defaulted and never be nil"
                )
            ]
        return _validate_rolling_update(rolling, child(path, "rollingUpdate"))
    return [errors.not_supported(path, _strategy_value(strategy), ("Recreate", "RollingUpdate"))]


def _validate_rolling_update(rolling: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateRollingUpdateDeployment``."""
    found: list[FieldError] = []
    max_unavailable = rolling.get("maxUnavailable", 0)
    max_surge = rolling.get("maxSurge", 0)
    for name, value in (("maxUnavailable", max_unavailable), ("maxSurge", max_surge)):
        if isinstance(value, int | str) and not isinstance(value, bool):
            found.extend(validate_positive_int_or_percent(value, child(path, name)))
    if int_or_percent_value(max_unavailable) == 0 and int_or_percent_value(max_surge) == 0:
        found.append(
            errors.invalid(
                child(path, "maxUnavailable"),
                int_or_string(max_unavailable),
                "may not be 0 when `maxSurge` is 0",
            )
        )
    if isinstance(max_unavailable, int | str):
        found.extend(is_not_more_than_100_percent(max_unavailable, child(path, "maxUnavailable")))
    return found


def validate_deployment_spec(spec: DeploymentSpec, path: str) -> list[FieldError]:
    """``ValidateDeploymentSpec``."""
    found = validate_nonnegative(spec.replicas or 0, child(path, "replicas"))
    found.extend(selector_errors(spec.selector, child(path, "selector"), "deployment"))
    parsed, errs = parse_selector(spec.selector, child(path, "selector"))
    found.extend(errs)
    if parsed is not None:
        found.extend(
            validate_template_for_replica_set(spec.template, parsed, child(path, "template"))
        )
    found.extend(validate_deployment_strategy(spec, child(path, "strategy")))
    min_ready = spec.min_ready_seconds or 0
    found.extend(validate_nonnegative(min_ready, child(path, "minReadySeconds")))
    if spec.revision_history_limit is not None:
        found.extend(
            validate_nonnegative(spec.revision_history_limit, child(path, "revisionHistoryLimit"))
        )
    deadline = spec.progress_deadline_seconds
    if deadline is not None:
        found.extend(validate_nonnegative(deadline, child(path, "progressDeadlineSeconds")))
        if deadline <= min_ready:
            found.append(
                errors.invalid(
                    child(path, "progressDeadlineSeconds"),
                    deadline,
                    "must be greater than minReadySeconds",
                )
            )
    return found


def validate_deployment(deployment: Deployment) -> list[FieldError]:
    """``ValidateDeployment`` (metadata is checked by the caller)."""
    return validate_deployment_spec(deployment.spec or DeploymentSpec(), "spec")


def _selector_immutable(new: LabelSelector | None, old: LabelSelector | None) -> list[FieldError]:
    shown = None if new is None else label_selector_value(new)
    return validate_immutable(new, old, "spec.selector", shown)


def validate_deployment_update(new: Deployment, old: Deployment) -> list[FieldError]:
    """``ValidateDeploymentUpdate`` plus apps/v1's immutable ``spec.selector``."""
    found = validate_deployment(new)
    found.extend(
        _selector_immutable(
            new.spec.selector if new.spec else None, old.spec.selector if old.spec else None
        )
    )
    return found


def status_counts(status: Any, fields: tuple[str, ...], path: str) -> list[FieldError]:
    found: list[FieldError] = []
    for attr in fields:
        value = getattr(status, attr, None)
        if value is not None:
            json_key = attr.split("_")[0] + "".join(p.title() for p in attr.split("_")[1:])
            found.extend(validate_nonnegative(value, child(path, json_key)))
    replicas = getattr(status, "replicas", None) or 0
    ready = getattr(status, "ready_replicas", None) or 0
    available = getattr(status, "available_replicas", None) or 0
    for attr, json_key in (
        ("updated_replicas", "updatedReplicas"),
        ("fully_labeled_replicas", "fullyLabeledReplicas"),
        ("ready_replicas", "readyReplicas"),
        ("available_replicas", "availableReplicas"),
    ):
        if not hasattr(status, attr):
            continue  # fullyLabeledReplicas is a ReplicaSet's, updatedReplicas a Deployment's
        value = getattr(status, attr) or 0
        if value > replicas:
            found.append(
                errors.invalid(
                    child(path, json_key), value, "cannot be greater than status.replicas"
                )
            )
    if available > ready:
        found.append(
            errors.invalid(
                child(path, "availableReplicas"), available, "cannot be greater than readyReplicas"
            )
        )
    return found


def validate_deployment_status_update(new: Deployment, old: Deployment) -> list[FieldError]:
    """``ValidateDeploymentStatusUpdate``: counts non-negative and consistent, then
    ``collisionCount`` never decremented."""
    found: list[FieldError] = []
    if new.status is not None:
        found = status_counts(
            new.status,
            (
                "observed_generation",
                "replicas",
                "updated_replicas",
                "ready_replicas",
                "available_replicas",
                "unavailable_replicas",
                "collision_count",
            ),
            "status",
        )
    old_count = old.status.collision_count if old.status is not None else None
    new_count = new.status.collision_count if new.status is not None else None
    return found + collision_count_errors(new_count, old_count)


# --- replica sets --------------------------------------------------------------------------------


def validate_replica_set_spec(spec: ReplicaSetSpec, path: str) -> list[FieldError]:
    """``ValidateReplicaSetSpec``."""
    found = validate_nonnegative(spec.replicas or 0, child(path, "replicas"))
    found.extend(validate_nonnegative(spec.min_ready_seconds or 0, child(path, "minReadySeconds")))
    # Upstream's ReplicaSet text says "deployment" too.
    found.extend(selector_errors(spec.selector, child(path, "selector"), "deployment"))
    parsed, errs = parse_selector(spec.selector, child(path, "selector"))
    found.extend(errs)
    if parsed is not None:
        found.extend(
            validate_template_for_replica_set(spec.template, parsed, child(path, "template"))
        )
    return found


def validate_replica_set(replica_set: ReplicaSet) -> list[FieldError]:
    """``ValidateReplicaSet`` (metadata is checked by the caller)."""
    return validate_replica_set_spec(replica_set.spec or ReplicaSetSpec(), "spec")


def validate_replica_set_update(new: ReplicaSet, old: ReplicaSet) -> list[FieldError]:
    """``ValidateReplicaSetUpdate`` plus apps/v1's immutable ``spec.selector``."""
    found = validate_replica_set(new)
    found.extend(
        _selector_immutable(
            new.spec.selector if new.spec else None, old.spec.selector if old.spec else None
        )
    )
    return found


REPLICA_COUNTS: Final = (
    "replicas",
    "fully_labeled_replicas",
    "ready_replicas",
    "available_replicas",
    "observed_generation",
)
"""The status counts ``ValidateReplicaSetStatus`` and ``ValidateReplicationControllerStatus``
both check (non-negative), in upstream's order."""


def validate_replica_set_status_update(new: ReplicaSet, old: ReplicaSet) -> list[FieldError]:
    """``ValidateReplicaSetStatusUpdate``."""
    if new.status is None:
        return []
    return status_counts(new.status, REPLICA_COUNTS, "status")


CREATE: Final[dict[type[Any], KindValidator]] = {
    Deployment: validate_deployment,
    ReplicaSet: validate_replica_set,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Deployment: validate_deployment_update,
    ReplicaSet: validate_replica_set_update,
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Deployment: validate_deployment_status_update,
    ReplicaSet: validate_replica_set_status_update,
}


def template_warnings(obj: Any) -> list[str]:
    """``GetWarningsForPodTemplate`` (part) for a workload's ``spec.template``."""
    spec = getattr(obj, "spec", None)
    template = spec.template if spec is not None else None
    if template is None or template.spec is None:
        return []
    return pod_spec_warnings(template.spec, "spec.template.spec")


WARNINGS: Final[dict[type[Any], KindWarnings]] = {
    Deployment: template_warnings,
    ReplicaSet: template_warnings,
}
