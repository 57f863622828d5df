"""Generic ephemeral volumes through the whole control plane: the ephemeral volume
controller, the scheduler's VolumeBinding, the PV controller and provisioner, the
kubelet and the garbage collector, in virtual time.

Upstream: ``pkg/controller/volume/ephemeral/controller.go`` (``handleVolume``: the claim
``<pod>-<volume>`` owned by the pod, ``FailedBinding`` events; ``onPVCDelete``),
``k8s.io/component-helpers/storage/ephemeral`` (``VolumeIsForPod``'s text),
``pkg/scheduler/framework/plugins/volumebinding`` (``podHasPVCs``: the claim must exist and
be the pod's), and the garbage collector deleting the claim with its owner.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.core import Pod
from kubeprio.api.persistentvolume import PersistentVolumeClaim
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
    run,
    storage_class,
)


@pytest.fixture
def plane(clock: ManualClock) -> ControlPlane:
    plane = ControlPlane(MemoryStore(), clock=clock, seed=7)
    plane.attach_fleet()
    plane.start()
    return plane


@pytest.fixture
def driver(plane: ControlPlane, clock: ManualClock) -> Driver:
    return Driver(clock, informers=plane.components, components=plane.components)


def pod_with_scratch(name: str = "app") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "app", "image": "busybox"}],
            "terminationGracePeriodSeconds": 0,
            "volumes": [
                {
                    "name": "scratch",
                    "ephemeral": {
                        "volumeClaimTemplate": {
                            "metadata": {
                                "labels": {"type": "scratch"},
                                "annotations": {"note": "from template"},
                            },
                            "spec": {
                                "accessModes": ["ReadWriteOnce"],
                                "storageClassName": "standard",
                                "resources": {"requests": {"storage": "2Gi"}},
                            },
                        }
                    },
                }
            ],
        },
    }


def claims(plane: ControlPlane) -> dict[str, PersistentVolumeClaim]:
    return {c.metadata.name or "": c for c in plane.api.list(PersistentVolumeClaim).items}


def test_the_pod_gets_its_claim_runs_on_it_and_takes_it_along(plane, driver, clock):
    """handleVolume creates ``app-scratch`` from the template, owned by the pod; the pod
    is scheduled once it is bound; deleting the pod deletes the claim (garbage collector)."""
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    create(plane, storage_class("standard", "WaitForFirstConsumer"))
    pod = create(plane, pod_with_scratch()).obj
    run(driver, 30)
    made = claims(plane)["app-scratch"]
    assert made.metadata.labels == {"type": "scratch"}
    assert made.metadata.annotations["note"] == "from template"
    (owner,) = made.metadata.owner_references
    assert (owner.api_version, owner.kind, owner.name, owner.uid) == (
        "v1",
        "Pod",
        "app",
        pod.metadata.uid,
    )
    assert owner.controller is True
    assert owner.block_owner_deletion is True
    assert str(made.spec.resources.requests["storage"]) == "2Gi"
    assert made.status.phase == "Bound"
    running = plane.api.get(Pod, "app", "default")
    assert running.spec.node_name == "n1"
    assert running.status.phase == "Running"

    plane.api.delete(Pod, "app", "default")
    run(driver, 60)
    assert "app" not in {p.metadata.name for p in plane.api.list(Pod, "default").items}
    assert "app-scratch" not in claims(plane)


def test_a_claim_the_pod_does_not_own_blocks_it_until_deleted(plane, driver, clock):
    """VolumeIsForPod: the controller reports ``FailedBinding`` on the pod and VolumeBinding
    keeps it pending (UnschedulableAndUnresolvable); once the stranger claim is deleted
    (``onPVCDelete``) the controller makes the pod's own and the pod runs."""
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    create(plane, storage_class("standard", "WaitForFirstConsumer"))
    create(plane, claim("app-scratch", cls="standard"))
    create(plane, pod_with_scratch())
    run(driver, 10)
    not_owner = "PVC default/app-scratch was not created for pod default/app (pod is not owner)"
    events = events_for(plane, "app")
    assert ("FailedBinding", f"ephemeral volume scratch: {not_owner}") in events
    assert (
        "FailedScheduling",
        f"0/1 nodes are available: {not_owner}. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling.",
    ) in events
    assert not plane.api.get(Pod, "app", "default").spec.node_name

    plane.api.delete(PersistentVolumeClaim, "app-scratch", "default")
    run(driver, 30)
    made = claims(plane)["app-scratch"]
    assert made.metadata.owner_references[0].name == "app"
    assert plane.api.get(Pod, "app", "default").status.phase == "Running"


def test_pods_without_ephemeral_volumes_are_left_alone(plane, driver, clock):
    register_node(plane.api, "n1", clock=clock, capacity=CAPACITY)
    doc = pod_with_scratch()
    doc["spec"]["volumes"] = [{"name": "tmp", "emptyDir": {}}]
    create(plane, doc)
    run(driver, 10)
    assert claims(plane) == {}
    assert plane.api.get(Pod, "app", "default").status.phase == "Running"
