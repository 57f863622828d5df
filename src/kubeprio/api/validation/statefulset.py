"""Validation of apps/v1 StatefulSets.

Mirrors ``pkg/apis/apps/validation/validation.go`` (``ValidateStatefulSet``,
``ValidateStatefulSetSpec``, ``ValidatePodTemplateSpecForStatefulSet``,
``ValidatePersistentVolumeClaimRetentionPolicy``, ``validateRollingUpdateStatefulSet``,
``ValidateStatefulSetUpdate``, ``ValidateStatefulSetStatus``,
``ValidateStatefulSetStatusUpdate``) as ``pkg/registry/apps/statefulset/strategy.go``
calls them, and ``ValidateStatefulSetName`` (a DNS label, ``validation.meta``).

Upstream quirks kept:

* the pod template is **not** validated as a pod spec (upstream's TODO: it would trip
  over the volumes the claim templates add); only its labels (reported under
  ``spec.template.labels``), annotations, ``restartPolicy: Always`` and the absence of
  ``activeDeadlineSeconds``. A template the API accepts can still fail every pod
  creation (``FailedCreate`` events);
* a missing selector gives both *Required* and "`selector` does not match template
  `labels`" (a nil selector matches nothing);
* an update runs the spec rules twice (``ValidateStatefulSet`` and
  ``ValidateStatefulSetUpdate``), so a cause appears twice while the message lists it once;
* only ``replicas``, ``ordinals``, ``template``, ``updateStrategy``,
  ``revisionHistoryLimit``, ``persistentVolumeClaimRetentionPolicy`` and
  ``minReadySeconds`` may change (the text upstream has had since it let
  ``revisionHistoryLimit`` change); ``serviceName``, ``selector``,
  ``podManagementPolicy`` and ``volumeClaimTemplates`` are fixed;
* a strategy or a ``rollingUpdate`` shown as a bad value is the internal Go struct as
  v1.32's ``%#v`` prints it (``apps.StatefulSetUpdateStrategy{Type:"Foo",
  RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}``); a strategy holding a
  ``rollingUpdate`` (a pointer ``%#v`` prints as an address) shows its JSON form.

``rollingUpdate.maxUnavailable`` (alpha MaxUnavailableStatefulSet, off) is dropped by the
registry before validation (``apiserver.strategy``), so it has no rules here. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors, selectors
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gosyntax import GoPointer, GoStruct
from kubeprio.api.model import evolve
from kubeprio.api.statefulset import (
    DELETE,
    ON_DELETE,
    ORDERED_READY,
    PARALLEL,
    RETAIN,
    ROLLING_UPDATE,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetSpec,
    StatefulSetStatus,
    StatefulSetUpdateStrategy,
)
from kubeprio.api.validation.apps import (
    collision_count_errors,
    selector_errors,
    template_selector_errors,
    template_warnings,
)
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    KindWarnings,
    child,
    label_selector_value,
    validate_annotations,
    validate_labels,
    validate_nonnegative,
)

ACTIVE_DEADLINE: Final = "activeDeadlineSeconds in StatefulSet is not Supported"
POD_MANAGEMENT: Final = f"must be '{ORDERED_READY}' or '{PARALLEL}'"
STRATEGY_TYPES: Final = f"must be '{ROLLING_UPDATE}' or '{ON_DELETE}'"
ROLLING_ONLY: Final = f"only allowed for updateStrategy '{ROLLING_UPDATE}'"
RETENTION_TYPES: Final = (RETAIN, DELETE)
FORBIDDEN_UPDATE: Final = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
    "forbidden"
)
"""v1.32's text: ``revisionHistoryLimit`` became mutable (and joined the list) in v1.33
(kubernetes#130263)."""
GREATER_THAN_REPLICAS: Final = "cannot be greater than status.replicas"
GREATER_THAN_READY: Final = "cannot be greater than status.readyReplicas"


def _rolling_json(rolling: RollingUpdateStatefulSetStrategy) -> dict[str, Any]:
    """The internal ``apps.RollingUpdateStatefulSetStrategy`` (no JSON tags)."""
    return {"Partition": rolling.partition or 0, "MaxUnavailable": rolling.max_unavailable}


def _rolling_value(rolling: RollingUpdateStatefulSetStrategy) -> GoStruct:
    """The internal ``apps.RollingUpdateStatefulSetStrategy`` for ``%#v``."""
    max_unavailable = GoPointer("*intstr.IntOrString", rolling.max_unavailable)
    return GoStruct(
        "apps.RollingUpdateStatefulSetStrategy",
        (("Partition", rolling.partition or 0), ("MaxUnavailable", max_unavailable)),
    )


def _strategy_value(strategy: StatefulSetUpdateStrategy) -> GoValue:
    """The internal ``apps.StatefulSetUpdateStrategy`` as ``%#v`` prints it; with a
    ``rollingUpdate`` (a pointer, printed as an address) its ``json.Marshal`` form."""
    rolling = strategy.rolling_update
    shown = {
        "Type": strategy.type or "",
        "RollingUpdate": None if rolling is None else _rolling_json(rolling),
    }
    pointer = GoPointer(
        "*apps.RollingUpdateStatefulSetStrategy",
        None if rolling is None else _rolling_value(rolling),
    )
    typed = GoStruct(
        "apps.StatefulSetUpdateStrategy", (("Type", shown["Type"]), ("RollingUpdate", pointer))
    )
    return errors.go_value(typed, shown)


def validate_update_strategy(
    strategy: StatefulSetUpdateStrategy | None, path: str
) -> list[FieldError]:
    """The ``updateStrategy`` switch of ``ValidateStatefulSetSpec``."""
    strategy = strategy or StatefulSetUpdateStrategy()
    rolling = strategy.rolling_update
    rolling_path = child(path, "rollingUpdate")
    if not strategy.type:
        return [errors.required(path, "")]
    if strategy.type == ON_DELETE:
        if rolling is None:
            return []
        shown = errors.go_value(_rolling_value(rolling), _rolling_json(rolling))
        return [errors.invalid(rolling_path, shown, ROLLING_ONLY)]
    if strategy.type == ROLLING_UPDATE:
        if rolling is None:
            return []
        # validateRollingUpdateStatefulSet (maxUnavailable is dropped before validation).
        return validate_nonnegative(rolling.partition or 0, child(rolling_path, "partition"))
    return [errors.invalid(path, _strategy_value(strategy), STRATEGY_TYPES)]


def validate_retention_policy(
    policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None, path: str
) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimRetentionPolicy``."""
    if policy is None:
        return []
    found: list[FieldError] = []
    for value, name in ((policy.when_deleted, "whenDeleted"), (policy.when_scaled, "whenScaled")):
        if (value or "") not in RETENTION_TYPES:
            found.append(errors.not_supported(child(path, name), value or "", RETENTION_TYPES))
    return found


def validate_stateful_set_spec(spec: StatefulSetSpec, path: str) -> list[FieldError]:
    """``ValidateStatefulSetSpec``."""
    found: list[FieldError] = []
    policy = spec.pod_management_policy or ""
    if not policy:
        found.append(errors.required(child(path, "podManagementPolicy"), ""))
    elif policy not in (ORDERED_READY, PARALLEL):
        found.append(errors.invalid(child(path, "podManagementPolicy"), policy, POD_MANAGEMENT))
    found.extend(validate_update_strategy(spec.update_strategy, child(path, "updateStrategy")))
    found.extend(
        validate_retention_policy(
            spec.persistent_volume_claim_retention_policy,
            child(path, "persistentVolumeClaimRetentionPolicy"),
        )
    )
    found.extend(validate_nonnegative(spec.replicas or 0, child(path, "replicas")))
    found.extend(validate_nonnegative(spec.min_ready_seconds or 0, child(path, "minReadySeconds")))
    if spec.ordinals is not None:
        found.extend(validate_nonnegative(spec.ordinals.start or 0, child(path, "ordinals.start")))
    selector_path = child(path, "selector")
    found.extend(selector_errors(spec.selector, selector_path, "statefulset"))
    try:
        parsed = selectors.label_selector_as_selector(spec.selector)
    except selectors.SelectorError:
        shown = label_selector_value(spec.selector) if spec.selector else None
        found.append(errors.invalid(selector_path, shown, ""))
    else:
        found.extend(_validate_template(spec, parsed, child(path, "template")))
    template_spec = spec.template.spec if spec.template else None
    restart = (template_spec.restart_policy if template_spec else None) or ""
    if restart != "Always":
        found.append(
            errors.not_supported(child(path, "template.spec.restartPolicy"), restart, ("Always",))
        )
    if template_spec is not None and template_spec.active_deadline_seconds is not None:
        found.append(
            errors.forbidden(child(path, "template.spec.activeDeadlineSeconds"), ACTIVE_DEADLINE)
        )
    return found


def _validate_template(
    spec: StatefulSetSpec, parsed: selectors.Selector, path: str
) -> list[FieldError]:
    """``ValidatePodTemplateSpecForStatefulSet``: labels and annotations, no pod spec."""
    template = spec.template
    metadata = template.metadata if template else None
    found = template_selector_errors(template, parsed, path)
    found.extend(validate_labels(metadata.labels if metadata else None, child(path, "labels")))
    found.extend(
        validate_annotations(metadata.annotations if metadata else None, child(path, "annotations"))
    )
    return found


def validate_stateful_set(sts: StatefulSet) -> list[FieldError]:
    """``ValidateStatefulSet`` (metadata, with the DNS-label name rule, is checked by the caller)."""
    return validate_stateful_set_spec(sts.spec or StatefulSetSpec(), "spec")


def validate_stateful_set_update(new: StatefulSet, old: StatefulSet) -> list[FieldError]:
    """The strategy's ``ValidateUpdate``: ``ValidateStatefulSet`` + ``ValidateStatefulSetUpdate``
    (the spec rules once more, and the fields that may not change)."""
    # Pure, so its second run's causes are its first run's: list them twice, run it once.
    found = validate_stateful_set(new) * 2
    new_spec, old_spec = new.spec or StatefulSetSpec(), old.spec or StatefulSetSpec()
    unchanged = evolve(
        new_spec,
        replicas=old_spec.replicas,
        template=old_spec.template,
        update_strategy=old_spec.update_strategy,
        min_ready_seconds=old_spec.min_ready_seconds,
        ordinals=old_spec.ordinals,
        persistent_volume_claim_retention_policy=old_spec.persistent_volume_claim_retention_policy,
    )
    if unchanged != old_spec:
        found.append(errors.forbidden("spec", FORBIDDEN_UPDATE))
    return found


_STATUS_COUNTS: Final = (
    ("replicas", "replicas"),
    ("ready_replicas", "readyReplicas"),
    ("current_replicas", "currentReplicas"),
    ("updated_replicas", "updatedReplicas"),
    ("available_replicas", "availableReplicas"),
)


def validate_stateful_set_status_update(new: StatefulSet, old: StatefulSet) -> list[FieldError]:
    """``ValidateStatefulSetStatusUpdate``: ``ValidateStatefulSetStatus`` (counts non-negative,
    none above ``replicas``, available not above ready) and ``collisionCount`` never down."""
    status = new.status or StatefulSetStatus()
    counts = {attr: getattr(status, attr) or 0 for attr, _ in _STATUS_COUNTS}
    found: list[FieldError] = []
    for attr, json_key in _STATUS_COUNTS:
        found.extend(validate_nonnegative(counts[attr], f"status.{json_key}"))
    if status.observed_generation is not None:
        found.extend(validate_nonnegative(status.observed_generation, "status.observedGeneration"))
    if status.collision_count is not None:
        found.extend(validate_nonnegative(status.collision_count, "status.collisionCount"))
    for attr, json_key in _STATUS_COUNTS[1:]:
        if counts[attr] > counts["replicas"]:
            found.append(errors.invalid(f"status.{json_key}", counts[attr], GREATER_THAN_REPLICAS))
    if counts["available_replicas"] > counts["ready_replicas"]:
        found.append(
            errors.invalid(
                "status.availableReplicas", counts["available_replicas"], GREATER_THAN_READY
            )
        )
    found.extend(
        collision_count_errors(
            status.collision_count, old.status.collision_count if old.status else None
        )
    )
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {StatefulSet: validate_stateful_set}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {StatefulSet: validate_stateful_set_update}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    StatefulSet: validate_stateful_set_status_update
}
WARNINGS: Final[dict[type[Any], KindWarnings]] = {StatefulSet: template_warnings}
