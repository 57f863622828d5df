"""One shared pod informer feeds many kubelets through ``PodRouter``."""

from __future__ import annotations

import random

from kubeprio.api.core import PHASE_RUNNING, Pod
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.kubelet.kubelet import Kubelet
from kubeprio.kubelet.router import PodRouter
from tests.builders import node, pod
from tests.conftest import ManualClock
from tests.driving import Driver
from tests.unit.kubelet.conftest import bind


def test_router_sends_each_pod_to_its_nodes_kubelet(api: ApiService, clock: ManualClock) -> None:
    pods = Informer(api, Pod)
    router = PodRouter()
    pods.add_handler(router)
    kubelets = {}
    for name in ("n1", "n2"):
        api.create(node(name).allocatable(cpu="1", pods="5").build())
        kubelet = Kubelet(api, name, clock=clock, rng=random.Random(1))
        kubelet.start()
        router.register(name, kubelet)
        kubelets[name] = kubelet
    driver = Driver(clock, [pods], list(kubelets.values()))
    for index, target in enumerate(("n1", "n2", "n2")):
        bind(api, api.create(pod(f"p{index}").requests(cpu="400m").build()), target)
    driver.settle()
    assert [p.metadata.name for p in kubelets["n1"].running()] == ["p0"]
    assert [p.metadata.name for p in kubelets["n2"].running()] == ["p1", "p2"]
    assert all(api.get(Pod, f"p{i}", "default").status.phase == PHASE_RUNNING for i in range(3))  # type: ignore[union-attr]
