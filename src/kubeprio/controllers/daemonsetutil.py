"""Where a DaemonSet's pods belong, and what its pods look like: pure rules.

Mirrors ``pkg/controller/daemon/util/daemonset_util.go`` and the placement functions of
``pkg/controller/daemon/daemon_controller.go``:

* ``add_daemon_tolerations`` (``AddOrUpdateDaemonPodTolerations``): every daemon pod
  tolerates ``node.kubernetes.io/not-ready`` and ``unreachable`` (NoExecute, forever),
  ``disk-pressure``, ``memory-pressure``, ``pid-pressure`` and ``unschedulable``
  (NoSchedule), and with host networking ``network-unavailable`` (NoSchedule); a
  toleration of the same key, operator, value and effect is replaced;
* ``node_should_run`` (``NodeShouldRunDaemonPod`` with ``predicates``): the template's
  ``nodeName`` (if any), ``nodeSelector`` and required node affinity must match the node,
  and its NoSchedule/NoExecute taints must be tolerated (with the tolerations above).
  Returns ``(should_run, should_continue_running)``: a pod already there keeps running on
  a node whose only untolerated taints are NoSchedule;
* ``create_pod_template`` (``CreatePodTemplate``): the template with the tolerations and
  the labels ``pod-template-generation`` and ``controller-revision-hash``;
* ``pin_to_node`` (``ReplaceDaemonSetPodNodeNameNodeAffinity``): required node affinity
  ``matchFields metadata.name In [node]`` replaces the template's required terms, so the
  default scheduler places the pod on its node (and may preempt there);
* ``target_node`` (``GetTargetNodeName``), ``is_pod_updated`` (``IsPodUpdated``),
  ``surge_count``/``unavailable_count`` (rounded up, as ``intstr`` does with ``roundUp``),
  ``creation_order`` (``podByCreationTimestampAndPhase``).

Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from kubeprio.api import taints
from kubeprio.api.core import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    PodTemplateSpec,
    Taint,
    Toleration,
)
from kubeprio.api.daemonset import (
    CONTROLLER_REVISION_HASH_LABEL,
    POD_TEMPLATE_GENERATION_LABEL,
    ROLLING_UPDATE,
    DaemonSet,
    IntOrString,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.nodeaffinity import RequiredNodeAffinity
from kubeprio.clock import parse_rfc3339

OBJECT_NAME_FIELD: Final = "metadata.name"
"""``metav1.ObjectNameField``: the node field a daemon pod's affinity pins."""

_NO_SCHEDULE: Final = taints.TAINT_EFFECT_NO_SCHEDULE
_NO_EXECUTE: Final = taints.TAINT_EFFECT_NO_EXECUTE
DAEMON_TOLERATIONS: Final = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect=_NO_EXECUTE),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect=_NO_EXECUTE),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect=_NO_SCHEDULE),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect=_NO_SCHEDULE),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect=_NO_SCHEDULE),
    Toleration(key=taints.TAINT_NODE_UNSCHEDULABLE, operator="Exists", effect=_NO_SCHEDULE),
)
"""The tolerations every daemon pod gets, in upstream's order."""
HOST_NETWORK_TOLERATION: Final = Toleration(
    key="node.kubernetes.io/network-unavailable", operator="Exists", effect=_NO_SCHEDULE
)
"""Added for pods with ``hostNetwork: true`` (they need no pod network)."""


# --- tolerations and templates ----------------------------------------------------------------


def _same_toleration(a: Toleration, b: Toleration) -> bool:
    """``Toleration.MatchToleration``: key, operator, value and effect equal."""
    return (a.key or "", a.operator or "", a.value or "", a.effect or "") == (
        b.key or "",
        b.operator or "",
        b.value or "",
        b.effect or "",
    )


def add_toleration(tolerations: Sequence[Toleration], toleration: Toleration) -> list[Toleration]:
    """``AddOrUpdateTolerationInPodSpec``: replace a matching toleration, else append."""
    result: list[Toleration] = []
    replaced = False
    for existing in tolerations:
        if _same_toleration(existing, toleration):
            result.append(toleration)
            replaced = True
        else:
            result.append(existing)
    if not replaced:
        result.append(toleration)
    return result


def add_daemon_tolerations(spec: PodSpec) -> PodSpec:
    """``AddOrUpdateDaemonPodTolerations``."""
    tolerations: list[Toleration] = list(spec.tolerations or ())
    for toleration in DAEMON_TOLERATIONS:
        tolerations = add_toleration(tolerations, toleration)
    if spec.host_network:
        tolerations = add_toleration(tolerations, HOST_NETWORK_TOLERATION)
    return evolve(spec, tolerations=tuple(tolerations))


def create_pod_template(
    template: PodTemplateSpec | None, generation: int | None, hash_: str
) -> PodTemplateSpec:
    """``CreatePodTemplate``: daemon tolerations, and the generation and revision labels."""
    template = template or PodTemplateSpec()
    meta = template.metadata or ObjectMeta()
    labels = dict(meta.labels or {})
    if generation is not None:
        labels[POD_TEMPLATE_GENERATION_LABEL] = str(generation)
    if hash_:
        labels[CONTROLLER_REVISION_HASH_LABEL] = hash_
    return evolve(
        template,
        metadata=evolve(meta, labels=labels),
        spec=add_daemon_tolerations(template.spec or PodSpec()),
    )


