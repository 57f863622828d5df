"""PriorityClass validation (scheduling.k8s.io/v1).

Mirrors ``ValidatePriorityClass`` and ``ValidatePriorityClassUpdate`` of upstream
``pkg/apis/scheduling/validation/validation.go``, with ``IsKnownSystemPriorityClass``
(``pkg/apis/scheduling/v1/helpers.go``) and ``ValidatePreemptionPolicy``
(``pkg/apis/core/validation/validation.go``):

* a name starting with ``system-`` must be one of the two built-in classes, equal in
  name, value and globalDefault (description and labels are not compared);
* any other class may have a value of at most 1e9; there is no lower bound beyond
  int32 (the decoder enforces that range);
* ``preemptionPolicy``, when set, is ``PreemptLowerPriority`` or ``Never``;
* on update, ``value`` and ``preemptionPolicy`` are immutable; description,
  globalDefault, labels and annotations may change. The range and ``system-`` rules
  run on create only, as upstream.

The single-globalDefault rule is not validation: the Priority admission plugin
enforces it (``admission.priority``). Metadata rules come from ``validation.meta``.
Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER
from kubeprio.api.errors import FieldError
from kubeprio.api.scheduling import (
    HIGHEST_USER_DEFINABLE_PRIORITY,
    SYSTEM_PRIORITY_CLASS_PREFIX,
    SYSTEM_PRIORITY_CLASSES,
    PriorityClass,
)

PREEMPTION_POLICIES: Final = (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER)
"""The legal ``preemptionPolicy`` values, in upstream's order (used in messages)."""


def _value(pc: PriorityClass) -> int:
    # Upstream's ``value`` is a plain int32 without omitempty: an absent value is 0.
    return pc.value if pc.value is not None else 0


def known_system_priority_class_error(name: str, value: int, global_default: bool) -> str | None:
    """``IsKnownSystemPriorityClass``: why (name, value, globalDefault) is not a system class.

    Returns None when it equals one of the built-in classes.
    """
    for spc in SYSTEM_PRIORITY_CLASSES:
        if spc.metadata.name != name:
            continue
        if spc.value != value:
            return f"value of {name} PriorityClass must be {spc.value}"
        if bool(spc.global_default) != global_default:
            return f"globalDefault of {name} PriorityClass must be {str(bool(spc.global_default)).lower()}"
        return None
    return f"{name} is not a known system priority class"


def validate_preemption_policy(policy: str, field: str) -> list[FieldError]:
    """``ValidatePreemptionPolicy``: Required when empty, NotSupported when unknown."""
    if policy in PREEMPTION_POLICIES:
        return []
    if policy == "":
        return [errors.required(field)]
    return [errors.not_supported(field, policy, PREEMPTION_POLICIES)]


def validate_priority_class(pc: PriorityClass) -> list[FieldError]:
    """``ValidatePriorityClass`` beyond object metadata (which ``validation`` checks)."""
    found: list[FieldError] = []
    name = pc.metadata.name or ""
    value = _value(pc)
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        reason = known_system_priority_class_error(name, value, bool(pc.global_default))
        if reason is not None:
            found.append(
                errors.forbidden(
                    "metadata.name",
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are "
                    f"reserved for system use only. error: {reason}",
                )
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        found.append(
            errors.forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    if pc.preemption_policy is not None:
        found.extend(validate_preemption_policy(pc.preemption_policy, "preemptionPolicy"))
    return found


def validate_priority_class_update(new: PriorityClass, old: PriorityClass) -> list[FieldError]:
    """``ValidatePriorityClassUpdate``: value and preemptionPolicy are immutable."""
    found: list[FieldError] = []
    if _value(new) != _value(old):
        found.append(errors.forbidden("value", "may not be changed in an update."))
    if new.preemption_policy != old.preemption_policy:
        found.append(
            errors.invalid(
                "preemptionPolicy",
                new.preemption_policy if new.preemption_policy is not None else None,
                "field is immutable",
            )
        )
    return found
