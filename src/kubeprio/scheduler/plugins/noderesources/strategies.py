"""The resource scoring strategies, integer for integer as upstream computes them.

Mirrors ``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go``
and ``helper/shape_score.go`` of upstream ``plugins/noderesources``. A strategy maps the
per-resource (requested, allocatable) lists (resources with zero allocatable are left
out) to a 0..100 node score. Go truncating division and ``math.Round`` are reproduced
so that scores are bit-identical. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.gomath import go_div, go_round
from kubeprio.scheduler.plugins.noderesources.args import (
    MAX_CUSTOM_PRIORITY_SCORE,
    ResourceSpec,
    UtilizationShapePoint,
)

Scorer = Callable[[Sequence[int], Sequence[int]], int]
"""(requested per resource, allocatable per resource) -> node score."""

_MAX: int = framework.MAX_NODE_SCORE
_MAX_UTILIZATION = 100


def least_requested_score(requested: int, capacity: int) -> int:
    """Upstream ``leastRequestedScore``: the unused share of capacity, 0..100."""
    if capacity == 0 or requested > capacity:
        return 0
    return ((capacity - requested) * _MAX) // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """Upstream ``mostRequestedScore``: the used share of capacity, 0..100."""
    if capacity == 0:
        return 0
    # Requested can exceed capacity: pods without requests count with the defaults.
    requested = min(requested, capacity)
    return (requested * _MAX) // capacity


def _weighted(weights: Sequence[int], per_resource: Callable[[int, int], int]) -> Scorer:
    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            weight = weights[i]
            node_score += per_resource(requested[i], capacity) * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    return scorer


def least_allocated(resources: Sequence[ResourceSpec]) -> Scorer:
    """Upstream ``leastResourceScorer``: the weighted mean of the per-resource scores."""
    return _weighted([spec.weight for spec in resources], least_requested_score)


def most_allocated(resources: Sequence[ResourceSpec]) -> Scorer:
    """Upstream ``mostResourceScorer``."""
    return _weighted([spec.weight for spec in resources], most_requested_score)


def broken_linear_function(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Upstream ``helper.BuildBrokenLinearFunction`` over (utilization, score) points.

    Below the first point: its score; above the last: its score; in between, linear
    interpolation with Go's truncating integer division (scores may decrease).
    """

    def evaluate(p: int) -> int:
        for i, (utilization, score) in enumerate(points):
            if p <= utilization:
                if i == 0:
                    return points[0][1]
                prev_utilization, prev_score = points[i - 1]
                return prev_score + go_div(
                    (score - prev_score) * (p - prev_utilization), utilization - prev_utilization
                )
        return points[-1][1]

    return evaluate


def requested_to_capacity_ratio(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    """Upstream ``requestedToCapacityRatioScorer``: the shape applied to utilization.

    Shape scores (0..10) are scaled to 0..100; only resources scoring above 0 take
    part in the weighted mean, which is rounded half away from zero.
    """
    scale = _MAX // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    weights = [spec.weight for spec in resources]

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(_MAX_UTILIZATION)
        return raw(requested * _MAX_UTILIZATION // capacity)

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            score = resource_score(requested[i], capacity)
            if score > 0:
                node_score += score * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return int(go_round(float(node_score) / float(weight_sum)))

    return scorer


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """Upstream ``balancedResourceScorer``: 100 * (1 - standard deviation of the fractions)."""
    fractions: list[float] = []
    total = 0.0
    for i, capacity in enumerate(allocatable):
        if capacity == 0:
            continue
        fraction = float(requested[i]) / float(capacity)
        fraction = min(fraction, 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / float(len(fractions)))
    # Go's int64() conversion truncates toward zero, as int() does.
    return int((1 - std) * float(_MAX))
