"""The OrderedReady invariant of ``pkg/controller/statefulset`` as a hypothesis property.

``processReplica`` in monotonic mode creates pod N only when every pod with a lower
ordinal exists and is Running and Ready (and, with ``minReadySeconds`` 0, available);
scale-down removes only the highest ordinal, one at a time. Random interleavings of
pods becoming ready, failing, being deleted (as preemption does), terminating and the
set being scaled must never break that: every pod the controller creates has its
predecessors Running and Ready at that moment.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.core import Pod
from kubeprio.apiserver.service import ApiService
from kubeprio.controllers import statefulsetutil
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.unit.controllers.conftest import World
from tests.unit.controllers.test_statefulset import Cluster, stateful_set


class CheckedApi:
    """The real API service, checking the invariant on every pod the controller creates."""

    def __init__(self, api: ApiService) -> None:
        self._api = api

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)

    def create(self, obj: Any, **kwargs: Any) -> Any:
        if isinstance(obj, Pod):
            ordinal = statefulsetutil.ordinal_of(obj)
            pods = {p.metadata.name: p for p in self._api.list(Pod, "default").items}
            for lower in range(ordinal):
                pod = pods.get(f"web-{lower}")
                assert pod is not None, f"web-{ordinal} created before web-{lower} exists"
                assert statefulsetutil.is_running_and_ready(pod), (
                    f"web-{ordinal} created while web-{lower} is not Running and Ready"
                )
        return self._api.create(obj, **kwargs)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("run"), st.integers(0, 5)),
        st.tuples(st.just("fail"), st.integers(0, 5)),
        st.tuples(st.just("delete"), st.integers(0, 5)),
        st.tuples(st.just("finish"), st.just(0)),
        st.tuples(st.just("scale"), st.integers(0, 6)),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_ordered_ready_never_skips_a_pod(ops: list[tuple[str, int]]) -> None:
    clock = ManualClock()
    api = ApiService(MemoryStore(), clock=clock, rng=random.Random(0), admission=AdmissionChain())
    world = World(api, clock)
    cluster = Cluster(world)
    cluster.controller.client = CheckedApi(api)  # type: ignore[assignment]
    cluster.create(stateful_set(replicas=3))
    for op, arg in ops:
        name = f"web-{arg}"
        pods = {p.metadata.name: p for p in world.pod_list()}
        if op == "run" and name in pods:
            cluster.run(name)
        elif op == "fail" and name in pods and not pods[name].metadata.deletion_timestamp:
            world.set_phase(name, "Failed")
            world.settle()
        elif op == "delete" and name in pods and not pods[name].metadata.deletion_timestamp:
            api.delete(Pod, name, "default")
            world.settle()
        elif op == "finish":
            cluster.world.finish_deleted()
        elif op == "scale":
            cluster.update(replicas=arg)
