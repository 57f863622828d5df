"""Measuring benchmark runs: throughput samples, latency percentiles and peak memory.

Throughput follows scheduler_perf's ``SchedulingThroughput`` idea: count scheduled pods
in fixed wall-clock windows (1 s by default) and report the average and percentiles of
the per-window rates; runs shorter than one window report their whole-run rate.
Percentiles are nearest-rank, as upstream's collector computes them.
"""

from __future__ import annotations

import math
import resource
import sys
import time
from collections.abc import Sequence


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def peak_rss_bytes() -> int:
    """Peak resident set size of this process."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class ThroughputSampler:
    """Counts events per wall-clock window."""

    def __init__(self, window: float = 1.0) -> None:
        self.window = window
        self.start = time.perf_counter()
        self._window_start = self.start
        self._in_window = 0
        self.samples: list[float] = []
        self.total = 0

    def count(self, n: int = 1) -> None:
        """Record ``n`` events now."""
        self.total += n
        self._in_window += n
        now = time.perf_counter()
        if now - self._window_start >= self.window:
            self.samples.append(self._in_window / (now - self._window_start))
            self._window_start = now
            self._in_window = 0

    def finish(self) -> dict[str, float]:
        """Average and percentiles of the per-window rates."""
        elapsed = time.perf_counter() - self.start
        samples = list(self.samples)
        tail = time.perf_counter() - self._window_start
        if self._in_window and (not samples or tail >= self.window / 4):
            samples.append(self._in_window / max(tail, 1e-9))
        average = self.total / elapsed if elapsed > 0 else 0.0
        return {
            "pods_per_s": round(average, 1),
            "pods_per_s_p50": round(percentile(samples, 50), 1),
            "pods_per_s_p90": round(percentile(samples, 90), 1),
            "pods_per_s_p99": round(percentile(samples, 99), 1),
            "elapsed_s": round(elapsed, 3),
        }


def latency_summary(latencies_s: Sequence[float], prefix: str) -> dict[str, float]:
    """p50/p99 of latencies, in microseconds."""
    return {
        f"{prefix}_p50_us": round(percentile(latencies_s, 50) * 1e6, 1),
        f"{prefix}_p99_us": round(percentile(latencies_s, 99) * 1e6, 1),
    }
