"""Storage capacity tracking against a live ``kubeprio serve`` with the real kubectl (v1.32).

Upstream rules (``pkg/scheduler/framework/plugins/volumebinding``, v1.32): for a claim of
a WaitForFirstConsumer class whose provisioner is a CSIDriver with
``storageCapacity: true``, ``hasEnoughCapacity`` wants a CSIStorageCapacity of the class
with room for the request whose ``nodeTopology`` selects the node; without one every
node fails with ``node(s) did not have enough free storage`` (UnschedulableAndUnresolvable,
so "Preemption is not helpful for scheduling"), which ``kubectl describe pod`` shows in
the FailedScheduling event. A CSIStorageCapacity added later wakes the pod
(``isSchedulableAfterCSIStorageCapacityChange``) and it is scheduled to the node that
capacity selects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.serving import (
    ServeProcess,
    described_failed_scheduling,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
)

pytestmark = [pytest.mark.e2e, needs_kubectl]

CLAIM_AND_POD = """\
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {{name: csi.kubeprio.io}}
spec: {{storageCapacity: true, attachRequired: false}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {ns}-tracked}}
provisioner: csi.kubeprio.io
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data, namespace: {ns}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {ns}-tracked
  resources: {{requests: {{storage: 10Gi}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: db, namespace: {ns}}}
spec:
  containers: [{{name: db, image: postgres}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: data}}}}]
"""

CAPACITY = """\
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {{name: {name}, namespace: {ns}}}
storageClassName: {ns}-tracked
nodeTopology: {{matchLabels: {{kubernetes.io/hostname: {node}}}}}
capacity: {capacity}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-storagecapacity") as server:
        yield server


def test_a_pod_waits_for_storage_capacity_then_lands_where_it_is(served, tmp_path):
    ns = new_namespace(served, "cap")
    nodes = served.ok("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}").split()
    target = nodes[-1]
    path = tmp_path / "claim.yaml"
    path.write_text(CLAIM_AND_POD.format(ns=ns))
    served.ok("apply", "-f", str(path))

    text = described_failed_scheduling(served, ns, "db")
    count = len(nodes)
    not_enough = (
        f"0/{count} nodes are available: {count} node(s) did not have enough free storage. "
        f"preemption: 0/{count} nodes are available: "
        f"{count} Preemption is not helpful for scheduling."
    )
    assert not_enough in " ".join(text.split())

    def failed_scheduling() -> list[dict[str, Any]]:
        events = served.json("get", "events", "-n", ns)["items"]
        return [
            e
            for e in events
            if e["reason"] == "FailedScheduling" and e["involvedObject"].get("name") == "db"
        ]

    def attempts(events: list[dict[str, Any]]) -> int:
        """Failed attempts the events record (a repeat is a series: ``series.count``)."""
        return sum((e.get("series") or {}).get("count") or e.get("count") or 1 for e in events)

    before = attempts(failed_scheduling())

    # Too small a capacity changes nothing: the new capacity wakes the pod
    # (``isSchedulableAfterCSIStorageCapacityChange`` queues it on an add), whose next
    # attempt fails for the same reason; it stays Pending.
    small = tmp_path / "small.yaml"
    small.write_text(CAPACITY.format(ns=ns, name="small", node=target, capacity="1Gi"))
    served.ok("apply", "-f", str(small))
    retried = eventually(
        lambda: (found := failed_scheduling()) and attempts(found) > before and found,
        timeout=30,
    )
    assert [" ".join(e["message"].split()) for e in retried] == [not_enough] * len(retried)
    assert served.ok("get", "pod", "db", "-n", ns, "-o", "jsonpath={.spec.nodeName}") == ""
    condition = served.ok(
        "get",
        "pod",
        "db",
        "-n",
        ns,
        "-o",
        'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}',
    )
    assert condition == "Unschedulable"

    roomy = tmp_path / "roomy.yaml"
    roomy.write_text(CAPACITY.format(ns=ns, name="roomy", node=target, capacity="100Gi"))
    served.ok("apply", "-f", str(roomy))
    assert "roomy" in served.ok("get", "csistoragecapacities", "-n", ns)
    node = eventually(
        lambda: served.ok("get", "pod", "db", "-n", ns, "-o", "jsonpath={.spec.nodeName}"),
        timeout=40,
    )
    assert node == target
    phase = served.ok("get", "pvc", "data", "-n", ns, "-o", "jsonpath={.status.phase}")
    assert phase == "Bound"
