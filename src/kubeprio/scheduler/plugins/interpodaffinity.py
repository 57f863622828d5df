"""InterPodAffinity: required and preferred pod (anti-)affinity (upstream ``plugins/interpodaffinity``).

Mirrors ``filtering.go``, ``scoring.go`` and ``plugin.go``.

* PreFilter counts, per topology pair (label key, value):
  - existing pods whose *required anti-affinity* terms select the incoming pod
    (only nodes hosting such pods are visited);
  - existing pods that match *all* of the incoming pod's required affinity terms;
  - existing pods matching each of the incoming pod's required anti-affinity terms.
  It returns SKIP when none of the three can matter. AddPod/RemovePod update the
  counts for preemption's dry runs.
* Filter, in this order:
  ``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable: the node
  lacks a topology key, or no matching pod is in its domain -- unless no pod anywhere
  matches and the pod matches its own terms, so the first of a group can land);
  ``node(s) didn't match pod anti-affinity rules`` (Unschedulable);
  ``node(s) didn't satisfy existing pods anti-affinity rules`` (Unschedulable).
* PreScore/Score: per topology pair, the weights of the incoming pod's preferred terms
  matched by existing pods (anti-affinity negative), plus existing pods' required
  affinity terms matching the incoming pod (``hardPodAffinityWeight``, default 1) and
  their preferred (anti-)affinity terms; NormalizeScore maps min..max to 0..100.

Namespaces: a term without ``namespaces`` and ``namespaceSelector`` means the owning
pod's namespace; a ``namespaceSelector`` is matched against namespace labels from the
``namespace_labels`` lookup (upstream lists namespaces and merges the matching names;
the result is the same for existing namespaces). The incoming pod's own namespace
labels are looked up once per cycle for existing pods' terms.

PreFilter and PreScore look at every node (through the lister); Filter and Score read
only the NodeInfo they are handed plus the cycle state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from kubeprio.api import selectors
from kubeprio.api.core import Node, Pod
from kubeprio.api.model import evolve
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.validation import PluginArgsError
from kubeprio.scheduler.snapshot import NodeInfo, SharedLister

NAME: Final = "InterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

NamespaceLabels = Callable[[str], Mapping[str, str] | None]
"""Namespace name -> its labels, or None when the namespace does not exist."""

_NO_LABELS: Final[Mapping[str, str]] = {}
_REJECTED_AFFINITY: Final = framework.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
_REJECTED_ANTI_AFFINITY: Final = framework.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
_REJECTED_EXISTING: Final = framework.unschedulable(
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
)

TopologyPair = tuple[str, str]


@dataclasses.dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    """``InterPodAffinityArgs``."""

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


class _IncomingTerm:
    """An incoming pod's term with its namespace selector resolved through the lookup.

    Upstream ``mergeAffinityTermNamespacesIfNotEmpty``: an empty namespace selector
    keeps matching every namespace; any other one is replaced by the names of the
    namespaces it selects (remembered here per namespace, lazily).
    """

    __slots__ = (
        "_lookup",
        "_matched",
        "all_namespaces",
        "namespace_selector",
        "namespaces",
        "selector",
        "topology_key",
    )

    def __init__(self, term: framework.AffinityTerm, lookup: NamespaceLabels) -> None:
        self.namespaces = term.namespaces
        self.selector = term.selector
        self.topology_key = term.topology_key
        namespace_selector = term.namespace_selector
        self.all_namespaces = (
            isinstance(namespace_selector, selectors.LabelSelector)
            and namespace_selector.is_empty()
        )
        self.namespace_selector: selectors.LabelSelector | None = (
            namespace_selector
            if isinstance(namespace_selector, selectors.LabelSelector) and not self.all_namespaces
            else None
        )
        self._lookup = lookup
        self._matched: dict[str, bool] = {}

    def matches(self, pod: Pod) -> bool:
        """Whether ``pod`` is in the term's namespaces and selected by its label selector."""
        metadata = pod.metadata
        namespace = metadata.namespace or ""
        if not self.all_namespaces and namespace not in self.namespaces:
            if self.namespace_selector is None:
                return False
            matched = self._matched.get(namespace)
            if matched is None:
                labels = self._lookup(namespace)
                matched = labels is not None and self.namespace_selector.matches(labels)
                self._matched[namespace] = matched
            if not matched:
                return False
        return self.selector.matches(metadata.labels or _NO_LABELS)


