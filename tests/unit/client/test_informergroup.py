"""InformerGroup: pumping only the informers that were woken changes nothing.

The group must deliver exactly what a plain loop pumping every informer in order
delivers, in the same order, with the same counts: also when handlers write while
they run (waking an informer before or after the one being pumped) and when watches
end and informers relist. The property test drives a group and a plain loop over two
identical in-process API services and compares their handler logs.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.core import Pod
from kubeprio.api.errors import StatusError
from kubeprio.api.meta import ApiObject, ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.informergroup import InformerGroup
from kubeprio.client.protocol import DeleteRequest
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import ManualClock

ECHO = "echo"


class Cluster:
    """One API with three informers: all ConfigMaps, Pods, echoed ConfigMaps.

    A pod's add handler writes a ConfigMap labelled ``echo``: the first informer (all
    ConfigMaps, pumped before the pods) sees it in the next pass, the third (only echoed
    ones, pumped after) in the same pass. Every callback is logged with its informer."""

    def __init__(self) -> None:
        self.api = ApiService(
            MemoryStore(), clock=ManualClock(), rng=random.Random(7), admission=AdmissionChain()
        )
        self.log: list[tuple[int, str, str]] = []
        self.informers: list[Informer[Any]] = [
            Informer(self.api, ConfigMap),
            Informer(self.api, Pod),
            Informer(self.api, ConfigMap, label_selector=f"{ECHO}=yes"),
        ]
        for position, informer in enumerate(self.informers):
            informer.add_handler(self._handler(position))
        self.informers[1].add_handler(FuncHandler(on_add=self._echo))

    def _handler(self, position: int) -> FuncHandler[Any]:
        def note(event: str) -> Any:
            def record(*objs: ApiObject) -> None:
                self.log.append((position, event, objs[-1].metadata.name or ""))

            return record

        return FuncHandler(note("add"), note("update"), note("delete"))

    def _echo(self, obj: Pod) -> None:
        meta = ObjectMeta(name=obj.metadata.name, namespace="default", labels={ECHO: "yes"})
        with contextlib.suppress(StatusError):  # already echoed
            self.api.create(ConfigMap(metadata=meta))

    def apply(self, action: str, name: str) -> None:
        try:
            if action == "pod":
                self.api.create(pod(name).build())
            elif action == "unpod":
                self.api.delete(Pod, name, "default", options=DeleteRequest(grace_period_seconds=0))
            elif action == "configmap":
                self.api.create(ConfigMap(metadata=ObjectMeta(name=name, namespace="default")))
            elif action == "unconfigmap":
                self.api.delete(ConfigMap, name, "default")
            elif action.startswith("stop"):
                self.informers[int(action[-1])].stop()
        except StatusError:
            pass  # exists already / not found: the same on both sides


def _plain_pump(cluster: Cluster) -> int:
    return sum(informer.pump() for informer in cluster.informers)


actions = st.lists(
    st.tuples(
        st.sampled_from(
            ["pod", "unpod", "configmap", "unconfigmap", "stop0", "stop1", "stop2", "settle"]
        ),
        st.sampled_from(["a", "b", "c"]),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions)
def test_group_delivers_what_pumping_every_informer_delivers(steps: list[tuple[str, str]]) -> None:
    grouped, plain = Cluster(), Cluster()
    group = InformerGroup(grouped.informers)
    group.start()
    for informer in plain.informers:
        informer.start()
    for action, name in steps:
        if action == "settle":
            counts_grouped: list[int] = []
            counts_plain: list[int] = []
            for _ in range(10):
                counts_grouped.append(group.pump())
                counts_plain.append(_plain_pump(plain))
            assert counts_grouped == counts_plain
        else:
            grouped.apply(action, name)
            plain.apply(action, name)
            # One pass each: a write made by a handler during it must show up (or wait
            # for the next pass) on both sides alike.
            assert group.pump() == _plain_pump(plain)
        assert grouped.log == plain.log
    for _ in range(5):
        assert group.pump() == _plain_pump(plain)
    assert grouped.log == plain.log
    assert [len(i) for i in grouped.informers] == [len(i) for i in plain.informers]


def test_a_quiet_group_asks_no_informer() -> None:
    """Once every informer is drained, a pump returns 0 at once; a write wakes only the
    informers whose watch covers its resource (the selector filters at the poll)."""
    cluster = Cluster()
    group = InformerGroup(cluster.informers)
    group.start()
    assert group.pump() == 0
    assert all(informer.quiet for informer in cluster.informers)
    cluster.api.create(ConfigMap(metadata=ObjectMeta(name="x", namespace="default")))
    assert [informer.quiet for informer in cluster.informers] == [False, True, False]
    assert group.pump() == 1
    assert cluster.log[-1] == (0, "add", "x")
    assert group.pump() == 0


def test_a_stopped_informer_relists_through_the_group() -> None:
    """A watch that ended keeps its informer flagged until it has relisted: the pump
    that drains what the closed watch still held is not the one that relists."""
    cluster = Cluster()
    group = InformerGroup(cluster.informers)
    group.start()
    cluster.api.create(pod("held").build())  # pending in the watch when it closes
    cluster.informers[1].stop()
    cluster.api.create(pod("p").build())  # not seen by the closed watch
    for _ in range(3):
        group.pump()
    assert [p.metadata.name for p in cluster.informers[1].list()] == ["held", "p"]
    assert (1, "add", "p") in cluster.log
    assert [c.metadata.name for c in cluster.informers[2].list()] == ["held", "p"]
