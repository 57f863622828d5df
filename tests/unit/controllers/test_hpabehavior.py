"""The HPA's rate rules (``horizontal.go``; cases after ``horizontal_test.go``'s
``TestConvertDesiredReplicasWithRules`` and ``TestCalculateScaleUpLimitWithScalingRules``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api.autoscaling import HPAScalingPolicy, HPAScalingRules
from kubeprio.api.autoscalingdefaults import DEFAULT_SCALE_DOWN, DEFAULT_SCALE_UP
from kubeprio.controllers import hpabehavior as hb

NOW = 1000.0


@pytest.mark.parametrize(
    ("current", "desired", "low", "high", "expected", "reason"),
    [
        (5, 7, 2, 10, 7, "DesiredWithinRange"),
        (5, 1, 2, 10, 2, "TooFewReplicas"),
        (5, 12, 2, 10, 10, "TooManyReplicas"),
        (1, 9, 1, 20, 4, "ScaleUpLimit"),  # max(2 * 1, 4)
        (5, 30, 1, 20, 10, "ScaleUpLimit"),  # 2 * 5
    ],
    ids=["within", "below-min", "above-max", "up-limit-minimum", "up-limit-double"],
)
def test_rules_without_behavior(current, desired, low, high, expected, reason):
    got, why, _ = hb.convert_desired_replicas_with_rules(current, desired, low, high)
    assert (got, why) == (expected, reason)


def rate(current, desired, *, up=DEFAULT_SCALE_UP, down=DEFAULT_SCALE_DOWN, ups=(), downs=(),
         low=1, high=100):  # fmt: skip
    return hb.convert_desired_replicas_with_behavior_rate(
        current=current,
        desired=desired,
        min_replicas=low,
        max_replicas=high,
        scale_up=up,
        scale_down=down,
        up_events=list(ups),
        down_events=list(downs),
        now=NOW,
    )


def rules(select: str, *policies: tuple[str, int, int]) -> HPAScalingRules:
    return HPAScalingRules(
        select_policy=select,
        policies=tuple(HPAScalingPolicy(type=t, value=v, period_seconds=p) for t, v, p in policies),
    )


@pytest.mark.parametrize(
    ("current", "desired", "kwargs", "expected", "reason"),
    [
        # Default scale up: max(4 pods, 100 %) per 15 s.
        (1, 20, {}, 5, "ScaleUpLimit"),
        (10, 50, {}, 20, "ScaleUpLimit"),
        (10, 15, {}, 15, "DesiredWithinRange"),
        # Changes made within the period count against it (period start 10 - 6 = 4 -> 8).
        (10, 50, {"ups": [hb.ScaleEvent(6, NOW - 10)]}, 10, "ScaleUpLimit"),
        # ... but not once the period has passed.
        (10, 50, {"ups": [hb.ScaleEvent(6, NOW - 20)]}, 20, "ScaleUpLimit"),
        # Min picks the smaller change.
        (10, 50, {"up": rules("Min", ("Pods", 4, 15), ("Percent", 100, 15))}, 14, "ScaleUpLimit"),
        (10, 50, {"up": rules("Disabled", ("Pods", 4, 15))}, 10, "ScaleUpLimit"),
        # Default scale down: 100 % per 15 s, so only the minimum limits it.
        (10, 0, {}, 1, "TooFewReplicas"),
        (10, 2, {"down": rules("Max", ("Pods", 2, 60))}, 8, "ScaleDownLimit"),
        (10, 2, {"down": rules("Max", ("Percent", 10, 60), ("Pods", 3, 60))}, 7, "ScaleDownLimit"),
        (10, 2, {"down": rules("Min", ("Percent", 10, 60), ("Pods", 3, 60))}, 9, "ScaleDownLimit"),
        (10, 2, {"down": rules("Max", ("Pods", 2, 60)), "downs": [hb.ScaleEvent(2, NOW - 30)]}, 10,
         "ScaleDownLimit"),
        (10, 30, {"high": 12}, 12, "TooManyReplicas"),
    ],
    ids=[
        "up-4-pods", "up-100-percent", "up-within", "up-period-used", "up-period-over",
        "up-min-policy", "up-disabled", "down-default", "down-pods", "down-max-of-two",
        "down-min-of-two", "down-period-used", "up-capped-by-max",
    ],
)  # fmt: skip
def test_behavior_policies(current, desired, kwargs, expected, reason):
    got, why, _ = rate(current, desired, **kwargs)
    assert (got, why) == (expected, reason)


@given(
    current=st.integers(min_value=1, max_value=200),
    desired=st.integers(min_value=0, max_value=400),
    low=st.integers(min_value=1, max_value=50),
    span=st.integers(min_value=0, max_value=100),
)
def test_the_result_stays_within_min_and_max(current, desired, low, span):
    """Property: whatever a metric proposes, a target already within [min, max] stays
    within them (both rule sets)."""
    high = low + span
    current = min(max(current, low), high)
    plain, _, _ = hb.convert_desired_replicas_with_rules(current, desired, low, high)
    assert low <= plain <= high
    behaved, _, _ = rate(current, desired, low=low, high=high)
    assert low <= behaved <= high
