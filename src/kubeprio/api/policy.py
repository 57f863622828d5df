"""policy/v1 PodDisruptionBudget and Eviction.

Mirrors ``k8s.io/api/policy/v1/types.go``. The scheduler reads only a PDB's status
(``disruptionsAllowed``, ``disruptedPods``) and selector; the disruption controller
computes the status from ``minAvailable``/``maxUnavailable``. Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubeprio.api.meta import Condition, DeleteOptions, LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init

IntOrString = int | str
"""``intstr.IntOrString``: an absolute number or a percentage such as ``"50%"``."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodDisruptionBudgetSpec:
    """Desired availability: ``min_available`` or ``max_unavailable`` of selected pods."""

    min_available: IntOrString | None = None
    selector: LabelSelector | None = None
    max_unavailable: IntOrString | None = None
    unhealthy_pod_eviction_policy: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodDisruptionBudgetStatus:
    """What the disruption controller observed and how many disruptions it allows."""

    observed_generation: int | None = None
    disrupted_pods: Mapping[str, str] | None = None
    disruptions_allowed: Int32 | None = None
    current_healthy: Int32 | None = None
    desired_healthy: Int32 | None = None
    expected_pods: Int32 | None = None
    conditions: tuple[Condition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget."""

    api_version: str | None = "policy/v1"
    kind: str | None = "PodDisruptionBudget"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodDisruptionBudgetSpec | None = None
    status: PodDisruptionBudgetStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Eviction:
    """A policy/v1 Eviction: a request to delete a pod that honours its PDBs."""

    api_version: str | None = "policy/v1"
    kind: str | None = "Eviction"
    metadata: ObjectMeta = ObjectMeta()
    delete_options: DeleteOptions | None = None
    extra: JsonDict = extra_field()
