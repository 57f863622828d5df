"""Adapters that let the engine drive informers, controllers and thousands of kubelets.

The engine settles ``Driven`` components (``pump``/``run_once``/``next_wakeup``). The
kubelet and the controllers expose ``next_wakeup``/``run_once`` (docs/kubelet-and-
controllers.md); informers expose ``pump``. ``KubeletFleet`` keeps a heap of the
kubelets' wakeups and a set of kubelets that just received pod events, so a step costs
O(kubelets with work), not O(nodes). A kubelet that starts after pods were already bound
to its node is handed them as adds, as a real kubelet's field-selected watch lists them
first.
"""

from __future__ import annotations

import functools
import heapq
import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from kubeprio.api.core import Node, Pod
from kubeprio.client.informer import EventHandler
from kubeprio.client.informergroup import InformerGroup
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.kubelet.kubelet import Kubelet, KubeletConfig
from kubeprio.kubelet.outage import NodeOutages
from kubeprio.kubelet.router import PodRouter
from kubeprio.sim.engine import TimedOnly


class Scheduled(Protocol):
    """A component with timed work (kubelet, controller)."""

    def next_wakeup(self) -> float | None:
        """When ``run_once`` next has work."""
        ...

    def run_once(self) -> Any:
        """Do the work due now."""
        ...


class Informers(InformerGroup):
    """A group of informers pumped together (handlers run in registration order); the
    quiet ones are skipped without being asked (``client.informergroup``)."""

    def run_once(self) -> bool:
        """Informers have no timed work."""
        return False

    def next_wakeup(self) -> float | None:
        """Never."""
        return None


class Due(TimedOnly):
    """Runs a ``Scheduled`` component whenever its wakeup has come."""

    def __init__(self, component: Scheduled, clock: Clock) -> None:
        self.component = component
        self._clock = clock
        # Bound once: the engine asks every controller at every settle round.
        self.next_wakeup: Callable[[], float | None] = component.next_wakeup
        self._run = component.run_once
        self._now = clock.now

    def run_once(self) -> bool:
        """Run the component if it is due now."""
        wakeup = self.next_wakeup()
        if wakeup is None or wakeup > self._now():
            return False
        self._run()
        return True


class _Marking:
    """Forwards pod events to a kubelet and marks it as having work."""

    def __init__(self, kubelet: Kubelet, mark: Callable[[str], None]) -> None:
        self._kubelet = kubelet
        self._mark = mark

    def on_add(self, obj: Pod) -> None:
        self._kubelet.on_add(obj)
        self._mark(self._kubelet.node_name)

    def on_update(self, old: Pod, new: Pod) -> None:
        self._kubelet.on_update(old, new)
        self._mark(self._kubelet.node_name)

    def on_delete(self, obj: Pod) -> None:
        self._kubelet.on_delete(obj)
        self._mark(self._kubelet.node_name)