def pin_to_node(affinity: Affinity | None, node_name: str) -> Affinity:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: required terms become ``metadata.name In
    [node]``; preferred terms, pod affinity and anti-affinity are kept."""
    term = NodeSelectorTerm(
        match_fields=(
            NodeSelectorRequirement(key=OBJECT_NAME_FIELD, operator="In", values=(node_name,)),
        )
    )
    affinity = affinity or Affinity()
    node_affinity = affinity.node_affinity or NodeAffinity()
    required = node_affinity.required_during_scheduling_ignored_during_execution or NodeSelector()
    required = evolve(required, node_selector_terms=(term,))
    node_affinity = evolve(
        node_affinity, required_during_scheduling_ignored_during_execution=required
    )
    return evolve(affinity, node_affinity=node_affinity)


def target_node(pod: Pod) -> str | None:
    """``GetTargetNodeName``: ``spec.nodeName``, else the one node the pod's affinity pins."""
    spec = pod.spec
    if spec is None:
        return None
    if spec.node_name:
        return spec.node_name
    node_affinity = spec.affinity.node_affinity if spec.affinity else None
    required = (
        node_affinity.required_during_scheduling_ignored_during_execution if node_affinity else None
    )
    for term in (required.node_selector_terms if required else None) or ():
        for expression in term.match_fields or ():
            if expression.key == OBJECT_NAME_FIELD and expression.operator == "In":
                values = expression.values or ()
                return values[0] if len(values) == 1 else None
    return None


# --- placement -------------------------------------------------------------------------------


def _untolerated(taint: Taint) -> bool:
    return taint.effect in (_NO_SCHEDULE, _NO_EXECUTE)


def _no_execute(taint: Taint) -> bool:
    return taint.effect == _NO_EXECUTE


class Placement:
    """``NodeShouldRunDaemonPod`` for one DaemonSet: the template's affinity and tolerations
    worked out once, then checked against each node."""

    __slots__ = ("affinity", "node_name", "tolerations")

    def __init__(self, ds: DaemonSet) -> None:
        template = ds.spec.template if ds.spec else None
        spec = add_daemon_tolerations((template.spec if template else None) or PodSpec())
        self.node_name = spec.node_name or ""
        self.tolerations = spec.tolerations or ()
        self.affinity = RequiredNodeAffinity.of(Pod(spec=spec))

    def node_should_run(self, node: Node) -> tuple[bool, bool]:
        """``(should_run, should_continue_running)`` on ``node``."""
        if self.node_name and self.node_name != node.metadata.name:
            return False, False
        if not self.affinity.matches(node):
            return False, False
        node_taints = node.spec.taints if node.spec else None
        blocking = taints.find_matching_untolerated_taint(
            node_taints, self.tolerations, _untolerated
        )
        if blocking is None:
            return True, True
        evicting = taints.find_matching_untolerated_taint(
            node_taints, self.tolerations, _no_execute
        )
        return False, evicting is None


def node_should_run(node: Node, ds: DaemonSet) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod`` for one node (``Placement`` to check many)."""
    return Placement(ds).node_should_run(node)


# --- revisions and counts ----------------------------------------------------------------------


def is_pod_updated(pod: Pod, hash_: str, generation: int | None) -> bool:
    """``IsPodUpdated``: the pod carries the current revision hash or template generation."""
    labels = pod.metadata.labels or {}
    generation_matches = generation is not None and labels.get(
        POD_TEMPLATE_GENERATION_LABEL
    ) == str(generation)
    hash_matches = bool(hash_) and labels.get(CONTROLLER_REVISION_HASH_LABEL) == hash_
    return hash_matches or generation_matches


class BadIntOrPercentError(ValueError):
    """A ``maxSurge``/``maxUnavailable`` string that is not a percentage."""


def scaled_value(value: IntOrString, total: int) -> int:
    """``GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise BadIntOrPercentError(
            "invalid value for IntOrString: invalid type: string is not a percentage"
        )
    try:
        percent = int(value[:-1], 10)
    except ValueError:
        raise BadIntOrPercentError(f'invalid value "{value}"') from None
    return math.ceil(percent * total / 100)


def _rolling(ds: DaemonSet) -> tuple[IntOrString | None, IntOrString | None] | None:
    strategy = ds.spec.update_strategy if ds.spec else None
    if strategy is None or strategy.type != ROLLING_UPDATE or strategy.rolling_update is None:
        return None
    rolling = strategy.rolling_update
    return rolling.max_surge, rolling.max_unavailable


def surge_count(ds: DaemonSet, number_to_schedule: int) -> int:
    """``SurgeCount``: 0 unless RollingUpdate with a ``maxSurge``."""
    rolling = _rolling(ds)
    if rolling is None or rolling[0] is None:
        return 0
    return scaled_value(rolling[0], number_to_schedule)


def unavailable_count(ds: DaemonSet, number_to_schedule: int) -> int:
    """``UnavailableCount``: 0 unless RollingUpdate (an unset bound is the zero value)."""
    rolling = _rolling(ds)
    if rolling is None:
        return 0
    return scaled_value(0 if rolling[1] is None else rolling[1], number_to_schedule)


def allows_surge(ds: DaemonSet) -> bool:
    """``AllowsSurge``: more than one pod per node is allowed during an update."""
    try:
        return surge_count(ds, 1) > 0
    except BadIntOrPercentError:
        return False


def creation_order(pod: Pod) -> tuple[bool, float, str]:
    """``podByCreationTimestampAndPhase``: scheduled first, then oldest, then by name."""
    stamp = pod.metadata.creation_timestamp
    return (
        not (pod.spec and pod.spec.node_name),
        parse_rfc3339(stamp) if stamp else 0.0,
        pod.metadata.name or "",
    )
