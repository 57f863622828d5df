"""The kubelet fleet hands a starting kubelet the pods already bound to its node.

Upstream a kubelet's pod source is a watch with ``spec.nodeName=<node>``, which lists
the pods already bound before it streams changes (``pkg/kubelet/config/apiserver.go``,
``NewSourceApiserver``). In a simulation the scheduler may bind pods in the same instant
the Node appears, before the fleet has started that node's kubelet; those pods must still
run, and still terminate gracefully when preempted.
"""

from __future__ import annotations

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate

SAME_INSTANT = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  allocatable: {cpu: "1", memory: 1Gi, pods: "10"}
---
apiVersion: v1
kind: Pod
metadata: {name: victim, namespace: default}
spec:
  terminationGracePeriodSeconds: 40
  containers:
    - name: c
      image: busybox
      resources: {requests: {cpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: preemptor
  namespace: default
  annotations: {kubeprio.io/submit-at: 10s}
spec:
  priorityClassName: high
  containers:
    - name: c
      image: busybox
      resources: {requests: {cpu: "1"}}
"""


def test_pod_bound_in_the_same_instant_as_its_node_runs_and_terminates_gracefully() -> None:
    report, cluster = simulate(manifest.parse_text(SAME_INSTANT, "same-instant.yaml"), seed=0)
    pods = {p["name"]: p for p in report["pods"]}
    assert pods["victim"]["scheduledAt"] == 0.0
    assert pods["victim"]["preemptedBy"] == "default/preemptor"
    # The victim holds its CPU for its whole 40 s grace period (preempted at t=10 s).
    assert pods["victim"]["deletedAt"] == 50.0
    assert pods["preemptor"]["scheduledAt"] == 50.0
    assert pods["preemptor"]["phase"] == "Running"
    assert [k.node_name for k in cluster.fleet.kubelets.values()] == ["node-1"]
