"""TaintToleration: node taints against pod tolerations (upstream ``plugins/tainttoleration``).

* Filter: a ``NoSchedule`` or ``NoExecute`` taint the pod does not tolerate rejects the
  node as UnschedulableAndUnresolvable, with the generic reason
  ``node(s) had untolerated taint(s)`` (upstream stopped printing taint keys and values
  in pod statuses in v1.35, backported to v1.34: kubernetes/kubernetes#134740).
* PreScore/Score: the number of ``PreferNoSchedule`` taints the pod does not tolerate
  (only tolerations with an empty or ``PreferNoSchedule`` effect count);
  NormalizeScore reverses it, so fewer intolerable taints score higher.

Run by ``scheduler.runtime``; Filter and Score read only the NodeInfo they are handed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from kubeprio.api import taints
from kubeprio.api.core import Toleration
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.normalize_score import default_normalize_score
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "TaintToleration"
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

_REJECTED: Final = framework.unresolvable(ERR_REASON_UNTOLERATED)


@dataclasses.dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The pod's tolerations that can tolerate ``PreferNoSchedule`` taints."""

    tolerations: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


def _tolerations(pod: framework.PodInfo) -> tuple[Toleration, ...]:
    spec = pod.pod.spec
    return (spec.tolerations or ()) if spec is not None else ()


class TaintToleration:
    """Filters on NoSchedule/NoExecute taints, scores on PreferNoSchedule taints."""

    name: Final = NAME

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``TaintToleration.Filter`` (``FindMatchingUntoleratedTaint``)."""
        spec = node.node.spec if node.node is not None else None
        node_taints = spec.taints if spec is not None else None
        if not node_taints:
            return None
        tolerations = _tolerations(pod)
        for taint in node_taints:
            if taints.do_not_schedule_taint(taint) and not taints.tolerations_tolerate_taint(
                tolerations, taint
            ):
                return _REJECTED
        return None

    def pre_score(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> framework.Status | None:
        """Keep the tolerations with an empty or ``PreferNoSchedule`` effect."""
        prefer = tuple(
            t
            for t in _tolerations(pod)
            if not t.effect or t.effect == taints.TAINT_EFFECT_PREFER_NO_SCHEDULE
        )
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(prefer))
        return None

    def score(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> tuple[int, framework.Status | None]:
        """The count of intolerable ``PreferNoSchedule`` taints (upstream ``Score``)."""
        data = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            return 0, framework.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        spec = node.node.spec if node.node is not None else None
        count = 0
        for taint in (spec.taints or ()) if spec is not None else ():
            if taint.effect != taints.TAINT_EFFECT_PREFER_NO_SCHEDULE:
                continue
            if not taints.tolerations_tolerate_taint(data.tolerations, taint):
                count += 1
        return count, None

    def normalize_score(
        self, state: framework.CycleState, pod: framework.PodInfo, scores: list[framework.NodeScore]
    ) -> framework.Status | None:
        """Reverse-normalise: the node with most intolerable taints scores 0."""
        default_normalize_score(framework.MAX_NODE_SCORE, True, scores)
        return None
