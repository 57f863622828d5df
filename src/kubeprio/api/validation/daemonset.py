"""Validation of apps/v1 DaemonSets and ControllerRevisions.

Mirrors ``pkg/apis/apps/validation/validation.go`` (``ValidateDaemonSet``,
``ValidateDaemonSetUpdate``, ``ValidateDaemonSetSpec``, ``ValidateDaemonSetUpdateStrategy``,
``ValidateRollingUpdateDaemonSet``, ``ValidateDaemonSetStatusUpdate``,
``ValidateControllerRevision``, ``ValidateControllerRevisionUpdate``) and the selector
immutability ``pkg/registry/apps/daemonset/strategy.go`` adds for apps/v1 updates.

Upstream quirks kept:

* a DaemonSet without a selector is not *Required*: a nil selector selects nothing, so
  the only error is "`selector` does not match template `labels`" (Deployments get both);
* an update runs the spec rules twice (the strategy's ``ValidateUpdate`` calls
  ``ValidateDaemonSet`` and ``ValidateDaemonSetUpdate``, which both validate the spec), so
  a cause appears twice while the message lists it once, as for Jobs;
* ``maxSurge`` and ``maxUnavailable`` may not both be non-zero (a Deployment allows it) and
  may not both be zero; a string that is not a percentage counts by its number
  (``IntOrString.IntValue``), a bad one as 0;
* an unknown strategy type is printed as the internal ``apps.DaemonSetUpdateStrategy``
  (``{"Type":"Foo","RollingUpdate":null}``).

The internal ``spec.templateGeneration`` checks need no code: the registry strategy sets
the generation itself (``apiserver.templategeneration``), so they can never fail.
Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors, selectors
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.daemonset import (
    ON_DELETE,
    ROLLING_UPDATE,
    DaemonSet,
    DaemonSetSpec,
    DaemonSetStatus,
    DaemonSetUpdateStrategy,
    IntOrString,
    RollingUpdateDaemonSet,
)
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gosyntax import GoPointer, GoStruct, int_or_string
from kubeprio.api.validation.apps import (
    collision_count_errors,
    int_or_percent_value,
    is_not_more_than_100_percent,
    template_selector_errors,
    template_warnings,
    validate_positive_int_or_percent,
)
from kubeprio.api.validation.meta import (
    FIELD_IMMUTABLE,
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
from kubeprio.api.validation.podspec import validate_pod_template_spec

EMPTY_SELECTOR: Final = "empty selector is invalid for daemonset"
ACTIVE_DEADLINE: Final = "activeDeadlineSeconds in DaemonSet is not Supported"
SURGE_AND_UNAVAILABLE: Final = "may not be set when maxUnavailable is non-zero"
NEITHER_SURGE_NOR_UNAVAILABLE: Final = "cannot be 0 when maxSurge is 0"
DATA_MANDATORY: Final = "data is mandatory"
"""``ValidateControllerRevision``'s text for a revision without ``data``."""
STRATEGY_TYPES: Final = (ROLLING_UPDATE, ON_DELETE)
"""The order upstream's NotSupported lists them in."""


def _strategy_value(strategy: DaemonSetUpdateStrategy) -> GoValue:
    """The internal ``apps.DaemonSetUpdateStrategy`` as ``%#v`` prints it; with a
    ``rollingUpdate`` (a pointer, printed as an address) its ``json.Marshal`` form."""
    rolling = strategy.rolling_update
    shown: dict[str, Any] = {"Type": strategy.type or "", "RollingUpdate": None}
    if rolling is not None:
        shown["RollingUpdate"] = {
            "MaxUnavailable": 0 if rolling.max_unavailable is None else rolling.max_unavailable,
            "MaxSurge": 0 if rolling.max_surge is None else rolling.max_surge,
        }
    pointer = GoPointer("*apps.RollingUpdateDaemonSet", shown["RollingUpdate"])
    typed = GoStruct(
        "apps.DaemonSetUpdateStrategy", (("Type", shown["Type"]), ("RollingUpdate", pointer))
    )
    return errors.go_value(typed, shown)


def validate_rolling_update(rolling: RollingUpdateDaemonSet, path: str) -> list[FieldError]:
    """``ValidateRollingUpdateDaemonSet`` (an unset bound is the internal zero, 0)."""
    max_unavailable: IntOrString = 0 if rolling.max_unavailable is None else rolling.max_unavailable
    max_surge: IntOrString = 0 if rolling.max_surge is None else rolling.max_surge
    unavailable_path, surge_path = child(path, "maxUnavailable"), child(path, "maxSurge")
    found = validate_positive_int_or_percent(max_unavailable, unavailable_path)
    found.extend(validate_positive_int_or_percent(max_surge, surge_path))
    found.extend(is_not_more_than_100_percent(max_unavailable, unavailable_path))
    found.extend(is_not_more_than_100_percent(max_surge, surge_path))
    has_unavailable = int_or_percent_value(max_unavailable) != 0
    has_surge = int_or_percent_value(max_surge) != 0
    if has_unavailable and has_surge:
        found.append(errors.invalid(surge_path, int_or_string(max_surge), SURGE_AND_UNAVAILABLE))
    elif not has_unavailable and not has_surge:
        found.append(errors.required(unavailable_path, NEITHER_SURGE_NOR_UNAVAILABLE))
    return found


