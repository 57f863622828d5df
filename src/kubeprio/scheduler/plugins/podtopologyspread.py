"""PodTopologySpread: spread matching pods across topology domains (upstream ``plugins/podtopologyspread``).

Mirrors ``common.go``, ``filtering.go``, ``scoring.go`` and ``plugin.go`` with the
MinDomains, NodeInclusionPolicy and MatchLabelKeys features on (all GA).

* Constraints come from ``spec.topologySpreadConstraints``; a pod without any gets the
  profile's default constraints (``System`` defaulting: hostname maxSkew 3 and zone
  maxSkew 5, both ScheduleAnyway) -- but only with a selector derived from the Services
  selecting the pod (``service_selectors``) and its controller (a ReplicationController,
  ReplicaSet or StatefulSet, read through ``owner_selector``), so pods with neither get
  none. PreFilter and PreScore each build it once per cycle, as upstream's
  ``buildDefaultConstraints`` does (listers: ``scheduler.spreadlisters``).
* PreFilter (``DoNotSchedule`` constraints) counts, per constraint and topology value,
  the matching pods (same namespace, not terminating) on the nodes that carry every
  constraint's topology key and pass the constraint's node inclusion policies
  (``nodeAffinityPolicy`` Honor by default, ``nodeTaintsPolicy`` Ignore by default).
  It keeps the two smallest domains per constraint ("critical paths"); AddPod/RemovePod
  update both incrementally for preemption.
* Filter: ``matching pods in the node's domain + (1 if the pod matches itself) - global
  minimum > maxSkew`` rejects as Unschedulable; the global minimum is 0 while fewer
  than ``minDomains`` domains exist; a node lacking a topology key is
  UnschedulableAndUnresolvable (``... (missing required label)``).
* PreScore/Score (``ScheduleAnyway`` constraints): a weighted count of matching pods
  per domain (``log(domains + 2)`` per constraint plus ``maxSkew - 1``), rounded;
  NormalizeScore maps fewer matching pods to higher scores.

Determinism: upstream fills the critical paths in Go map order, which is random; here
topology values are visited in sorted order. ``paths[0]`` always holds the minimum, so
only the (upstream-documented) approximate ``paths[1]`` can differ.

PreFilter and PreScore look at every node (through the lister); Filter and Score read
only the NodeInfo they are handed plus the cycle state.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from kubeprio.api import errors, meta, nodeaffinity, selectors, taints
from kubeprio.api.core import Node, Pod, TopologySpreadConstraint
from kubeprio.api.model import INT32_MAX, evolve
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.gomath import go_div, go_round
from kubeprio.scheduler.plugins.helper.validation import PluginArgsError
from kubeprio.scheduler.snapshot import NodeInfo, SharedLister

NAME: Final = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = (
    ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
)
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE: Final = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
NODE_INCLUSION_POLICY_HONOR: Final = "Honor"
NODE_INCLUSION_POLICY_IGNORE: Final = "Ignore"

_NO_LABELS: Final[Mapping[str, str]] = {}
_REJECTED: Final = framework.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
_REJECTED_LABEL: Final = framework.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)

SYSTEM_DEFAULT_CONSTRAINTS: Final = (
    TopologySpreadConstraint(
        topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY, max_skew=3
    ),
    TopologySpreadConstraint(
        topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY, max_skew=5
    ),
)
"""Upstream ``systemDefaultConstraints``."""

OwnerSelectorLookup = Callable[[str, str, str, str], meta.LabelSelector | None]
"""(apiVersion, kind, namespace, name) of a pod's controller -> its ``spec.selector``.

