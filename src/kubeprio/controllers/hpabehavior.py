"""The HPA's rate rules: how far one reconcile may move a workload's replicas.

Pure functions of ``pkg/controller/podautoscaler/horizontal.go`` (v1.32), kept apart from
the controller loop (``controllers.horizontal``): ``convertDesiredReplicasWithRules``
(an HPA without ``behavior``: at most ``max(2 * current, 4)`` and within the bounds),
``calculateScaleUpLimitWithScalingRules``/``calculateScaleDownLimitWithBehaviors``
(Pods/Percent policies over their periods, ``Max``/``Min``/``Disabled``, counting the
changes made within each period), ``convertDesiredReplicasWithBehaviorRate``, and the
timestamped recommendations and scale events they read. No clock reads: ``now`` is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kubeprio.api.autoscaling import DISABLED_POLICY, MIN_POLICY, PODS_POLICY, HPAScalingRules
from kubeprio.api.model import INT32_MAX, INT32_MIN

SCALE_UP_LIMIT_FACTOR: Final = 2.0
SCALE_UP_LIMIT_MINIMUM: Final = 4.0

# (reason, message) of the ScalingLimited condition, as both conversions word them.
SCALE_UP_LIMIT: Final = (
    "ScaleUpLimit",
    "the desired replica count is increasing faster than the maximum scale rate",
)
SCALE_DOWN_LIMIT: Final = (
    "ScaleDownLimit",
    "the desired replica count is decreasing faster than the maximum scale rate",
)
TOO_MANY_REPLICAS: Final = (
    "TooManyReplicas",
    "the desired replica count is more than the maximum replica count",
)
TOO_FEW_REPLICAS: Final = (
    "TooFewReplicas",
    "the desired replica count is less than the minimum replica count",
)
DESIRED_WITHIN_RANGE: Final = (
    "DesiredWithinRange",
    "the desired count is within the acceptable range",
)


@dataclass(slots=True)
class Recommendation:
    """``timestampedRecommendation``."""

    replicas: int
    at: float


@dataclass(slots=True)
class ScaleEvent:
    """``timestampedScaleEvent``: a replica change (positive either way) and when."""

    change: int
    at: float
    outdated: bool = False


def calculate_scale_up_limit(current: int) -> int:
    """``calculateScaleUpLimit``: ``max(2 * current, 4)``."""
    return int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))


def convert_desired_replicas_with_rules(
    current: int, desired: int, min_replicas: int, max_replicas: int
) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithRules``: clamp to [min, min(max, scale-up limit)]."""
    scale_up_limit = calculate_scale_up_limit(current)
    if max_replicas > scale_up_limit:
        maximum, limited = scale_up_limit, SCALE_UP_LIMIT
    else:
        maximum, limited = max_replicas, TOO_MANY_REPLICAS
    if desired < min_replicas:
        return min_replicas, *TOO_FEW_REPLICAS
    if desired > maximum:
        return maximum, *limited
    return desired, *DESIRED_WITHIN_RANGE


def _change_in_period(period: int, events: list[ScaleEvent], now: float) -> int:
    """``getReplicasChangePerPeriod``."""
    cutoff = now - period
    return sum(event.change for event in events if event.at > cutoff)


def _period_start_replicas(
    current: int,
    period: int,
    up_events: list[ScaleEvent],
    down_events: list[ScaleEvent],
    now: float,
) -> int:
    """The replicas at the start of a policy's period (``periodStartReplicas``, as both
    limit calculations work it out): the changes made within the period undone."""
    return (
        current
        - _change_in_period(period, up_events, now)
        + _change_in_period(period, down_events, now)
    )


def scale_up_limit_with_rules(
    current: int,
    up_events: list[ScaleEvent],
    down_events: list[ScaleEvent],
    rules: HPAScalingRules,
    now: float,
) -> int:
    """``calculateScaleUpLimitWithScalingRules``."""
    return _limit_with_rules(current, up_events, down_events, rules, now, scaling_up=True)


def scale_down_limit_with_behaviors(
    current: int,
    up_events: list[ScaleEvent],
    down_events: list[ScaleEvent],
    rules: HPAScalingRules,
    now: float,
) -> int:
    """``calculateScaleDownLimitWithBehaviors``."""
    return _limit_with_rules(current, up_events, down_events, rules, now, scaling_up=False)


