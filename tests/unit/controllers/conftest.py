"""Wiring for controller tests: the in-process API, informers, controllers, a driver."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.batch import Job
from kubeprio.api.core import Binding, Event, ObjectReference, Pod, PodCondition, PodStatus
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.policy import PodDisruptionBudget
from kubeprio.api.statefulset import StatefulSet
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import DeleteRequest
from kubeprio.controllers.deployment import DeploymentController
from kubeprio.controllers.disruption import DisruptionController
from kubeprio.controllers.replicaset import ReplicaSetController
from tests.conftest import ManualClock
from tests.driving import Driver


class World:
    """Shared informers (one per kind) and the controllers under test."""

    def __init__(self, api: ApiService, clock: ManualClock) -> None:
        self.api = api
        self.clock = clock
        self.rng = random.Random(42)
        self.pods = Informer(api, Pod)
        self.pdbs = Informer(api, PodDisruptionBudget)
        self.replicasets = Informer(api, ReplicaSet)
        self.deployments = Informer(api, Deployment)
        self.jobs = Informer(api, Job)
        self.driver = Driver(
            clock, [self.pods, self.pdbs, self.replicasets, self.deployments, self.jobs]
        )

    def add(self, *controllers: Any) -> None:
        self.driver.add(*controllers)

    # --- controllers wired to this world's informers -------------------------------------------

    def deployment_controller(self) -> DeploymentController:
        return DeploymentController(
            self.api,
            clock=self.clock,
            rng=self.rng,
            deployments=self.deployments,
            replicasets=self.replicasets,
            pods=self.pods,
        )

    def replicaset_controller(self) -> ReplicaSetController:
        return ReplicaSetController(
            self.api, clock=self.clock, rng=self.rng, pods=self.pods, replicasets=self.replicasets
        )

    def disruption_controller(
        self, statefulsets: Informer[StatefulSet] | None = None
    ) -> DisruptionController:
        return DisruptionController(
            self.api,
            clock=self.clock,
            rng=self.rng,
            pods=self.pods,
            pdbs=self.pdbs,
            replicasets=self.replicasets,
            deployments=self.deployments,
            statefulsets=statefulsets,
        )

    def settle(self) -> None:
        self.driver.settle()

    def advance(self, seconds: float) -> None:
        self.driver.advance(seconds)

    def pod_list(self, namespace: str = "default") -> list[Pod]:
        return self.api.list(Pod, namespace).items

    def events(self, reason: str | None = None) -> list[Event]:
        found = [e for e in self.api.list(Event).items if reason is None or e.reason == reason]
        return sorted(found, key=lambda e: e.metadata.name or "")

    # --- a fake kubelet, for controller tests ------------------------------------------------

    def bind(self, pod: Pod, node: str = "n1") -> None:
        self.api.bind(
            Binding(
                metadata=ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace),
                target=ObjectReference(kind="Node", name=node),
            )
        )

    def set_phase(
        self,
        name: str,
        phase: str,
        *,
        ready: bool | None = None,
        namespace: str = "default",
        conditions: tuple[PodCondition, ...] = (),
    ) -> Pod:
        pod = self.api.get(Pod, name, namespace)
        status = pod.status or PodStatus()
        keep = [c for c in status.conditions or () if c.type != "Ready"]
        if ready is None:
            ready = phase == "Running"
        now = "2026-01-01T00:00:00Z"
        keep.append(
            PodCondition(
                type="Ready", status="True" if ready else "False", last_transition_time=now
            )
        )
        keep.extend(conditions)
        status = dataclasses.replace(status, phase=phase, conditions=tuple(keep))
        return self.api.update_status(dataclasses.replace(pod, status=status))

    def finish_deleted(self, namespace: str = "default") -> None:
        """The kubelet's part of a graceful delete: remove every pod being deleted (the
        grace-0 delete after the grace period), then settle."""
        for pod in self.pod_list(namespace):
            if pod.metadata.deletion_timestamp:
                self.api.delete(
                    Pod,
                    pod.metadata.name or "",
                    namespace,
                    options=DeleteRequest(grace_period_seconds=0),
                )
        self.settle()

    def run_all(self, namespace: str = "default") -> None:
        """Bind every pending pod and mark it Running and Ready."""
        for pod in self.pod_list(namespace):
            if pod.status and pod.status.phase == "Pending" and not pod.metadata.deletion_timestamp:
                if not (pod.spec and pod.spec.node_name):
                    self.bind(pod)
                self.set_phase(pod.metadata.name or "", "Running", namespace=namespace)
        self.settle()


@pytest.fixture
def world(api: ApiService, clock: ManualClock) -> World:
    return World(api, clock)


class BindEverything:
    """A scheduler stand-in: binds every pending, unbound, undeleted pod to one node."""

    def __init__(self, world: World, node: str = "n1") -> None:
        self.world = world
        self.node = node

    def _pending(self) -> list[Pod]:
        return [
            p
            for p in self.world.pods.list()
            if not (p.spec and p.spec.node_name)
            and not p.metadata.deletion_timestamp
            and (p.status is None or p.status.phase == "Pending")
        ]

    def next_wakeup(self) -> float | None:
        return self.world.clock.now() if self._pending() else None

    def run_once(self) -> None:
        for pending in self._pending():
            try:
                self.world.bind(pending, self.node)
            except Exception:  # already bound or gone: the informer will catch up
                continue


def add_kubelet(world: World, node_name: str = "n1", **config: Any) -> Any:
    """A real kubelet fed by the shared pod informer, and a binder in front of it."""
    from kubeprio.kubelet.kubelet import Kubelet, KubeletConfig
    from tests.builders import node

    world.api.create(node(node_name).allocatable(cpu="64", memory="256Gi", pods="500").build())
    kubelet = Kubelet(
        world.api, node_name, clock=world.clock, rng=world.rng, config=KubeletConfig(**config)
    )
    kubelet.start()
    world.pods.add_handler(kubelet)
    world.add(BindEverything(world, node_name), kubelet)
    return kubelet