None when the controller is unknown. For a ReplicationController, whose selector is a
plain map, return a selector with only ``match_labels``.
"""

ServiceSelectorsLookup = Callable[[str, Mapping[str, str]], Sequence[Mapping[str, str]]]
"""(namespace, pod labels) -> the selectors of the Services there that select the pod
(upstream ``helper.GetPodServices``; Services without a selector select nothing)."""

_SUPPORTED_OWNERS: Final = {
    ("v1", "ReplicationController"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
}


class DefaultingType(enum.StrEnum):
    """``PodTopologySpreadArgs.defaultingType``."""

    SYSTEM = "System"
    LIST = "List"


@dataclasses.dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """``PodTopologySpreadArgs`` (v1 default: System defaulting)."""

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: DefaultingType = DefaultingType.SYSTEM


@dataclasses.dataclass(frozen=True, slots=True)
class _Constraint:
    """A constraint with its selector parsed (upstream ``topologySpreadConstraint``)."""

    max_skew: int
    topology_key: str
    selector: selectors.Selector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str

    def matches_node_inclusion_policies(
        self, pod: Pod, node: Node, required: nodeaffinity.RequiredNodeAffinity
    ) -> bool:
        """Upstream ``matchNodeInclusionPolicies``."""
        if self.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR and not required.matches(node):
            return False
        if self.node_taints_policy == NODE_INCLUSION_POLICY_HONOR:
            spec = node.spec
            tolerations = pod.spec.tolerations if pod.spec is not None else None
            if (
                taints.find_matching_untolerated_taint(
                    spec.taints if spec is not None else None,
                    tolerations,
                    taints.do_not_schedule_taint,
                )
                is not None
            ):
                return False
        return True


def _merge_label_set(
    match_labels: Mapping[str, str], selector: selectors.Selector
) -> selectors.Selector:
    """Upstream ``mergeLabelSetWithSelector``: a nil selector contributes nothing."""
    merged = selectors.label_selector_from_set(match_labels)
    if isinstance(selector, selectors.LabelSelector):
        return selectors.LabelSelector(merged.requirements + selector.requirements)
    return merged


def filter_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> list[_Constraint]:
    """Upstream ``filterTopologySpreadConstraints``; raises ``SelectorError``."""
    result = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector: selectors.Selector = selectors.label_selector_as_selector(c.label_selector)
        if c.match_label_keys:
            match_labels = {key: pod_labels[key] for key in c.match_label_keys if key in pod_labels}
            if match_labels:
                selector = _merge_label_set(match_labels, selector)
        result.append(
            _Constraint(
                max_skew=c.max_skew or 0,
                topology_key=c.topology_key or "",
                selector=selector,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                node_affinity_policy=c.node_affinity_policy or NODE_INCLUSION_POLICY_HONOR,
                node_taints_policy=c.node_taints_policy or NODE_INCLUSION_POLICY_IGNORE,
            )
        )
    return result


def default_selector(
    pod: Pod,
    owner_selector: OwnerSelectorLookup | None,
    service_selectors: ServiceSelectorsLookup | None = None,
) -> selectors.Selector:
    """Upstream ``helper.DefaultSelector``: the selectors of the Services selecting the pod
    merged into one label set, then its controller's selector -- an RC's map merged into
    that set, a ReplicaSet's or StatefulSet's requirements added to it (an invalid or
    nil owner selector adds nothing)."""
    namespace = pod.metadata.namespace or ""
    label_set: dict[str, str] = {}
    if service_selectors is not None:
        # Every such Service selects the pod, so the maps cannot disagree on a key.
        for service_selector in service_selectors(namespace, pod.metadata.labels or _NO_LABELS):
            label_set.update(service_selector)
    selector = selectors.label_selector_from_set(label_set)
    owner = pod.metadata.controller_ref()
    if owner is None or owner_selector is None:
        return selector
    api_version, kind = owner.api_version or "", owner.kind or ""
    if (api_version, kind) not in _SUPPORTED_OWNERS:
        return selector
    found = owner_selector(api_version, kind, namespace, owner.name or "")
    if found is None:
        return selector
    if kind == "ReplicationController":
        return selectors.label_selector_from_set({**label_set, **(found.match_labels or {})})
    try:
        other = selectors.label_selector_as_selector(found)
    except selectors.SelectorError:
        return selector
    if isinstance(other, selectors.LabelSelector):
        return selectors.LabelSelector(selector.requirements + other.requirements)
    return selector  # a nil selector adds no requirements


def count_pods_match_selector(
    pods: Sequence[framework.PodInfo], selector: selectors.Selector, namespace: str
) -> int:
    """Upstream ``countPodsMatchSelector``: same namespace, not terminating, selected."""
    if isinstance(selector, selectors.Nothing):
        return 0
    count = 0
    for pod_info in pods:
        metadata = pod_info.pod.metadata
        if metadata.deletion_timestamp or (metadata.namespace or "") != namespace:
            continue
        if selector.matches(metadata.labels or _NO_LABELS):
            count += 1
    return count


def _has_all_keys(labels: Mapping[str, str], constraints: Sequence[_Constraint]) -> bool:
    """Upstream ``nodeLabelsMatchSpreadConstraints``."""
    for c in constraints:  # noqa: SIM110 (explicit loop: hot path)
        if c.topology_key not in labels:
            return False
    return True


class _CriticalPaths:
    """The two smallest domains of a constraint (upstream ``criticalPaths``).

    ``values[0]``/``counts[0]`` always hold the minimum; the second entry is only an
    upper bound of the second minimum after incremental updates, as upstream.
    """

    __slots__ = ("counts", "values")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.counts = [INT32_MAX, INT32_MAX]

    def copy(self) -> _CriticalPaths:
        other = _CriticalPaths()
        other.values = list(self.values)
        other.counts = list(self.counts)
        return other

    def update(self, value: str, num: int) -> None:
        """Upstream ``criticalPaths.update``."""
        values, counts = self.values, self.counts
        i = 0 if value == values[0] else 1 if value == values[1] else -1
        if i >= 0:
            counts[i] = num
            if counts[0] > counts[1]:
                values.reverse()
                counts.reverse()
        elif num < counts[0]:
            values[1], counts[1] = values[0], counts[0]
            values[0], counts[0] = value, num
        elif num < counts[1]:
            values[1], counts[1] = value, num


@dataclasses.dataclass(slots=True)
class _PreFilterState:
    """Upstream ``preFilterState`` plus what Filter would recompute per node."""

    constraints: tuple[_Constraint, ...]
    critical_paths: list[_CriticalPaths]
    tp_value_to_match_num: list[dict[str, int]]
    self_match: tuple[int, ...]
    """1 where the incoming pod matches the constraint's selector itself."""
    required: nodeaffinity.RequiredNodeAffinity
    namespace: str

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.constraints,
            [paths.copy() for paths in self.critical_paths],
            [dict(counts) for counts in self.tp_value_to_match_num],
            self.self_match,
            self.required,
            self.namespace,
        )

    def min_match_num(self, i: int) -> int:
        """Upstream ``minMatchNum``: 0 while fewer than ``minDomains`` domains exist."""
        if len(self.tp_value_to_match_num[i]) < self.constraints[i].min_domains:
            return 0
        return self.critical_paths[i].counts[0]


