"""A simulated kubelet's start whose Node write waits on an admission webhook without
holding the loop (``Kubelet.start`` through ``client.answeredretry``), with webhooks
answered in process on worker threads, as ``kubeprio serve`` wires them.

Upstream the kubelet registers its Node (``registerWithAPIServer``, then the first node
status update, ``pkg/kubelet/kubelet_node_status.go``) in its own goroutines; a slow
webhook holds that kubelet only. Checked as for the other kubelet writes
(``test_kubeletwebhooks.py``): the start returns at once with nothing written, the
kubelet acts on nothing until it has started, the webhook is called once per review,
each write is done once after its answer, and the pods handed to the kubelet meanwhile
run once it has started. Both start writes are ``nodes/status`` patches
(``tryRegisterWithAPIServer``'s for the labels and annotation, then
``tryUpdateNodeStatus``'s), so the webhook reviews each.
"""

from __future__ import annotations

import asyncio
import random

from kubeprio.api.core import Node, Pod
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.nodelifecycle import ready_condition
from kubeprio.kubelet.kubelet import Kubelet
from kubeprio.kubelet.router import PodRouter
from kubeprio.sim.drive import KubeletFleet
from tests.builders import node, pod
from tests.conftest import ManualClock
from tests.unit.apiserver.test_componentwebhooks import allow, rule_hook, served, until

NODE_STATUS_HOOK = rule_hook("n.example.com", "/n", "nodes/status", "UPDATE")


def _ready(api: ApiService, name: str) -> str | None:
    condition = ready_condition(api.get(Node, name))
    return condition.status if condition else None


def test_a_start_waiting_on_its_webhook_returns_at_once_and_starts_once_answered() -> None:
    """A Node without conditions gets the kubelet's (Ready True) at start: that
    ``nodes/status`` write waits on its webhook off the loop."""
    env = served({"/n": allow()}, NODE_STATUS_HOOK)
    api = env.api
    clock = api.clock
    assert isinstance(clock, ManualClock)
    api.create(node("n1").allocatable(cpu="4", memory="4Gi", pods="10").build())
    kubelet = Kubelet(api, "n1", clock=clock, rng=random.Random(1))
    started: list[str] = []
    env.caller.release.clear()  # the webhook thinks until released

    async def main() -> None:
        assert kubelet.start(then=lambda: started.append("n1")) is None  # returns at once
        assert not kubelet.started
        assert _ready(api, "n1") is None  # nothing written yet
        kubelet.on_add(api.create(pod("web").on("n1").build()))
        assert kubelet.next_wakeup() is None  # acts on nothing before it has started
        kubelet.run_once()
        assert kubelet.running() == []
        env.caller.release.set()
        await until(lambda: kubelet.started)

    asyncio.run(main())
    env.waits.close()
    assert started == ["n1"]
    assert _ready(api, "n1") == "True"
    # Two reviews, each write parked once: the registration patch (default labels and
    # the attach-detach annotation the built Node lacks), then the first status patch.
    assert env.caller.paths() == ["/n", "/n"]
    assert env.writes.posted == 2
    assert kubelet.api_writes.parked == 2
    # The pod handed over meanwhile runs now.
    assert kubelet.next_wakeup() == clock.now()
    kubelet.run_once()
    assert [p.metadata.name for p in kubelet.running()] == ["web"]
    assert api.get(Pod, "web", "default").status.phase == "Running"


def test_the_fleet_runs_a_kubelet_whose_start_waited_once_it_has_started() -> None:
    """``KubeletFleet`` registers the kubelet at once (pod events reach it) and plans no
    work for it until its start's write is answered; then it runs the pods bound before."""
    env = served({"/n": allow()}, NODE_STATUS_HOOK)
    api = env.api
    clock = api.clock
    assert isinstance(clock, ManualClock)
    api.create(node("n1").allocatable(cpu="4", memory="4Gi", pods="10").build())
    api.create(pod("web").on("n1").build())
    nodes, pods = Informer(api, Node), Informer(api, Pod)
    router = PodRouter()
    pods.add_handler(router)
    fleet = KubeletFleet(
        api,
        clock=clock,
        rng=random.Random(1),
        router=router,
        bound_pods=lambda name: [p for p in pods.list() if p.spec and p.spec.node_name == name],
    )
    nodes.add_handler(fleet)
    nodes.start()
    pods.start()
    env.caller.release.clear()

    async def main() -> None:
        assert fleet.next_wakeup() == clock.now()  # a kubelet to start
        fleet.run_once()  # returns: the start waits off the loop
        assert not fleet.kubelets["n1"].started
        assert fleet.next_wakeup() is None  # nothing to run until it has started
        env.caller.release.set()
        await until(lambda: fleet.kubelets["n1"].started)

    asyncio.run(main())
    env.waits.close()
    assert fleet.next_wakeup() == clock.now()  # woken by its start
    fleet.run_once()
    assert api.get(Pod, "web", "default").status.phase == "Running"
    assert env.caller.paths() == ["/n", "/n"]
    assert env.writes.posted == 2
