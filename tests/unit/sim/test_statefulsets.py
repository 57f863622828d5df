"""StatefulSets in ``kubeprio simulate``: the preemption cascade and ordered rollouts.

A preempted StatefulSet pod is not replaced by a pod with a new name, as a ReplicaSet's
is: once the victim has terminated, the controller creates it again with the same name
(``processReplica``), and the new pod goes back through the scheduling queue, Pending
while the preemptor holds its room. With OrderedReady a Pending pod also stalls every
higher ordinal, which a Parallel set does not.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def stateful_set(replicas: int, policy: str = "OrderedReady") -> str:
    return f"""\
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: default}}
spec:
  replicas: {replicas}
  serviceName: db
  podManagementPolicy: {policy}
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata:
      labels: {{app: db}}
      annotations: {{kubeprio.io/termination-seconds: "5"}}
    spec:
      priorityClassName: low
      containers: [{{name: c, image: postgres, resources: {{requests: {{cpu: 1500m}}}}}}]
"""


def pod(name: str, cpu: str, at: str = "0s") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  annotations: {{kubeprio.io/submit-at: {at}}}
spec:
  priorityClassName: high
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def run(*docs: str, seed: int = 0) -> dict[str, Any]:
    report, _ = simulate(manifest.parse_text("---\n".join(docs), "in.yaml"), seed=seed, until=300)
    return report


def pods_named(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [p for p in report["pods"] if p["name"] == name]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_preempted_pod_is_recreated_with_its_name_and_waits(seed: int) -> None:
    report = run(CLUSTER, stateful_set(2), pod("urgent", "2", at="60s"), seed=seed)
    assert report["preemptions"] == [
        {"time": 60.0, "preemptor": "default/urgent", "node": "n1", "victims": ["default/db-1"]}
    ]
    old, new = pods_named(report, "db-1")
    assert (old["deleted"], old["preemptedBy"], old["finishedAt"]) == (True, "default/urgent", 65.0)
    assert (new["deleted"], new["phase"], new["node"], new["createdAt"]) == (
        False,
        "Pending",
        None,
        65.0,
    )
    assert "Insufficient cpu" in new["pendingMessage"]
    creates = [
        (e["time"], e["message"])
        for e in report["events"]
        if e["reason"] == "SuccessfulCreate" and e["object"] == "StatefulSet/default/db"
    ]
    assert creates == [
        (0.0, "create Pod db-0 in StatefulSet db successful"),
        (0.0, "create Pod db-1 in StatefulSet db successful"),
        (65.0, "create Pod db-1 in StatefulSet db successful"),
    ]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("OrderedReady", ["db-0", "db-1"]), ("Parallel", ["db-0", "db-1", "db-2"])],
    ids=["ordered rollout stalls behind db-1", "parallel creates every pod"],
)
def test_a_pending_pod_stalls_an_ordered_rollout(policy: str, expected: list[str]) -> None:
    report = run(CLUSTER, pod("big", "2"), stateful_set(3, policy))
    names = sorted(p["name"] for p in report["pods"] if p["name"].startswith("db-"))
    assert names == expected
    phases = {p["name"]: p["phase"] for p in report["pods"]}
    assert phases["db-0"] == "Running"
    assert all(phases[name] == "Pending" for name in expected[1:])


def test_snapshot_pods_at_the_dumped_revision_are_not_rolled() -> None:
    """A dump's StatefulSet keeps its status; its ControllerRevision (same template, so the
    same patch bytes: ``FindEqualRevisions``) stays the update revision, and its running
    pods, labelled with that revision, are left alone."""
    import json

    from kubeprio.api import defaults
    from kubeprio.controllers import statefulsetutil

    sts_doc = stateful_set(1).replace(
        "metadata: {name: db, namespace: default}",
        "metadata: {name: db, namespace: default, uid: u-1}",
    )
    (sts,) = [manifest.decode_document(d) for d in manifest.parse_text(sts_doc, "sts.yaml")]
    data = statefulsetutil.revision_data(defaults.default_object(sts))
    revision = (
        "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: db-dumped\n"
        "  namespace: default\n  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, "
        "name: db, uid: u-1, controller: true}]\n  labels: {app: db}\n"
        f"revision: 1\ndata: {json.dumps(data)}\n"
    )
    status = (
        "status: {replicas: 1, currentRevision: db-dumped, updateRevision: db-dumped, "
        "collisionCount: 0}\n"
    )
    pod_doc = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: db-0\n  namespace: default\n"
        "  labels: {app: db, controller-revision-hash: db-dumped, "
        "statefulset.kubernetes.io/pod-name: db-0, apps.kubernetes.io/pod-index: '0'}\n"
        "  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: u-1, "
        "controller: true}]\n"
        "spec:\n  nodeName: n1\n  hostname: db-0\n  subdomain: db\n  priorityClassName: low\n"
        "  containers: [{name: c, image: postgres, resources: {requests: {cpu: 1500m}}}]\n"
    )
    report = run(CLUSTER, sts_doc + status, revision, pod_doc)
    reasons = [e["reason"] for e in report["events"] if e["object"] == "StatefulSet/default/db"]
    assert "SuccessfulDelete" not in reasons
    assert [(p["name"], p["phase"], p["deleted"]) for p in report["pods"]] == [
        ("db-0", "Running", False)
    ]
