"""Defaulting: the values the API server fills in before admission, per kind.

Mirrors upstream ``pkg/apis/*/v1/defaults.go`` for the fields kubeprio models (for
example a pod's ``schedulerName`` and ``terminationGracePeriodSeconds``, a
PriorityClass's ``preemptionPolicy``). ``default_object`` dispatches on the model
class; kinds without rules come back unchanged. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from kubeprio.api.core import (
    DEFAULT_SCHEDULER_NAME,
    DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
    PREEMPT_LOWER_PRIORITY,
    Pod,
    PodSpec,
)
from kubeprio.api.scheduling import PriorityClass


def default_pod_spec(spec: PodSpec) -> PodSpec:
    """``SetDefaults_PodSpec`` for the modelled fields."""
    changes: dict[str, Any] = {}
    if spec.scheduler_name is None:
        changes["scheduler_name"] = DEFAULT_SCHEDULER_NAME
    if spec.termination_grace_period_seconds is None:
        changes["termination_grace_period_seconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if spec.restart_policy is None:
        changes["restart_policy"] = "Always"
    return dataclasses.replace(spec, **changes) if changes else spec


def default_pod(pod: Pod) -> Pod:
    """``SetDefaults_Pod`` + ``SetDefaults_PodSpec``."""
    spec = default_pod_spec(pod.spec or PodSpec())
    return pod if spec is pod.spec else dataclasses.replace(pod, spec=spec)


def default_priority_class(pc: PriorityClass) -> PriorityClass:
    """``SetDefaults_PriorityClass``: preemptionPolicy defaults to PreemptLowerPriority.

    An absent ``value`` becomes 0: upstream's field is a plain ``int32`` without
    ``omitempty`` (``+optional``), so a class created without a value has value 0 and
    is always served with one.
    """
    changes: dict[str, Any] = {}
    if pc.preemption_policy is None:
        changes["preemption_policy"] = PREEMPT_LOWER_PRIORITY
    if pc.value is None:
        changes["value"] = 0
    return dataclasses.replace(pc, **changes) if changes else pc


_DEFAULTERS: Final[dict[type[Any], Callable[[Any], Any]]] = {
    Pod: default_pod,
    PriorityClass: default_priority_class,
}


def default_object(obj: object) -> object:
    """Apply the defaults of ``obj``'s kind."""
    defaulter = _DEFAULTERS.get(type(obj))
    return obj if defaulter is None else defaulter(obj)
