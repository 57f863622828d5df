"""``/metrics`` for ``kubeprio serve``: kube-scheduler's and kube-apiserver's metrics on one page.

What it is: the exposition side of kubeprio's counters. ``MetricsPage`` holds a
``prometheus_client`` registry with three collectors, all read at scrape time:

* ``SchedulerCollector`` -- kube-scheduler's metrics (upstream
  ``pkg/scheduler/metrics/metrics.go``) from ``scheduler.metrics.SchedulerMetrics`` and
  the queue (``SchedulingQueue.incoming``, ``pending_counts``);
* ``ApiServerCollector`` -- ``apiserver_request_total`` and
  ``apiserver_request_duration_seconds`` (``endpoints/metrics/metrics.go``) from
  ``apiserver.requestmetrics.RequestMetrics``, and ``apiserver_storage_objects``
  (``storage/etcd3/metrics``) counted in the store per served kind at each scrape (upstream
  polls every minute);
* prometheus_client's ``ProcessCollector`` -- ``process_cpu_seconds_total``,
  ``process_resident_memory_bytes`` and the rest, with the names and help texts Go's
  client gives them.

Names, label names, types, help texts and bucket bounds are upstream's v1.32 ones. Help
texts carry component-base's stability prefix (``[STABLE] ``, ``[BETA] ``), as a real
``/metrics`` page shows them. Series of a labelled metric appear once counted (as a Go
``*Vec`` creates them on first use); unlabelled ones and the pending-pod gauges are always
there. Histogram ``le`` values are written as Go writes floats (``le="1"``, not
``le="1.0"``), so label matchers taken from upstream's dashboards and recording rules
(``le="1"``) select the same buckets.

Why one page: in a real cluster the scheduler's metrics are on kube-scheduler's own port
(10259) and the API server's on its port; kubeprio runs every component in one process
(as k3s does), so the API port's ``/metrics`` serves both.

Who drives it: ``serve.server`` builds the page and hands ``render`` to
``apiserver.http.create_app``, which serves it to callers the authorizer lets read
``/metrics``. The only module that imports ``prometheus_client`` (an import-linter
contract). Reading the counters costs O(kinds + label sets), never O(pods).
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Iterable, Sequence
from typing import Final

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from kubeprio.api import kinds
from kubeprio.apiserver.requestmetrics import RequestMetrics
from kubeprio.histogram import Histogram
from kubeprio.scheduler.scheduler import Scheduler
from kubeprio.store.interface import Store

CONTENT_TYPE: Final = CONTENT_TYPE_PLAIN_0_0_4
"""``text/plain; version=0.0.4; charset=utf-8``: what client_golang answers by default."""
STABLE: Final = "[STABLE] "
BETA: Final = "[BETA] "

SCHEDULE_ATTEMPTS_HELP: Final = (
    "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
    "not be scheduled, while 'error' means an internal scheduler problem."
)
ATTEMPT_DURATION_HELP: Final = (
    "Scheduling attempt latency in seconds (scheduling algorithm + binding)"
)
PREEMPTION_ATTEMPTS_HELP: Final = "Total preemption attempts in the cluster till now"
PREEMPTION_VICTIMS_HELP: Final = "Number of selected preemption victims"
PENDING_PODS_HELP: Final = (
    "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
    "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
    "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
    "number of unschedulable pods that the scheduler never attempted to schedule because "
    "they are gated."
)
POD_SCHEDULING_ATTEMPTS_HELP: Final = "Number of attempts to successfully schedule a pod."
SLI_DURATION_HELP: Final = (
    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
    "queue and might involve multiple scheduling attempts."
)
QUEUE_INCOMING_HELP: Final = "Number of pods added to scheduling queues by event and queue type."
REQUEST_TOTAL_HELP: Final = (
    "Counter of apiserver requests broken out for each verb, dry run value, group, version, "
    "resource, scope, component, and HTTP response code."
)
REQUEST_DURATION_HELP: Final = (
    "Response latency distribution in seconds for each verb, dry run value, group, version, "
    "resource, subresource, scope and component."
)
STORAGE_OBJECTS_HELP: Final = (
    "Number of stored objects at the time of last check split by kind. In case of a "
    "fetching error, the value will be -1."
)
REQUEST_LABELS: Final = (
    "verb",
    "dry_run",
    "group",
    "version",
    "resource",
    "subresource",
    "scope",
    "component",
)
PENDING_QUEUES: Final = ("active", "backoff", "unschedulable", "gated")


def go_float(value: float) -> str:
    """``value`` as Go's ``strconv.FormatFloat(v, 'g', -1, 64)`` writes it, which is how
    client_golang writes ``le`` bounds: the shortest digits, an exponent below 1e-4 and
    from 1e21 on (``1``, ``0.005``, ``16.384``, ``1e-05``, ``+Inf``)."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "0"
    exact = decimal.Decimal(repr(value)).normalize()
    sign, digits, exponent = exact.as_tuple()
    assert isinstance(exponent, int)
    point = len(digits) + exponent  # digits before the decimal point
    magnitude = point - 1
    text = "".join(map(str, digits))
    prefix = "-" if sign else ""
    if magnitude < -4 or magnitude >= 21:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if magnitude < 0 else '+'}{abs(magnitude):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{prefix}{text}{'0' * (point - len(text))}"
    return f"{prefix}{text[:point]}.{text[point:]}"


def _buckets(histogram: Histogram) -> list[tuple[str, float]]:
    return [(go_float(bound), count) for bound, count in histogram.cumulative()]


def _add_histogram(
    family: HistogramMetricFamily, labels: Sequence[str], histogram: Histogram
) -> None:
    family.add_metric(list(labels), _buckets(histogram), histogram.sum)


class SchedulerCollector(Collector):
    """kube-scheduler's metrics, read from the scheduler and its queue at each scrape."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler

    def collect(self) -> Iterable[Metric]:
        """Build the families (``Collector`` protocol)."""
        scheduler = self._scheduler
        counters = scheduler.metrics
        profile = counters.profile
        observed = {
            result: histogram
            for result, histogram in sorted(counters.attempt_duration.items())
            if histogram.count
        }
        attempts = CounterMetricFamily(
            "scheduler_schedule_attempts_total",
            STABLE + SCHEDULE_ATTEMPTS_HELP,
            labels=("profile", "result"),
        )
        durations = HistogramMetricFamily(
            "scheduler_scheduling_attempt_duration_seconds",
            STABLE + ATTEMPT_DURATION_HELP,
            labels=("profile", "result"),
        )
        for result, histogram in observed.items():
            attempts.add_metric([profile, result], histogram.count)
            _add_histogram(durations, (profile, result), histogram)
        yield attempts
        yield durations
        yield CounterMetricFamily(
            "scheduler_preemption_attempts_total",
            STABLE + PREEMPTION_ATTEMPTS_HELP,
            value=counters.preemption_attempts,
        )
        victims = HistogramMetricFamily(
            "scheduler_preemption_victims", STABLE + PREEMPTION_VICTIMS_HELP
        )
        _add_histogram(victims, (), counters.preemption_victims)
        yield victims
        pending = GaugeMetricFamily(
            "scheduler_pending_pods", STABLE + PENDING_PODS_HELP, labels=("queue",)
        )
        sizes = scheduler.queue.pending_counts()
        for queue in PENDING_QUEUES:
            pending.add_metric([queue], sizes[queue])
        yield pending
        per_pod = HistogramMetricFamily(
            "scheduler_pod_scheduling_attempts", STABLE + POD_SCHEDULING_ATTEMPTS_HELP
        )
        _add_histogram(per_pod, (), counters.pod_scheduling_attempts)
        yield per_pod
        sli = HistogramMetricFamily(
            "scheduler_pod_scheduling_sli_duration_seconds",
            BETA + SLI_DURATION_HELP,
            labels=("attempts",),
        )
        # In label order already (1 ... 14, 15+): sli_duration walks attempts up.
        for label, histogram in counters.sli_duration.items():
            _add_histogram(sli, (label,), histogram)
        yield sli
        incoming = CounterMetricFamily(
            "scheduler_queue_incoming_pods_total",
            STABLE + QUEUE_INCOMING_HELP,
            labels=("event", "queue"),
        )
        for (queue, event), count in sorted(scheduler.queue.incoming.items()):
            incoming.add_metric([event, queue], count)
        yield incoming


class ApiServerCollector(Collector):
    """kube-apiserver's request and storage metrics, read at each scrape."""

    def __init__(self, requests: RequestMetrics, store: Store) -> None:
        self._requests = requests
        self._store = store

    def collect(self) -> Iterable[Metric]:
        """Build the families (``Collector`` protocol)."""
        totals = CounterMetricFamily(
            "apiserver_request_total",
            STABLE + REQUEST_TOTAL_HELP,
            labels=(*REQUEST_LABELS, "code"),
        )
        for (labels, code), count in sorted(self._requests.totals.items()):
            totals.add_metric([*labels, str(code)], count)
        yield totals
        durations = HistogramMetricFamily(
            "apiserver_request_duration_seconds",
            STABLE + REQUEST_DURATION_HELP,
            labels=REQUEST_LABELS,
        )
        for labels, histogram in sorted(self._requests.durations.items()):
            _add_histogram(durations, labels, histogram)
        yield durations
        yield self._storage_objects()

    def _storage_objects(self) -> Metric:
        """One gauge per stored kind, ``pods`` or ``deployments.apps`` (upstream labels
        it with the registry's ``GroupResource``); -1 when the store cannot answer."""
        gauge = GaugeMetricFamily(
            "apiserver_storage_objects", STABLE + STORAGE_OBJECTS_HELP, labels=("resource",)
        )
        for info in sorted(kinds.RESOURCES, key=lambda info: info.group_resource):
            try:
                count = self._store.count(info.plural)
            except Exception:  # a closed or failed store: upstream reports -1
                count = -1
            gauge.add_metric([info.group_resource], count)
        return gauge


class MetricsPage:
    """The registry behind ``/metrics`` and its rendering (see the module docstring)."""

    def __init__(self, collectors: Iterable[Collector]) -> None:
        # A registry of our own: prometheus_client's global one would also carry its
        # Python-specific collectors (python_gc_*, python_info), which upstream lacks.
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(ProcessCollector(registry=None))
        for collector in collectors:
            self.registry.register(collector)

    @classmethod
    def for_serve(
        cls, *, scheduler: Scheduler, requests: RequestMetrics, store: Store
    ) -> MetricsPage:
        """The page of ``kubeprio serve``: process, scheduler and API server metrics."""
        return cls((SchedulerCollector(scheduler), ApiServerCollector(requests, store)))

    def render(self) -> tuple[bytes, str]:
        """The page in Prometheus' text format 0.0.4, and its ``Content-Type``."""
        return generate_latest(self.registry), CONTENT_TYPE
