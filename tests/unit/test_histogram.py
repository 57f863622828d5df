"""``kubeprio.histogram``: Prometheus bucket rules and client_golang's ExponentialBuckets."""

from __future__ import annotations

import pytest

from kubeprio.histogram import Histogram, exponential_buckets


@pytest.mark.parametrize(
    ("args", "bounds"),
    [
        ((1, 2, 7), (1, 2, 4, 8, 16, 32, 64)),
        ((1, 2, 5), (1, 2, 4, 8, 16)),
        ((0.001, 2, 3), (0.001, 0.002, 0.004)),
    ],
    ids=["preemption_victims", "pod_scheduling_attempts", "attempt_duration_head"],
)
def test_exponential_buckets_multiply_from_the_start(args, bounds):
    assert exponential_buckets(*args) == pytest.approx(bounds)


def test_upstream_duration_buckets_end_where_upstream_says():
    assert exponential_buckets(0.001, 2, 15)[-1] == pytest.approx(16.384)
    assert exponential_buckets(0.01, 2, 20)[-1] == pytest.approx(5242.88)


@pytest.mark.parametrize(
    ("value", "bucket"),
    [(0.5, 1), (1, 1), (1.5, 2), (2, 2), (4, 4), (5, float("inf"))],
    ids=["below-first", "on-a-bound", "between", "on-second", "on-last", "above-last"],
)
def test_a_value_counts_in_the_first_bucket_whose_bound_is_not_below_it(value, bucket):
    histogram = Histogram((1, 2, 4))
    histogram.observe(value)
    cumulative = dict(histogram.cumulative())
    assert min(bound for bound, count in cumulative.items() if count) == bucket
    assert histogram.count == 1
    assert histogram.sum == value


def test_cumulative_counts_grow_to_the_total():
    histogram = Histogram((1, 2, 4))
    for value in (1, 1, 3, 10):
        histogram.observe(value)
    assert histogram.cumulative() == [(1, 2), (2, 2), (4, 3), (float("inf"), 4)]
    assert histogram.count == 4
    assert histogram.sum == 15
