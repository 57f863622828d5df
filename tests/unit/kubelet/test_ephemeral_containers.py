"""Ephemeral containers (``kubectl debug``) in a running pod, as the kubelet runs them.

Upstream: the pod worker's ``SyncPod`` (``kuberuntime_manager.go``) starts ephemeral
containers it finds without a status after the regular ones and never restarts them;
``convertToAPIContainerStatuses`` reports them in ``status.ephemeralContainerStatuses``
with the regular shape (containerID, image, imageID, lastState, restartCount, state);
the prober manager's ``UpdatePodStatus`` sets ``started``/``ready`` only for regular and
init containers, so an ephemeral status has no ``started`` and is never ready, and the
``Ready``/``ContainersReady`` conditions (and kubectl's READY column) ignore it.
"""

from __future__ import annotations

from kubeprio.api import annotations
from kubeprio.api.core import PHASE_SUCCEEDED, EphemeralContainer, Pod
from kubeprio.api.model import evolve
from kubeprio.api.patch import PatchType
from kubeprio.api.serialization import to_dict
from kubeprio.client.protocol import DeleteRequest
from kubeprio.kubelet.runtime import container_id
from tests.builders import node, pod
from tests.unit.kubelet.conftest import Cluster, events

NODE = node("n1").allocatable(cpu="2", memory="4Gi", pods="10")
EPHEMERAL = "ephemeralcontainers"


def add_debugger(cluster: Cluster, pod_name: str, name: str, image: str = "busybox") -> None:
    """What ``kubectl debug`` sends: a strategic merge patch of the subresource, made by
    ``CreateTwoWayMergePatch`` (so it states the order of the whole list)."""
    current = cluster.api.get(Pod, pod_name, "default")
    existing = [c.name for c in (current.spec.ephemeral_containers if current.spec else None) or ()]
    patch = {
        "spec": {
            "$setElementOrder/ephemeralContainers": [{"name": n} for n in [*existing, name]],
            "ephemeralContainers": [
                {"name": name, "image": image, "stdin": True, "terminationMessagePolicy": "File"}
            ],
        }
    }
    cluster.api.patch_object(
        Pod,
        pod_name,
        patch,
        namespace="default",
        patch_type=PatchType.STRATEGIC_MERGE_PATCH,
        subresource=EPHEMERAL,
    )
    cluster.driver.settle()


def ephemeral_statuses(found: Pod) -> list[dict[str, object]]:
    return to_dict(found.status)["ephemeralContainerStatuses"]  # type: ignore[arg-type]


def test_an_added_ephemeral_container_starts_running(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=NODE.build())
    running = cluster.run(pod("web").requests(cpu="1").build())
    before = to_dict(running.status)
    cluster.advance(5)
    add_debugger(cluster, "web", "debugger-abcde")
    found = cluster.pod("web")
    assert found is not None
    uid = found.metadata.uid or ""
    assert ephemeral_statuses(found) == [
        {
            "name": "debugger-abcde",
            "ready": False,
            "restartCount": 0,
            "containerID": container_id(uid, "debugger-abcde"),
            "image": "busybox",
            "imageID": "busybox",
            "lastState": {},
            "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}},
        }
    ]
    # Nothing else in the status moved: conditions, regular statuses, start time.
    after = to_dict(found.status)
    del after["ephemeralContainerStatuses"]
    assert after == before


def test_a_second_debugger_keeps_the_first_ones_status(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("web").build())
    add_debugger(cluster, "web", "one")
    cluster.advance(10)
    add_debugger(cluster, "web", "two", image="alpine")
    found = cluster.pod("web")
    assert found is not None
    statuses = ephemeral_statuses(found)
    assert [(s["name"], s["state"]) for s in statuses] == [
        ("one", {"running": {"startedAt": "2026-01-01T00:00:00Z"}}),
        ("two", {"running": {"startedAt": "2026-01-01T00:00:10Z"}}),
    ]


