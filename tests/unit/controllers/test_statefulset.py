"""The StatefulSet controller against the in-process API, as ``pkg/controller/statefulset``.

Each test names the upstream rule (``stateful_set_control_test.go`` / ``stateful_set_test.go``
where one matches). The world's fake kubelet binds and starts pods when a test says so
(``run``); a pod being deleted leaves when the test finishes it (``finish_deleted``,
the kubelet's grace-0 delete after the grace period).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.core import Pod
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.statefulset import (
    StatefulSet,
    StatefulSetOrdinals,
    StatefulSetSpec,
    StatefulSetStatus,
    StatefulSetUpdateStrategy,
    RollingUpdateStatefulSetStrategy,
)
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import DeleteRequest
from kubeprio.controllers import statefulsetutil
from kubeprio.controllers.statefulset import StatefulSetController
from tests.builders import pod_template
from tests.unit.controllers.conftest import World

LABELS = {"app": "web"}


class Cluster:
    """The world's informers plus StatefulSets and revisions, and the controller."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.api = world.api
        self.statefulsets: Informer[StatefulSet] = Informer(world.api, StatefulSet)
        self.revisions: Informer[ControllerRevision] = Informer(world.api, ControllerRevision)
        world.driver.watch(self.statefulsets, self.revisions)
        self.controller = StatefulSetController(
            world.api,
            clock=world.clock,
            rng=world.rng,
            statefulsets=self.statefulsets,
            revisions=self.revisions,
            pods=world.pods,
        )
        world.add(self.controller)

    def create(self, sts: StatefulSet) -> StatefulSet:
        created = self.api.create(sts)
        self.world.settle()
        return created

    def get(self, name: str = "web") -> StatefulSet:
        return self.api.get(StatefulSet, name, "default")

    def update(self, **spec: Any) -> StatefulSet:
        current = self.get()
        assert current.spec is not None
        updated = self.api.update(
            dataclasses.replace(current, spec=dataclasses.replace(current.spec, **spec))
        )
        self.world.settle()
        return updated

    def set_image(self, image: str) -> None:
        current = self.get()
        assert current.spec is not None
        self.update(template=with_image(current.spec.template, image))

    def names(self, *, live: bool = True) -> list[str]:
        """Pod names by ordinal (live: not being deleted)."""
        found = [p for p in self.world.pod_list() if not (live and p.metadata.deletion_timestamp)]
        return [p.metadata.name or "" for p in sorted(found, key=statefulsetutil.ordinal_of)]

    def pod(self, name: str) -> Pod:
        return self.api.get(Pod, name, "default")

    def image(self, name: str) -> str:
        spec = self.pod(name).spec
        assert spec is not None
        assert spec.containers
        return spec.containers[0].image or ""

    def run(self, *names: str) -> None:
        """Bind the named pending pods (all when none named) and make them Running and Ready."""
        for p in self.world.pod_list():
            name = p.metadata.name or ""
            if names and name not in names:
                continue
            if p.metadata.deletion_timestamp or (p.status and p.status.phase != "Pending"):
                continue
            if not (p.spec and p.spec.node_name):
                self.world.bind(p)
            self.world.set_phase(name, "Running")
        self.world.settle()

    def run_until_stable(self, limit: int = 20) -> None:
        for _ in range(limit):
            before = self.names(live=False)
            self.finish_deleted()
            self.run()
            if self.names(live=False) == before and all(
                p.status and p.status.phase == "Running" for p in self.world.pod_list()
            ):
                return

    def finish_deleted(self) -> None:
        for p in self.world.pod_list():
            if p.metadata.deletion_timestamp:
                self.api.delete(
                    Pod,
                    p.metadata.name or "",
                    "default",
                    options=DeleteRequest(grace_period_seconds=0),
                )
        self.world.settle()

    def status(self) -> StatefulSetStatus:
        return self.get().status or StatefulSetStatus()


@pytest.fixture
def cluster(world: World) -> Cluster:
    return Cluster(world)


def with_image(template: Any, image: str) -> Any:
    container = dataclasses.replace(template.spec.containers[0], image=image)
    return dataclasses.replace(
        template, spec=dataclasses.replace(template.spec, containers=(container,))
    )


def stateful_set(
    name: str = "web", *, replicas: int = 3, image: str = "nginx:1", **spec: Any
) -> StatefulSet:
    return StatefulSet(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=StatefulSetSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=LABELS),
            service_name="nginx",
            template=with_image(pod_template(LABELS), image),
            **spec,
        ),
    )


def test_smoke(cluster: Cluster) -> None:
    cluster.create(stateful_set())
    assert cluster.names() == ["web-0"]
    cluster.run()
    assert cluster.names() == ["web-0", "web-1"]
    cluster.run_until_stable()
    assert cluster.names() == ["web-0", "web-1", "web-2"]
    print(cluster.status())
    print(cluster.pod("web-1"))
