"""The ``Priority`` admission plugin: resolve a pod's priority from its PriorityClass.

Mirrors upstream ``plugin/pkg/admission/priority/admission.go`` (``Admit``,
``admitPod``, ``Validate``, ``validatePriorityClass``, ``getDefaultPriorityClass``):

* **mutating, pods, CREATE** — resolve ``(priorityClassName, priority,
  preemptionPolicy)``: a named class must exist (403 ``no PriorityClass with name <c>
  was found``); with no name the global default applies (the lowest-valued one if
  several are marked) and the pod's class name is rewritten to it; with no default the
  name stays empty, priority 0, policy ``PreemptLowerPriority``. A client may send
  ``spec.priority``/``spec.preemptionPolicy`` only if they equal the computed values
  (403 otherwise), so admitting an admitted pod changes nothing (idempotence).
* **mutating, pods, UPDATE** — back-fill only: keep the old priority and policy when
  the new object omits them (pod validation makes them immutable anyway).
* **validating, PriorityClasses, CREATE/UPDATE** — at most one ``globalDefault``:
  creating a second default, or marking a different class default, is 403.

Subresource requests are ignored; DELETE is a no-op. The plugin reads PriorityClasses
only through ``Listers`` and never writes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.api import errors
from kubeprio.api.core import PREEMPT_LOWER_PRIORITY, Pod, PodSpec
from kubeprio.api.model import evolve
from kubeprio.api.scheduling import DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, PriorityClass

PLUGIN_NAME: Final = "Priority"


@dataclasses.dataclass(frozen=True, slots=True)
class Resolution:
    """What admission computes for a pod: class name (may be empty), priority, policy."""

    class_name: str
    priority: int
    preemption_policy: str | None


def default_priority_class(listers: Listers) -> PriorityClass | None:
    """The global default class; the lowest value wins if several are marked.

    Upstream ``getDefaultPriorityClass``: several defaults can exist after a race;
    ties on value go to the first in list order (sorted by name here).
    """
    chosen: PriorityClass | None = None
    for pc in listers.priority_classes.list():
        if pc.global_default and (chosen is None or (pc.value or 0) < (chosen.value or 0)):
            chosen = pc
    return chosen


def default_resolution(listers: Listers) -> Resolution:
    """Upstream ``getDefaultPriority``: the global default, or (``""``, 0, PreemptLowerPriority)."""
    pc = default_priority_class(listers)
    if pc is None:
        return Resolution("", DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, PREEMPT_LOWER_PRIORITY)
    return Resolution(pc.metadata.name or "", pc.value or 0, pc.preemption_policy)


def resolve(listers: Listers, class_name: str) -> Resolution | None:
    """Resolve ``class_name`` (empty: the global default); None if the class does not exist."""
    if not class_name:
        return default_resolution(listers)
    pc = listers.priority_classes.get(class_name)
    if pc is None:
        return None
    return Resolution(class_name, pc.value or 0, pc.preemption_policy)


def request_name(request: AdmissionRequest) -> str:
    """The name admission errors mention (upstream ``extractResourceName``)."""
    if request.name:
        return request.name
    metadata = getattr(request.obj, "metadata", None)
    if metadata is not None:
        return metadata.name or metadata.generate_name or "Unknown"
    return "Unknown"


def admit_pod_spec(spec: PodSpec, listers: Listers, *, pod_name: str) -> PodSpec:
    """Resolve a new pod's spec as ``admitPod`` does on CREATE; raise 403 on a conflict."""
    given_class = spec.priority_class_name or ""
    resolution = resolve(listers, given_class)
    if resolution is None:
        raise errors.forbidden_error(
            "pods", "", pod_name, f"no PriorityClass with name {given_class} was found"
        )
    if spec.priority is not None and spec.priority != resolution.priority:
        raise errors.forbidden_error(
            "pods",
            "",
            pod_name,
            f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
            f"priority admission controller computed {resolution.priority} from the given "
            "PriorityClass name",
        )
    policy = spec.preemption_policy
    if resolution.preemption_policy is not None:
        if policy is not None and policy != resolution.preemption_policy:
            raise errors.forbidden_error(
                "pods",
                "",
                pod_name,
                f"the string value of PreemptionPolicy ({policy}) must not be provided in pod "
                f"spec; priority admission controller computed {resolution.preemption_policy} "
                "from the given PriorityClass name",
            )
        policy = resolution.preemption_policy
    # Upstream assigns the (possibly empty) resolved name; keep None when it was absent
    # and stays empty so an unchanged pod stays equal to itself.
    class_name = resolution.class_name or spec.priority_class_name
    if (
        spec.priority_class_name == class_name
        and spec.priority == resolution.priority
        and spec.preemption_policy == policy
    ):
        return spec
    return evolve(
        spec,
        priority_class_name=class_name,
        priority=resolution.priority,
        preemption_policy=policy,
    )


def backfill_pod_spec(new: PodSpec, old: PodSpec) -> PodSpec:
    """``admitPod`` on UPDATE: keep the old priority and policy if the update omits them."""
    changes: dict[str, Any] = {}
    if new.priority is None and old.priority is not None:
        changes["priority"] = old.priority
    if new.preemption_policy is None and old.preemption_policy is not None:
        changes["preemption_policy"] = old.preemption_policy
    return evolve(new, **changes) if changes else new


class PriorityPlugin:
    """Upstream's ``Priority`` plugin: mutating for pods, validating for PriorityClasses."""

    admits_kinds = (Pod,)
    validates_kinds = (PriorityClass,)
    ignores_subresources = True

    def __init__(self, listers: Listers) -> None:
        self._listers = listers

    @property
    def name(self) -> str:
        """``Priority``."""
        return PLUGIN_NAME

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        """Resolve pod priorities on create; back-fill them on update."""
        obj = request.obj
        if request.subresource or not isinstance(obj, Pod):
            return obj
        spec = obj.spec or PodSpec()
        if request.operation is Operation.CREATE:
            new_spec = admit_pod_spec(spec, self._listers, pod_name=request_name(request))
        elif request.operation is Operation.UPDATE and isinstance(request.old_obj, Pod):
            new_spec = backfill_pod_spec(spec, request.old_obj.spec or PodSpec())
        else:
            return obj
        return obj if new_spec is obj.spec else evolve(obj, spec=new_spec)

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Refuse a second ``globalDefault`` PriorityClass."""
        obj = request.obj
        if request.subresource or not isinstance(obj, PriorityClass) or not obj.global_default:
            return
        if request.operation not in (Operation.CREATE, Operation.UPDATE):
            return
        existing = default_priority_class(self._listers)
        if existing is None:
            return
        existing_name = existing.metadata.name or ""
        if request.operation is Operation.CREATE or existing_name != (obj.metadata.name or ""):
            raise errors.forbidden_error(
                request.resource.plural,
                request.resource.group,
                request_name(request),
                f"PriorityClass {existing_name} is already marked as default. "
                "Only one default can exist",
            )
