"""CSI objects and attach limits against a live ``kubeprio serve`` (one node) with the real
kubectl (v1.32).

Upstream rules: NodeVolumeLimits (``nodevolumelimits/csi.go``) counts a node's unique CSI
volumes per driver against its CSINode's ``allocatable.count``; a pod over the limit is
Unschedulable ``node(s) exceed max volume count`` (``kubectl describe pod`` shows the
FailedScheduling event with the preemption part, ``pkg/scheduler/schedule_one.go``
``FitError``); deleting a pod that held a volume requeues it (``isSchedulableAfterPodDeleted``).
The Tables are ``printCSINode``/``printCSIDriver``/``printVolumeAttachment``, the defaults
``SetDefaults_CSIDriver``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.serving import (
    ServeProcess,
    described_failed_scheduling,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl]

DRIVER = "ebs.csi.aws.com"

LIMITED_NODE = """\
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {{name: {node}}}
spec:
  drivers:
  - name: {driver}
    nodeID: i-0123
    topologyKeys: [topology.ebs.csi.aws.com/zone]
    allocatable: {{count: 1}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {ns}-ebs}}
provisioner: {driver}
volumeBindingMode: Immediate
"""

VOLUME_AND_CLAIM = """\
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {ns}-{name}}}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  storageClassName: {ns}-ebs
  csi: {{driver: {driver}, volumeHandle: vol-{ns}-{name}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}, namespace: {ns}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {ns}-ebs
  volumeName: {ns}-{name}
  resources: {{requests: {{storage: 1Gi}}}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}}}
spec:
  containers: [{{name: app, image: busybox}}]
  terminationGracePeriodSeconds: 0
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {claim}}}}}]
"""

DRIVER_OBJECT = """\
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec:
  attachRequired: true
  tokenRequests: [{audience: sts.amazonaws.com}]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-csi", ["--nodes", "1"]) as server:
        yield server


def phase(served: ServeProcess, ns: str, pod: str) -> str:
    return served.ok("get", "pod", pod, "-n", ns, "-o", "jsonpath={.status.phase}")


def test_a_pod_over_the_attach_limit_stays_pending_until_a_slot_frees(served, tmp_path):
    ns = new_namespace(served, "csi")
    node = served.ok("get", "nodes", "-o", "jsonpath={.items[0].metadata.name}")
    setup = tmp_path / "setup.yaml"
    setup.write_text(
        LIMITED_NODE.format(node=node, ns=ns, driver=DRIVER)
        + "---\n"
        + VOLUME_AND_CLAIM.format(ns=ns, name="one", driver=DRIVER)
        + "---\n"
        + VOLUME_AND_CLAIM.format(ns=ns, name="two", driver=DRIVER)
    )
    served.ok("apply", "-f", str(setup))
    rows = table_rows(served.ok("get", "csinode"))
    assert rows[0] == ["NAME", "DRIVERS", "AGE"]
    assert rows[1][:2] == [node, "1"]
    eventually(
        lambda: (
            served.ok("get", "pvc", "-n", ns, "-o", "jsonpath={.items[*].status.phase}")
            == "Bound Bound"
        )
    )

    first = tmp_path / "first.yaml"
    first.write_text(POD.format(ns=ns, name="first", claim="one"))
    served.ok("apply", "-f", str(first))
    eventually(lambda: phase(served, ns, "first") == "Running")

    second = tmp_path / "second.yaml"
    second.write_text(POD.format(ns=ns, name="second", claim="two"))
    served.ok("apply", "-f", str(second))

    text = " ".join(described_failed_scheduling(served, ns, "second").split())
    assert (
        "0/1 nodes are available: 1 node(s) exceed max volume count. preemption: 0/1 nodes "
        "are available: 1 No preemption victims found for incoming pod."
    ) in text
    assert phase(served, ns, "second") == "Pending"

    # The pod holding the only slot goes: its deletion requeues the waiting pod.
    served.ok("delete", "pod", "first", "-n", ns)
    eventually(lambda: phase(served, ns, "second") == "Running")
    served.ok("delete", "csinode", node)


def test_csi_driver_defaults_and_table(served, tmp_path):
    path = tmp_path / "driver.yaml"
    path.write_text(DRIVER_OBJECT)
    served.ok("apply", "-f", str(path))
    spec = served.json("get", "csidriver", DRIVER, "-o", "json")["spec"]
    assert spec == {
        "attachRequired": True,
        "podInfoOnMount": False,
        "volumeLifecycleModes": ["Persistent"],
        "storageCapacity": False,
        "fsGroupPolicy": "ReadWriteOnceWithFSType",
        "tokenRequests": [{"audience": "sts.amazonaws.com"}],
        "requiresRepublish": False,
        "seLinuxMount": False,
    }
    rows = table_rows(served.ok("get", "csidrivers"))
    assert rows[0] == [
        "NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS",
        "REQUIRESREPUBLISH", "MODES", "AGE",
    ]  # fmt: skip
    assert rows[1][:7] == [
        DRIVER,
        "true",
        "false",
        "false",
        "sts.amazonaws.com",
        "false",
        "Persistent",
    ]
    result = served.kubectl(
        "patch", "csidriver", DRIVER, "--type=merge", "-p", '{"spec":{"attachRequired":false}}'
    )
    assert result.returncode != 0
    assert (
        f'The CSIDriver "{DRIVER}" is invalid: spec.attachedRequired: Invalid value: false: '
        "field is immutable"
    ) in result.stderr


def test_volume_attachment_table_and_status(served, tmp_path):
    path = tmp_path / "attachment.yaml"
    path.write_text(
        "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\n"
        "metadata: {name: csi-0123}\n"
        f"spec: {{attacher: {DRIVER}, nodeName: node-1, source: {{persistentVolumeName: pv-a}}}}\n"
    )
    served.ok("apply", "-f", str(path))
    rows = table_rows(served.ok("get", "volumeattachments"))
    assert rows[0] == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    assert rows[1][:5] == ["csi-0123", DRIVER, "pv-a", "node-1", "false"]
