"""Fluent builders for test objects (as upstream's ``pkg/scheduler/testing/wrappers.go``).

pod("a").priority(1000).requests(cpu="500m").on("n1").build()
node("n1").allocatable(cpu="4", memory="8Gi").taint("k", "v", "NoSchedule").build()
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubeprio.api.core import (
    Container,
    Node,
    NodeSpec,
    NodeStatus,
    Pod,
    PodSpec,
    PodStatus,
    ResourceRequirements,
    Taint,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.scheduling import PriorityClass


def _resources(values: dict[str, str]) -> dict[str, Any]:
    return {name.replace("_", "-"): parse_quantity(value) for name, value in values.items()}


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._meta = ObjectMeta(name=name, namespace=namespace)
        self._spec = PodSpec(containers=(Container(name="c", image="busybox"),))
        self._status: PodStatus | None = None

    def _container(self, **changes: Any) -> None:
        first = dataclasses.replace(self._spec.containers[0], **changes)  # type: ignore[index]
        self._spec = dataclasses.replace(self._spec, containers=(first, *self._spec.containers[1:]))  # type: ignore[index]

    def requests(self, **values: str) -> PodBuilder:
        current = self._spec.containers[0].resources or ResourceRequirements()  # type: ignore[index]
        self._container(resources=dataclasses.replace(current, requests=_resources(values)))
        return self

    def limits(self, **values: str) -> PodBuilder:
        current = self._spec.containers[0].resources or ResourceRequirements()  # type: ignore[index]
        self._container(resources=dataclasses.replace(current, limits=_resources(values)))
        return self

    def priority(self, value: int) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, priority=value)
        return self

    def priority_class(self, name: str) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, priority_class_name=name)
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, preemption_policy=policy)
        return self

    def on(self, node_name: str) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, node_name=node_name)
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self._meta = dataclasses.replace(self._meta, labels=labels)
        return self

    def annotate(self, key: str, value: str) -> PodBuilder:
        merged = dict(self._meta.annotations or {})
        merged[key] = value
        self._meta = dataclasses.replace(self._meta, annotations=merged)
        return self

    def finalizers(self, *names: str) -> PodBuilder:
        self._meta = dataclasses.replace(self._meta, finalizers=names)
        return self

    def grace(self, seconds: int) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, termination_grace_period_seconds=seconds)
        return self

    def spec(self, **changes: Any) -> PodBuilder:
        self._spec = dataclasses.replace(self._spec, **changes)
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._status = dataclasses.replace(self._status or PodStatus(), phase=phase)
        return self

    def build(self) -> Pod:
        return Pod(metadata=self._meta, spec=self._spec, status=self._status)


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._meta = ObjectMeta(name=name)
        self._spec = NodeSpec()
        self._status = NodeStatus()

    def allocatable(self, **values: str) -> NodeBuilder:
        quantities = _resources(values)
        self._status = dataclasses.replace(
            self._status, allocatable=quantities, capacity=quantities
        )
        return self

    def labels(self, **labels: str) -> NodeBuilder:
        self._meta = dataclasses.replace(self._meta, labels=labels)
        return self

    def taint(self, key: str, value: str, effect: str) -> NodeBuilder:
        taints = (*(self._spec.taints or ()), Taint(key=key, value=value, effect=effect))
        self._spec = dataclasses.replace(self._spec, taints=taints)
        return self

    def unschedulable(self) -> NodeBuilder:
        self._spec = dataclasses.replace(self._spec, unschedulable=True)
        return self

    def build(self) -> Node:
        return Node(metadata=self._meta, spec=self._spec, status=self._status)


def pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def priority_class(
    name: str, value: int, *, global_default: bool | None = None, policy: str | None = None
) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name),
        value=value,
        global_default=global_default,
        preemption_policy=policy,
    )