def validate_update_strategy(
    strategy: DaemonSetUpdateStrategy | None, path: str
) -> list[FieldError]:
    """``ValidateDaemonSetUpdateStrategy``."""
    strategy = strategy or DaemonSetUpdateStrategy()
    if strategy.type == ON_DELETE:
        return []
    if strategy.type == ROLLING_UPDATE:
        if strategy.rolling_update is None:
            return [errors.required(child(path, "rollingUpdate"))]
        return validate_rolling_update(strategy.rolling_update, child(path, "rollingUpdate"))
    return [errors.not_supported(path, _strategy_value(strategy), STRATEGY_TYPES)]


def validate_daemon_set_spec(spec: DaemonSetSpec, path: str) -> list[FieldError]:
    """``ValidateDaemonSetSpec``."""
    template = spec.template
    selector_path = child(path, "selector")
    found: list[FieldError] = []
    if spec.selector is not None:
        found.extend(validate_label_selector(spec.selector, selector_path))
    try:
        parsed = selectors.label_selector_as_selector(spec.selector)
    except selectors.SelectorError:
        pass  # reported by validate_label_selector; upstream skips the match
    else:
        found.extend(template_selector_errors(template, parsed, child(path, "template")))
    if spec.selector is not None and selector_is_empty(spec.selector):
        found.append(
            errors.invalid(selector_path, label_selector_value(spec.selector), EMPTY_SELECTOR)
        )
    found.extend(validate_pod_template_spec(template, child(path, "template")))
    pod_spec = template.spec if template else None
    restart = (pod_spec.restart_policy if pod_spec else None) or ""
    if restart != "Always":
        found.append(
            errors.not_supported(child(path, "template.spec.restartPolicy"), restart, ("Always",))
        )
    if pod_spec is not None and pod_spec.active_deadline_seconds is not None:
        found.append(
            errors.forbidden(child(path, "template.spec.activeDeadlineSeconds"), ACTIVE_DEADLINE)
        )
    found.extend(validate_nonnegative(spec.min_ready_seconds or 0, child(path, "minReadySeconds")))
    found.extend(validate_update_strategy(spec.update_strategy, child(path, "updateStrategy")))
    if spec.revision_history_limit is not None:
        found.extend(
            validate_nonnegative(spec.revision_history_limit, child(path, "revisionHistoryLimit"))
        )
    return found


def validate_daemon_set(ds: DaemonSet) -> list[FieldError]:
    """``ValidateDaemonSet`` (metadata is checked by the caller)."""
    return validate_daemon_set_spec(ds.spec or DaemonSetSpec(), "spec")


def validate_daemon_set_update(new: DaemonSet, old: DaemonSet) -> list[FieldError]:
    """The strategy's ``ValidateUpdate``: ``ValidateDaemonSet`` + ``ValidateDaemonSetUpdate``
    (the spec rules once more) + apps/v1's immutable ``spec.selector``."""
    # Pure, so its second run's causes are its first run's: list them twice, run it once.
    found = validate_daemon_set(new) * 2
    selector = new.spec.selector if new.spec else None
    old_selector = old.spec.selector if old.spec else None
    shown = None if selector is None else label_selector_value(selector)
    found.extend(validate_immutable(selector, old_selector, "spec.selector", shown))
    return found


_STATUS_COUNTS: Final = (
    ("current_number_scheduled", "currentNumberScheduled"),
    ("number_misscheduled", "numberMisscheduled"),
    ("desired_number_scheduled", "desiredNumberScheduled"),
    ("number_ready", "numberReady"),
    ("observed_generation", "observedGeneration"),
    ("updated_number_scheduled", "updatedNumberScheduled"),
    ("number_available", "numberAvailable"),
    ("number_unavailable", "numberUnavailable"),
)


def validate_daemon_set_status_update(new: DaemonSet, old: DaemonSet) -> list[FieldError]:
    """``ValidateDaemonSetStatusUpdate``: counts non-negative, ``collisionCount`` never down."""
    status = new.status or DaemonSetStatus()
    found: list[FieldError] = []
    for attr, json_key in _STATUS_COUNTS:
        found.extend(validate_nonnegative(getattr(status, attr) or 0, f"status.{json_key}"))
    if status.collision_count is not None:
        found.extend(validate_nonnegative(status.collision_count, "status.collisionCount"))
    found.extend(
        collision_count_errors(
            status.collision_count, old.status.collision_count if old.status else None
        )
    )
    return found


def validate_controller_revision(revision: ControllerRevision) -> list[FieldError]:
    """``ValidateControllerRevision`` (metadata is checked by the caller)."""
    found: list[FieldError] = []
    if revision.data is None:
        found.append(errors.required("data", DATA_MANDATORY))
    found.extend(validate_nonnegative(revision.revision or 0, "revision"))
    return found


def validate_controller_revision_update(
    new: ControllerRevision, old: ControllerRevision
) -> list[FieldError]:
    """``ValidateControllerRevisionUpdate``: ``data`` is immutable; ``revision`` may move."""
    found = validate_controller_revision(new)
    if new.data != old.data:
        found.append(errors.invalid("data", GoValue(errors.go_json(new.data)), FIELD_IMMUTABLE))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {
    DaemonSet: validate_daemon_set,
    ControllerRevision: validate_controller_revision,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    DaemonSet: validate_daemon_set_update,
    ControllerRevision: validate_controller_revision_update,
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    DaemonSet: validate_daemon_set_status_update,
}
WARNINGS: Final[dict[type[Any], KindWarnings]] = {DaemonSet: template_warnings}
