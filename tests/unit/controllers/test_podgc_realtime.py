"""Pod GC's orphan quarantine on a clock that moves between two reads, as the wall clock
of ``kubeprio serve`` does (a simulation's virtual clock stands still within a step).

Upstream ``pkg/controller/podgc/gc_controller.go`` ``gcOrphaned``: a node that pods are
bound to and that is missing is queued with ``AddAfter(quarantineTime)`` (40 s) at one
check, and the check that finds its time passed GETs it and collects the pods; checks
run every 20 s (``gcCheckPeriod``), so the pods go at the check 40 s after the one that
first saw the node missing. kubeprio stamped the quarantine with a clock read taken
after the check's other collections had written, and compared it with a later check's
read: when the first check had more to do before the orphans than the later one (here,
a terminated pod beyond the threshold), the quarantine looked a few microseconds short
of over and the pods waited one more check. Quarantines are now counted on the checks'
grid.

Before that, no check ran at all on such a clock: ``next_wakeup`` named the first tick
at or after the time read, and a driver waking just after a tick was then told the next
one (the node lifecycle controller had the same flaw, fixed in its ``_next_tick``).
"""

from __future__ import annotations

import dataclasses
import random

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.core import Node, Pod, PodStatus
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.podgc import GC_CHECK_PERIOD, QUARANTINE_TIME, PodGCController
from kubeprio.store.memory import MemoryStore
from tests.builders import node, pod
from tests.conftest import EPOCH, ManualClock

TICK = 1e-6
"""How far the clock moves at every read (seconds)."""


class TickingClock(ManualClock):
    """A manual clock that moves on by ``TICK`` each time it is read."""

    def now(self) -> float:
        self.time += TICK
        return self.time


def _pod(api: ApiService, name: str, on: str, phase: str) -> None:
    created = api.create(pod(name).on(on).build())
    status = dataclasses.replace(created.status or PodStatus(), phase=phase)
    api.update_status(dataclasses.replace(created, status=status))


def test_orphans_go_at_the_check_40_s_after_their_node_was_first_seen_missing() -> None:
    """Driven by hand in 1 s steps, each step starting on the second (as a real-time
    driver wakes at the due time) with the clock moving at every read inside it. The
    first check that sees ``n1`` missing also deletes a terminated pod beyond the
    threshold; the check 40 s later has nothing else to do."""
    clock = TickingClock()
    api = ApiService(MemoryStore(), clock=clock, rng=random.Random(1), admission=AdmissionChain())
    for name in ("n1", "n2"):
        api.create(node(name).build())
    _pod(api, "orphan", "n1", "Running")
    _pod(api, "done-1", "n2", "Succeeded")
    _pod(api, "done-2", "n2", "Succeeded")
    pods, nodes = Informer(api, Pod), Informer(api, Node)
    gc = PodGCController(api, clock=clock, pods=pods, nodes=nodes, terminated_pod_threshold=1)
    api.delete(Node, "n1")
    checks: list[int] = []
    orphan_gone_at: int | None = None
    for second in range(1, 5 * int(GC_CHECK_PERIOD)):
        clock.time = EPOCH + second
        pods.pump()
        nodes.pump()
        wakeup = gc.next_wakeup()
        if wakeup is not None and wakeup <= clock.now():
            gc.run_once()
            checks.append(second)
            names = {p.metadata.name for p in api.list(Pod, "default").items}
            if orphan_gone_at is None and "orphan" not in names:
                orphan_gone_at = second
    # A check at every tick while there is work, the step after the tick: before,
    # ``next_wakeup`` worked the tick out again from the time read, which on a moving
    # clock is past it, and named the next one: no check ever ran.
    assert checks == [21, 41, 61]
    assert gc.deleted == 2  # a terminated pod at the first check, then the orphan
    assert orphan_gone_at == checks[0] + QUARANTINE_TIME
