"""The simulated kubelets' writes that wait on admission webhooks without holding the loop
(``kubelet.statusmanager``, ``kubelet.nodelease``, ``kubelet.pressure``), with webhooks
answered in process on worker threads, as ``kubeprio serve`` wires them.

Upstream each of these writes is a call of its own goroutine: the status manager's
``syncPod`` (``pkg/kubelet/status/status_manager.go``: it writes the latest status of
each pod, then deletes a terminated pod being deleted), the lease controller's renewal
(``component-helpers/apimachinery/lease/controller.go``), the node status update. Each
test checks the brief's properties on one write type: the kubelet's call returns at
once with nothing written, each webhook is called once per review, the write is done
once after the answer, and a status decided meanwhile is written after it (never an
older one after a newer).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from kubeprio.api import annotations, manifest
from kubeprio.api.coordination import Lease
from kubeprio.api.core import Event, Node, Pod
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.storagehelpers import ANN_SELECTED_NODE
from kubeprio.client.informer import Informer
from kubeprio.kubelet.kubelet import Kubelet
from kubeprio.kubelet.nodelease import NodeLeases
from kubeprio.scheduler.scheduler import Scheduler
from kubeprio.scheduler.setup import new_scheduler
from tests.builders import node, pod
from tests.conftest import ManualClock
from tests.unit.apiserver.test_componentwebhooks import Served, allow, rule_hook, served, until


def _kubelet(env: Served, *pods: Pod, memory: str = "4Gi") -> tuple[Kubelet, ManualClock]:
    api = env.api
    clock = api.clock
    assert isinstance(clock, ManualClock)
    api.create(node("n1").allocatable(cpu="4", memory=memory, pods="10").build())
    kubelet = Kubelet(api, "n1", clock=clock, rng=random.Random(1))
    kubelet.start()
    for item in pods:
        kubelet.on_add(api.create(item))
    return kubelet, clock


def _phases(env: Served) -> list[Any]:
    """The phase of each pods/status review, in the order the webhook saw them."""
    return [
        request["object"]["status"].get("phase")
        for path, request, _ in env.caller.calls
        if request.get("subResource") == "status"
    ]


def test_a_running_status_waiting_on_its_webhook_is_written_once_answered() -> None:
    """``SetPodStatus`` then ``syncPod``: the kubelet goes on while the write waits; the
    pod turns Running once, after one review."""
    env = served({"/s": allow()}, rule_hook("s.example.com", "/s", "pods/status", "UPDATE"))
    kubelet, _clock = _kubelet(env, pod("web").on("n1").build())
    env.caller.release.clear()  # the webhook thinks until released

    async def main() -> None:
        kubelet.run_once()  # returns: nothing waits in place
        assert kubelet.statuses.waiting(env.api.get(Pod, "web", "default").metadata.uid or "")
        assert env.api.get(Pod, "web", "default").status.phase != "Running"
        assert [p.metadata.name for p in kubelet.running()] == ["web"]  # started meanwhile
        kubelet.run_once()  # another round while it waits posts nothing again
        env.caller.release.set()
        await until(lambda: len(kubelet.statuses) == 0)

    asyncio.run(main())
    env.waits.close()
    assert env.api.get(Pod, "web", "default").status.phase == "Running"
    assert _phases(env) == ["Running"]
    assert env.writes.posted == 1
    assert kubelet.api_writes.parked == 1


def test_a_status_decided_while_one_waits_is_written_after_it() -> None:
    """The status manager writes the latest status: a pod that ends while its Running
    status waits is written Running (the reviewed write), then Succeeded, never Running
    after Succeeded; each review is one webhook call."""
    env = served({"/s": allow()}, rule_hook("s.example.com", "/s", "pods/status", "UPDATE"))
    job = pod("job").on("n1").annotate("kubeprio.io/duration", "5s").build()
    kubelet, clock = _kubelet(env, job)
    env.caller.release.clear()

    async def main() -> None:
        kubelet.run_once()
        clock.advance(5)
        kubelet.run_once()  # the run ends: the terminal status is queued behind
        assert env.api.get(Pod, "job", "default").status.phase == "Pending"
        env.caller.release.set()
        await until(lambda: len(kubelet.statuses) == 0)

    asyncio.run(main())
    env.waits.close()
    stored = env.api.get(Pod, "job", "default")
    assert stored.status.phase == "Succeeded"
    assert _phases(env) == ["Running", "Succeeded"]
    assert env.writes.posted == 2


def test_a_final_delete_waiting_on_its_webhook_deletes_the_pod_once() -> None:
    """``syncPod`` deletes a terminated pod being deleted (grace 0, uid precondition)
    after its terminal status is written; that delete waits on its webhook."""
    env = served({"/d": allow()}, rule_hook("d.example.com", "/d", "pods", "DELETE"))
    kubelet, clock = _kubelet(env, pod("web").on("n1").grace(1).build())
    kubelet.run_once()
    env.api.delete(Pod, "web", "default")  # the user's graceful delete (answered in place)
    env.caller.release.clear()

    async def main() -> None:
        current = env.api.get(Pod, "web", "default")
        kubelet.on_update(current, current)
        kubelet.run_once()
        clock.advance(5)
        kubelet.run_once()  # the containers are gone: Failed/Succeeded, then the delete
        assert env.api.get(Pod, "web", "default").status.phase in ("Failed", "Succeeded")
        kubelet.run_once()
        env.caller.release.set()
        await until(lambda: len(kubelet.api_writes) == 0)

    asyncio.run(main())
    env.waits.close()
    assert env.api.list(Pod).items == []
    deletes = [r for _, r, _ in env.caller.calls if r["operation"] == "DELETE"]
    assert len(deletes) == 2  # the user's, then the kubelet's: one review each
    assert deletes[1]["options"]["gracePeriodSeconds"] == 0


def test_a_lease_renewal_waiting_on_its_webhook_is_written_once_answered() -> None:
    """The lease controller's goroutine waits in its call: no renewal of that node is
    started meanwhile; the Lease is created once, after one review."""
    env = served(
        {"/l": allow()},
        rule_hook("l.example.com", "/l", "leases", "CREATE", "UPDATE", group="coordination.k8s.io"),
    )
    api = env.api
    clock = api.clock
    assert isinstance(clock, ManualClock)
    api.create(node("n1").build())
    nodes = Informer(api, Node)
    leases = NodeLeases(api, clock=clock, rng=random.Random(1), nodes=nodes)
    nodes.start()
    env.caller.release.clear()

    async def main() -> None:
        assert leases.run_once()
        assert api.list(Lease).items == []
        clock.advance(20)
        leases.run_once()  # its next renewal, while the first still waits: skipped
        env.caller.release.set()
        await until(lambda: len(leases.api_writes) == 0)

    asyncio.run(main())
    env.waits.close()
    assert [lease.metadata.name for lease in api.list(Lease).items] == ["n1"]
    assert env.caller.paths() == ["/l"]
    assert env.writes.posted == 1


def test_pressure_conditions_decided_while_their_write_waits_are_written_after_it() -> None:
    """The node status update writes what the kubelet sees: ``MemoryPressure=True``
    waits on its webhook while the pressure comes and goes; once answered, True is
    written (the reviewed write), then False, each with its event, one review each."""
    env = served({"/n": allow()}, rule_hook("n.example.com", "/n", "nodes/status", "UPDATE"))
    hog = pod("hog").requests(memory="100Mi").annotate(annotations.USAGE, "memory=1000Mi")
    kubelet, clock = _kubelet(env, hog.on("n1").build(), memory="1Gi")
    at_start = len(env.caller.calls)  # the kubelet's start reported Ready
    env.caller.release.clear()

    def pressure() -> str | None:
        current = env.api.get(Node, "n1")
        conditions = (current.status.conditions if current.status else None) or ()
        return next((c.status for c in conditions if c.type == "MemoryPressure"), None)

    async def main() -> None:
        kubelet.run_once()  # starts the hog; the first pass finds the node under pressure
        assert kubelet.pressure.node_conditions == ("MemoryPressure",)
        for _ in range(40):  # past the 5 min transition period after the hog is evicted
            clock.advance(10)
            kubelet.run_once()
        assert "MemoryPressure" not in kubelet.pressure.node_conditions
        assert pressure() != "True"
        env.caller.release.set()
        await until(lambda: len(kubelet.api_writes) == 0 and pressure() == "False")

    asyncio.run(main())
    env.waits.close()
    reviewed = [
        [c["status"] for c in r["object"]["status"]["conditions"] if c["type"] == "MemoryPressure"]
        for _, r, _ in env.caller.calls[at_start:]
    ]
    assert reviewed == [["True"], ["False"]]
    reasons = [
        e.reason
        for e in env.api.list(Event).items
        if e.involved_object is not None and e.involved_object.kind == "Node"
    ]
    assert reasons.count("NodeHasInsufficientMemory") == 1
    assert reasons.count("NodeHasSufficientMemory") == 1


# --- the scheduler's VolumeBinding PreBind ----------------------------------------------------


class LateClaim(NamedTuple):
    """A one-node cluster whose pod waits for a WaitForFirstConsumer claim, a webhook on
    the claim's updates, and a scheduler: VolumeBinding's PreBind writes the claim."""

    env: Served
    scheduler: Scheduler
    clock: ManualClock
    settle: Callable[[], None]
    selected_node: Callable[[], str | None]


LATE_CLAIM_OBJECTS: Final = (
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "late"},
        "provisioner": "kubeprio.io/simulated",
        "volumeBindingMode": "WaitForFirstConsumer",
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "late",
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "containers": [{"name": "app", "image": "busybox"}],
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    },
)


def late_claim_cluster() -> LateClaim:
    env = served(
        {"/c": allow()}, rule_hook("c.example.com", "/c", "persistentvolumeclaims", "UPDATE")
    )
    api = env.api
    clock = api.clock
    assert isinstance(clock, ManualClock)
    api.create(node("n1").allocatable(cpu="4", memory="4Gi", pods="10").build())
    for doc in LATE_CLAIM_OBJECTS:
        api.create_object(manifest.decode_object(doc))
    scheduler = new_scheduler(api, clock=clock, rng=random.Random(1))
    scheduler.start()

    def settle() -> None:
        scheduler.pump()
        while scheduler.run_once():
            scheduler.pump()

    def selected_node() -> str | None:
        claim = api.get(PersistentVolumeClaim, "data", "default")
        return (claim.metadata.annotations or {}).get(ANN_SELECTED_NODE)

    return LateClaim(env, scheduler, clock, settle, selected_node)


def test_a_prebind_claim_write_waiting_on_its_webhook_waits_and_is_written_once() -> None:
    """``BindPodVolumes`` (``volume_binding.go`` PreBind): upstream's binding goroutine
    blocks in ``bindAPIUpdate``'s call with the pod (and its volumes) assumed. Here the
    binding cycle parks with nothing reverted and resumes PreBind once answered
    (``test_prebindwakes.py`` times it), sending the write again, which the API service
    replays: the claim gets its selected node once, after one review, and the pod is
    neither failed nor requeued."""
    env, scheduler, clock, settle, selected_node = late_claim_cluster()
    env.caller.release.clear()

    async def main() -> None:
        settle()  # returns: the claim write waits off the loop
        assert scheduler.waiting_binds == 1
        assert selected_node() is None
        clock.advance(1)
        settle()  # a second later, while the webhook thinks: nothing posted again
        env.caller.release.set()

        def poll() -> bool:
            clock.advance(1)
            settle()
            return selected_node() is not None

        await until(poll)

    asyncio.run(main())
    env.waits.close()
    assert selected_node() == "n1"
    assert env.caller.paths() == ["/c"]
    assert env.writes.posted == 1
    assert scheduler.failed_attempts == 0
    assert scheduler.waiting_binds == 1  # now waiting for the PV controller to bind it
    assert [p.pod.metadata.name for p in scheduler.cache.node_info("n1").pods] == ["db"]
