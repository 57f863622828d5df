"""The storage API against a live ``kubeprio serve`` with the real kubectl (v1.32) and the
official Python client.

Each test names the upstream behaviour it checks: ``kubectl get pv,pvc,sc`` columns
(``printPersistentVolume``, ``printPersistentVolumeClaim``, ``printStorageClass`` with
`` (default)``), ``kubectl apply -f`` of a volume and a claim, ``kubectl describe pvc``,
a claim in use staying Terminating (``kubernetes.io/pvc-protection``) until its pod is
gone, a claim over quota refused with the ``exceeded quota`` Forbidden line, a
StatefulSet's ``volumeClaimTemplates`` making one claim per pod, which the simulated
provisioner's WaitForFirstConsumer class binds once the scheduler picks a node, and
``CoreV1Api``/``StorageV1Api`` reads. An Immediate claim binds the matching volume
(``pv_controller.go``'s ``syncUnboundClaim``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

STORAGE = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/fast
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-__NS__}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  hostPath: {path: /data/__NS__}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: __NS__}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: user, namespace: __NS__}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: nginx:1.27}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
"""

WEB = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: sim-__NS__}
provisioner: kubeprio.io/simulated
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: __NS__}
spec:
  replicas: 2
  serviceName: nginx
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: nginx, image: nginx:1.27}
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      storageClassName: sim-__NS__
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-storage", ["--nodes", "2"]) as server:
        yield server


def _apply(served: ServeProcess, manifest: str, namespace: str) -> str:
    return served.ok("apply", "-f", "-", stdin=manifest.replace("__NS__", namespace))


def test_apply_and_get_show_upstream_columns(served):
    namespace = new_namespace(served, "storage")
    out = _apply(served, STORAGE, namespace)
    assert f"persistentvolume/pv-{namespace} created" in out
    assert "persistentvolumeclaim/data created" in out
    classes = table_rows(served.ok("get", "sc"))
    assert classes[0] == [
        "NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"
    ]  # fmt: skip
    assert classes[1][:6] == [
        "fast",
        "(default)",
        "example.com/fast",
        "Delete",
        "Immediate",
        "false",
    ]
    claims = table_rows(served.ok("get", "pvc", "-n", namespace))
    assert claims[0] == [
        "NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS", "AGE",
    ]  # fmt: skip
    # DefaultStorageClass gave the claim the default class (Immediate): the PV controller
    # binds it to the one matching volume.
    assert claims[1][0] == "data"
    bound = eventually(
        lambda: (r := table_rows(served.ok("get", "pvc", "-n", namespace)))[1][1] == "Bound" and r
    )
    assert bound[1][:7] == ["data", "Bound", f"pv-{namespace}", "5Gi", "RWO", "fast", "<unset>"]
    volumes = table_rows(served.ok("get", "pv", f"pv-{namespace}"))
    assert volumes[0][:4] == ["NAME", "CAPACITY", "ACCESS", "MODES"]
    assert volumes[1][:3] == [f"pv-{namespace}", "5Gi", "RWO"]
    both = served.ok("get", "pv,pvc", "-n", namespace)
    assert f"persistentvolume/pv-{namespace}" in both
    assert "persistentvolumeclaim/data" in both
    described = served.ok("describe", "pvc", "data", "-n", namespace)
    lines = {
        line.split(":", 1)[0]: line.split(":", 1)[1].strip()
        for line in described.splitlines()
        if ":" in line and not line.startswith(" ")
    }
    assert lines["Name"] == "data"
    assert lines["StorageClass"] == "fast"
    assert lines["Status"] == "Bound"
    assert lines["Volume"] == f"pv-{namespace}"
    assert lines["Finalizers"] == "[kubernetes.io/pvc-protection]"


def test_a_claim_in_use_stays_terminating_until_its_pod_goes(served):
    namespace = new_namespace(served, "storage-inuse")
    _apply(served, STORAGE, namespace)
    _apply(served, POD, namespace)
    eventually(
        lambda: (
            served.json("get", "pod", "user", "-n", namespace)["status"].get("phase") == "Running"
        ),
        timeout=30,
    )
    served.ok("delete", "pvc", "data", "-n", namespace, "--wait=false")
    claim = served.json("get", "pvc", "data", "-n", namespace)
    assert claim["metadata"]["deletionTimestamp"]
    assert table_rows(served.ok("get", "pvc", "-n", namespace))[1][:2] == ["data", "Terminating"]
    served.ok("delete", "pod", "user", "-n", namespace)
    eventually(
        lambda: served.kubectl("get", "pvc", "data", "-n", namespace).returncode != 0,
        timeout=30,
    )


def test_a_claim_over_quota_is_forbidden(served):
    namespace = new_namespace(served, "storage-quota")
    served.ok("create", "quota", "q", "--hard=requests.storage=1Gi", "-n", namespace)
    eventually(
        lambda: served.json("get", "quota", "q", "-n", namespace).get("status", {}).get("used")
    )
    _apply(served, STORAGE, namespace)
    second = STORAGE.split("---\n")[2].replace("name: data", "name: more")
    result = served.kubectl("apply", "-f", "-", stdin=second.replace("__NS__", namespace))
    assert result.returncode != 0
    assert result.stderr.strip().endswith(
        'persistentvolumeclaims "more" is forbidden: exceeded quota: q, requested: '
        "requests.storage=1Gi, used: requests.storage=1Gi, limited: requests.storage=1Gi"
    )


def test_a_statefulset_makes_its_claims(served):
    namespace = new_namespace(served, "storage-sts")
    _apply(served, WEB, namespace)
    rows = eventually(
        lambda: (
            (r := table_rows(served.ok("get", "pvc", "-n", namespace)))[1:] and len(r) == 3 and r
        ),
        timeout=60,
    )
    assert [row[0] for row in rows[1:]] == ["www-web-0", "www-web-1"]

    def all_bound() -> list[list[str]] | None:
        rows = table_rows(served.ok("get", "pvc", "-n", namespace))
        return rows if {row[1] for row in rows[1:]} == {"Bound"} else None

    bound = eventually(all_bound, timeout=60)
    assert all(row[2].startswith("pvc-") for row in bound[1:])
    eventually(
        lambda: (
            {
                p["status"].get("phase")
                for p in served.json("get", "pods", "-n", namespace, "-l", "app=web")["items"]
            }
            == {"Running"}
        ),
        timeout=60,
    )
    claim = served.json("get", "pvc", "www-web-0", "-n", namespace)
    assert claim["metadata"]["labels"] == {"app": "web"}
    events = served.json(
        "get", "events", "-n", namespace, "--field-selector", "involvedObject.name=web"
    )
    messages = {e["message"] for e in events["items"]}
    assert "create Claim www-web-0 Pod web-0 in StatefulSet web success" in messages


def test_python_client_reads(served):
    namespace = new_namespace(served, "storage-py")
    _apply(served, STORAGE, namespace)
    with served.client() as api_client:
        core = k8s.CoreV1Api(api_client)
        storage = k8s.StorageV1Api(api_client)
        claim = core.read_namespaced_persistent_volume_claim("data", namespace)
        assert claim.spec.resources.requests == {"storage": "1Gi"}
        assert claim.spec.storage_class_name == "fast"
        volume = core.read_persistent_volume(f"pv-{namespace}")
        assert volume.spec.capacity == {"storage": "5Gi"}
        assert "fast" in [c.metadata.name for c in storage.list_storage_class().items]
        listed = core.list_namespaced_persistent_volume_claim(namespace)
        assert [c.metadata.name for c in listed.items] == ["data"]
