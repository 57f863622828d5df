"""The scheduler's counters, kept where upstream's kube-scheduler updates its metrics.

What it is: the values behind kube-scheduler's metrics (upstream
``pkg/scheduler/metrics/metrics.go`` and ``metric_recorder.go``), as plain integers and
``kubeprio.histogram`` histograms with upstream's bucket layouts. Who updates what, and
the upstream place it mirrors:

* ``Scheduler.schedule_one`` (upstream ``schedule_one.go``): a bound pod observes its
  attempt's duration under ``scheduled`` (``metrics.PodScheduled`` after the bind), its
  ``attempts`` (``PodSchedulingAttempts``) and the time since it first entered activeQ
  under its attempts label (``PodSchedulingSLIDuration``, ``getAttemptsLabel``); a failed
  attempt observes under ``unschedulable`` when its status is a rejection, else ``error``
  (``handleSchedulingFailure``: ``PodUnschedulable``/``PodScheduleError``). The number of
  attempts per result (``scheduler_schedule_attempts_total``) is each histogram's count,
  as upstream increments the counter and observes the histogram together
  (``observeScheduleAttemptAndLatency``).
* ``DefaultPreemption.post_filter`` counts every call in ``preemption_attempts``
  (``defer metrics.PreemptionAttempts.Inc()``), eligible or not.
* ``preemption.Evaluator`` observes the number of victims once they are all evicted
  (``prepareCandidate``'s ``PreemptionVictims.Observe``).

The queue keeps its own incoming-pod counts and sizes (``SchedulingQueue.incoming``,
``pending_counts``); ``serve.metrics`` reads both at scrape time and names them.
Durations come from the stopwatch the composition root hands the scheduler (a
monotonic wall clock in serve and bench, the injected clock in simulations), so counting
never changes what the scheduler decides. No I/O, no locks, no label lookups per
decision beyond one dict read for the SLI's attempts label.
"""

from __future__ import annotations

from typing import Final

from kubeprio.histogram import Histogram, exponential_buckets

RESULT_SCHEDULED: Final = "scheduled"
RESULT_UNSCHEDULABLE: Final = "unschedulable"
RESULT_ERROR: Final = "error"
RESULTS: Final = (RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, RESULT_ERROR)

ATTEMPT_DURATION_BUCKETS: Final = exponential_buckets(0.001, 2, 15)
"""``scheduling_attempt_duration_seconds``: 1 ms up to about 16 s."""
PREEMPTION_VICTIMS_BUCKETS: Final = exponential_buckets(1, 2, 7)
"""``preemption_victims``: 1 up to 64 (upstream: more than 64 victims is rare)."""
POD_SCHEDULING_ATTEMPTS_BUCKETS: Final = exponential_buckets(1, 2, 5)
"""``pod_scheduling_attempts``: 1 up to 16."""
SLI_DURATION_BUCKETS: Final = exponential_buckets(0.01, 2, 20)
"""``pod_scheduling_sli_duration_seconds``: 10 ms up to about 88 minutes."""
MAX_ATTEMPTS_LABEL: Final = 15
"""Upstream ``getAttemptsLabel`` caps the label at ``15+`` (bounded cardinality)."""


def attempts_label(attempts: int) -> str:
    """Upstream ``getAttemptsLabel``: the attempt count, or ``15+``."""
    return f"{MAX_ATTEMPTS_LABEL}+" if attempts >= MAX_ATTEMPTS_LABEL else str(attempts)


class SchedulerMetrics:
    """The counters of one scheduler profile (see the module docstring)."""

    __slots__ = (
        "_scheduled",
        "_sli_by_attempts",
        "attempt_duration",
        "pod_scheduling_attempts",
        "preemption_attempts",
        "preemption_victims",
        "profile",
    )

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.attempt_duration: dict[str, Histogram] = {
            result: Histogram(ATTEMPT_DURATION_BUCKETS) for result in RESULTS
        }
        """Per result; each histogram's count is ``schedule_attempts_total`` for it."""
        self.preemption_attempts = 0
        self.preemption_victims = Histogram(PREEMPTION_VICTIMS_BUCKETS)
        self.pod_scheduling_attempts = Histogram(POD_SCHEDULING_ATTEMPTS_BUCKETS)
        # Bound on every pod: the histograms are reached by index, not by label.
        self._scheduled = self.attempt_duration[RESULT_SCHEDULED]
        self._sli_by_attempts = [
            Histogram(SLI_DURATION_BUCKETS) for _ in range(MAX_ATTEMPTS_LABEL + 1)
        ]

    @property
    def sli_duration(self) -> dict[str, Histogram]:
        """``pod_scheduling_sli_duration_seconds`` by attempts label (``1`` ... ``14``,
        ``15+``, in that order), for the labels observed so far (a Go ``HistogramVec``'s
        series)."""
        return {
            attempts_label(attempts): histogram
            for attempts, histogram in enumerate(self._sli_by_attempts)
            if histogram.count
        }

    def pod_scheduled(
        self, duration: float, attempts: int, since_first_queued: float | None
    ) -> None:
        """A pod was bound (upstream ``PodScheduled`` and the two per-pod histograms)."""
        self._scheduled.observe(duration)
        self.pod_scheduling_attempts.observe(attempts)
        if since_first_queued is not None:
            self._sli_by_attempts[min(attempts, MAX_ATTEMPTS_LABEL)].observe(since_first_queued)

    def attempt_failed(self, duration: float, *, rejected: bool) -> None:
        """An attempt ended without a binding: ``unschedulable`` for a rejection, else
        ``error`` (upstream ``handleSchedulingFailure``)."""
        result = RESULT_UNSCHEDULABLE if rejected else RESULT_ERROR
        self.attempt_duration[result].observe(duration)
