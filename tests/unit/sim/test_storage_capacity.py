"""``kubeprio simulate`` with storage capacity tracking: CSIDriver and CSIStorageCapacity
objects in the manifest steer WaitForFirstConsumer claims to the nodes with room.

Upstream rule: ``volumebinding/binder.go`` ``hasEnoughCapacity`` (v1.32) for a driver
with ``storageCapacity: true``; a node without a CSIStorageCapacity of the claim's class
with room for the request fails VolumeBinding with ``node(s) did not have enough free
storage``, UnschedulableAndUnresolvable, so no preemption is tried
(``FailedScheduling``'s ``preemption: ... Preemption is not helpful for scheduling``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n-a, labels: {topology.kubernetes.io/zone: a}}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: n-b, labels: {topology.kubernetes.io/zone: b}}
status:
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
"""

STORAGE = """\
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.kubeprio.io}
spec: {storageCapacity: %(tracking)s}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: csi.kubeprio.io
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: zone-b, namespace: kube-system}
storageClassName: local
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: b}}
capacity: 50Gi
maximumVolumeSize: 20Gi
"""


def workload(name: str, size: str) -> str:
    # n-a has more free CPU, so without the capacity check the scheduler prefers it.
    return f"""\
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}-data, namespace: default}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources: {{requests: {{storage: {size}}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers:
  - {{name: c, image: postgres, resources: {{requests: {{cpu: 500m}}}}}}
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {name}-data}}}}]
"""


def run(tracking: bool, seed: int) -> dict[str, dict[str, Any]]:
    text = NODES + "---\n" + STORAGE % {"tracking": str(tracking).lower()}
    text += workload("db-1", "10Gi") + workload("db-2", "20Gi") + workload("huge", "30Gi")
    report, _ = simulate(manifest.parse_text(text, "input.yaml"), seed=seed)
    assert report["rejected"] == []
    return {entry["name"]: entry for entry in report["pods"]}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_claims_are_provisioned_only_where_a_capacity_has_room(seed: int) -> None:
    pods = run(True, seed)
    assert pods["db-1"]["node"] == "n-b"
    assert pods["db-2"]["node"] == "n-b"  # maximumVolumeSize 20Gi is enough
    huge = pods["huge"]
    assert huge["node"] is None
    assert huge["pendingMessage"] == (
        "0/2 nodes are available: 2 node(s) did not have enough free storage. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_a_driver_without_capacity_tracking_is_not_checked() -> None:
    # hasEnoughCapacity: storageCapacity false skips the check; n-a's free CPU wins.
    pods = run(False, 0)
    assert pods["db-1"]["node"] == "n-a"
    assert pods["huge"]["node"] is not None
