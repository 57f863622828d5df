"""``kubeprio simulate`` accepts RBAC manifests: they load through the write path (an
invalid one is rejected with upstream's text) and change no scheduling outcome
(docs/design.md's input list)."""

from __future__ import annotations

from typing import Any

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "2", memory: 4Gi, pods: "110"}
  allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - {name: app, image: nginx, resources: {requests: {cpu: "1"}}}
"""
RBAC = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pod-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: readers, namespace: default}
roleRef: {kind: ClusterRole, name: pod-reader}
subjects: [{kind: User, name: bob}]
"""


def _run(*documents: str) -> dict[str, Any]:
    report, _ = simulate(manifest.parse_text("---\n".join(documents), "input.yaml"), seed=0)
    return report


def test_rbac_objects_load_and_change_no_placement():
    plain = _run(CLUSTER, POD)
    with_rbac = _run(CLUSTER, RBAC, POD)
    assert [p["node"] for p in with_rbac["pods"]] == [p["node"] for p in plain["pods"]] == ["n1"]
    assert not with_rbac.get("rejected")


def test_an_invalid_binding_is_rejected_with_upstreams_text():
    bad = RBAC.replace("kind: ClusterRole, name", "kind: Pod, name")
    report = _run(CLUSTER, bad)
    messages = [r["message"] for r in report["rejected"]]
    assert messages == [
        'RoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef.kind: '
        'Unsupported value: "Pod": supported values: "Role", "ClusterRole"'
    ]
