"""apps/v1 DaemonSet: one pod from a template on every eligible node.

Mirrors ``k8s.io/api/apps/v1/types.go`` (``DaemonSet``, ``DaemonSetSpec``,
``DaemonSetUpdateStrategy``, ``RollingUpdateDaemonSet``, ``DaemonSetStatus``) for what the
DaemonSet controller, ``kubectl get ds``, ``rollout status/history/undo`` and ``describe``
need; everything else stays in the ``extra`` of its level. The template generation that
upstream keeps in the internal ``spec.templateGeneration`` travels in apps/v1 as the
annotation ``deprecated.daemonset.template.generation`` (``apiserver.templategeneration``).

The update strategies::

    RollingUpdate  replace pods node by node: at most maxUnavailable (default 1) nodes
                   without an available pod, or, with maxSurge > 0, a new pod next to the
                   old one on at most maxSurge nodes at a time
    OnDelete       new pods only where old ones were deleted by someone else

Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.apps import WorkloadCondition
from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init

ROLLING_UPDATE: Final = "RollingUpdate"
ON_DELETE: Final = "OnDelete"
UPDATE_STRATEGIES: Final = (ROLLING_UPDATE, ON_DELETE)
"""The strategy types upstream accepts, in the order its validation lists them."""
TEMPLATE_GENERATION_ANNOTATION: Final = "deprecated.daemonset.template.generation"
"""``appsv1.DeprecatedTemplateGeneration``: the internal ``spec.templateGeneration``."""
CONTROLLER_REVISION_HASH_LABEL: Final = "controller-revision-hash"
"""``apps.DefaultDaemonSetUniqueLabelKey``: the revision a pod or revision belongs to."""
POD_TEMPLATE_GENERATION_LABEL: Final = "pod-template-generation"
"""``extensions.DaemonSetTemplateGenerationKey``: the template generation of a pod."""

IntOrString = int | str
"""``intstr.IntOrString``: a count of nodes or a percentage such as ``"10%"``."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RollingUpdateDaemonSet:
    """``spec.updateStrategy.rollingUpdate``: how many nodes may be mid-update at once."""

    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonSetUpdateStrategy:
    """``spec.updateStrategy``: RollingUpdate (default) or OnDelete."""

    type: str | None = None
    rolling_update: RollingUpdateDaemonSet | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonSetSpec:
    """``spec`` of a DaemonSet."""

    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    update_strategy: DaemonSetUpdateStrategy | None = None
    min_ready_seconds: Int32 | None = None
    revision_history_limit: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonSetStatus:
    """``status`` of a DaemonSet, as the controller's ``storeDaemonSetStatus`` writes it.

    The first four counts have no ``omitempty`` upstream (they are always sent, and the
    official Python client requires them); the others are left out when zero.
    """

    current_number_scheduled: Int32 | None = None
    number_misscheduled: Int32 | None = None
    desired_number_scheduled: Int32 | None = None
    number_ready: Int32 | None = None
    observed_generation: int | None = None
    updated_number_scheduled: Int32 | None = None
    number_available: Int32 | None = None
    number_unavailable: Int32 | None = None
    collision_count: Int32 | None = None
    conditions: tuple[WorkloadCondition, ...] | None = None
    extra: JsonDict = extra_field()


EMPTY_STATUS: Final = DaemonSetStatus(
    current_number_scheduled=0, number_misscheduled=0, desired_number_scheduled=0, number_ready=0
)
"""``DaemonSetStatus{}`` as Go's JSON sends it: the four counts without ``omitempty``."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonSet:
    """An apps/v1 DaemonSet."""

    api_version: str | None = "apps/v1"
    kind: str | None = "DaemonSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: DaemonSetSpec | None = None
    status: DaemonSetStatus | None = None
    extra: JsonDict = extra_field()


def template_generation(ds: DaemonSet) -> int | None:
    """``util.GetTemplateGeneration``: the generation annotation, None if absent or unparsable."""
    text = ds.metadata.annotation(TEMPLATE_GENERATION_ANNOTATION)
    if text is None:
        return None
    try:
        return int(text, 10)
    except ValueError:
        return None