def _matches_all(terms: Sequence[_IncomingTerm], pod: Pod) -> bool:
    """Upstream ``podMatchesAllAffinityTerms``: at least one term, and all match."""
    if not terms:
        return False
    for term in terms:  # noqa: SIM110 (explicit loop: hot path)
        if not term.matches(pod):
            return False
    return True


def _add(counts: dict[TopologyPair, int], node: Node, key: str, value: int) -> None:
    """Upstream ``topologyToMatchedTermCount.update``: drop pairs that reach zero."""
    labels = node.metadata.labels
    if labels is None or key not in labels:
        return
    pair = (key, labels[key])
    total = counts.get(pair, 0) + value
    if total == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = total


@dataclasses.dataclass(slots=True)
class _PreFilterState:
    """Upstream ``preFilterState``."""

    existing_anti_affinity_counts: dict[TopologyPair, int]
    affinity_counts: dict[TopologyPair, int]
    anti_affinity_counts: dict[TopologyPair, int]
    required_affinity: tuple[_IncomingTerm, ...]
    required_anti_affinity: tuple[_IncomingTerm, ...]
    matches_own_affinity: bool
    """The pod matches all of its own required affinity terms (the "first pod" case)."""
    namespace_labels: Mapping[str, str] | None

    def clone(self) -> _PreFilterState:
        return evolve(
            self,
            existing_anti_affinity_counts=dict(self.existing_anti_affinity_counts),
            affinity_counts=dict(self.affinity_counts),
            anti_affinity_counts=dict(self.anti_affinity_counts),
        )

    def update_with_pod(
        self, incoming: Pod, other: framework.PodInfo, node: Node, delta: int
    ) -> None:
        """Upstream ``preFilterState.updateWithPod``."""
        ns_labels = self.namespace_labels
        for term in other.affinity_terms.required_anti_affinity:
            if term.matches(incoming, ns_labels):
                _add(self.existing_anti_affinity_counts, node, term.topology_key, delta)
        if _matches_all(self.required_affinity, other.pod):
            for mine in self.required_affinity:
                _add(self.affinity_counts, node, mine.topology_key, delta)
        for mine in self.required_anti_affinity:
            if mine.matches(other.pod):
                _add(self.anti_affinity_counts, node, mine.topology_key, delta)


@dataclasses.dataclass(slots=True)
class _PreScoreState:
    """Upstream ``preScoreState``: topology key -> value -> summed weights."""

    topology_score: dict[str, dict[str, int]]

    def clone(self) -> _PreScoreState:
        return self


