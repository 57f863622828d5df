"""A zonal PersistentVolume through the control plane: VolumeZone sends its pod to a node
of the volume's zone, and reports upstream's reason when there is none.

Upstream: ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go`` (Filter is
UnschedulableAndUnresolvable ``node(s) had no available volume zone``).
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Pod
from kubeprio.kubelet.registration import register_node
from kubeprio.sim.controlplane import ControlPlane
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver
from tests.unit.controllers.test_volume_binding_flow import (
    CAPACITY,
    claim,
    create,
    events_for,
    pod_with_claim,
    run,
    volume,
)

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def plane(clock: ManualClock) -> ControlPlane:
    plane = ControlPlane(MemoryStore(), clock=clock, seed=3)
    plane.attach_fleet()
    plane.start()
    return plane


@pytest.fixture
def driver(plane: ControlPlane, clock: ManualClock) -> Driver:
    return Driver(clock, informers=plane.components, components=plane.components)


def zonal_node(plane: ControlPlane, clock: ManualClock, name: str, zone: str) -> None:
    register_node(plane.api, name, clock=clock, capacity=CAPACITY, labels={ZONE: zone})


@pytest.mark.parametrize("volume_zone", ["a", "b"])
def test_the_pod_follows_its_volume_zone(plane, driver, clock, volume_zone):
    zonal_node(plane, clock, "n-a", "a")
    zonal_node(plane, clock, "n-b", "b")
    create(plane, volume("pv", "1Gi", phase_labels={ZONE: volume_zone}))
    create(plane, claim("data", cls=""))
    run(driver, 5)
    create(plane, pod_with_claim("app", "data"))
    run(driver, 10)
    assert plane.api.get(Pod, "app", "default").spec.node_name == f"n-{volume_zone}"


def test_no_node_in_the_volume_zone(plane, driver, clock):
    zonal_node(plane, clock, "n-a", "a")
    zonal_node(plane, clock, "n-b", "b")
    create(plane, volume("pv", "1Gi", phase_labels={ZONE: "c"}))
    create(plane, claim("data", cls=""))
    run(driver, 5)
    create(plane, pod_with_claim("app", "data"))
    run(driver, 10)
    assert not plane.api.get(Pod, "app", "default").spec.node_name
    assert (
        "FailedScheduling",
        "0/2 nodes are available: 2 node(s) had no available volume zone. preemption: "
        "0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    ) in events_for(plane, "app")
