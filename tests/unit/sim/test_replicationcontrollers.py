"""ReplicationControllers in ``kubeprio simulate``: input accepted, pods made, preemption.

Upstream runs the ReplicaSet controller for ReplicationControllers
(``pkg/controller/replication``), so a preempted RC pod is replaced by a new pod (a new
generated name), which goes back through the scheduling queue and stays Pending while
the preemptor holds the room, exactly as a ReplicaSet's: the victim stops counting as
active when its graceful deletion starts, so the replacement is created at once, not
when the victim has terminated (as a StatefulSet's).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate
from tests.unit.sim.test_statefulsets import CLUSTER, pod

RC = """\
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: web}
      annotations: {kubeprio.io/termination-seconds: "5"}
    spec:
      priorityClassName: low
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 1500m}}}]
"""


def run(*docs: str, seed: int = 0) -> dict[str, Any]:
    report, _ = simulate(manifest.parse_text("---\n".join(docs), "in.yaml"), seed=seed, until=300)
    return report


@pytest.mark.parametrize("seed", [0, 1])
def test_a_preempted_rc_pod_is_replaced_and_waits_in_the_queue(seed: int) -> None:
    report = run(CLUSTER, RC, pod("urgent", "2", at="60s"), seed=seed)
    web = [p for p in report["pods"] if p["name"].startswith("web-")]
    assert len(web) == 3  # two from the start, one replacement
    (preemption,) = report["preemptions"]
    (victim,) = preemption["victims"]
    assert preemption["preemptor"] == "default/urgent"
    (old,) = [p for p in web if f"default/{p['name']}" == victim]
    assert (old["deleted"], old["preemptedBy"], old["finishedAt"]) == (True, "default/urgent", 65.0)
    (replacement,) = [p for p in web if p["createdAt"] == 60.0]
    assert (replacement["phase"], replacement["node"]) == ("Pending", None)
    assert "Insufficient cpu" in replacement["pendingMessage"]
    creates = [
        e["time"]
        for e in report["events"]
        if e["reason"] == "SuccessfulCreate" and e["object"] == "ReplicationController/default/web"
    ]
    assert creates == [0.0, 0.0, 60.0]
