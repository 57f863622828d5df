"""A fixed-bucket histogram cheap enough for the scheduler's hot path.

What it is: the counting half of a Prometheus histogram (client_golang's ``histogram``),
kept in plain Python numbers: one count per bucket, the total count and the sum. Observing
a value is one ``bisect`` and three additions, with no lock (kubeprio's components run on one
thread) and no label lookup (a caller keeps one ``Histogram`` per label set it uses). The
cumulative ``le`` view a scrape needs is built only when asked for.

Buckets follow Prometheus' rule: a value falls in the first bucket whose upper bound is
greater than or equal to it; values above the last bound count only towards ``+Inf``.
``exponential_buckets`` is client_golang's ``ExponentialBuckets``, which upstream's
metric definitions use.

Who drives it: the scheduler's counters (``scheduler.metrics``) and the API server's
request counters (``apiserver.requestmetrics``) observe into it; ``serve.metrics`` reads
it at scrape time. Standard library only (the bottom layer).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """``count`` upper bounds, the first ``start``, each next one ``factor`` times the last
    (client_golang's ``ExponentialBuckets``: 0.001, 2, 15 gives 0.001 ... 16.384)."""
    bounds = []
    bound = start
    for _ in range(count):
        bounds.append(bound)
        bound *= factor
    return tuple(bounds)


class Histogram:
    """Counts of observed values per bucket, and their sum."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        # One slot per bound plus the overflow slot (values above the last bound).
        self.counts = [0] * (len(self.bounds) + 1)
        self.sum = 0.0
        self.count = 0
        """How many values were observed (kept, not summed: the scheduler's ``scheduled``
        and ``failed_attempts`` read it after every decision)."""

    def observe(self, value: float) -> None:
        """Count ``value`` in its bucket and add it to the sum."""
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def cumulative(self) -> list[tuple[float, int]]:
        """``(upper bound, values <= bound)`` per bucket, ending with ``(inf, count)``."""
        result: list[tuple[float, int]] = []
        running = 0
        for bound, count in zip(self.bounds, self.counts, strict=False):
            running += count
            result.append((bound, running))
        result.append((float("inf"), running + self.counts[-1]))
        return result
