"""The node lifecycle controller on a clock that moves between two reads, as the wall
clock of ``kubeprio serve`` does (the virtual clock of a simulation stands still within
a step, which hid this).

Upstream ``node_lifecycle_controller.go``: ``monitorNodeHealth`` queues an Unknown node
for the ``NoExecute`` taint (``markNodeForTainting``: ``Add`` at ``now()``), and
``doNoExecuteTaintingPass`` (every 100 ms) calls the zone queue's ``Try``
(``scheduler/rate_limited_queue.go``), which takes a token and then compares the head's
``processAt`` with a fresh ``now()``: the node is tainted at the next pass. kubeprio's
pass ran with the time read at the start of ``run_once``, earlier than the queueing, so
it took the token, found the node not yet due, and left it for the next token 10 s on,
which the next health check burnt the same way: the ``unreachable`` taint came tens of
seconds late, and the pods tolerating it for 2 s were not deleted within 40 s (the
intermittent ``test_serve_taints.py`` failure).
"""

from __future__ import annotations

import random

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.coordination import NODE_LEASE_NAMESPACE, Lease
from kubeprio.api.core import Node, Pod
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.clock import parse_rfc3339
from kubeprio.controllers.nodelifecycle import (
    NodeLifecycleConfig,
    NodeLifecycleController,
    ready_condition,
)
from kubeprio.kubelet.nodelease import DEFAULT_LEASE_DURATION_SECONDS, node_lease, renewed
from kubeprio.kubelet.registration import register_node
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock

TICK = 1e-6
"""How far the clock moves at every read (seconds)."""
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
UNREACHABLE = "node.kubernetes.io/unreachable"


class TickingClock(ManualClock):
    """A manual clock that moves on by ``TICK`` each time it is read."""

    def now(self) -> float:
        self.time += TICK
        return self.time


def _no_execute_taint_time(api: ApiService, name: str) -> float | None:
    taints = api.get(Node, name).spec.taints or ()
    stamp = next(
        (t.time_added for t in taints if t.key == UNREACHABLE and t.effect == "NoExecute"), None
    )
    return parse_rfc3339(stamp) if stamp else None


class Renewer:
    """A live kubelet's lease renewals, every 10 s."""

    def __init__(self, api: ApiService, clock: ManualClock, name: str) -> None:
        self.api, self.clock, self.name = api, clock, name
        self.due = clock.now()

    def next_wakeup(self) -> float:
        return self.due

    def run_once(self) -> None:
        lease = self.api.get(Lease, self.name, NODE_LEASE_NAMESPACE)
        self.api.update(renewed(lease, self.clock.now()))
        self.due = self.clock.now() + 10


def test_an_unknown_node_gets_its_no_execute_taint_at_the_next_pass() -> None:
    """A node whose kubelet renews nothing beside one that does: past the 50 s grace it
    goes Unknown at one check, is queued at the next (the node as read then says
    Unknown), and the tainting pass right after that check taints it. Driven by hand in
    0.5 s steps (every component at every step), the clock moving at each read."""
    clock = TickingClock()
    api = ApiService(MemoryStore(), clock=clock, rng=random.Random(1), admission=AdmissionChain())
    for name in ("n1", "n2"):
        node = register_node(api, name, clock=clock, capacity=CAPACITY)  # Ready
        api.create(
            node_lease(node, duration_seconds=DEFAULT_LEASE_DURATION_SECONDS, now=clock.now())
        )
    nodes, pods, leases = Informer(api, Node), Informer(api, Pod), Informer(api, Lease)
    controller = NodeLifecycleController(api, clock=clock, nodes=nodes, pods=pods, leases=leases)
    renewer = Renewer(api, clock, "n2")
    informers = (nodes, pods, leases)
    for _ in range(240):  # 120 s in steps of 0.5 s, everything run at every step
        clock.time += 0.5
        if renewer.next_wakeup() <= clock.now():
            renewer.run_once()
        for informer in informers:
            informer.pump()
        controller.run_once()
    period = NodeLifecycleConfig().node_monitor_period
    condition = ready_condition(api.get(Node, "n1"))
    assert condition is not None
    assert condition.status == "Unknown"
    assert ready_condition(api.get(Node, "n2")).status == "True"
    unknown_at = parse_rfc3339(condition.last_transition_time or "")
    tainted_at = _no_execute_taint_time(api, "n1")
    assert tainted_at is not None
    assert tainted_at - unknown_at <= period + 1
