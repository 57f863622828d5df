"""The real-time driver: a write wakes it, it settles the components, then it sleeps.

Real time by nature (it is the serve loop), so these tests wait on the asyncio loop
for what they expect, with a deadline, instead of advancing a clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from kubeprio.api.core import Pod
from kubeprio.clock import RealClock
from kubeprio.kubelet.registration import register_node
from kubeprio.serve.driver import RealTimeDriver
from kubeprio.sim.controlplane import ControlPlane
from kubeprio.store.memory import MemoryStore
from tests.builders import pod


async def _until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "condition not reached"
        await asyncio.sleep(0.005)


def _phase(plane: ControlPlane, name: str) -> str | None:
    current = plane.api.get(Pod, name, "default")
    return current.status.phase if current.status else None


def test_a_write_wakes_the_driver_which_schedules_and_runs_the_pod_then_sleeps():
    async def scenario() -> None:
        clock = RealClock()
        plane = ControlPlane(MemoryStore(), clock=clock, seed=1, retry_unschedulable_on_timer=True)
        plane.attach_fleet()
        register_node(plane.api, "n1", clock=clock, capacity={"cpu": "2", "memory": "1Gi"})
        plane.start()
        driver = RealTimeDriver(plane.components, clock=clock, store=plane.store)
        stop = asyncio.Event()
        task = asyncio.create_task(driver.run(stop))
        try:
            await _until(lambda: "n1" in plane.fleet.kubelets)
            plane.api.create_object(pod("p").requests(cpu="1").build())
            await _until(lambda: _phase(plane, "p") == "Running")
            assert plane.api.get(Pod, "p", "default").spec.node_name == "n1"
            settles = driver.settles
            await asyncio.sleep(0.2)
            # Idle: nothing due for a long while (heartbeats, the 5-minute flush).
            assert driver.settles - settles <= 2
            plane.api.create_object(pod("q").requests(cpu="4").build())
            await _until(
                lambda: any(
                    c.type == "PodScheduled" and c.reason == "Unschedulable"
                    for c in (plane.api.get(Pod, "q", "default").status.conditions or ())
                )
            )
            assert driver.errors == 0
        finally:
            stop.set()
            await asyncio.wait_for(task, 5)

    asyncio.run(scenario())


def test_the_driver_stops_when_the_store_closes():
    async def scenario() -> None:
        clock = RealClock()
        store = MemoryStore()
        plane = ControlPlane(store, clock=clock)
        plane.start()
        driver = RealTimeDriver(plane.components, clock=clock, store=store)
        task = asyncio.create_task(driver.run(asyncio.Event()))
        await asyncio.sleep(0.05)
        store.close()
        await asyncio.wait_for(task, 5)

    asyncio.run(scenario())


class _AlwaysBusy:
    """A component that always has more work (a controller stuck in a hot loop)."""

    def __init__(self) -> None:
        self.runs = 0

    def pump(self) -> int:
        return 0

    def run_once(self) -> bool:
        self.runs += 1
        return True

    def next_wakeup(self) -> float | None:
        return None


def test_a_component_that_always_has_work_does_not_keep_the_driver_from_stopping():
    async def scenario() -> None:
        clock = RealClock()
        store = MemoryStore()
        busy = _AlwaysBusy()
        driver = RealTimeDriver([busy], clock=clock, store=store)
        stop = asyncio.Event()
        task = asyncio.create_task(driver.run(stop))
        await _until(lambda: busy.runs > 0)
        stop.set()
        await asyncio.wait_for(task, 5)
        store.close()

    asyncio.run(scenario())