def _limit_with_rules(
    current: int,
    up_events: list[ScaleEvent],
    down_events: list[ScaleEvent],
    rules: HPAScalingRules,
    now: float,
    *,
    scaling_up: bool,
) -> int:
    """The two upstream functions' shared loop: each policy proposes a limit from the
    replicas at its period's start; ``Min`` keeps the smallest change (the lowest limit up,
    the highest down), ``Max`` the largest."""
    if rules.select_policy == DISABLED_POLICY:
        return current
    pick: Callable[[int, int], int] = (
        min if (rules.select_policy == MIN_POLICY) == scaling_up else max
    )
    result = INT32_MAX if pick is min else INT32_MIN
    for policy in rules.policies or ():
        start = _period_start_replicas(
            current, policy.period_seconds or 0, up_events, down_events, now
        )
        value = policy.value or 0
        if policy.type == PODS_POLICY:
            proposed = start + value if scaling_up else start - value
        elif scaling_up:
            proposed = math.ceil(start * (1 + value / 100))
        else:
            proposed = int(start * (1 - value / 100))
        result = pick(result, proposed)
    return result


def convert_desired_replicas_with_behavior_rate(
    *,
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
    scale_up: HPAScalingRules,
    scale_down: HPAScalingRules,
    up_events: list[ScaleEvent],
    down_events: list[ScaleEvent],
    now: float,
) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithBehaviorRate``: the policies' limit, then the bounds."""
    if desired > current:
        limit = max(
            scale_up_limit_with_rules(current, up_events, down_events, scale_up, now), current
        )
        if max_replicas > limit:
            maximum, limited = limit, SCALE_UP_LIMIT
        else:
            maximum, limited = max_replicas, TOO_MANY_REPLICAS
        if desired > maximum:
            return maximum, *limited
    elif desired < current:
        limit = min(
            scale_down_limit_with_behaviors(current, up_events, down_events, scale_down, now),
            current,
        )
        if min_replicas < limit:
            minimum, limited = limit, SCALE_DOWN_LIMIT
        else:
            minimum, limited = min_replicas, TOO_FEW_REPLICAS
        if desired < minimum:
            return minimum, *limited
    return desired, *DESIRED_WITHIN_RANGE


# --- recommendations and scale events ----------------------------------------------------------

SCALE_DOWN_STABILIZED: Final = (
    "ScaleDownStabilized",
    "recent recommendations were higher than current one, applying the highest recent "
    "recommendation",
)
SCALE_UP_STABILIZED: Final = (
    "ScaleUpStabilized",
    "recent recommendations were lower than current one, applying the lowest recent recommendation",
)


def _record(recs: list[Recommendation], old_index: int | None, new: Recommendation) -> None:
    """Reuse an expired slot, or append."""
    if old_index is not None:
        recs[old_index] = new
    else:
        recs.append(new)


def stabilize(recs: list[Recommendation], prenormalized: int, *, window: float, now: float) -> int:
    """``stabilizeRecommendation`` (no behavior): the highest recommendation of the
    downscale ``window``, recording this one in place of an expired one."""
    cutoff = now - window
    highest = prenormalized
    old_index: int | None = None
    for i, rec in enumerate(recs):
        if rec.at < cutoff:
            old_index = i
        elif rec.replicas > highest:
            highest = rec.replicas
    _record(recs, old_index, Recommendation(prenormalized, now))
    return highest


def stabilize_with_behaviors(
    recs: list[Recommendation],
    *,
    up: HPAScalingRules,
    down: HPAScalingRules,
    current: int,
    desired: int,
    now: float,
) -> tuple[int, str, str]:
    """``stabilizeRecommendationWithBehaviors``: within [lowest of the up window, highest
    of the down window], as near ``current`` as that allows; (count, reason, message)."""
    up_cutoff = now - (up.stabilization_window_seconds or 0)
    down_cutoff = now - (down.stabilization_window_seconds or 0)
    up_rec = down_rec = desired
    old_index: int | None = None
    for i, rec in enumerate(recs):
        if rec.at > up_cutoff:
            up_rec = min(rec.replicas, up_rec)
        if rec.at > down_cutoff:
            down_rec = max(rec.replicas, down_rec)
        if rec.at < up_cutoff and rec.at < down_cutoff:
            old_index = i
    recommendation = min(max(current, up_rec), down_rec)
    _record(recs, old_index, Recommendation(desired, now))
    reason, message = SCALE_UP_STABILIZED if desired >= current else SCALE_DOWN_STABILIZED
    return recommendation, reason, message


def store_scale_event(
    events: list[ScaleEvent], rules: HPAScalingRules, change: int, now: float
) -> None:
    """``storeScaleEvent`` for one direction: mark events older than the longest policy
    period outdated, and reuse an outdated slot."""
    longest = max((p.period_seconds or 0 for p in rules.policies or ()), default=0)
    cutoff = now - longest
    old_index: int | None = None
    for i, event in enumerate(events):
        if event.at < cutoff:
            event.outdated = True
        if event.outdated:
            old_index = i
    if old_index is not None:
        events[old_index] = ScaleEvent(change, now)
    else:
        events.append(ScaleEvent(change, now))