def test_ephemeral_containers_hold_no_resources_and_emit_container_events(
    cluster: Cluster,
) -> None:
    kubelet = cluster.kubelet("n1", node=NODE.build(), container_events=True)
    cluster.run(pod("web").requests(cpu="1").build())
    add_debugger(cluster, "web", "dbg")
    assert kubelet.allocated() == {"cpu": 1000, "pods": 1}
    paths = [
        (e.reason, e.involved_object.field_path)  # type: ignore[union-attr]
        for e in events(cluster.api, name="web")
        if "ephemeral" in (e.involved_object.field_path or "")  # type: ignore[union-attr]
    ]
    assert sorted(paths) == [
        ("Created", "spec.ephemeralContainers{dbg}"),
        ("Pulled", "spec.ephemeralContainers{dbg}"),
        ("Started", "spec.ephemeralContainers{dbg}"),
    ]


def test_the_pod_ending_kills_its_debugger(cluster: Cluster) -> None:
    """The run ends (exit 0, Succeeded: the phase counts regular containers only); the
    debugging shell, PID 1 of its container, is killed: 137, ``Error``."""
    cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("job").annotate(annotations.DURATION, "30s").build())
    cluster.advance(10)
    add_debugger(cluster, "job", "dbg")
    cluster.advance(20)
    found = cluster.pod("job")
    assert found is not None
    assert found.status.phase == PHASE_SUCCEEDED  # type: ignore[union-attr]
    [status] = ephemeral_statuses(found)
    assert status["state"] == {
        "terminated": {
            "containerID": container_id(found.metadata.uid or "", "dbg"),
            "exitCode": 137,
            "finishedAt": "2026-01-01T00:00:30Z",
            "reason": "Error",
            "startedAt": "2026-01-01T00:00:10Z",
        }
    }


def test_a_terminating_pod_starts_no_debugger(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=NODE.build())
    cluster.run(pod("web").grace(30).build())
    cluster.api.delete(Pod, "web", "default", options=DeleteRequest())
    cluster.driver.settle()
    add_debugger(cluster, "web", "late")
    found = cluster.pod("web")
    assert found is not None
    assert found.status.ephemeral_container_statuses is None  # type: ignore[union-attr]


def test_an_adopted_running_pod_starts_its_unreported_debugger(cluster: Cluster) -> None:
    """A snapshot's running pod whose ephemeral container has no status yet."""
    cluster.kubelet("n1", node=NODE.build())
    spec_pod = pod("snap").on("n1").build()
    spec = spec_pod.spec
    assert spec is not None
    created = cluster.api.create(spec_pod)
    running = evolve(created.status, phase="Running", start_time="2025-12-31T23:00:00Z")
    cluster.api.update_status(evolve(created, status=running))
    current = cluster.api.get(Pod, "snap", "default")
    assert current.spec is not None
    cluster.api.update_object(
        evolve(
            current,
            spec=evolve(
                current.spec,
                ephemeral_containers=(EphemeralContainer(name="dbg", image="busybox"),),
            ),
        ),
        subresource=EPHEMERAL,
    )
    cluster.driver.settle()
    found = cluster.pod("snap")
    assert found is not None
    assert [s["name"] for s in ephemeral_statuses(found)] == ["dbg"]


def test_a_host_network_pod_gets_the_nodes_ip(cluster: Cluster) -> None:
    """``kubectl debug node/NAME`` runs a host-network pod: ``generateAPIPodStatus`` gives
    it the node's IPs, and no address of the pod range."""
    kubelet = cluster.kubelet("n1", node=NODE.build())
    plain = pod("node-debugger").build()
    assert plain.spec is not None
    found = cluster.run(evolve(plain, spec=evolve(plain.spec, host_network=True)))
    status = found.status
    assert status is not None
    host_ip = status.host_ip
    assert host_ip
    assert status.pod_ip == host_ip
    assert to_dict(status)["podIPs"] == [{"ip": host_ip}]
    assert kubelet.record(found.metadata.uid or "") is not None
