"""The endpoints controller: Endpoints and EndpointSlices from the pods a Service selects.

Upstream: ``pkg/controller/endpoint`` (Ready pods in ``addresses``, others in
``notReadyAddresses``, terminating pods left out, named target ports resolved from the
pods' container ports) and ``pkg/controller/endpointslice`` (slices labelled
``kubernetes.io/service-name``, owned by the Service, endpoint conditions)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.api.core import Container, ContainerPort, Pod, PodCondition, PodSpec, PodStatus
from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.serialization import from_dict
from kubeprio.api.service import Service
from kubeprio.client.informer import Informer
from kubeprio.controllers.endpoints import EndpointsController
from tests.driving import Driver


class Fixture:
    def __init__(self, api: Any, clock: Any) -> None:
        self.api = api
        pods: Informer[Pod] = Informer(api, Pod)
        services: Informer[Service] = Informer(api, Service)
        endpoints: Informer[Endpoints] = Informer(api, Endpoints)
        slices: Informer[EndpointSlice] = Informer(api, EndpointSlice)
        self.controller = EndpointsController(
            api, clock=clock, rng=random.Random(0), services=services, pods=pods,
            endpoints=endpoints, slices=slices,
        )  # fmt: skip
        self.driver = Driver(clock, [pods, services, endpoints, slices], [self.controller])

    def pod(self, name: str, ip: str | None, *, ready: bool = True, labels: Any = None) -> Pod:
        pod = Pod(
            metadata=ObjectMeta(name=name, namespace="default", labels=labels or {"app": "web"}),
            spec=PodSpec(
                node_name="node-1",
                containers=(
                    Container(
                        name="c",
                        image="nginx",
                        ports=(ContainerPort(name="http", container_port=8080),),
                    ),
                ),
            ),
        )
        created = self.api.create(pod)
        status = PodStatus(
            phase="Running",
            pod_ip=ip,
            conditions=(PodCondition(type="Ready", status="True" if ready else "False"),),
        )
        return self.api.update_status(evolve(created, status=status))

    def service(self, **spec: Any) -> Service:
        body = {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}], **spec}
        return self.api.create(
            from_dict(Service, {"metadata": {"name": "web", "namespace": "default"}, "spec": body})
        )


@pytest.fixture
def world(api, clock):
    return Fixture(api, clock)


def test_ready_and_unready_pods_fill_endpoints_and_the_slice(world):
    world.service()
    world.pod("a", "10.1.0.2")
    world.pod("b", "10.1.0.3", ready=False)
    world.pod("other", "10.1.0.9", labels={"app": "db"})
    world.pod("no-ip", None)
    world.driver.settle()
    endpoints = world.api.get(Endpoints, "web", "default")
    (subset,) = endpoints.subsets
    assert [a.ip for a in subset.addresses] == ["10.1.0.2"]
    assert [a.ip for a in subset.not_ready_addresses] == ["10.1.0.3"]
    assert [(p.port, p.protocol) for p in subset.ports] == [(8080, "TCP")]
    (slice_,) = world.api.list(EndpointSlice, "default").items
    assert slice_.metadata.labels["kubernetes.io/service-name"] == "web"
    assert slice_.metadata.owner_references[0].kind == "Service"
    assert [(e.addresses, e.conditions.ready) for e in slice_.endpoints] == [
        (("10.1.0.2",), True),
        (("10.1.0.3",), False),
    ]


def test_pod_changes_and_service_deletion_are_followed(world):
    world.service()
    pod = world.pod("a", "10.1.0.2")
    world.driver.settle()
    world.api.update(evolve(pod, metadata=evolve(pod.metadata, labels={"app": "other"})))
    world.driver.settle()
    assert world.api.get(Endpoints, "web", "default").subsets == ()
    (slice_,) = world.api.list(EndpointSlice, "default").items
    assert slice_.endpoints is None
    world.api.delete(Service, "web", "default")
    world.driver.settle()
    assert world.api.list(Endpoints, "default").items == []
    assert world.api.list(EndpointSlice, "default").items == []


def test_services_without_selector_are_left_alone(world):
    world.service(selector=None)
    world.pod("a", "10.1.0.2")
    world.driver.settle()
    assert world.api.list(Endpoints, "default").items == []