@dataclasses.dataclass(slots=True)
class _PreScoreState:
    """Upstream ``preScoreState``."""

    constraints: tuple[_Constraint, ...]
    ignored_nodes: set[str]
    topology_value_to_pod_counts: list[dict[str, int]]
    topology_normalizing_weight: list[float]
    namespace: str

    def clone(self) -> _PreScoreState:
        return self  # read-only after PreScore


def validate_args(args: PodTopologySpreadArgs) -> None:
    """Upstream ``ValidatePodTopologySpreadArgs``; raises ``PluginArgsError``."""
    found: list[errors.FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(args.default_constraints):
        path = f"defaultConstraints[{i}]"
        if (c.max_skew or 0) <= 0:
            found.append(
                errors.invalid(f"{path}.maxSkew", c.max_skew or 0, "must be greater than zero")
            )
        if not c.topology_key:
            found.append(errors.required(f"{path}.topologyKey", "can not be empty"))
        if c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            found.append(
                errors.not_supported(
                    f"{path}.whenUnsatisfiable",
                    c.when_unsatisfiable or "",
                    (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY),
                )
            )
        pair = (c.topology_key or "", c.when_unsatisfiable or "")
        if pair in seen:
            found.append(errors.duplicate(path, f"{{{pair[0]}, {pair[1]}}}"))
        seen.add(pair)
        if c.label_selector is not None:
            found.append(
                errors.forbidden(
                    f"{path}.labelSelector",
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
    if args.defaulting_type == DefaultingType.SYSTEM and args.default_constraints:
        found.append(
            errors.invalid(
                "defaultConstraints",
                "...",
                'when .defaultingType is "System", .defaultConstraints must be empty',
            )
        )
    if found:
        raise PluginArgsError(errors.aggregate_message(found))


class PodTopologySpread(framework.SignedPodUpdateExtensions):
    """Hard (Filter) and soft (Score) pod topology spread constraints."""

    name: Final = NAME

    def __init__(
        self,
        lister: SharedLister,
        args: PodTopologySpreadArgs | None = None,
        *,
        owner_selector: OwnerSelectorLookup | None = None,
        service_selectors: ServiceSelectorsLookup | None = None,
    ) -> None:
        args = args or PodTopologySpreadArgs()
        validate_args(args)
        self._lister = lister
        self._owner_selector = owner_selector
        self._service_selectors = service_selectors
        self._default_constraints: tuple[TopologySpreadConstraint, ...] = args.default_constraints
        self._system_defaulted = False
        if args.defaulting_type == DefaultingType.SYSTEM:
            self._default_constraints = SYSTEM_DEFAULT_CONSTRAINTS
            self._system_defaulted = True

    # --- constraints -----------------------------------------------------------------

    def _build_default_constraints(self, pod: Pod, action: str) -> list[_Constraint]:
        """Upstream ``buildDefaultConstraints``."""
        constraints = filter_constraints(
            self._default_constraints, pod.metadata.labels or _NO_LABELS, action
        )
        if not constraints:
            return []
        selector = default_selector(pod, self._owner_selector, self._service_selectors)
        if selector.is_empty():
            return []
        return [evolve(c, selector=selector) for c in constraints]

    def _constraints(self, pod: Pod, action: str) -> list[_Constraint]:
        """The pod's own constraints for ``action``, or the defaults if it has none.

        Raises ``SelectorError`` prefixed as upstream's ``getConstraints`` wraps it.
        """
        hardness = "hard" if action == DO_NOT_SCHEDULE else "soft"
        own = pod.spec.topology_spread_constraints if pod.spec is not None else None
        try:
            if own:
                return filter_constraints(own, pod.metadata.labels or _NO_LABELS, action)
            return self._build_default_constraints(pod, action)
        except selectors.SelectorError as exc:
            what = (
                f"obtaining pod's {hardness} topology spread constraints"
                if own
                else f"setting default {hardness} topology spread constraints"
            )
            raise selectors.SelectorError(f"{what}: {exc}") from exc

    # --- filtering -------------------------------------------------------------------

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Count matching pods per domain (upstream ``calPreFilterState``); SKIP without constraints."""
        try:
            constraints = tuple(self._constraints(pod.pod, DO_NOT_SCHEDULE))
        except selectors.SelectorError as exc:
            return None, framework.error(f"get constraints from pod: {exc}")
        if not constraints:
            return None, framework.SKIP
        namespace = pod.pod.metadata.namespace or ""
        required = nodeaffinity.RequiredNodeAffinity.of(pod.pod)
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for node_info in nodes:
            node = node_info.node
            if node is None:
                continue
            labels = node.metadata.labels or _NO_LABELS
            if not _has_all_keys(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.matches_node_inclusion_policies(pod.pod, node, required):
                    continue
                value = labels[c.topology_key]
                found = count_pods_match_selector(node_info.pods, c.selector, namespace)
                counts[i][value] = counts[i].get(value, 0) + found
        paths = []
        for i in range(len(constraints)):
            critical = _CriticalPaths()
            for value in sorted(counts[i]):  # Go map order is random; sorted is stable
                critical.update(value, counts[i][value])
            paths.append(critical)
        pod_labels = pod.pod.metadata.labels or _NO_LABELS
        self_match = tuple(1 if c.selector.matches(pod_labels) else 0 for c in constraints)
        state.write(
            PRE_FILTER_STATE_KEY,
            _PreFilterState(constraints, paths, counts, self_match, required, namespace),
        )
        return None, None

    def update_with_pod(
        self,
        state: framework.CycleState,
        pod: framework.PodInfo,
        updated: framework.PodInfo,
        node_info: NodeInfo,
        delta: int,
    ) -> framework.Status | None:
        """Upstream ``updateWithPod`` (it does not skip terminating pods, unlike counting)."""
        data = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(data, _PreFilterState):
            return framework.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        if node is None or (updated.pod.metadata.namespace or "") != data.namespace:
            return None
        labels = node.metadata.labels or _NO_LABELS
        if not _has_all_keys(labels, data.constraints):
            return None
        pod_labels = updated.pod.metadata.labels or _NO_LABELS
        for i, c in enumerate(data.constraints):
            if not c.selector.matches(pod_labels):
                continue
            if not c.matches_node_inclusion_policies(pod.pod, node, data.required):
                continue
            value = labels[c.topology_key]
            counts = data.tp_value_to_match_num[i]
            counts[value] = counts.get(value, 0) + delta
            data.critical_paths[i].update(value, counts[value])
        return None

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``PodTopologySpread.Filter``."""
        data = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(data, _PreFilterState):
            return framework.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        node_object = node.node
        labels = (node_object.metadata.labels or _NO_LABELS) if node_object else _NO_LABELS
        for i, c in enumerate(data.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return _REJECTED_LABEL
            skew = (
                data.tp_value_to_match_num[i].get(value, 0)
                + data.self_match[i]
                - data.min_match_num(i)
            )
            if skew > c.max_skew:
                return _REJECTED
        return None

    # --- scoring ---------------------------------------------------------------------

    def pre_score(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> framework.Status | None:
        """Upstream ``PodTopologySpread.PreScore``: count matching pods per domain."""
        all_nodes = self._lister.node_infos()
        if not all_nodes:
            return framework.SKIP
        own = pod.pod.spec.topology_spread_constraints if pod.pod.spec is not None else None
        # Only non-system-default constraints need every topology key on a node, so
        # nodes without a zone label still get hostname spreading.
        require_all = bool(own) or not self._system_defaulted
        try:
            constraints = tuple(self._constraints(pod.pod, SCHEDULE_ANYWAY))
        except selectors.SelectorError as exc:
            return framework.error(f"calculating preScoreState: {exc}")
        if not constraints:
            return framework.SKIP
        namespace = pod.pod.metadata.namespace or ""
        ignored: set[str] = set()
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for node_info in nodes:
            labels = _labels(node_info)
            if require_all and not _has_all_keys(labels, constraints):
                ignored.add(node_info.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == LABEL_HOSTNAME:
                    continue  # per-node counts are taken in Score
                counts[i].setdefault(labels.get(c.topology_key, ""), 0)
        weights = []
        for i, c in enumerate(constraints):
            size = len(counts[i])
            if c.topology_key == LABEL_HOSTNAME:
                size = len(nodes) - len(ignored)
            weights.append(math.log(float(size + 2)))
        required = nodeaffinity.RequiredNodeAffinity.of(pod.pod)
        for node_info in all_nodes:
            node = node_info.node
            if node is None:
                continue
            labels = node.metadata.labels or _NO_LABELS
            if require_all and not _has_all_keys(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.matches_node_inclusion_policies(pod.pod, node, required):
                    continue
                value = labels.get(c.topology_key, "")
                if value not in counts[i]:
                    continue  # a domain without candidate nodes (or hostname: in Score)
                counts[i][value] += count_pods_match_selector(node_info.pods, c.selector, namespace)
        state.write(
            PRE_SCORE_STATE_KEY, _PreScoreState(constraints, ignored, counts, weights, namespace)
        )
        return None

    def score(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> tuple[int, framework.Status | None]:
        """Upstream ``PodTopologySpread.Score``: the weighted matching-pod count."""
        data = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            return 0, framework.error(
                f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        if node.name in data.ignored_nodes:
            return 0, None
        labels = _labels(node)
        score = 0.0
        for i, c in enumerate(data.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                count = count_pods_match_selector(node.pods, c.selector, data.namespace)
            else:
                count = data.topology_value_to_pod_counts[i].get(value, 0)
            score += float(count) * data.topology_normalizing_weight[i] + float(c.max_skew - 1)
        return int(go_round(score)), None

    def normalize_score(
        self, state: framework.CycleState, pod: framework.PodInfo, scores: list[framework.NodeScore]
    ) -> framework.Status | None:
        """Upstream ``NormalizeScore``: fewer matching pods, higher score; ignored nodes 0."""
        data = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            return framework.error(
                f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        ignored = data.ignored_nodes
        min_score = 2**63 - 1
        max_score = 0
        for entry in scores:
            if entry.name in ignored:
                continue
            min_score = min(min_score, entry.score)
            max_score = max(max_score, entry.score)
        for i, entry in enumerate(scores):
            if entry.name in ignored:
                value = 0
            elif max_score == 0:
                value = framework.MAX_NODE_SCORE
            else:
                value = go_div(
                    framework.MAX_NODE_SCORE * (max_score + min_score - entry.score), max_score
                )
            scores[i] = framework.NodeScore(entry.name, value)
        return None


def _labels(node_info: NodeInfo) -> Mapping[str, str]:
    node = node_info.node
    return (node.metadata.labels or _NO_LABELS) if node is not None else _NO_LABELS
