"""Validation of core/v1 ReplicationControllers.

Mirrors ``pkg/apis/core/validation/validation.go`` (v1.32): ``ValidateReplicationControllerSpec``
(``minReadySeconds`` and ``replicas`` non-negative, ``ValidateNonEmptySelector``: a
selector with no labels is *Required*, ``ValidatePodTemplateSpecForRC``: a template is
required, its labels must carry every selector label, its pod spec is checked as any
template's, ``restartPolicy`` must be ``Always`` and ``activeDeadlineSeconds`` is
forbidden "in ReplicationController"), ``ValidateReplicationControllerUpdate`` (the same
spec rules: unlike apps/v1, the selector may change) and
``ValidateReplicationControllerStatus`` (counts non-negative, none above ``replicas``,
``availableReplicas`` not above ``readyReplicas``).

The selector map's keys and values are not checked as labels: upstream does not either.
Metadata is checked by the caller. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.errors import FieldError
from kubeprio.api.replicationcontroller import ReplicationController, ReplicationControllerSpec
from kubeprio.api.validation.apps import (
    REPLICA_COUNTS,
    SELECTOR_MISMATCH,
    status_counts,
    template_labels_value,
    template_warnings,
)
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    KindWarnings,
    child,
    validate_nonnegative,
)
from kubeprio.api.validation.podspec import validate_pod_template_spec


def validate_template_for_rc(
    template: PodTemplateSpec | None, selector: Mapping[str, str], path: str
) -> list[FieldError]:
    """``ValidatePodTemplateSpecForRC``."""
    if template is None:
        return [errors.required(path, "")]
    found: list[FieldError] = []
    labels = (template.metadata.labels if template.metadata else None) or {}
    if selector and any(labels.get(key) != value for key, value in selector.items()):
        found.append(
            errors.invalid(
                child(path, "metadata.labels"), template_labels_value(template), SELECTOR_MISMATCH
            )
        )
    found.extend(validate_pod_template_spec(template, path))
    spec = template.spec
    restart = (spec.restart_policy if spec else None) or ""
    if restart != "Always":
        found.append(errors.not_supported(child(path, "spec.restartPolicy"), restart, ("Always",)))
    if spec is not None and spec.active_deadline_seconds is not None:
        found.append(
            errors.forbidden(
                child(path, "spec.activeDeadlineSeconds"),
                "activeDeadlineSeconds in ReplicationController is not Supported",
            )
        )
    return found


def validate_replication_controller_spec(
    spec: ReplicationControllerSpec, path: str
) -> list[FieldError]:
    """``ValidateReplicationControllerSpec``."""
    found = validate_nonnegative(spec.min_ready_seconds or 0, child(path, "minReadySeconds"))
    selector = spec.selector or {}
    if not selector:
        found.append(errors.required(child(path, "selector"), ""))
    found.extend(validate_nonnegative(spec.replicas or 0, child(path, "replicas")))
    found.extend(validate_template_for_rc(spec.template, selector, child(path, "template")))
    return found


def validate_replication_controller(rc: ReplicationController) -> list[FieldError]:
    """``ValidateReplicationController`` (and, the rules being the same, its update)."""
    return validate_replication_controller_spec(rc.spec or ReplicationControllerSpec(), "spec")


def validate_replication_controller_status_update(
    new: ReplicationController, old: ReplicationController
) -> list[FieldError]:
    """``ValidateReplicationControllerStatusUpdate``."""
    if new.status is None:
        return []
    return status_counts(new.status, REPLICA_COUNTS, "status")


CREATE: Final[dict[type[Any], KindValidator]] = {
    ReplicationController: validate_replication_controller,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    ReplicationController: lambda new, _old: validate_replication_controller(new),
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    ReplicationController: validate_replication_controller_status_update,
}
WARNINGS: Final[dict[type[Any], KindWarnings]] = {
    ReplicationController: template_warnings,
}
