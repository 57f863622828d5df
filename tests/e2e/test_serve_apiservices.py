"""APIServices and CSIStorageCapacities against a live ``kubeprio serve`` with the real
kubectl (v1.32).

Upstream rules: the local APIServices kube-apiserver registers at start
(``cmd/kube-apiserver/app/aggregator.go`` ``apiVersionPriorities``), one per served CRD
version (``pkg/controlplane/controller/crdregistration``), Available ``Local``
(``NewLocalAvailableAPIServiceCondition``), the aggregator's Table (``etcd.go``
``ConvertToTable``: NAME SERVICE AVAILABLE AGE) and ``printCSIStorageCapacity``
(NAME STORAGECLASSNAME CAPACITY).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl, running, table_rows

pytestmark = [pytest.mark.e2e, needs_kubectl]

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.apisvc.example.com}
spec:
  group: apisvc.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
"""

CAPACITY = """\
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: ebs-zone-a, namespace: default}
storageClassName: ebs
capacity: 100Gi
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: a}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-apisvc", ["--nodes", "1"]) as server:
        yield server


def test_get_apiservices_lists_the_local_ones(served):
    rows = table_rows(served.ok("get", "apiservices"))
    assert rows[0] == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    by_name = {row[0]: row[1:3] for row in rows[1:]}
    for name in ("v1.", "v1.apps", "v1.storage.k8s.io", "v2.autoscaling", "v1.events.k8s.io"):
        assert by_name[name] == ["Local", "True"], name
    assert "v1beta1.metrics.k8s.io" not in by_name


def test_get_apiservice_yaml(served):
    doc = yaml.safe_load(served.ok("get", "apiservice", "v1.apps", "-o", "yaml"))
    assert doc["apiVersion"] == "apiregistration.k8s.io/v1"
    assert doc["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    assert doc["spec"] == {
        "group": "apps",
        "version": "v1",
        "groupPriorityMinimum": 17800,
        "versionPriority": 15,
    }
    [condition] = doc["status"]["conditions"]
    assert condition["message"] == "Local APIServices are always available"


def test_a_crd_adds_and_removes_its_apiservice(served, tmp_path):
    path = tmp_path / "crd.yaml"
    path.write_text(CRD)
    served.ok("apply", "-f", str(path))

    def listed() -> list[str] | None:
        rows = table_rows(served.ok("get", "apiservices"))
        row = next((r for r in rows if r[0] == "v1.apisvc.example.com"), None)
        return row

    assert eventually(listed)[1:3] == ["Local", "True"]
    served.ok("delete", "-f", str(path))
    eventually(lambda: listed() is None or None)


def test_a_bad_apiservice_is_refused(served, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\n"
        "metadata: {name: v1.wrong.io}\n"
        "spec: {group: other.io, version: v1, groupPriorityMinimum: 100, versionPriority: 10}\n"
    )
    result = served.kubectl("apply", "-f", str(path))
    assert result.returncode != 0
    assert (
        'The APIService "v1.wrong.io" is invalid: metadata.name: Invalid value: "v1.wrong.io": '
        'must be `spec.version+"."+spec.group`: "v1.other.io"'
    ) in result.stderr


def test_get_csistoragecapacities(served, tmp_path):
    path = tmp_path / "capacity.yaml"
    path.write_text(CAPACITY)
    served.ok("apply", "-f", str(path))
    rows = table_rows(served.ok("get", "csistoragecapacities"))
    assert rows == [["NAME", "STORAGECLASSNAME", "CAPACITY"], ["ebs-zone-a", "ebs", "100Gi"]]
    result = served.kubectl(
        "patch", "csistoragecapacity", "ebs-zone-a", "--type=merge", "-p",
        '{"storageClassName":"other"}',
    )  # fmt: skip
    assert result.returncode != 0
    assert (
        'The CSIStorageCapacity "ebs-zone-a" is invalid: storageClassName: Invalid value: '
        '"other": field is immutable'
    ) in result.stderr
