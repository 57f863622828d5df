"""The indexed preemption path (``fastpreemption``) against the Evaluator's general path.

DESIGN.md: "the upstream algorithm remains the specification: indexes must pick the same
victims and the same node as the upstream evaluation order would". Upstream's order is
``findCandidates`` -> ``DryRunPreemption`` (``SelectVictimsOnNode`` per node from a random
offset) -> ``SelectCandidate`` (``pkg/scheduler/framework/preemption/preemption.go``,
``plugins/defaultpreemption/default_preemption.go``), which the Evaluator's general path
runs literally. On random clusters — priorities equal and negative, start times missing,
equal and later than now, several pods per node, nodes too small, cordoned and tainted
nodes, terminating pods, pods nominated to nodes, pods removed and restarted (so the
victim table is maintained through removals and moves) — both paths must return the same
PostFilter result and status (so the same FailedScheduling message), evict the same
victims in the same order from the same node, and leave the seeded rng in the same state.

Inputs are the cycle's real diagnosis (the fast path's ``RowStatuses``, itself checked
against the general filters) and, as upstream's unit tests do, every node Unschedulable.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kubeprio.api.core import Pod, PodStatus
from kubeprio.client.protocol import DeleteRequest
from kubeprio.clock import rfc3339
from kubeprio.scheduler.fastpreemption import FastPreemption
from kubeprio.scheduler.framework import (
    CycleState,
    NodeToStatus,
    PodInfo,
    Status,
    unresolvable,
    unschedulable,
)
from kubeprio.scheduler.preemption import Candidate, PreemptionArgs
from kubeprio.scheduler.rowstatus import RowStatuses
from tests.builders import node, pod
from tests.conftest import EPOCH
from tests.unit.scheduler.preemption_harness import Harness

NOW = 1000.0
"""Seconds after EPOCH at which the decision is taken."""
PRIORITIES = st.sampled_from([-100, -1, 0, 0, 5, 10, 10, 100])
CPUS = st.sampled_from(["0", "100m", "200m", "300m", "500m", "1"])
MEMORIES = st.sampled_from(["0", "100", "200", "300"])
STARTS = st.sampled_from([None, None, -30.0, -10.0, -10.0, 0.0, 5.0])
"""Start time relative to the decision time (None: no ``status.startTime``)."""


@dataclasses.dataclass(frozen=True)
class NodeSpecs:
    cpu: str
    memory: str
    pods: str
    cordoned: bool
    tainted: bool
    storage: str = "1000"


@dataclasses.dataclass(frozen=True)
class BoundPod:
    node: int
    priority: int
    cpu: str
    memory: str
    start: float | None
    terminating: bool
    removed: bool
    restarted_at: float | None
    storage: str = "0"


@dataclasses.dataclass(frozen=True)
class NominatedPod:
    node: int
    priority: int
    cpu: str
    memory: str


@dataclasses.dataclass(frozen=True)
class Scenario:
    nodes: list[NodeSpecs]
    pods: list[BoundPod]
    nominated: list[NominatedPod]
    preemptor_priority: int
    preemptor_cpu: str
    preemptor_memory: str
    preemptor_nominated: int | None
    percentage: int
    absolute: int
    chunk_rows: int | None
    pdb: str
    seed: int
    preemptor_storage: str = "0"


def _node_specs() -> st.SearchStrategy[NodeSpecs]:
    return st.builds(
        NodeSpecs,
        cpu=st.sampled_from(["300m", "1", "1", "2", "2"]),
        memory=st.sampled_from(["300", "1000", "1000"]),
        pods=st.sampled_from(["2", "4", "32", "32"]),
        cordoned=st.sampled_from([False, False, False, True]),
        tainted=st.sampled_from([False, False, False, True]),
        storage=st.sampled_from(["1000", "1000", "300"]),
    )


@st.composite
def scenarios(draw: st.DrawFn, max_nodes: int = 6, max_pods: int = 30) -> Scenario:
    nodes = draw(
        st.lists(_node_specs(), min_size=1, max_size=max_nodes)
        | st.lists(_node_specs(), min_size=3, max_size=max_nodes)
    )
    node_index = st.integers(0, len(nodes) - 1)
    pods = draw(
        st.lists(
            st.builds(
                BoundPod,
                node=node_index,
                priority=PRIORITIES,
                cpu=CPUS,
                memory=MEMORIES,
                start=STARTS,
                terminating=st.sampled_from([False, False, False, True]),
                removed=st.sampled_from([False, False, False, True]),
                restarted_at=st.sampled_from([None, None, None, -5.0, 10.0]),
                storage=st.sampled_from(["0", "0", "0", "200"]),
            ),
            min_size=min(2 * len(nodes), max_pods),
            max_size=max_pods,
        )
    )
    nominated = draw(
        st.lists(
            st.builds(
                NominatedPod,
                node=node_index,
                priority=st.sampled_from([0, 10, 100, 1000]),
                cpu=CPUS,
                memory=MEMORIES,
            ),
            max_size=3,
        )
    )
    return Scenario(
        nodes=nodes,
        pods=pods,
        nominated=nominated,
        preemptor_priority=draw(st.sampled_from([-1, 0, 10, 100, 1000, 1000, 1000])),
        preemptor_cpu=draw(st.sampled_from(["0", "200m", "500m", "500m", "1", "1", "2"])),
        preemptor_memory=draw(MEMORIES),
        preemptor_nominated=draw(st.none() | node_index),
        percentage=draw(st.sampled_from([1, 10, 50, 100])),
        absolute=draw(st.sampled_from([1, 2, 3, 100])),
        chunk_rows=draw(st.sampled_from([1, 2, 3, None])),
        pdb=draw(st.sampled_from(["none", "none", "empty-selector", "other-namespace"])),
        seed=draw(st.integers(0, 2**16)),
        preemptor_storage=draw(st.sampled_from(["0", "0", "0", "500"])),
    )


@st.composite
def uniform_scenarios(draw: st.DrawFn, max_nodes: int = 12) -> Scenario:
    """Alike nodes with alike pods (PreemptionBasic's shape): many candidates tie on every
    criterion, so the final seeded draw decides, and candidates span several chunks."""
    count = draw(st.integers(2, max_nodes))
    spec = NodeSpecs("2", "1000", "32", False, False)
    shape = draw(
        st.lists(
            st.tuples(
                st.sampled_from([0, 0, 5]),
                st.sampled_from(["300m", "500m"]),
                st.sampled_from([None, None, -10.0]),
            ),
            min_size=1,
            max_size=4,
        )
    )
    pods = [
        BoundPod(i, priority, cpu, "100", start, False, False, None)
        for i in range(count)
        for priority, cpu, start in shape
    ]
    done = draw(st.lists(st.integers(0, count - 1), max_size=count // 2, unique=True))
    nominated = [NominatedPod(i, 10, "2", "100") for i in done]
    return Scenario(
        nodes=[spec] * count,
        pods=pods,
        nominated=nominated,
        preemptor_priority=10,
        preemptor_cpu=draw(st.sampled_from(["1", "1500m", "2"])),
        preemptor_memory="100",
        preemptor_nominated=None,
        percentage=draw(st.sampled_from([10, 50])),
        absolute=draw(st.sampled_from([1, 2, 3, 100])),
        chunk_rows=draw(st.sampled_from([1, 2, 3, None])),
        pdb="none",
        seed=draw(st.integers(0, 2**16)),
    )


def one_node_scenario(pods: list[BoundPod], preemptor_cpu: str, preemptor_memory: str) -> Scenario:
    """One 1-CPU node holding ``pods`` and a priority-10 preemptor: hand-made cases."""
    return Scenario(
        nodes=[NodeSpecs("1", "1000", "32", False, False)],
        pods=pods,
        nominated=[],
        preemptor_priority=10,
        preemptor_cpu=preemptor_cpu,
        preemptor_memory=preemptor_memory,
        preemptor_nominated=None,
        percentage=10,
        absolute=100,
        chunk_rows=None,
        pdb="none",
        seed=0,
    )


def _resources(cpu: str, memory: str, storage: str = "0") -> dict[str, str]:
    values = {}
    if cpu != "0":
        values["cpu"] = cpu
    if memory != "0":
        values["memory"] = memory
    if storage != "0":
        values["ephemeral_storage"] = storage
    return values


def build(scenario: Scenario) -> tuple[Harness, Pod]:
    """The scenario's cluster through the API, with the clock at the decision time."""
    h = Harness(seed=scenario.seed, fast_path=True)
    h.clock.time = EPOCH + NOW
    h.start()
    for i, spec in enumerate(scenario.nodes):
        builder = node(f"n{i}").resources(
            {
                "cpu": spec.cpu,
                "memory": spec.memory,
                "pods": spec.pods,
                "ephemeral-storage": spec.storage,
            }
        )
        if spec.cordoned:
            builder = builder.unschedulable()
        if spec.tainted:
            builder = builder.taint("dedicated", "x", "NoSchedule")
        h.add_nodes(builder.build())
    for i, bound in enumerate(scenario.pods):
        obj = (
            pod(f"p{i}")
            .priority(bound.priority)
            .requests(**_resources(bound.cpu, bound.memory, bound.storage))
            .on(f"n{bound.node}")
            .label("app", "victim")
            .grace(30)
            .build()
        )
        h.add_pod(obj, start=None if bound.start is None else NOW + bound.start)
    for i, bound in enumerate(scenario.pods):
        name = f"p{i}"
        if bound.removed:
            h.force_delete(name)
            continue
        if bound.restarted_at is not None:
            # A status update moves the pod to the end of its node's list (cache re-add).
            h.api.patch(
                Pod,
                name,
                {"status": {"startTime": rfc3339(EPOCH + NOW + bound.restarted_at)}},
                namespace="default",
                subresource="status",
            )
        if bound.terminating:
            h.api.delete(Pod, name, "default", options=DeleteRequest(grace_period_seconds=30))
    for i, nominated in enumerate(scenario.nominated):
        created = h.add_pod(
            pod(f"nom{i}")
            .priority(nominated.priority)
            .requests(**_resources(nominated.cpu, nominated.memory))
            .build()
        )
        h.api.patch(
            Pod,
            created.metadata.name or "",
            {"status": {"nominatedNodeName": f"n{nominated.node}"}},
            namespace="default",
            subresource="status",
        )
    if scenario.pdb == "empty-selector":
        h.add_pdb("empty", {}, allowed=0)
    elif scenario.pdb == "other-namespace":
        h.add_pdb("elsewhere", {"app": "victim"}, allowed=0, namespace="other")
    preemptor = h.add_pod(
        pod("preemptor")
        .priority(scenario.preemptor_priority)
        .requests(
            **_resources(
                scenario.preemptor_cpu, scenario.preemptor_memory, scenario.preemptor_storage
            )
        )
        .build()
    )
    if scenario.preemptor_nominated is not None:
        preemptor = h.api.patch(
            Pod,
            "preemptor",
            {"status": {"nominatedNodeName": f"n{scenario.preemptor_nominated}"}},
            namespace="default",
            subresource="status",
        )
    h.pump()
    return h, preemptor


class RecordingExecutor:
    """Records the chosen candidate instead of evicting."""

    def __init__(self) -> None:
        self.chosen: Candidate | None = None

    def prepare_candidate(self, candidate: Candidate, preemptor: PodInfo) -> Status | None:
        self.chosen = candidate
        return None


def decide(
    h: Harness, state: CycleState, info: PodInfo, filtered: NodeToStatus, *, indexed: bool
) -> Any:
    """``Evaluator.preempt`` on one path; the outcome and the rng state after it."""
    evaluator = h.evaluator
    fast = evaluator.indexed
    recorder = RecordingExecutor()
    evaluator.executor = recorder
    if not indexed:
        evaluator.indexed = None
    try:
        result, status = evaluator.preempt(state.clone(), info, filtered)
    finally:
        evaluator.indexed = fast
    chosen = recorder.chosen
    victims = None
    if chosen is not None:
        victims = (
            chosen.node_name,
            [v.pod.metadata.name for v in chosen.victims.pods],
            chosen.victims.num_pdb_violations,
        )
    return result, status, victims, evaluator.rng.getstate()


def both_decisions(
    h: Harness, state: CycleState, info: PodInfo, fast: NodeToStatus, general: NodeToStatus
) -> None:
    rng = h.evaluator.rng
    before = rng.getstate()
    indexed = decide(h, state, info, fast, indexed=True)
    rng.setstate(before)
    reference = decide(h, state, info, general, indexed=False)
    assert indexed == reference
    _result, status, victims, _rng = indexed
    event("victims" if victims else status.message.split(":")[0][:40])


def check(scenario: Scenario) -> None:
    h, preemptor = build(scenario)
    scheduler = h.scheduler
    evaluator = h.evaluator
    evaluator.args = PreemptionArgs(scenario.percentage, scenario.absolute)
    fast = evaluator.indexed
    assert isinstance(fast, FastPreemption)
    fast.chunk_rows = scenario.chunk_rows
    info = PodInfo.of(scheduler.current_pod(preemptor) or preemptor)
    assert fast.applies(info, scheduler.pdb_list())

    # Every node Unschedulable, as upstream's preemption unit tests hand it.
    state = CycleState()
    _result, status, _narrowing = scheduler.framework.run_pre_filter_plugins(
        state, info, scheduler.node_infos()
    )
    assert status is None
    statuses = {n.name: unschedulable() for n in scheduler.node_infos()}
    both_decisions(h, state, info, NodeToStatus(dict(statuses)), NodeToStatus(dict(statuses)))

    # The cycle's own diagnosis: the fast path's RowStatuses against the general filters.
    state = CycleState()
    nodes = scheduler.node_infos()
    scheduler._pre_filter_result = None
    start = scheduler.next_start_node_index
    feasible, diagnosis, _message = scheduler._find_nodes_that_fit(state, info, nodes)
    if feasible:
        return
    scheduler._ensure_pre_filter(state, info)
    general: dict[str, Status] = {}
    framework = scheduler.framework
    for i in range(len(nodes)):
        candidate = nodes[(start + i) % len(nodes)]
        status = framework.run_filter_plugins_with_nominated_pods(state, info, candidate)
        if status is not None:
            general[candidate.name] = status
    assert isinstance(diagnosis.statuses, RowStatuses)
    assert list(diagnosis.statuses.items()) == list(general.items())
    both_decisions(h, state, info, diagnosis, NodeToStatus(general, unresolvable()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios() | uniform_scenarios())
def test_indexed_preemption_equals_the_general_path(scenario: Scenario) -> None:
    check(scenario)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(max_nodes=9, max_pods=40) | uniform_scenarios(max_nodes=40))
def test_indexed_preemption_equals_the_general_path_many(scenario: Scenario) -> None:
    check(scenario)


def test_a_pdb_selecting_pods_sends_preemption_to_the_general_path() -> None:
    """``filterPodsWithPDBViolation`` needs the general path: a PDB that may select a pod."""
    scenario = one_node_scenario([BoundPod(0, 0, "1", "0", None, False, False, None)], "1", "0")
    h, preemptor = build(scenario)
    h.add_pdb("guard", {"app": "victim"}, allowed=0)
    fast = h.evaluator.indexed
    assert fast is not None
    info = PodInfo.of(h.scheduler.current_pod(preemptor) or preemptor)
    assert not fast.applies(info, h.scheduler.pdb_list())


# --- decisions over a changing cluster (the per-row outcome cache) ------------------------------

Step = tuple[str, int, int, int]
"""(action, a, b, c): the meaning of the numbers depends on the action."""

STEPS = st.tuples(
    st.sampled_from(
        ["decide", "decide", "decide", "add", "remove", "restart", "nominate", "assume", "confirm"]
    ),
    st.integers(0, 7),
    st.integers(0, 5),
    st.integers(0, 3),
)


def _decide(h: Harness, preemptor: Pod) -> None:
    info = PodInfo.of(h.scheduler.current_pod(preemptor) or preemptor)
    state = CycleState()
    h.scheduler.framework.run_pre_filter_plugins(state, info, h.scheduler.node_infos())
    statuses = {n.name: unschedulable() for n in h.scheduler.node_infos()}
    both_decisions(h, state, info, NodeToStatus(dict(statuses)), NodeToStatus(dict(statuses)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    uniform_scenarios(max_nodes=8) | scenarios(),
    st.lists(STEPS, min_size=1, max_size=25),
    st.sampled_from([0, 1, 2, None]),
)
def test_indexed_preemption_stays_equal_while_the_cluster_changes(
    scenario: Scenario, steps: list[Step], catch_up_rows: int | None
) -> None:
    """Outcomes kept per row must be dropped whenever the row, its pods or the pods
    nominated to it change: decisions between changes still equal the general path's,
    whether an entry catches up from the change logs or scans (``catch_up_rows`` 0: it
    falls back to scanning whenever a row changed)."""
    h, _ = build(scenario)
    fast = h.evaluator.indexed
    assert isinstance(fast, FastPreemption)
    fast.chunk_rows = scenario.chunk_rows
    fast.catch_up_rows = catch_up_rows
    shapes = [("1", 10), ("500m", 10), ("1", 100), ("200m", 0), ("2", 1000), ("1500m", 10)]
    preemptors = []
    for i, (cpu, priority) in enumerate(shapes):
        preemptors.append(
            h.add_pod(pod(f"pre{i}").priority(priority).requests(cpu=cpu, memory="100").build())
        )
    nodes = len(scenario.nodes)
    added = 0
    assumed: list[PodInfo] = []
    cache = h.scheduler.cache
    for action, a, b, c in steps:
        if action == "decide":
            _decide(h, preemptors[a % len(preemptors)])
        elif action == "assume":
            # The scheduler's assume, straight on its cache (as a cycle would before binding).
            added += 1
            info = PodInfo.of(
                pod(f"assumed{added}")
                .uid(f"assumed-{added}")
                .priority([0, 5, 10][b % 3])
                .requests(cpu="300m", memory="100")
                .on(f"n{a % nodes}")
                .build()
            )
            cache.assume_pod(info, f"n{a % nodes}")
            assumed.append(info)
        elif action == "confirm" and assumed:
            # The binding arrives with a start time: same node, same place in its pod list,
            # a new position in victim order (the row's usage does not change).
            info = assumed.pop(a % len(assumed))
            status = dataclasses.replace(
                info.pod.status or PodStatus(), start_time=rfc3339(EPOCH + NOW - 40 + 10 * c)
            )
            cache.add_pod(dataclasses.replace(info.pod, status=status))
        elif action == "add":
            added += 1
            h.add_pod(
                pod(f"extra{added}")
                .priority([-1, 0, 5, 10, 100, 0][b])
                .requests(cpu=["100m", "300m", "500m", "1"][c], memory="100")
                .on(f"n{a % nodes}")
                .build(),
                start=None if b % 2 else NOW - c,
            )
        elif action == "remove":
            names = sorted(
                p.metadata.name or ""
                for p in h.api.list(Pod).items
                if p.spec and p.spec.node_name and not p.metadata.deletion_timestamp
            )
            if names:
                h.force_delete(names[(a * 7 + b) % len(names)])
        elif action == "restart":
            names = sorted(
                p.metadata.name or "" for p in h.api.list(Pod).items if p.spec and p.spec.node_name
            )
            if names:
                h.api.patch(
                    Pod,
                    names[(a * 5 + c) % len(names)],
                    {"status": {"startTime": rfc3339(EPOCH + NOW - 20 + 10 * b)}},
                    namespace="default",
                    subresource="status",
                )
                h.pump()
        else:
            target = preemptors[a % len(preemptors)]
            node_name = f"n{b % nodes}" if c else ""
            h.api.patch(
                Pod,
                target.metadata.name or "",
                {"status": {"nominatedNodeName": node_name or None}},
                namespace="default",
                subresource="status",
            )
            h.pump()
        h.clock.time += 1 if c == 3 else 0
    _decide(h, preemptors[0])


# --- whole runs: the same seed gives the same cluster history on both paths --------------------


def _history(scenario: Scenario, waves: list[list[tuple[int, str]]], *, fast: bool) -> Any:
    """Run ``scenario`` then the preemptor ``waves`` to quiet; the cluster's history."""
    h = Harness(seed=scenario.seed, fast_path=fast)
    h.clock.time = EPOCH + NOW
    h.start()
    for i, spec in enumerate(scenario.nodes):
        h.add_nodes(
            node(f"n{i}")
            .resources({"cpu": spec.cpu, "memory": spec.memory, "pods": spec.pods})
            .build()
        )
    for i, bound in enumerate(scenario.pods):
        h.add_pod(
            pod(f"p{i}")
            .priority(bound.priority)
            .requests(**_resources(bound.cpu, bound.memory))
            .on(f"n{bound.node}")
            .grace(0)
            .build(),
            start=None if bound.start is None else NOW + bound.start,
        )
    for w, wave in enumerate(waves):
        for i, (priority, cpu) in enumerate(wave):
            h.add_pod(pod(f"w{w}-{i}").priority(priority).requests(cpu=cpu, memory="100").build())
        h.settle()
        h.clock.time += 2
        h.advance(15)
    pods = sorted(
        (
            p.metadata.name,
            p.spec.node_name if p.spec else None,
            p.status.nominated_node_name if p.status else None,
            bool(p.metadata.deletion_timestamp),
        )
        for p in h.api.list(Pod).items
    )
    events = [
        (e.reason, e.involved_object.name if e.involved_object else None, e.message)
        for e in h.events()
    ]
    return pods, events, h.scheduler.preemptions


WAVES = st.lists(
    st.lists(
        st.tuples(st.sampled_from([0, 5, 10, 10, 100]), st.sampled_from(["300m", "1", "1500m"])),
        min_size=1,
        max_size=6,
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(uniform_scenarios(max_nodes=8) | scenarios(max_nodes=5, max_pods=20), WAVES)
def test_whole_runs_are_the_same_with_the_indexed_path(
    scenario: Scenario, waves: list[list[tuple[int, str]]]
) -> None:
    """Scheduling and preempting waves of pods leaves the same pods, nominations, events
    and preemption count whether the fast paths (vectorised filtering, indexed preemption)
    are on or off: same decisions, same use of the seeded rng."""
    fast = _history(scenario, waves, fast=True)
    assert fast == _history(scenario, waves, fast=False)
    event(f"preemptions: {min(fast[2], 3)}")


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(uniform_scenarios(max_nodes=20) | scenarios(max_nodes=8, max_pods=40), WAVES)
def test_whole_runs_are_the_same_with_the_indexed_path_many(
    scenario: Scenario, waves: list[list[tuple[int, str]]]
) -> None:
    assert _history(scenario, waves, fast=True) == _history(scenario, waves, fast=False)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    uniform_scenarios(max_nodes=16) | scenarios(),
    st.lists(STEPS, min_size=1, max_size=40),
    st.sampled_from([0, 1, 2, None]),
)
def test_indexed_preemption_stays_equal_while_the_cluster_changes_many(
    scenario: Scenario, steps: list[Step], catch_up_rows: int | None
) -> None:
    test_indexed_preemption_stays_equal_while_the_cluster_changes.hypothesis.inner_test(  # type: ignore[attr-defined]
        scenario, steps, catch_up_rows
    )


def test_a_confirmed_start_time_reorders_victims_of_a_known_row() -> None:
    """``util.MoreImportantPod``: of two equal-priority pods the earlier-started is more
    important, and a pod without a start time counts as started now. An assumed pod whose
    binding arrives with a start time moves ahead in victim order (the node's usage is
    unchanged): the next decision must evict the other pod."""
    scenario = one_node_scenario(
        [
            BoundPod(0, 0, "600m", "100", -10.0, False, False, None),
            BoundPod(0, 0, "300m", "100", -5.0, False, False, None),
        ],
        "400m",
        "100",
    )
    h, preemptor = build(scenario)
    cache = h.scheduler.cache
    assumed = PodInfo.of(
        pod("late").uid("late").priority(0).requests(cpu="200m", memory="100").on("n0").build()
    )
    cache.assume_pod(assumed, "n0")
    chosen = []
    for confirm in (False, True):
        if confirm:
            status = PodStatus(start_time=rfc3339(EPOCH + NOW - 40))
            cache.add_pod(dataclasses.replace(assumed.pod, status=status))
        info = PodInfo.of(h.scheduler.current_pod(preemptor) or preemptor)
        state = CycleState()
        h.scheduler.framework.run_pre_filter_plugins(state, info, h.scheduler.node_infos())
        filtered = NodeToStatus({"n0": unschedulable()})
        before = h.evaluator.rng.getstate()
        indexed = decide(h, state, info, filtered, indexed=True)
        h.evaluator.rng.setstate(before)
        assert indexed == decide(h, state, info, filtered, indexed=False)
        chosen.append(indexed[2])
    # Before: p0 (600m) stays, p1 and "late" go; after: "late" (200m) stays first, then p0
    # no longer fits beside it and goes, and p1 (300m) fits again.
    assert chosen == [("n0", ["p1", "late"], 0), ("n0", ["p0"], 0)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios() | uniform_scenarios())
def test_one_row_dry_run_equals_the_vectorised_one(scenario: Scenario) -> None:
    """The one or two rows a decision leaves stale are dry-run in plain Python
    (``_refresh_row``); every outcome the decision reads — the status kind, and for a
    candidate its first victim's priority and start, the priority sum, the count, the
    victim mask and whether it may be kept — equals the vectorised dry run's."""
    from kubeprio.scheduler.fastpreemption import _Verdicts

    h, preemptor = build(scenario)
    fast = h.evaluator.indexed
    assert isinstance(fast, FastPreemption)
    info = PodInfo.of(preemptor)
    table = fast.cache.table
    load = fast.load.load(info.priority, info.uid)
    now = round((EPOCH + NOW) * 1_000_000_000)
    own_row = fast.load.row_of(info.uid)
    scalar = _Verdicts(table.epoch, table.capacity)
    vector = _Verdicts(table.epoch, table.capacity)
    for row in range(table.size):
        if not fast._refresh_row(scalar, row, info, load, now, own_row):
            assert fast.victims.needs_resort(np.array([row]), now)[0]
            continue
        fast._refresh(vector, np.array([row], np.int64), info, load, now, own_row)
        assert int(scalar.kinds[row]) == int(vector.kinds[row])
        fields = ["table_version", "victim_version", "load_version"]
        if scalar.kinds[row] < 0:
            fields += ["top", "total", "count", "start", "mask"]
        for name in fields:
            assert int(getattr(scalar, name)[row]) == int(getattr(vector, name)[row]), name
