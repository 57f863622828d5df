"""A dumped pod that was debugged loads into ``kubeprio simulate`` as the cluster held it.

On a real cluster only the ``pods/ephemeralcontainers`` subresource adds ephemeral
containers (``kubectl debug``); a pod create that sets them is refused
(``ValidatePodCreate``: "spec.ephemeralContainers: Forbidden: cannot be set on create").
A dump of a debugged pod carries them, so simulate creates the pod without them and then
adds them through that subresource, keeping the dump's container statuses.
"""

from __future__ import annotations

from kubeprio.api import manifest
from kubeprio.api.core import Pod
from kubeprio.api.serialization import to_dict
from kubeprio.sim.simulate import simulate

DUMP = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: 0b5a2f3e-1111-4c1d-9d7e-000000000001}
spec:
  nodeName: n1
  containers:
  - {name: app, image: nginx, resources: {requests: {cpu: "1"}}}
  ephemeralContainers:
  - {name: debugger-x7k2p, image: busybox, stdin: true, tty: true, targetContainerName: app}
status:
  phase: Running
  startTime: "2026-11-01T10:00:00Z"
  ephemeralContainerStatuses:
  - name: debugger-x7k2p
    image: busybox
    imageID: ""
    ready: false
    restartCount: 0
    state: {running: {startedAt: "2026-11-01T10:05:00Z"}}
"""


def test_a_debugged_pod_from_a_dump_is_restored_with_its_ephemeral_containers():
    report, cluster = simulate(manifest.parse_text(DUMP, "dump.yaml"), seed=0)
    assert report["rejected"] == []
    (web,) = [p for p in report["pods"] if p["name"] == "web"]
    assert (web["node"], web["phase"]) == ("n1", "Running")
    stored = cluster.api.get(Pod, "web", "default")
    assert stored.spec is not None
    assert [c.name for c in stored.spec.ephemeral_containers or ()] == ["debugger-x7k2p"]
    assert stored.spec.ephemeral_containers[0].target_container_name == "app"  # type: ignore[index]
    assert stored.status is not None
    statuses = to_dict(stored.status).get("ephemeralContainerStatuses")
    assert [(s["name"], s["state"]) for s in statuses] == [
        ("debugger-x7k2p", {"running": {"startedAt": "2026-11-01T10:05:00Z"}})
    ]
