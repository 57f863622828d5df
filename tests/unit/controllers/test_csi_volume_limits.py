"""CSI attach limits through the whole control plane, in virtual time: a CSINode's
``allocatable.count`` keeps a pod over the limit Pending with upstream's message, a
higher-priority pod preempts the pod holding the slot, and a new CSINode wakes pods up.

Upstream: ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go`` (Filter is
Unschedulable ``node(s) exceed max volume count``, not unresolvable, so DefaultPreemption
may remove a pod holding a slot; ``EventsToRegister``: CSINode add), and
``pkg/scheduler/framework/preemption`` (the messages).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.core import Pod
from kubeprio.api.csi import CSINode
from kubeprio.kubelet.registration import register_node
from kubeprio.sim.controlplane import ControlPlane
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver
from tests.unit.controllers.test_read_write_once_pod import priority_class
from tests.unit.controllers.test_volume_binding_flow import CAPACITY, create, events_for, run

DRIVER = "ebs.csi.aws.com"
EXCEEDED = "node(s) exceed max volume count"


@pytest.fixture
def plane(clock: ManualClock) -> ControlPlane:
    plane = ControlPlane(MemoryStore(), clock=clock, seed=3)
    plane.attach_fleet()
    plane.start()
    return plane


@pytest.fixture
def driver(plane: ControlPlane, clock: ManualClock) -> Driver:
    return Driver(clock, informers=plane.components, components=plane.components)


def csi_node(name: str, count: int) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [{"name": DRIVER, "nodeID": name, "allocatable": {"count": count}}]},
    }


def csi_volume(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "csi": {"driver": DRIVER, "volumeHandle": f"vol-{name}"},
        },
    }


def bound_claim(name: str, volume: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "volumeName": volume,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def pod_using(name: str, claim: str, priority: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "app", "image": "busybox"}],
            "terminationGracePeriodSeconds": 5,
            "priorityClassName": priority,
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }


@pytest.fixture
def full(plane: ControlPlane, driver: Driver, clock: ManualClock) -> ControlPlane:
    """One node whose CSINode allows one volume of the driver, three bound CSI claims, and
    ``holder`` running on the node with the first at priority 10."""
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    create(plane, csi_node("n1", 1))
    create(plane, priority_class("low", 10))
    create(plane, priority_class("high", 1000))
    for index in (1, 2, 3):
        create(plane, csi_volume(f"pv{index}"))
        create(plane, bound_claim(f"c{index}", f"pv{index}"))
    create(plane, pod_using("holder", "c1", "low"))
    run(driver, 10)
    assert plane.api.get(Pod, "holder", "default").status.phase == "Running"
    return plane


def test_a_pod_over_the_limit_stays_pending_with_upstreams_message(full, driver):
    create(full, pod_using("second", "c2", "low"))
    run(driver, 10)
    assert not full.api.get(Pod, "second", "default").spec.node_name
    assert (
        "FailedScheduling",
        f"0/1 nodes are available: 1 {EXCEEDED}. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.",
    ) in events_for(full, "second")


def test_a_pod_sharing_the_attached_volume_fits(full, driver):
    """The holder's volume is already attached: a second user of the same claim adds none."""
    create(full, pod_using("sharer", "c1", "low"))
    run(driver, 10)
    assert full.api.get(Pod, "sharer", "default").spec.node_name == "n1"


def test_a_higher_priority_pod_preempts_the_slot_holder(full, driver):
    create(full, pod_using("taker", "c2", "high"))
    run(driver, 60)
    names = {p.metadata.name for p in full.api.list(Pod, "default").items}
    assert "holder" not in names
    taker = full.api.get(Pod, "taker", "default")
    assert taker.spec.node_name == "n1"
    assert taker.status.phase == "Running"
    assert ("Preempted", f"Preempted by pod {taker.metadata.uid} on node n1") in events_for(
        full, "holder"
    )
    assert ("FailedScheduling", f"0/1 nodes are available: 1 {EXCEEDED}.") in events_for(
        full, "taker"
    )


def test_without_a_csinode_there_is_no_limit(plane, driver, clock):
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    create(plane, priority_class("low", 10))
    for index in (1, 2):
        create(plane, csi_volume(f"pv{index}"))
        create(plane, bound_claim(f"c{index}", f"pv{index}"))
        create(plane, pod_using(f"p{index}", f"c{index}", "low"))
    run(driver, 10)
    assert all(
        plane.api.get(Pod, f"p{index}", "default").spec.node_name == "n1" for index in (1, 2)
    )


def test_a_new_csinode_wakes_the_pending_pod(full, driver):
    """``EventsToRegister``: a CSINode add requeues pods NodeVolumeLimits rejected (well
    before the five-minute flush of unschedulable pods). A registered driver cannot be
    changed in v1.32, so the CSINode is replaced."""
    create(full, pod_using("second", "c2", "low"))
    run(driver, 10)
    assert not full.api.get(Pod, "second", "default").spec.node_name
    full.api.delete(CSINode, "n1")
    run(driver, 5)
    create(full, csi_node("n1", 2))
    run(driver, 15)
    assert full.api.get(Pod, "second", "default").spec.node_name == "n1"
