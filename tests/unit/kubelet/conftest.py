"""Wiring for kubelet tests: the in-process API, one kubelet per node, a driver."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from kubeprio.api.core import Binding, Event, Node, ObjectReference, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.kubelet.kubelet import Kubelet, KubeletConfig
from tests.conftest import ManualClock
from tests.driving import Driver


def bind(api: ApiService, pod: Pod, node: str) -> None:
    """What the scheduler does: bind through ``pods/binding``."""
    api.bind(
        Binding(
            metadata=ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace),
            target=ObjectReference(kind="Node", name=node),
        )
    )


def get_pod(api: ApiService, name: str, namespace: str = "default") -> Pod:
    return api.get(Pod, name, namespace)


def events(api: ApiService, *, name: str | None = None, kind: str = "Pod") -> list[Event]:
    found = [
        e
        for e in api.list(Event).items
        if e.involved_object is not None
        and e.involved_object.kind == kind
        and (name is None or e.involved_object.name == name)
    ]
    return sorted(found, key=lambda e: (e.first_timestamp or "", e.metadata.name or ""))


class Cluster:
    """An API, a driver and kubelets created on demand."""

    def __init__(self, api: ApiService, clock: ManualClock) -> None:
        self.api = api
        self.clock = clock
        self.driver = Driver(clock)
        self.kubelets: dict[str, Kubelet] = {}

    def kubelet(self, name: str = "n1", node: Node | None = None, **config: Any) -> Kubelet:
        if node is not None:
            self.api.create(node)
        kubelet = Kubelet(
            self.api,
            name,
            clock=self.clock,
            rng=random.Random(7),
            config=KubeletConfig(**config),
        )
        kubelet.start()
        informer = kubelet.informer()
        self.driver.watch(informer)
        self.driver.add(kubelet)
        self.kubelets[name] = kubelet
        self.driver.settle()
        return kubelet

    def run(self, pod: Pod, node: str = "n1") -> Pod:
        """Create ``pod``, bind it to ``node`` and let the kubelet act."""
        created = self.api.create(pod)
        bind(self.api, created, node)
        self.driver.settle()
        return get_pod(self.api, created.metadata.name or "", created.metadata.namespace or "")

    def advance(self, seconds: float) -> None:
        self.driver.advance(seconds)

    def pod(self, name: str, namespace: str = "default") -> Pod | None:
        try:
            return get_pod(self.api, name, namespace)
        except Exception:
            return None


@pytest.fixture
def cluster(api: ApiService, clock: ManualClock) -> Cluster:
    return Cluster(api, clock)


Factory = Callable[..., Kubelet]
