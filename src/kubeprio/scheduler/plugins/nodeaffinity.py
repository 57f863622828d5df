"""NodeAffinity: ``nodeSelector`` and node affinity (upstream ``plugins/nodeaffinity``).

* PreFilter parses the pod's required node affinity once; it returns SKIP when the pod
  has neither a node selector nor required affinity (and no ``addedAffinity`` is
  configured), and narrows the candidate nodes when every required term pins
  ``metadata.name`` with ``In`` (``pod affinity terms conflict`` when those pins
  exclude every node).
* Filter: ``node(s) didn't match Pod's node affinity/selector``, or
  ``node(s) didn't match scheduler-enforced node affinity`` for the profile's
  ``addedAffinity``; both UnschedulableAndUnresolvable.
* PreScore/Score: the sum of the weights of the matching preferred terms (plus the
  profile's added preferred terms); NormalizeScore scales to 0..100.

Run by ``scheduler.runtime``; Filter and Score read only the NodeInfo they are handed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from kubeprio.api import nodeaffinity
from kubeprio.api.core import NodeAffinity as NodeAffinitySpec
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.normalize_score import default_normalize_score
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "NodeAffinity"
ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

_REJECTED_POD: Final = framework.unresolvable(ERR_REASON_POD)
_REJECTED_ENFORCED: Final = framework.unresolvable(ERR_REASON_ENFORCED)


@dataclasses.dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """``NodeAffinityArgs``: node affinity the profile adds to every pod."""

    added_affinity: NodeAffinitySpec | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class _PreFilterState:
    required: nodeaffinity.RequiredNodeAffinity

    def clone(self) -> _PreFilterState:
        return self  # unaffected by pods being added or removed


@dataclasses.dataclass(frozen=True, slots=True)
class _PreScoreState:
    preferred: nodeaffinity.PreferredSchedulingTerms | None

    def clone(self) -> _PreScoreState:
        return self


def _preferred_terms(pod: framework.PodInfo) -> nodeaffinity.PreferredSchedulingTerms | None:
    """Upstream ``getPodPreferredNodeAffinity``; raises ``NodeAffinityError``."""
    spec = pod.pod.spec
    affinity = spec.affinity if spec is not None else None
    node_affinity = affinity.node_affinity if affinity is not None else None
    terms = (
        node_affinity.preferred_during_scheduling_ignored_during_execution
        if node_affinity is not None
        else None
    )
    if terms is None:
        return None
    return nodeaffinity.PreferredSchedulingTerms.parse(terms)


class NodeAffinity:
    """Required node affinity as a filter, preferred node affinity as a score."""

    name: Final = NAME

    def __init__(self, args: NodeAffinityArgs | None = None) -> None:
        args = args or NodeAffinityArgs()
        self._added_selector: nodeaffinity.NodeSelector | None = None
        self._added_preferred: nodeaffinity.PreferredSchedulingTerms | None = None
        added = args.added_affinity
        if added is not None:
            required = added.required_during_scheduling_ignored_during_execution
            if required is not None:
                self._added_selector = nodeaffinity.NodeSelector(required)
                if self._added_selector.errors:
                    raise nodeaffinity.NodeAffinityError(
                        "parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                        + ", ".join(self._added_selector.errors)
                    )
            preferred = added.preferred_during_scheduling_ignored_during_execution
            if preferred:
                self._added_preferred = nodeaffinity.PreferredSchedulingTerms.parse(preferred)

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Upstream ``NodeAffinity.PreFilter``."""
        spec = pod.pod.spec
        affinity = spec.affinity if spec is not None else None
        node_affinity = affinity.node_affinity if affinity is not None else None
        required = (
            node_affinity.required_during_scheduling_ignored_during_execution
            if node_affinity is not None
            else None
        )
        node_selector = spec.node_selector if spec is not None else None
        if required is None and self._added_selector is None and node_selector is None:
            return None, framework.SKIP
        state.write(
            PRE_FILTER_STATE_KEY, _PreFilterState(nodeaffinity.RequiredNodeAffinity.of(pod.pod))
        )
        if required is None or not required.node_selector_terms:
            return None, None
        # Terms are ORed, the requirements of a term ANDed: the pod can only land on the
        # union over terms of the intersection of each term's metadata.name pins.
        node_names: set[str] | None = None
        for term in required.node_selector_terms:
            term_names: set[str] | None = None
            for requirement in term.match_fields or ():
                if (
                    requirement.key == nodeaffinity.OBJECT_NAME_FIELD
                    and requirement.operator == "In"
                ):
                    values = set(requirement.values or ())
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, None  # this term allows any node
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, framework.unresolvable(ERR_REASON_CONFLICT)
        if node_names:
            return framework.PreFilterResult(frozenset(node_names)), None
        return None, None

    def pre_filter_extensions(self) -> framework.PreFilterExtensions | None:
        """None: the state does not depend on other pods."""
        return None

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``NodeAffinity.Filter``."""
        node_object = node.node
        if node_object is None:
            return _REJECTED_POD
        if self._added_selector is not None and not self._added_selector.matches(node_object):
            return _REJECTED_ENFORCED
        data = state.read(PRE_FILTER_STATE_KEY)
        if isinstance(data, _PreFilterState):
            required = data.required
        else:  # PreFilter skipped or disabled: compute it here, as upstream falls back
            required = nodeaffinity.RequiredNodeAffinity.of(pod.pod)
        return None if required.matches(node_object) else _REJECTED_POD

    def pre_score(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> framework.Status | None:
        """Parse the preferred terms; SKIP when there are none to score."""
        try:
            preferred = _preferred_terms(pod)
        except nodeaffinity.NodeAffinityError as exc:
            return framework.error(str(exc))
        if preferred is None and self._added_preferred is None:
            return framework.SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def score(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> tuple[int, framework.Status | None]:
        """The summed weights of the matching preferred terms (upstream ``Score``)."""
        node_object = node.node
        if node_object is None:
            return 0, None
        count = 0
        if self._added_preferred is not None:
            count += self._added_preferred.score(node_object)
        data = state.read(PRE_SCORE_STATE_KEY)
        if isinstance(data, _PreScoreState):
            preferred = data.preferred
        else:
            try:
                preferred = _preferred_terms(pod)
            except nodeaffinity.NodeAffinityError as exc:
                return 0, framework.error(str(exc))
        if preferred is not None:
            count += preferred.score(node_object)
        return count, None

    def normalize_score(
        self, state: framework.CycleState, pod: framework.PodInfo, scores: list[framework.NodeScore]
    ) -> framework.Status | None:
        """Scale to 0..100 (upstream ``DefaultNormalizeScore(MaxNodeScore, false)``)."""
        default_normalize_score(framework.MAX_NODE_SCORE, False, scores)
        return None
