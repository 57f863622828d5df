"""What the resource metrics API reports: each running pod's and each node's usage.

metrics-server scrapes every node's kubelet (``/metrics/resource``) and serves, for each
pod the kubelet reports and each node, the CPU rate and memory working set over the last
scrape window (``pkg/storage/pod.go``, ``node.go``, ``types.go`` of
kubernetes-sigs/metrics-server). kubeprio's containers run nothing, so their usage is the
declared ``kubeprio.io/usage`` (``api.podusage``, the numbers the kubelet's eviction
manager uses too), read at the moment of the request:

* a pod has metrics while its kubelet runs it: phase ``Running`` (metrics-server lists only
  ``status.phase=Running`` pods; a terminating pod still runs), on a node whose kubelet
  answers (``node_answers``). Each app container gets a ``cpu`` and a ``memory`` entry, zero
  for a pod without the annotation or with one that does not parse (the kubelet, too,
  counts such a pod as using nothing);
* a node's usage is the sum of its running pods' usage (a real node also counts its
  system daemons and kernel: kubeprio's nodes have none);
* CPU is in nanocores as a decimal quantity (``NewScaledQuantity(n, -9)``: ``250m``,
  ``1500m``, ``1``), memory in bytes as a binary one (``900Mi``, ``1000000000``), exactly
  as metrics-server builds them;
* ``timestamp`` and ``metadata.creationTimestamp`` are the request's time (metrics-server
  stamps ``creationTimestamp`` with ``time.Now()`` too); ``window`` is metrics-server's usual
  scrape period, 15 s, or the whole seconds the pod (node) has existed when that is less,
  so ``[timestamp - window, timestamp]`` never starts before it did.

The rules of which pods have metrics and what they use live in ``api.podusage`` (the HPA
controller reads usage by the same rules). Who drives it: ``apiserver.resourcemetrics``, per request. Pure: no I/O; ``now`` comes from
the caller's clock.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubeprio.api.core import Node, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.podusage import container_usage, window_seconds
from kubeprio.api.quantity import Quantity, QuantityFormat
from kubeprio.api.resourcemetrics import ContainerMetrics, NodeMetrics, PodMetrics
from kubeprio.api.resources import CPU, MEMORY
from kubeprio.clock import rfc3339


def _usage(cpu_nanocores: int, memory_bytes: int) -> dict[str, Quantity]:
    # The formats metrics-server gives them: cpu DecimalSI at scale -9, memory BinarySI.
    return {
        CPU: Quantity(cpu_nanocores, QuantityFormat.DECIMAL_SI),
        MEMORY: Quantity.from_int(memory_bytes, QuantityFormat.BINARY_SI),
    }


def go_duration(seconds: int) -> str:
    """Go's ``time.Duration.String`` of whole seconds under an hour (``0s``, ``15s``, ``1m5s``)."""
    minutes, rest = divmod(seconds, 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"


def pod_metrics(pod: Pod, *, now: float) -> PodMetrics:
    """The PodMetrics of a running pod, its containers in spec order."""
    meta = pod.metadata
    started = pod.status.start_time if pod.status else None
    return PodMetrics(
        metadata=ObjectMeta(
            name=meta.name,
            namespace=meta.namespace,
            creation_timestamp=rfc3339(now),
            labels=meta.labels or None,
        ),
        timestamp=rfc3339(now),
        window=go_duration(window_seconds(started or meta.creation_timestamp, now)),
        containers=tuple(
            ContainerMetrics(name=c.name, usage=_usage(c.cpu_nanocores, c.memory_bytes))
            for c in container_usage(pod)
        ),
    )


def node_metrics(node: Node, running_pods: Iterable[Pod], *, now: float) -> NodeMetrics:
    """The NodeMetrics of a node: the sum of ``running_pods``' usage."""
    cpu = memory = 0
    for pod in running_pods:
        for container in container_usage(pod):
            cpu += container.cpu_nanocores
            memory += container.memory_bytes
    meta = node.metadata
    return NodeMetrics(
        metadata=ObjectMeta(
            name=meta.name, creation_timestamp=rfc3339(now), labels=meta.labels or None
        ),
        timestamp=rfc3339(now),
        window=go_duration(window_seconds(meta.creation_timestamp, now)),
        usage=_usage(cpu, memory),
    )