class InterPodAffinity(framework.SignedPodUpdateExtensions):
    """Required pod (anti-)affinity as a filter, preferred as a score."""

    name: Final = NAME

    def __init__(
        self,
        lister: SharedLister,
        namespace_labels: NamespaceLabels,
        args: InterPodAffinityArgs | None = None,
    ) -> None:
        args = args or InterPodAffinityArgs()
        if not 0 <= args.hard_pod_affinity_weight <= 100:
            raise PluginArgsError(
                f"hardPodAffinityWeight: Invalid value: {args.hard_pod_affinity_weight}:"
                " not in valid range [0, 100]"
            )
        self.args = args
        self._lister = lister
        self._namespace_labels = namespace_labels

    # --- filtering -------------------------------------------------------------------

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Upstream ``InterPodAffinity.PreFilter``."""
        terms = pod.affinity_terms
        if terms.errors:
            return None, framework.unresolvable(f"parsing pod: {terms.error}")
        lookup = self._namespace_labels
        affinity = tuple(_IncomingTerm(t, lookup) for t in terms.required_affinity)
        anti = tuple(_IncomingTerm(t, lookup) for t in terms.required_anti_affinity)
        namespace_labels = lookup(pod.pod.metadata.namespace or "")

        existing: dict[TopologyPair, int] = {}
        for node_info in self._lister.have_pods_with_required_anti_affinity():
            node = node_info.node
            labels = node.metadata.labels if node is not None else None
            if not labels:
                continue
            for other in node_info.pods_with_required_anti_affinity:
                for term in other.affinity_terms.required_anti_affinity:
                    value = labels.get(term.topology_key)
                    if value is not None and term.matches(pod.pod, namespace_labels):
                        pair = (term.topology_key, value)
                        existing[pair] = existing.get(pair, 0) + 1

        affinity_counts: dict[TopologyPair, int] = {}
        anti_counts: dict[TopologyPair, int] = {}
        if affinity or anti:
            for node_info in nodes:
                node = node_info.node
                labels = node.metadata.labels if node is not None else None
                if not labels:
                    continue
                for other in node_info.pods:
                    if _matches_all(affinity, other.pod):
                        for mine in affinity:
                            value = labels.get(mine.topology_key)
                            if value is not None:
                                pair = (mine.topology_key, value)
                                affinity_counts[pair] = affinity_counts.get(pair, 0) + 1
                    for mine in anti:
                        value = labels.get(mine.topology_key)
                        if value is not None and mine.matches(other.pod):
                            pair = (mine.topology_key, value)
                            anti_counts[pair] = anti_counts.get(pair, 0) + 1

        if not existing and not affinity and not anti:
            return None, framework.SKIP
        state.write(
            PRE_FILTER_STATE_KEY,
            _PreFilterState(
                existing,
                affinity_counts,
                anti_counts,
                affinity,
                anti,
                _matches_all(affinity, pod.pod),
                namespace_labels,
            ),
        )
        return None, None

    def update_with_pod(
        self,
        state: framework.CycleState,
        pod: framework.PodInfo,
        other: framework.PodInfo,
        node: NodeInfo,
        delta: int,
    ) -> framework.Status | None:
        data = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(data, _PreFilterState):
            return framework.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        if node.node is not None:
            data.update_with_pod(pod.pod, other, node.node, delta)
        return None

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``InterPodAffinity.Filter``."""
        data = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(data, _PreFilterState):
            return framework.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        node_object = node.node
        labels = (node_object.metadata.labels or _NO_LABELS) if node_object else _NO_LABELS
        if not _satisfies_pod_affinity(data, labels):
            return _REJECTED_AFFINITY
        if data.anti_affinity_counts:
            counts = data.anti_affinity_counts
            for term in data.required_anti_affinity:
                value = labels.get(term.topology_key)
                if value is not None and counts.get((term.topology_key, value), 0) > 0:
                    return _REJECTED_ANTI_AFFINITY
        if data.existing_anti_affinity_counts:
            counts = data.existing_anti_affinity_counts
            for pair in labels.items():
                if counts.get(pair, 0) > 0:
                    return _REJECTED_EXISTING
        return None

    # --- scoring ---------------------------------------------------------------------

    def pre_score(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> framework.Status | None:
        """Upstream ``InterPodAffinity.PreScore``: weights per topology pair."""
        spec = pod.pod.spec
        affinity = spec.affinity if spec is not None else None
        has_preferred_affinity = bool(
            affinity is not None
            and affinity.pod_affinity is not None
            and affinity.pod_affinity.preferred_during_scheduling_ignored_during_execution
        )
        has_preferred_anti = bool(
            affinity is not None
            and affinity.pod_anti_affinity is not None
            and affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
        )
        has_constraints = has_preferred_affinity or has_preferred_anti
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return framework.SKIP
        terms = pod.affinity_terms
        if terms.errors:
            return framework.error(f"failed to parse pod: {terms.error}")
        lookup = self._namespace_labels
        preferred = tuple(
            (_IncomingTerm(w.term, lookup), w.weight) for w in terms.preferred_affinity
        )
        preferred_anti = tuple(
            (_IncomingTerm(w.term, lookup), -w.weight) for w in terms.preferred_anti_affinity
        )
        incoming_terms = preferred + preferred_anti
        namespace_labels = lookup(pod.pod.metadata.namespace or "")
        hard_weight = self.args.hard_pod_affinity_weight

        # Unless the pod has preferred terms, only pods with affinity can contribute.
        node_infos = (
            self._lister.node_infos() if has_constraints else self._lister.have_pods_with_affinity()
        )
        topology_score: dict[str, dict[str, int]] = {}

        def add(key: str, labels: Mapping[str, str], weight: int) -> None:
            value = labels.get(key)
            if value is not None:
                scores = topology_score.setdefault(key, {})
                scores[value] = scores.get(value, 0) + weight

        for node_info in node_infos:
            node = node_info.node
            labels = node.metadata.labels if node is not None else None
            if not labels:
                continue
            others = node_info.pods if has_constraints else node_info.pods_with_affinity
            for other in others:
                for incoming_term, weight in incoming_terms:
                    if incoming_term.matches(other.pod):
                        add(incoming_term.topology_key, labels, weight)
                other_terms = other.affinity
                if other_terms is None:
                    continue
                if hard_weight > 0:
                    for term in other_terms.required_affinity:
                        if term.matches(pod.pod, namespace_labels):
                            add(term.topology_key, labels, hard_weight)
                for weighted in other_terms.preferred_affinity:
                    if weighted.term.matches(pod.pod, namespace_labels):
                        add(weighted.term.topology_key, labels, weighted.weight)
                for weighted in other_terms.preferred_anti_affinity:
                    if weighted.term.matches(pod.pod, namespace_labels):
                        add(weighted.term.topology_key, labels, -weighted.weight)
        if not topology_score:
            return framework.SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(topology_score))
        return None

    def score(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> tuple[int, framework.Status | None]:
        """The summed weights of the node's topology pairs (negative for anti-affinity)."""
        data = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            return 0, framework.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        node_object = node.node
        labels = (node_object.metadata.labels or _NO_LABELS) if node_object else _NO_LABELS
        score = 0
        for key, values in data.topology_score.items():
            value = labels.get(key)
            if value is not None:
                score += values.get(value, 0)
        return score, None

    def normalize_score(
        self, state: framework.CycleState, pod: framework.PodInfo, scores: list[framework.NodeScore]
    ) -> framework.Status | None:
        """Upstream ``NormalizeScore``: min..max onto 0..100 (float, truncated)."""
        data = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            return framework.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        if not data.topology_score or not scores:
            return None
        min_count = min(entry.score for entry in scores)
        max_count = max(entry.score for entry in scores)
        diff = max_count - min_count
        for i, entry in enumerate(scores):
            value = 0.0
            if diff > 0:
                value = float(framework.MAX_NODE_SCORE) * (
                    float(entry.score - min_count) / float(diff)
                )
            scores[i] = framework.NodeScore(entry.name, int(value))
        return None


def _satisfies_pod_affinity(data: _PreFilterState, labels: Mapping[str, str]) -> bool:
    """Upstream ``satisfyPodAffinity``, with the "first pod of a group" exception."""
    pods_exist = True
    counts = data.affinity_counts
    for term in data.required_affinity:
        value = labels.get(term.topology_key)
        if value is None:
            return False  # every topology key must be on the node
        if counts.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a series with affinity to themselves: if no pod anywhere
        # matches and the pod matches its own terms, let it through.
        return not counts and data.matches_own_affinity
    return True
