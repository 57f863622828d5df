"""NodeResourcesBalancedAllocation: prefer nodes whose resources fill evenly.

Mirrors upstream ``noderesources/balanced_allocation.go``: the score is
``100 * (1 - std)`` of the requested/allocatable fractions (each capped at 1) of the
configured resources (cpu and memory by default) with the pod placed on the node; for
two resources ``std = |f1 - f2| / 2``. It uses the *actual* requests of the node and
the pod, not the non-zero defaults NodeResourcesFit scores with, and PreScore returns
SKIP for a pod requesting none of the resources (a best-effort pod would otherwise
pile onto one node: kubernetes/kubernetes#129138). No NormalizeScore.

Run by ``scheduler.runtime``; Score reads only the NodeInfo it is handed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.noderesources import strategies
from kubeprio.scheduler.plugins.noderesources.args import (
    NodeResourcesBalancedAllocationArgs,
    validate_balanced_allocation_args,
)
from kubeprio.scheduler.plugins.noderesources.resource_allocation import ResourceAllocationScorer
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


@dataclasses.dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation:
    """Scores nodes by how evenly their resources would be requested."""

    name: Final = NAME

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None = None) -> None:
        args = args or NodeResourcesBalancedAllocationArgs()
        validate_balanced_allocation_args(args)
        self.args = args
        self.scorer = ResourceAllocationScorer(
            args.resources, strategies.balanced_resource_scorer, use_requested=True
        )

    def pre_score(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> framework.Status | None:
        """Write the pod's requests; SKIP for a pod that requests none of the resources."""
        requests = tuple(self.scorer.pod_requests(pod))
        if not any(requests):
            return framework.SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return None

    def score(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> tuple[int, framework.Status | None]:
        """Upstream ``BalancedAllocation.Score``."""
        data = state.read(PRE_SCORE_STATE_KEY)
        if isinstance(data, _PreScoreState):
            requests = data.pod_requests
        else:
            requests = tuple(self.scorer.pod_requests(pod))
            if not any(requests):
                return 0, None
        return self.scorer.score(node, requests)

    def normalize_score(
        self, state: framework.CycleState, pod: framework.PodInfo, scores: list[framework.NodeScore]
    ) -> framework.Status | None:
        """No normalisation (upstream has no ScoreExtensions)."""
        return None
