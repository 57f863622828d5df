"""A run whose only remaining work is retrying pods against an unchanged cluster ends.

Upstream's scheduler queues a pod that failed with no rejecting plugin — here, because
there are no nodes at all ("no nodes available to schedule pods",
``ErrNoNodesAvailable`` in ``pkg/scheduler/schedule_one.go``) — for another attempt
after backoff, forever (``determineSchedulingHintForInFlightPod`` returns
``queueAfterBackoff``). The simulator keeps that behaviour but ends the run once the
retries can no longer change anything (``sim.stall``), and never earlier.
"""

from __future__ import annotations

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate

POD = """
apiVersion: v1
kind: Pod
metadata: {name: lonely, namespace: default}
spec:
  containers:
    - name: c
      image: busybox
      resources: {requests: {cpu: 100m}}
"""

NODE_LATER = """
---
apiVersion: v1
kind: Node
metadata:
  name: node-1
  annotations: {kubeprio.io/submit-at: 1h}
status:
  allocatable: {cpu: "1", memory: 1Gi, pods: "10"}
"""


def test_pod_retried_without_nodes_ends_the_run_instead_of_retrying_forever() -> None:
    report, _ = simulate(manifest.parse_text(POD, "pod.yaml"), seed=0)
    [pod] = report["pods"]
    assert pod["pendingMessage"] == "no nodes available to schedule pods"
    # Retried with a growing backoff (at most 10 s) until more than one longest backoff
    # (+1 s: backoff completes on whole seconds) has passed since the last change, the
    # pod's creation at t=0; the run ends at the first retry after that.
    times = [e["time"] for e in report["events"] if e["reason"] == "FailedScheduling"]
    assert len(times) >= 3
    assert times[-2] <= 11.0 < times[-1] == report["endTime"] <= 22.0


def test_stall_never_cuts_a_run_short_of_a_later_submission() -> None:
    report, _ = simulate(manifest.parse_text(POD + NODE_LATER, "pod.yaml"), seed=0)
    [pod] = report["pods"]
    assert pod["node"] == "node-1"
    # The node arrives at t=1h; the pod, still in its (at most 10 s) backoff then, is
    # retried when the backoff completes, as upstream's queue does.
    assert 3600.0 <= pod["scheduledAt"] <= 3611.0
    assert pod["phase"] == "Running"
