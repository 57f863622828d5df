"""How many replicas a Resource metric asks for: upstream's replica calculator.

Mirrors ``pkg/controller/podautoscaler/replica_calculator.go`` (v1.32) for the resource
metrics (``GetResourceReplicas`` for a Utilization target, ``GetRawResourceReplicas``
for an AverageValue target, through ``calcPlainMetricReplicas``), with ``groupPods``,
``calculatePodRequests``, ``removeMetricsForPods`` and the metrics helpers of
``podautoscaler/metrics`` (``GetResourceUtilizationRatio``, ``GetMetricUsageRatio``):

* ``usage_ratio = current / target``; within the tolerance (0.1) of 1.0 the count stays;
  otherwise ``ceil(ratio * ready pods)``;
* pods being deleted or Failed are ignored; Pending pods are *unready*; for cpu, a pod
  without a Ready condition or start time, a pod not Ready (or Ready for less than one
  metric window) in its first ``cpuInitializationPeriod`` (300 s), or a pod that never
  became Ready after ``delayOfInitialReadinessStatus`` (30 s), is unready; a pod with no
  metric is *missing*;
* when scaling up with unready pods, they count as using 0; missing pods count as using
  0 on a scale up and 100 % of their request (or of the target, if above 100 %) on a
  scale down; if that flips the direction or lands within tolerance, the count stays.

The metrics are what the resource metrics API reports (``resource_metrics``, from
``api.podusage``: running pods on nodes whose kubelets answer, each container's declared
``kubeprio.io/usage``), in milli-units, as the metrics client's ``MilliValue`` sums.

Who calls it: ``controllers.horizontal``. Pure functions of their arguments; ``now`` is
the caller's clock. Errors are ``MetricsError`` with upstream's texts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kubeprio.api.autoscaling import (
    EXTERNAL,
    OBJECT,
    PODS,
    MetricSpec,
    MetricTarget,
    MetricValueStatus,
)
from kubeprio.api.core import PHASE_FAILED, PHASE_PENDING, Pod
from kubeprio.api.podusage import container_usage, is_running, window_seconds
from kubeprio.api.quantity import Quantity
from kubeprio.api.resources import CPU, MEMORY
from kubeprio.clock import parse_rfc3339
from kubeprio.errors import KubeprioError

DEFAULT_TOLERANCE: Final = 0.1
"""``--horizontal-pod-autoscaler-tolerance``."""
DEFAULT_CPU_INITIALIZATION_PERIOD: Final = 300.0
"""``--horizontal-pod-autoscaler-cpu-initialization-period``."""
DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS: Final = 30.0
"""``--horizontal-pod-autoscaler-initial-readiness-delay``."""


class MetricsError(KubeprioError):
    """A metric could not be read or used (upstream's ``fmt.Errorf`` texts)."""


@dataclass(frozen=True, slots=True)
class PodMetric:
    """``metricsclient.PodMetric``: a pod's usage (milli-units) and when it was measured."""

    value: int
    timestamp: float = 0.0
    window: float = 0.0


@dataclass(frozen=True, slots=True)
class Calculator:
    """``ReplicaCalculator``'s settings."""

    tolerance: float = DEFAULT_TOLERANCE
    cpu_initialization_period: float = DEFAULT_CPU_INITIALIZATION_PERIOD
    delay_of_initial_readiness_status: float = DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS


def _milli(resource: str, cpu_nanocores: int, memory_bytes: int) -> int | None:
    """A container's usage of ``resource`` as ``MilliValue`` (None: not reported)."""
    if resource == CPU:
        return Quantity(cpu_nanocores).milli_value()
    if resource == MEMORY:
        return memory_bytes * 1000
    return None


def resource_metrics(
    pods: Iterable[Pod],
    resource: str,
    container: str,
    *,
    now: float,
    node_answers: Callable[[str], bool],
) -> dict[str, PodMetric]:
    """``GetResourceMetric``: the metrics API's pods (running, on an answering node) by
    name, their containers' usage summed (or only ``container``'s). A pod lacking the
    resource in a container, or lacking ``container``, has no metric; no pod at all is
    upstream's ``no metrics returned from resource metrics API``."""
    reported = 0
    found: dict[str, PodMetric] = {}
    for pod in pods:
        node = pod.spec.node_name if pod.spec else None
        if not is_running(pod) or not node or not node_answers(node):
            continue
        reported += 1
        started = (pod.status.start_time if pod.status else None) or pod.metadata.creation_timestamp
        window = float(window_seconds(started, now))
        total = 0
        usable = False
        for usage in container_usage(pod):
            if container and usage.name != container:
                continue
            value = _milli(resource, usage.cpu_nanocores, usage.memory_bytes)
            if value is None:
                usable = False
                break
            total += value
            usable = True
        if usable:
            found[pod.metadata.name or ""] = PodMetric(total, now, window)
    if not reported:
        raise MetricsError("no metrics returned from resource metrics API")
    return found


def _ready_condition(pod: Pod) -> tuple[str, str] | None:
    for condition in (pod.status.conditions if pod.status else None) or ():
        if condition.type == "Ready":
            return condition.status or "", condition.last_transition_time or ""
    return None


def _time(text: str) -> float:
    try:
        return parse_rfc3339(text)
    except ValueError:
        return 0.0


@dataclass(slots=True)
class Groups:
    """``groupPods``'s answer."""

    ready: int
    unready: set[str]
    missing: set[str]
    ignored: set[str]


def group_pods(
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    resource: str,
    calc: Calculator,
    now: float,
) -> Groups:
    """``groupPods``."""
    groups = Groups(0, set(), set(), set())
    for pod in pods:
        name = pod.metadata.name or ""
        phase = pod.status.phase if pod.status else None
        if pod.metadata.deletion_timestamp or phase == PHASE_FAILED:
            groups.ignored.add(name)
            continue
        if phase == PHASE_PENDING:
            groups.unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            groups.missing.add(name)
            continue
        if resource == CPU:
            condition = _ready_condition(pod)
            start = pod.status.start_time if pod.status else None
            if condition is None or not start:
                unready = True
            else:
                status, transition = condition
                started = _time(start)
                changed = _time(transition)
                if started + calc.cpu_initialization_period > now:
                    # Within the initialization period: unready, or ready for less than one
                    # metric window (the sample may predate readiness).
                    unready = status == "False" or metric.timestamp < changed + metric.window
                else:
                    # Unready and never ready since it started.
                    unready = (
                        status == "False"
                        and started + calc.delay_of_initial_readiness_status > changed
                    )
            if unready:
                groups.unready.add(name)
                continue
        groups.ready += 1
    return groups


def pod_requests(pods: Sequence[Pod], container: str, resource: str) -> dict[str, int]:
    """``calculatePodRequests``: each pod's request (milli-units) of ``resource``, over its
    app containers and restartable init containers (or ``container`` only)."""
    requests: dict[str, int] = {}
    for pod in pods:
        spec = pod.spec
        containers = list((spec.containers if spec else None) or ())
        containers += [
            c
            for c in (spec.init_containers if spec else None) or ()
            if c.restart_policy == "Always"
        ]
        total = 0
        for c in containers:
            if container and c.name != container:
                continue
            request = (c.resources.requests if c.resources else None) or {}
            if resource not in request:
                raise MetricsError(
                    f"missing request for {resource} in container {c.name or ''} of Pod "
                    f"{pod.metadata.name or ''}"
                )
            total += request[resource].milli_value()
        requests[pod.metadata.name or ""] = total
    return requests


def utilization_ratio(
    metrics: Mapping[str, PodMetric], requests: Mapping[str, int], target: int
) -> tuple[float, int, int]:
    """``GetResourceUtilizationRatio``: (ratio, utilization %, average raw milli-value)."""
    metrics_total = requests_total = entries = 0
    for name, metric in metrics.items():
        request = requests.get(name)
        if request is None:
            continue  # a metric of a pod the lister does not have
        metrics_total += metric.value
        requests_total += request
        entries += 1
    if requests_total == 0:
        raise MetricsError("no metrics returned matched known pods")
    utilization = _go_div(metrics_total * 100, requests_total)
    return utilization / target, utilization, _go_div(metrics_total, entries)


def usage_ratio(metrics: Mapping[str, PodMetric], target: int) -> tuple[float, int]:
    """``GetMetricUsageRatio``: (ratio, average usage)."""
    usage = _go_div(sum(m.value for m in metrics.values()), len(metrics))
    return usage / target, usage


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _within(calc: Calculator, ratio: float) -> bool:
    return abs(1.0 - ratio) <= calc.tolerance


def _direction_flips(ratio: float, new_ratio: float) -> bool:
    return (ratio < 1.0 and new_ratio > 1.0) or (ratio > 1.0 and new_ratio < 1.0)


@dataclass(frozen=True, slots=True)
class Proposal:
    """A metric's replica count and the value it measured (utilization % or average)."""

    replicas: int
    utilization: int | None
    raw: int
    timestamp: float


def _usable_metrics(
    calc: Calculator,
    *,
    resource: str,
    pods: Sequence[Pod],
    metrics: dict[str, PodMetric],
    now: float,
) -> tuple[Groups, float]:
    """The opening both calculations share: the metrics' timestamp, the pods grouped, and
    the metrics of ignored and unready pods dropped from ``metrics``."""
    timestamp = next(iter(metrics.values())).timestamp if metrics else now
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    groups = group_pods(pods, metrics, resource, calc, now)
    for name in groups.ignored | groups.unready:
        metrics.pop(name, None)
    if not metrics:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    return groups, timestamp


def _replicas_for_ratio(
    calc: Calculator,
    *,
    current_replicas: int,
    groups: Groups,
    metrics: dict[str, PodMetric],
    ratio: float,
    ratio_of: Callable[[Mapping[str, PodMetric]], float],
    missing_usage: Callable[[str], int],
) -> int:
    """The decision both calculations share: within tolerance the count stays, otherwise
    ``ceil(ratio * ready)``; with missing pods, or unready pods on a scale up, those are
    filled in (``missing_usage`` on a scale down, 0 otherwise), the ratio worked out again
    (``ratio_of``), and the count stays if that flips the direction or lands within
    tolerance."""
    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if _within(calc, ratio):
            return current_replicas
        return math.ceil(ratio * groups.ready)
    if groups.missing:
        if ratio < 1.0:
            for name in groups.missing:
                metrics[name] = PodMetric(missing_usage(name))
        elif ratio > 1.0:
            for name in groups.missing:
                metrics[name] = PodMetric(0)
    if scale_up_with_unready:
        for name in groups.unready:
            metrics[name] = PodMetric(0)
    new_ratio = ratio_of(metrics)
    if _within(calc, new_ratio) or _direction_flips(ratio, new_ratio):
        return current_replicas
    replicas = math.ceil(new_ratio * len(metrics))
    if (new_ratio < 1.0 and replicas > current_replicas) or (
        new_ratio > 1.0 and replicas < current_replicas
    ):
        return current_replicas
    return replicas


def resource_replicas(
    calc: Calculator,
    *,
    current_replicas: int,
    target_utilization: int,
    resource: str,
    container: str,
    pods: Sequence[Pod],
    metrics: dict[str, PodMetric],
    now: float,
) -> Proposal:
    """``GetResourceReplicas`` (after ``GetResourceMetric``: ``metrics``); a missing pod
    counts, on a scale down, as using its request's ``max(100, target)`` per cent."""
    groups, timestamp = _usable_metrics(
        calc, resource=resource, pods=pods, metrics=metrics, now=now
    )
    requests = pod_requests(pods, container, resource)
    ratio, utilization, raw = utilization_ratio(metrics, requests, target_utilization)
    fallback = max(100, target_utilization)
    replicas = _replicas_for_ratio(
        calc,
        current_replicas=current_replicas,
        groups=groups,
        metrics=metrics,
        ratio=ratio,
        ratio_of=lambda m: utilization_ratio(m, requests, target_utilization)[0],
        missing_usage=lambda name: _go_div(requests.get(name, 0) * fallback, 100),
    )
    return Proposal(replicas, utilization, raw, timestamp)


def raw_resource_replicas(
    calc: Calculator,
    *,
    current_replicas: int,
    target_usage: int,
    resource: str,
    pods: Sequence[Pod],
    metrics: dict[str, PodMetric],
    now: float,
) -> Proposal:
    """``GetRawResourceReplicas`` through ``calcPlainMetricReplicas``; a missing pod counts,
    on a scale down, as using the target."""
    groups, timestamp = _usable_metrics(
        calc, resource=resource, pods=pods, metrics=metrics, now=now
    )
    ratio, usage = usage_ratio(metrics, target_usage)
    replicas = _replicas_for_ratio(
        calc,
        current_replicas=current_replicas,
        groups=groups,
        metrics=metrics,
        ratio=ratio,
        ratio_of=lambda m: usage_ratio(m, target_usage)[0],
        missing_usage=lambda _name: target_usage,
    )
    return Proposal(replicas, None, usage, timestamp)


NO_CUSTOM_METRICS: Final = (
    "unable to fetch metrics from custom metrics API: no custom metrics API "
    "(custom.metrics.k8s.io) registered"
)
NO_EXTERNAL_METRICS: Final = (
    "unable to fetch metrics from external metrics API: no external metrics API "
    "(external.metrics.k8s.io) registered"
)


def custom_metric_failure(spec: MetricSpec) -> tuple[str, str] | None:
    """A Pods, Object or External metric: kubeprio serves no custom or external metrics
    API, so these fail as upstream's do when the API is not registered; (event reason,
    error). None for other types."""
    if spec.type == PODS:
        name = (spec.pods.metric.name if spec.pods and spec.pods.metric else None) or ""
        return "FailedGetPodsMetric", f"unable to get metric {name}: {NO_CUSTOM_METRICS}"
    if spec.type == OBJECT:
        obj = spec.object
        name = (obj.metric.name if obj and obj.metric else None) or ""
        return "FailedGetObjectMetric", f"unable to get metric {name}: {NO_CUSTOM_METRICS}"
    if spec.type == EXTERNAL:
        ext = spec.external
        name = (ext.metric.name if ext and ext.metric else None) or ""
        return (
            "FailedGetExternalMetric",
            f"unable to get external metric {name}: {NO_EXTERNAL_METRICS}",
        )
    return None


def _fetch(
    pods: Sequence[Pod],
    resource: str,
    container: str,
    what: str,
    *,
    now: float,
    node_answers: Callable[[str], bool],
) -> dict[str, PodMetric]:
    """``GetResourceMetric`` with the wrapping both targets give its error (``what``:
    ``usage`` or ``utilization``)."""
    try:
        return resource_metrics(pods, resource, container, now=now, node_answers=node_answers)
    except MetricsError as exc:
        raise MetricsError(
            f"failed to get {resource} {what}: unable to get metrics for resource {resource}: {exc}"
        ) from exc


def resource_metric_status(
    calc: Calculator,
    *,
    target: MetricTarget,
    resource: str,
    container: str,
    pods: Sequence[Pod],
    current_replicas: int,
    container_source: bool,
    now: float,
    node_answers: Callable[[str], bool],
) -> tuple[int, MetricValueStatus, str]:
    """``computeStatusForResourceMetricGeneric``: (replicas, the current value, the
    metric's name in events), with upstream's error wrapping."""
    if target.average_value is not None:
        metrics = _fetch(pods, resource, container, "usage", now=now, node_answers=node_answers)
        try:
            proposal = raw_resource_replicas(
                calc,
                current_replicas=current_replicas,
                target_usage=target.average_value.milli_value(),
                resource=resource,
                pods=pods,
                metrics=metrics,
                now=now,
            )
        except MetricsError as exc:
            raise MetricsError(f"failed to get {resource} usage: {exc}") from exc
        return (
            proposal.replicas,
            MetricValueStatus(average_value=Quantity.from_milli(proposal.raw)),
            f"{resource} resource",
        )
    if target.average_utilization is None:
        raise MetricsError(
            "invalid resource metric source: neither an average utilization target nor "
            "an average value (usage) target was set"
        )
    metrics = _fetch(pods, resource, container, "utilization", now=now, node_answers=node_answers)
    try:
        proposal = resource_replicas(
            calc,
            current_replicas=current_replicas,
            target_utilization=target.average_utilization,
            resource=resource,
            container=container,
            pods=pods,
            metrics=metrics,
            now=now,
        )
    except MetricsError as exc:
        raise MetricsError(f"failed to get {resource} utilization: {exc}") from exc
    kind = "container resource" if container_source else "resource"
    return (
        proposal.replicas,
        MetricValueStatus(
            average_utilization=proposal.utilization,
            average_value=Quantity.from_milli(proposal.raw),
        ),
        f"{resource} {kind} utilization (percentage of request)",
    )
