"""The ``RuntimeClass`` admission plugin: a new pod takes its RuntimeClass's overhead and
scheduling constraints.

Mirrors v1.32's ``plugin/pkg/admission/runtimeclass/admission.go`` (on by default; pod
CREATE only, never a subresource):

* **both phases** look the pod's ``spec.runtimeClassName`` up; a class that does not
  exist refuses the pod (403 ``pod rejected: RuntimeClass "x" not found``). A pod that
  names no class has none.
* **mutating** (``setOverhead``): a class with ``overhead`` sets ``spec.overhead`` to its
  ``podFixed``; a pod that already carries a different overhead is refused (``pod
  rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead``).
  ``setScheduling``: the class's ``scheduling.nodeSelector`` is merged into the pod's
  (the same key with another value refuses the pod: ``conflict:
  runtimeClass.scheduling.nodeSelector[k] = v; pod.spec.nodeSelector[k] = w``) and its
  tolerations merged with the pod's (``tolerations.MergeTolerations``: a toleration
  another one covers is dropped, equal ones kept once, the pod's first).
* **validating** (``validateOverhead``): the pod's overhead must equal its class's
  ``podFixed`` (same text as above); a pod whose class has no overhead, or that has no
  class, must have none (``pod rejected: Pod Overhead set without corresponding
  RuntimeClass defined Overhead``).

Overheads compare as ``apiequality.Semantic.DeepEqual`` does: quantities by value, an
empty list equal to none. Upstream walks the class's selector in Go's random map order,
so of several conflicting keys any may be named; kubeprio names the first by key.

The overhead it sets is what NodeResourcesFit, preemption and ResourceQuota add to the
containers' requests (``api.resources``, ``api.quota``); LimitRanger, earlier in the
chain, never sees it. Driven by ``admission.chain``; reads RuntimeClasses through the
listers only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.admission.priority import request_name
from kubeprio.api import errors
from kubeprio.api.core import Pod, PodSpec, ResourceList, Toleration
from kubeprio.api.model import evolve
from kubeprio.api.runtimeclass import RuntimeClass

PLUGIN_NAME: Final = "RuntimeClass"

OVERHEAD_MISMATCH: Final = (
    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
)
OVERHEAD_WITHOUT_CLASS: Final = (
    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
)


def same_overhead(first: ResourceList | None, second: ResourceList | None) -> bool:
    """``Semantic.DeepEqual`` of two resource lists: values compared, empty equals nil."""
    return dict(first or {}) == dict(second or {})


def _same_toleration(first: Toleration, second: Toleration) -> bool:
    return (
        (first.key or "") == (second.key or "")
        and (first.operator or "") == (second.operator or "")
        and (first.value or "") == (second.value or "")
        and (first.effect or "") == (second.effect or "")
        and first.toleration_seconds == second.toleration_seconds
    )


def tolerates_superset(wider: Toleration, narrower: Toleration) -> bool:
    """``isSuperset``: whether ``wider`` tolerates every taint ``narrower`` does."""
    if _same_toleration(wider, narrower):
        return True
    wider_key, wider_operator = wider.key or "", wider.operator or ""
    # An empty key with Exists matches every key (and value).
    if (narrower.key or "") != wider_key and (wider_key or wider_operator != "Exists"):
        return False
    # An empty effect matches every effect.
    if (narrower.effect or "") != (wider.effect or "") and wider.effect:
        return False
    if wider.effect == "NoExecute" and wider.toleration_seconds is not None:
        seconds = narrower.toleration_seconds
        if seconds is None or seconds > wider.toleration_seconds:
            return False
    if wider_operator in ("Equal", ""):
        return narrower.operator == "Equal" and (narrower.value or "") == (wider.value or "")
    return wider_operator == "Exists"


def merge_tolerations(
    first: Sequence[Toleration], second: Sequence[Toleration]
) -> tuple[Toleration, ...] | None:
    """``tolerations.MergeTolerations``: ``first`` then ``second``, leaving out each
    toleration that one already kept, or a different later one, covers; None when empty."""
    everything = (*first, *second)
    merged: list[Toleration] = []
    for position, toleration in enumerate(everything):
        if any(tolerates_superset(kept, toleration) for kept in merged):
            continue
        if any(
            not _same_toleration(toleration, later) and tolerates_superset(later, toleration)
            for later in everything[position + 1 :]
        ):
            continue
        merged.append(toleration)
    return tuple(merged) or None


def merge_node_selector(
    pod_selector: Mapping[str, str] | None,
    class_selector: Mapping[str, str] | None,
    pod_name: str,
) -> Mapping[str, str] | None:
    """``setScheduling``'s selector part: the class's labels added to the pod's; 403 on a
    key the pod sets to another value."""
    if pod_selector is None:
        return class_selector
    merged = dict(pod_selector)
    for key in sorted(class_selector or {}):
        class_value = (class_selector or {})[key]
        pod_value = merged.get(key)
        if pod_value is not None and pod_value != class_value:
            raise errors.forbidden_error(
                "pods",
                "",
                pod_name,
                f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {class_value}; "
                f"pod.spec.nodeSelector[{key}] = {pod_value}",
            )
        merged[key] = class_value
    return merged


class RuntimeClassPlugin:
    """Upstream ``RuntimeClass``: mutating and validating, pods on create only."""

    admits_kinds = validates_kinds = (Pod,)
    ignores_subresources = True  # _pod_and_class

    name = PLUGIN_NAME

    def __init__(self, listers: Listers) -> None:
        self._classes = listers.runtime_classes

    def _pod_and_class(self, request: AdmissionRequest) -> tuple[Pod, RuntimeClass | None] | None:
        """``shouldIgnore`` then ``prepareObjects``: None for a request the plugin skips."""
        pod = request.obj
        if request.operation != Operation.CREATE or request.subresource or not isinstance(pod, Pod):
            return None
        class_name = pod.spec.runtime_class_name if pod.spec else None
        if class_name is None:
            return pod, None
        runtime_class = self._classes.get(class_name)
        if runtime_class is None:
            raise errors.forbidden_error(
                "pods",
                "",
                request_name(request),
                f'pod rejected: RuntimeClass "{class_name}" not found',
            )
        return pod, runtime_class

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        """Set the pod's overhead and merge the class's node selector and tolerations."""
        found = self._pod_and_class(request)
        if found is None:
            return request.obj
        pod, runtime_class = found
        if runtime_class is None:
            return pod
        spec = pod.spec or PodSpec()
        new_spec = spec
        if runtime_class.overhead is not None:
            pod_fixed = runtime_class.overhead.pod_fixed
            if spec.overhead is not None and not same_overhead(pod_fixed, spec.overhead):
                raise errors.forbidden_error("pods", "", request_name(request), OVERHEAD_MISMATCH)
            new_spec = evolve(new_spec, overhead=pod_fixed)
        scheduling = runtime_class.scheduling
        if scheduling is not None:
            new_spec = evolve(
                new_spec,
                node_selector=merge_node_selector(
                    spec.node_selector, scheduling.node_selector, request_name(request)
                ),
                tolerations=merge_tolerations(spec.tolerations or (), scheduling.tolerations or ()),
            )
        return pod if new_spec == spec else evolve(pod, spec=new_spec)

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Refuse a pod whose overhead is not its class's."""
        found = self._pod_and_class(request)
        if found is None:
            return
        pod, runtime_class = found
        overhead = pod.spec.overhead if pod.spec else None
        if runtime_class is not None and runtime_class.overhead is not None:
            if not same_overhead(runtime_class.overhead.pod_fixed, overhead):
                raise errors.forbidden_error("pods", "", request_name(request), OVERHEAD_MISMATCH)
        elif overhead is not None:
            raise errors.forbidden_error("pods", "", request_name(request), OVERHEAD_WITHOUT_CLASS)
