"""Differential: the vectorised fast path decides exactly as the general path.

Two clusters are built from the same random scenario and the same seeds, identical
except ``new_scheduler(fast_path=True/False)``, and driven through the same steps
(``sim_cluster``). The general path runs every plugin on every node, as upstream's
``schedulePod`` does (``findNodesThatFitPod``, ``prioritizeNodes``, ``selectHost``), so
it is the specification; the fast path must be indistinguishable from it through the
API: the same node for every pod, the same ``FailedScheduling`` messages, the same
nominations and victims, the same rotation of ``nextStartNodeIndex`` after every
attempt, the same tie-break draws — and therefore a byte-identical history of Pod and
Event writes.

Random clusters cover zero/odd/missing allocatable, ``pods`` capacity 0/1, cordoned
nodes, NoSchedule/NoExecute/PreferNoSchedule taints, best-effort pods, explicit zero
requests, init containers and sidecars, pods that fit or not, pending pods already
nominated to a node, terminating pods, PDBs, node changes (cordon, taints, resize,
delete, add) and pods finishing while the scheduler runs, plus some non-plain pods
(tolerations, node selectors, host ports) that take the general path in both. The
``slow`` variant adds clusters of 100-160 nodes, where ``numFeasibleNodesToFind``
stops the search early and the start index rotates.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.unit.scheduler import cluster_strategies as cs
from tests.unit.scheduler.sim_cluster import SimCluster


def examples(count: int) -> settings:
    """Hypothesis settings for whole-cluster runs (no per-example deadline)."""
    return settings(
        max_examples=count,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _assert_same_decisions(fast: SimCluster, general: SimCluster) -> None:
    fast_decisions, general_decisions = fast.decisions(), general.decisions()
    for i, (got, expected) in enumerate(zip(fast_decisions, general_decisions, strict=False)):
        assert got == expected, f"attempt {i}: fast path {got} != general path {expected}"
    assert len(fast_decisions) == len(general_decisions)
    assert [s.start_index for s in fast.steps] == [s.start_index for s in general.steps]
    assert fast.steps == general.steps
    assert [r.decision for r in fast.preemptions] == [r.decision for r in general.preemptions]
    assert fast.api_trace == general.api_trace


def _check(scenario: cs.ScenarioSpec) -> None:
    fast = SimCluster(scenario, fast_path=True).run()
    general = SimCluster(scenario, fast_path=False).run()
    assert fast.scheduler.fast is not None
    assert general.scheduler.fast is None
    _assert_same_decisions(fast, general)


@examples(60)
@given(cs.scenarios())
def test_fast_path_decides_like_the_general_path(scenario: cs.ScenarioSpec) -> None:
    _check(scenario)


@examples(40)
@given(cs.scenarios(plain_only=True, max_bound=24, max_pending=10))
def test_fast_path_decides_like_the_general_path_for_plain_pods(
    scenario: cs.ScenarioSpec,
) -> None:
    """Only plain pods: every attempt without a nominated node takes the fast path."""
    _check(scenario)


@examples(60)
@given(cs.contended_scenarios())
def test_fast_path_decides_like_the_general_path_under_contention(
    scenario: cs.ScenarioSpec,
) -> None:
    """Full identical nodes: ties everywhere, preemptions and nominations every step."""
    _check(scenario)


@pytest.mark.slow
@examples(400)
@given(cs.scenarios(max_nodes=10, max_bound=24, max_pending=12, max_changes=5))
def test_fast_path_decides_like_the_general_path_many_examples(
    scenario: cs.ScenarioSpec,
) -> None:
    _check(scenario)


@pytest.mark.slow
@examples(60)
@given(cs.scenarios(min_nodes=100, max_nodes=160, max_bound=20, max_pending=12))
def test_fast_path_decides_like_the_general_path_past_100_nodes(
    scenario: cs.ScenarioSpec,
) -> None:
    """``numFeasibleNodesToFind`` cuts the search at 100 feasible nodes; the start index
    then rotates by the number of nodes processed (upstream ``schedule_one.go``)."""
    _check(scenario)
