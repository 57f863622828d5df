"""RuntimeClass validation (node.k8s.io/v1).

Mirrors v1.32's ``pkg/apis/node/validation/validation.go``:

* ``ValidateRuntimeClass`` (create, and again on every update): ``handler`` is a DNS-1123
  label (``NameIsDNSLabel``, so an empty handler fails the label pattern);
  ``overhead.podFixed`` is checked as a container's ``limits``
  (``ValidateContainerResourceRequirements``), so its errors read
  ``overhead.limits[cpu]``; ``scheduling.nodeSelector`` as labels and
  ``scheduling.tolerations`` as a pod's, each (key, operator, value, effect) once.
* ``ValidateRuntimeClassUpdate``: ``handler`` is immutable.

Two v1.32 quirks kept on purpose: ``validateTolerations`` hands ``ValidateTolerations``
the path ``scheduling.tolerations.tolerations`` (later releases fixed the doubled
segment), while its own duplicate check reports ``scheduling.tolerations[i]``; and the
duplicate's bad value prints as Go's ``%#v`` of the internal ``core.Toleration`` (a set
``tolerationSeconds`` is a pointer there, printed by address upstream: kubeprio prints
``(*int64)(nil)`` or the number). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.core import Toleration
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gotext import go_quote
from kubeprio.api.runtimeclass import Overhead, RuntimeClass, Scheduling
from kubeprio.api.validation.affinity import validate_tolerations
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    index,
    name_is_dns_label,
    validate_immutable,
    validate_labels,
)
from kubeprio.api.validation.resources import validate_resource_requirements


def toleration_value(toleration: Toleration) -> GoValue:
    """A toleration as ``%#v`` prints the internal ``core.Toleration``."""
    seconds = toleration.toleration_seconds
    shown_seconds = "(*int64)(nil)" if seconds is None else str(seconds)
    return GoValue(
        f"core.Toleration{{Key:{go_quote(toleration.key or '')}, "
        f"Operator:{go_quote(toleration.operator or '')}, "
        f"Value:{go_quote(toleration.value or '')}, "
        f"Effect:{go_quote(toleration.effect or '')}, "
        f"TolerationSeconds:{shown_seconds}}}"
    )


def validate_overhead(overhead: Overhead, path: str) -> list[FieldError]:
    """``validateOverhead``: ``podFixed`` checked as a container's limits."""
    return validate_resource_requirements(overhead.pod_fixed, None, path)


def validate_scheduling_tolerations(
    tolerations: tuple[Toleration, ...] | None, path: str
) -> list[FieldError]:
    """``validateTolerations``: each toleration as a pod's, then each list key once."""
    found = validate_tolerations(tolerations, child(path, "tolerations"))
    seen: set[tuple[str, str, str, str]] = set()
    for position, toleration in enumerate(tolerations or ()):
        list_key = (
            toleration.key or "",
            toleration.operator or "",
            toleration.value or "",
            toleration.effect or "",
        )
        if list_key in seen:
            found.append(errors.duplicate(index(path, position), toleration_value(toleration)))
        else:
            seen.add(list_key)
    return found


def validate_scheduling(scheduling: Scheduling, path: str) -> list[FieldError]:
    """``validateScheduling``: the node selector's labels, then the tolerations."""
    found: list[FieldError] = []
    if scheduling.node_selector is not None:
        found.extend(validate_labels(scheduling.node_selector, child(path, "nodeSelector")))
    found.extend(
        validate_scheduling_tolerations(scheduling.tolerations, child(path, "tolerations"))
    )
    return found


def validate_runtime_class(runtime_class: RuntimeClass) -> list[FieldError]:
    """``ValidateRuntimeClass`` beyond metadata."""
    handler = runtime_class.handler or ""
    found = [errors.invalid("handler", handler, message) for message in name_is_dns_label(handler)]
    if runtime_class.overhead is not None:
        found.extend(validate_overhead(runtime_class.overhead, "overhead"))
    if runtime_class.scheduling is not None:
        found.extend(validate_scheduling(runtime_class.scheduling, "scheduling"))
    return found


def validate_runtime_class_update(new: RuntimeClass, old: RuntimeClass) -> list[FieldError]:
    """The strategy's ``ValidateUpdate``: the create rules, then ``handler`` immutable."""
    found = validate_runtime_class(new)
    found.extend(validate_immutable(new.handler or "", old.handler or "", "handler"))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {RuntimeClass: validate_runtime_class}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {RuntimeClass: validate_runtime_class_update}