class KubeletFleet(TimedOnly):
    """One kubelet per Node, started as Nodes appear, run only when they have work."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        router: PodRouter,
        config: KubeletConfig | None = None,
        bound_pods: Callable[[str], Sequence[Pod]] | None = None,
        outages: NodeOutages | None = None,
    ) -> None:
        self._client = client
        self._outages = outages
        self._down: set[str] = set()
        """Kubelets stopped by ``kubeprio.io/fail-at`` (``kubelet.outage``)."""
        self._failing: list[tuple[float, str]] = []
        """(fail time, node): when a kubelet must look at itself and stop."""
        self._clock = clock
        self._rng = rng
        self._router = router
        self._config = config or KubeletConfig(register_node=False)
        self._bound_pods = bound_pods
        self.kubelets: dict[str, Kubelet] = {}
        self._to_start: list[str] = []
        self._dirty: set[str] = set()
        self._heap: list[tuple[float, int, str]] = []
        self._planned: dict[str, float] = {}
        self._sequence = 0

    # --- node events (an EventHandler[Node]) ----------------------------------------------

    def on_add(self, node: Node) -> None:
        """A Node appeared: start its kubelet at the next step."""
        name = node.metadata.name or ""
        if name and name not in self.kubelets and name not in self._to_start:
            self._to_start.append(name)
        self._watch_outage(node)

    def _watch_outage(self, node: Node) -> None:
        """Plan a look at the kubelet when its ``kubeprio.io/fail-at`` comes."""
        name = node.metadata.name or ""
        at = self._outages.fails_at(name) if self._outages is not None else None
        if at is not None:
            heapq.heappush(self._failing, (at, name))

    def on_update(self, old: Node, new: Node) -> None:
        """A stopped kubelet looks again (its ``kubeprio.io/fail-at`` may have gone); a
        running one notes whether its Ready was taken away (``kubelet.nodestatussync``)."""
        name = new.metadata.name or ""
        if name in self._down:
            self._dirty.add(name)
        elif (agent := self.kubelets.get(name)) is not None:
            agent.node_updated(old, new)
            if agent.node_status_sync.due is not None:
                self._dirty.add(name)  # plan its status tick
        if (old.metadata.annotations or {}) != (new.metadata.annotations or {}):
            self._watch_outage(new)

    def on_delete(self, node: Node) -> None:
        """A Node went away: its kubelet stops receiving pod events."""
        name = node.metadata.name or ""
        self._router.unregister(name)
        self.kubelets.pop(name, None)
        self._dirty.discard(name)
        self._down.discard(name)

    # --- Driven ------------------------------------------------------------------------------

    def _mark(self, name: str) -> None:
        self._dirty.add(name)

    def run_once(self) -> bool:
        """Start new kubelets, then run every kubelet with work due now."""
        worked = False
        while self._to_start:
            name = self._to_start.pop(0)
            kubelet = Kubelet(
                self._client, name, clock=self._clock, rng=self._rng, config=self._config
            )
            # Its start may wait on webhook answers (``kubeprio serve``): it collects the
            # pod events meanwhile and is woken once started.
            kubelet.start(then=functools.partial(self._mark, name))
            self.kubelets[name] = kubelet
            handler: EventHandler[Pod] = _Marking(kubelet, self._mark)
            self._router.register(name, handler)
            # Pods bound before the kubelet started (same instant as the Node, or a
            # snapshot) reached the router while nobody was registered: list them now.
            for pod in self._bound_pods(name) if self._bound_pods is not None else ():
                handler.on_add(pod)
            self._dirty.add(name)
            worked = True
        now = self._clock.now()
        due = set(self._dirty)
        self._dirty.clear()
        while self._heap and self._heap[0][0] <= now:
            _, _, name = heapq.heappop(self._heap)
            if self._planned.get(name, -1.0) <= now:
                due.add(name)
        while self._failing and self._failing[0][0] <= now:
            due.add(heapq.heappop(self._failing)[1])
        for name in sorted(due):
            agent = self.kubelets.get(name)
            if agent is None:
                continue
            if self._outages is not None and self._outages.failed(name):
                # Down: it acts on nothing; its events and timers wait for its return.
                self._down.add(name)
                self._planned.pop(name, None)
                continue
            if name in self._down:
                self._down.discard(name)
                agent.resume()
                worked = True
            wakeup = agent.next_wakeup()
            # Read the clock after asking: on real time a kubelet with pending events
            # answers "now", which is later than ``now`` above (``kubeprio serve``).
            if wakeup is not None and wakeup <= self._clock.now():
                agent.run_once()
                worked = True
            self._plan(name, agent.next_wakeup())
        return worked

    def _plan(self, name: str, wakeup: float | None) -> None:
        if wakeup is None:
            self._planned.pop(name, None)
            return
        if self._planned.get(name) == wakeup:
            return
        self._planned[name] = wakeup
        self._sequence += 1
        heapq.heappush(self._heap, (wakeup, self._sequence, name))

    def next_wakeup(self) -> float | None:
        """Now if kubelets have pending events or are starting; else the earliest timer."""
        if self._dirty or self._to_start:
            return self._clock.now()
        failing = self._failing[0][0] if self._failing else None
        while self._heap:
            wakeup, _, name = self._heap[0]
            if self._planned.get(name) == wakeup:
                return wakeup if failing is None else min(wakeup, failing)
            heapq.heappop(self._heap)
        return failing
