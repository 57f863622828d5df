"""What a simulated pod's containers use: ``kubeprio.io/usage`` read per container.

A simulated container runs no process, so its usage is declared: the annotation
``kubeprio.io/usage`` (parsed by ``api.annotations.parse_usage``) lists
``[container:]resource=quantity`` entries; an unqualified entry belongs to the first app
container, and a container no entry names uses nothing. Three resources mean something:

* ``memory`` (bytes): the working set. The kubelet's node-pressure eviction counts it
  against ``memory.available`` and ranks pods by it; the resource metrics API reports it;
* ``ephemeral-storage`` (bytes): what the container writes to the node's filesystem; only
  eviction counts it;
* ``cpu`` (nanocores): only the resource metrics API reports it (``kubectl top``); the
  kubelet has no CPU eviction signal, as upstream.

Other resource names are accepted and ignored. Quantities keep their exact value: memory
and storage are whole bytes rounded up (``Quantity.value``), CPU is the quantity's nano
count (``250m`` is 250,000,000 nanocores, the unit metrics-server reports).

Who reads it: ``kubelet.runtime`` (memory and ephemeral storage, for eviction),
``apiserver.resourcemetrics`` (CPU and memory, for ``metrics.k8s.io``) and the HPA
controller (``controllers.replicacalculator``, the same pods and numbers the metrics API
reports: ``is_running``, ``answering``, ``container_usage``, ``window_seconds``). Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kubeprio.api.annotations import USAGE, AnnotationError, UsageEntry, parse_usage
from kubeprio.api.core import PHASE_RUNNING, Node, Pod
from kubeprio.api.nodeconditions import ready_condition
from kubeprio.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubeprio.clock import parse_rfc3339

METRIC_RESOLUTION_SECONDS: Final = 15
"""metrics-server's ``--metric-resolution`` in its release manifests (k3s ships the same)."""
CONDITION_UNKNOWN: Final = "Unknown"


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    """What one app container uses: CPU in nanocores, memory and storage in bytes."""

    name: str
    cpu_nanocores: int = 0
    memory_bytes: int = 0
    ephemeral_storage_bytes: int = 0


def container_names(pod: Pod) -> list[str]:
    """The pod's app containers, in spec order (init containers have exited by then)."""
    spec = pod.spec
    return [c.name or "" for c in (spec.containers or ())] if spec else []


def declared_usage(pod: Pod) -> tuple[ContainerUsage, ...]:
    """Every app container's usage; zero for all without the annotation.

    Raises ``AnnotationError`` when the annotation does not parse or names a container the
    pod does not have (the kubelet reports it as an ``InvalidAnnotation`` event).
    """
    names = container_names(pod)
    text = pod.metadata.annotation(USAGE)
    if text is None:
        return tuple(ContainerUsage(name) for name in names)
    return usage_of(names, parse_usage(text))


def usage_of(names: list[str], entries: tuple[UsageEntry, ...]) -> tuple[ContainerUsage, ...]:
    """Sum ``entries`` per container of ``names`` (unqualified entries: the first one)."""
    cpu = dict.fromkeys(names, 0)
    memory = dict.fromkeys(names, 0)
    storage = dict.fromkeys(names, 0)
    for entry in entries:
        container = entry.container if entry.container is not None else (names or [""])[0]
        if container not in memory:
            raise AnnotationError(f'{USAGE}: pod has no container "{container}"')
        if entry.resource == MEMORY:
            memory[container] += entry.quantity.value()
        elif entry.resource == EPHEMERAL_STORAGE:
            storage[container] += entry.quantity.value()
        elif entry.resource == CPU:
            cpu[container] += entry.quantity.nanos
    return tuple(ContainerUsage(n, cpu[n], memory[n], storage[n]) for n in names)


def is_running(pod: Pod) -> bool:
    """Whether metrics-server's pod informer holds the pod (``status.phase=Running``)."""
    return pod.status is not None and pod.status.phase == PHASE_RUNNING


def node_answers(node: Node) -> bool:
    """Whether the node's kubelet answers a scrape: it has posted a ``Ready`` condition
    that is not ``Unknown`` (``Unknown`` is what the node lifecycle controller writes when
    a kubelet stops posting, and a stopped kubelet cannot be scraped)."""
    ready = ready_condition(node)
    return ready is not None and ready.status != CONDITION_UNKNOWN


def answering(get_node: Callable[[str], Node | None]) -> Callable[[str], bool]:
    """``node_answers`` by node name, each node looked up (``get_node``) once: for one
    metrics request or one HPA reconcile."""
    answers: dict[str, bool] = {}

    def answers_by_name(name: str) -> bool:
        found = answers.get(name)
        if found is None:
            node = get_node(name)
            found = answers[name] = node is not None and node_answers(node)
        return found

    return answers_by_name


def container_usage(pod: Pod) -> tuple[ContainerUsage, ...]:
    """The pod's app containers' usage; zero for each when its annotation does not parse."""
    try:
        return declared_usage(pod)
    except AnnotationError:
        return tuple(ContainerUsage(name) for name in container_names(pod))


def window_seconds(started: str | None, now: float) -> int:
    """The scrape window, shortened to the whole seconds since ``started`` (if known)."""
    if not started:
        return METRIC_RESOLUTION_SECONDS
    try:
        elapsed = now - parse_rfc3339(started)
    except ValueError:
        return METRIC_RESOLUTION_SECONDS
    return max(0, min(METRIC_RESOLUTION_SECONDS, math.floor(elapsed)))
