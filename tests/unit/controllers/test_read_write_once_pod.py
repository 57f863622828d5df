"""ReadWriteOncePod claims through the whole control plane: VolumeRestrictions makes a
second user of the claim unschedulable, and a higher-priority one preempts the holder
(KEP-2485), in virtual time.

Upstream: ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``
(PreFilter counts scheduled users of the pod's ReadWriteOncePod claims; Filter is
Unschedulable with ``ErrReasonReadWriteOncePodConflict``; RemovePod lowers the count in
preemption's dry run), ``pkg/scheduler/framework/preemption`` (the messages).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.core import Pod
from kubeprio.kubelet.registration import register_node
from kubeprio.sim.controlplane import ControlPlane
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver
from tests.unit.controllers.test_volume_binding_flow import (
    CAPACITY,
    create,
    events_for,
    run,
    storage_class,
)

CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)


@pytest.fixture
def plane(clock: ManualClock) -> ControlPlane:
    plane = ControlPlane(MemoryStore(), clock=clock, seed=11)
    plane.attach_fleet()
    plane.start()
    return plane


@pytest.fixture
def driver(plane: ControlPlane, clock: ManualClock) -> Driver:
    return Driver(clock, informers=plane.components, components=plane.components)


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def exclusive_claim(name: str = "data") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOncePod"],
            "storageClassName": "fast",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def pod_using(name: str, claim: str = "data", priority: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "app", "image": "busybox"}],
        "terminationGracePeriodSeconds": 5,
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
    }
    if priority is not None:
        spec["priorityClassName"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


@pytest.fixture
def held(plane: ControlPlane, driver: Driver, clock: ManualClock) -> ControlPlane:
    """Two nodes, an Immediate class, a ReadWriteOncePod claim, and ``holder`` running on
    it at priority 10."""
    for name in ("n1", "n2"):
        register_node(plane.api, name, clock=clock, capacity=CAPACITY)
    create(plane, storage_class("fast", "Immediate"))
    create(plane, priority_class("low", 10))
    create(plane, priority_class("high", 1000))
    create(plane, exclusive_claim())
    create(plane, pod_using("holder", priority="low"))
    run(driver, 10)
    assert plane.api.get(Pod, "holder", "default").status.phase == "Running"
    return plane


def test_a_second_user_of_equal_priority_waits_with_upstreams_message(held, driver):
    """Unschedulable on every node (the count is cluster-wide); no victim of lower
    priority exists, so preemption finds none."""
    create(held, pod_using("second", priority="low"))
    run(driver, 10)
    assert not held.api.get(Pod, "second", "default").spec.node_name
    assert (
        "FailedScheduling",
        f"0/2 nodes are available: 2 {CONFLICT}. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod.",
    ) in events_for(held, "second")


def test_a_higher_priority_user_preempts_the_holder(held, driver):
    """RemovePod drops the conflict on the holder's node only: that node is nominated,
    the holder is preempted, and the preemptor runs there once it is gone."""
    holder = held.api.get(Pod, "holder", "default")
    create(held, pod_using("taker", priority="high"))
    run(driver, 60)
    names = {p.metadata.name for p in held.api.list(Pod, "default").items}
    assert "holder" not in names
    taker = held.api.get(Pod, "taker", "default")
    assert taker.spec.node_name == holder.spec.node_name
    assert taker.status.phase == "Running"
    assert (
        "Preempted",
        f"Preempted by pod {taker.metadata.uid} on node {holder.spec.node_name}",
    ) in events_for(held, "holder")
    # Preemption succeeded, so the failure carries no "preemption:" part.
    assert ("FailedScheduling", f"0/2 nodes are available: 2 {CONFLICT}.") in events_for(
        held, "taker"
    )


def test_pods_of_other_claims_are_not_affected(held, driver):
    create(held, exclusive_claim("other"))
    create(held, pod_using("neighbour", claim="other", priority="low"))
    run(driver, 10)
    assert held.api.get(Pod, "neighbour", "default").status.phase == "Running"
    assert held.api.get(Pod, "holder", "default").status.phase == "Running"
