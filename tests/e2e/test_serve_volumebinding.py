"""Volume binding against a live ``kubeprio serve`` with the real kubectl (v1.32).

Upstream rules: the PV controller and an external provisioner bind a WaitForFirstConsumer
claim once its pod is scheduled (``pv_controller.go``, the provisioner library's
``pvc-<uid>`` volumes), and VolumeBinding's PreFilter refuses a pod whose claim does not
exist with ``persistentvolumeclaim "NAME" not found`` (``volume_binding.go``), which
``kubectl describe pod`` shows in the FailedScheduling event. A generic ephemeral volume
gets its claim ``<pod>-<volume>`` owned by the pod (``pkg/controller/volume/ephemeral``),
deleted with it by the garbage collector; a second user of a ReadWriteOncePod claim waits
with VolumeRestrictions' reason.
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

CLAIM_AND_POD = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {ns}-local}}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data, namespace: {ns}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {ns}-local
  resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: db, namespace: {ns}}}
spec:
  containers: [{{name: db, image: postgres}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: data}}}}]
"""

ORPHAN = """\
apiVersion: v1
kind: Pod
metadata: {{name: orphan, namespace: {ns}}}
spec:
  containers: [{{name: app, image: nginx}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: missing}}}}]
"""

EPHEMERAL = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {ns}-scratch}}
provisioner: kubeprio.io/simulated
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: Pod
metadata: {{name: worker, namespace: {ns}}}
spec:
  containers: [{{name: app, image: busybox}}]
  terminationGracePeriodSeconds: 0
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        metadata: {{labels: {{type: scratch}}}}
        spec:
          accessModes: [ReadWriteOnce]
          storageClassName: {ns}-scratch
          resources: {{requests: {{storage: 1Gi}}}}
"""

EXCLUSIVE = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {ns}-now}}
provisioner: kubeprio.io/simulated
volumeBindingMode: Immediate
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: only, namespace: {ns}}}
spec:
  accessModes: [ReadWriteOncePod]
  storageClassName: {ns}-now
  resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: first, namespace: {ns}}}
spec:
  containers: [{{name: app, image: busybox}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: only}}}}]
"""

SECOND = """\
apiVersion: v1
kind: Pod
metadata: {{name: second, namespace: {ns}}}
spec:
  containers: [{{name: app, image: busybox}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: only}}}}]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-volumebinding") as server:
        yield server


def test_wait_for_first_consumer_claim_binds_to_a_provisioned_volume(served, tmp_path):
    ns = new_namespace(served, "vb")
    path = tmp_path / "claim.yaml"
    path.write_text(CLAIM_AND_POD.format(ns=ns))
    served.ok("apply", "-f", str(path))

    def bound() -> list[list[str]] | None:
        rows = table_rows(served.ok("get", "pvc", "-n", ns))
        return rows if rows[1][1] == "Bound" else None

    rows = eventually(bound)
    uid = served.ok("get", "pvc", "data", "-n", ns, "-o", "jsonpath={.metadata.uid}")
    assert rows[1][:3] == ["data", "Bound", f"pvc-{uid}"]
    pv = table_rows(served.ok("get", "pv", f"pvc-{uid}"))
    assert pv[1][:6] == [f"pvc-{uid}", "1Gi", "RWO", "Delete", "Bound", f"{ns}/data"]
    eventually(
        lambda: (
            served.ok("get", "pod", "db", "-n", ns, "-o", "jsonpath={.status.phase}") == "Running"
        )
    )


def test_a_pod_with_a_missing_claim_shows_upstreams_failed_scheduling(served, tmp_path):
    ns = new_namespace(served, "vb-missing")
    path = tmp_path / "orphan.yaml"
    path.write_text(ORPHAN.format(ns=ns))
    served.ok("apply", "-f", str(path))

    text = described_failed_scheduling(served, ns, "orphan")
    assert 'persistentvolumeclaim "missing" not found. preemption: 0/' in text
    assert "Preemption is not helpful for scheduling." in text


def test_an_ephemeral_volume_gets_a_claim_owned_by_its_pod(served, tmp_path):
    ns = new_namespace(served, "vb-ephemeral")
    path = tmp_path / "ephemeral.yaml"
    path.write_text(EPHEMERAL.format(ns=ns))
    served.ok("apply", "-f", str(path))
    eventually(
        lambda: (
            served.ok("get", "pod", "worker", "-n", ns, "-o", "jsonpath={.status.phase}")
            == "Running"
        )
    )
    owner = served.ok(
        "get",
        "pvc",
        "worker-scratch",
        "-n",
        ns,
        "-o",
        "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}"
        "/{.metadata.ownerReferences[0].controller}/{.metadata.labels.type}/{.status.phase}",
    )
    assert owner == "Pod/worker/true/scratch/Bound"
    served.ok("delete", "pod", "worker", "-n", ns)
    eventually(lambda: "worker-scratch" not in served.ok("get", "pvc", "-n", ns, "-o", "name"))


def test_a_second_user_of_a_read_write_once_pod_claim_waits(served, tmp_path):
    ns = new_namespace(served, "vb-rwop")
    path = tmp_path / "exclusive.yaml"
    path.write_text(EXCLUSIVE.format(ns=ns))
    served.ok("apply", "-f", str(path))
    eventually(
        lambda: (
            served.ok("get", "pod", "first", "-n", ns, "-o", "jsonpath={.status.phase}")
            == "Running"
        )
    )
    second = tmp_path / "second.yaml"
    second.write_text(SECOND.format(ns=ns))
    served.ok("apply", "-f", str(second))

    text = " ".join(described_failed_scheduling(served, ns, "second").split())
    assert (
        "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
        "access mode. preemption: 0/"
    ) in text
