"""Builders shared by the scheduling-queue tests."""

from __future__ import annotations

import dataclasses
from typing import Any

from kubeprio.api.core import Node, Pod, PodStatus
from kubeprio.scheduler.events import NODE_ADD as NODE_ADD_EVENT
from kubeprio.scheduler.events import ClusterEventWithHint
from kubeprio.scheduler.framework import Code, QueuedPodInfo, Status
from kubeprio.scheduler.plugins import names
from kubeprio.scheduler.plugins.queuesort import PrioritySort
from kubeprio.scheduler.queue import SchedulingQueue
from kubeprio.scheduler.queueing_hints import DEFAULT_PLUGINS, queueing_hint_map
from tests.builders import node, pod
from tests.conftest import ManualClock

FAKE_PLUGIN = "fakePlugin"
"""Upstream tests' plugin registered for NodeAdd with a hint that always queues."""

HINTS = {
    **queueing_hint_map(DEFAULT_PLUGINS),
    FAKE_PLUGIN: (ClusterEventWithHint(NODE_ADD_EVENT),),
}
HIGH, MID, LOW = 1000, 100, 10


def make_pod(
    name: str,
    *,
    priority: int | None = None,
    namespace: str = "default",
    nominated: str | None = None,
    labels: dict[str, str] | None = None,
    cpu: str | None = None,
    gated: bool = False,
    policy: str | None = None,
    **spec: Any,
) -> Pod:
    """A pending pod with a UID (``uid-<namespace>-<name>``)."""
    builder = pod(name, namespace)
    if priority is not None:
        builder = builder.priority(priority)
    if labels:
        builder = builder.labels(**labels)
    if cpu:
        builder = builder.requests(cpu=cpu)
    if policy:
        builder = builder.preemption_policy(policy)
    if spec:
        builder = builder.spec(**spec)
    built = builder.build()
    metadata = dataclasses.replace(built.metadata, uid=f"uid-{namespace}-{name}")
    built = dataclasses.replace(built, metadata=metadata)
    if gated:
        assert built.spec is not None
        gates = {"schedulingGates": [{"name": "example.com/gate"}]}
        built = dataclasses.replace(built, spec=dataclasses.replace(built.spec, extra=gates))
    if nominated:
        built = dataclasses.replace(built, status=PodStatus(nominated_node_name=nominated))
    return built


def ungated(p: Pod) -> Pod:
    """``p`` with its scheduling gates removed."""
    assert p.spec is not None
    return dataclasses.replace(p, spec=dataclasses.replace(p.spec, extra={}))


def relabel(p: Pod, **labels: str) -> Pod:
    """``p`` with new labels."""
    return dataclasses.replace(p, metadata=dataclasses.replace(p.metadata, labels=labels))


def bound(p: Pod, node_name: str = "node1") -> Pod:
    """``p`` assigned to ``node_name``."""
    assert p.spec is not None
    return dataclasses.replace(p, spec=dataclasses.replace(p.spec, node_name=node_name))


def make_node(name: str = "node1", cpu: str = "4", pods: str | None = "110", **kw: Any) -> Node:
    """A node with ``cpu`` allocatable (and ``pods`` unless None)."""
    values = {"cpu": cpu, **({"pods": pods} if pods is not None else {})}
    builder = node(name).allocatable(**values)
    for key, value, effect in kw.get("taints", ()):
        builder = builder.taint(key, value, effect)
    if kw.get("labels"):
        builder = builder.labels(**kw["labels"])
    if kw.get("unschedulable"):
        builder = builder.unschedulable()
    return builder.build()


def make_queue(clock: ManualClock, **kwargs: Any) -> SchedulingQueue:
    """A queue ordered by PrioritySort with the test hint map unless given another."""
    kwargs.setdefault("queueing_hints", HINTS)
    return SchedulingQueue(clock, sort=PrioritySort(), **kwargs)


def fail(
    queue: SchedulingQueue,
    qpi: QueuedPodInfo,
    *plugins: str,
    pending: tuple[str, ...] = (),
    code: Code | None = None,
) -> None:
    """Return a popped pod as rejected by ``plugins`` (an error when none is given)."""
    if code is None:
        code = Code.UNSCHEDULABLE if plugins or pending else Code.ERROR
    queue.requeue_failed(qpi, code, unschedulable_plugins=plugins, pending_plugins=pending)


def pop_name(queue: SchedulingQueue) -> str | None:
    """Pop and return the pod's name (``None`` when nothing is poppable)."""
    qpi = queue.pop()
    return None if qpi is None else qpi.pod.metadata.name


def where(queue: SchedulingQueue, p: Pod) -> str | None:
    """The structure holding ``p``."""
    return queue.where(f"{p.metadata.namespace}/{p.metadata.name}")


class GatePlugin:
    """A PreEnqueue plugin gating pods that carry ``spec.schedulingGates`` (like SchedulingGates)."""

    def __init__(self, name: str = names.SCHEDULING_GATES) -> None:
        self._name = name
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    def pre_enqueue(self, p: Pod) -> Status | None:
        self.calls += 1
        if p.spec is not None and p.spec.extra.get("schedulingGates"):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates",))
        return None


class LabelGate:
    """A PreEnqueue plugin gating pods labelled ``hold=<its name>``."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def pre_enqueue(self, p: Pod) -> Status | None:
        if (p.metadata.labels or {}).get("hold") == self._name:
            return Status(Code.UNSCHEDULABLE, ("held",))
        return None
