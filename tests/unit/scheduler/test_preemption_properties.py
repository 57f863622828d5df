"""Preemption invariants on random clusters, and the Evaluator against a reference.

Each scenario (``cluster_strategies``) runs end to end (``sim_cluster``) with random
priorities (including equal and negative ones), ``preemptionPolicy: Never`` pods,
PDBs with and without budget, terminating pods with and without the scheduler's
``DisruptionTarget`` condition, and pods nominated to nodes. Every PostFilter call is
observed. The invariants are upstream's (semantics §4, §9):

* a pod is only ever preempted by a pod of strictly higher priority (§4.5 step 1:
  "Equal priority is never preemptible");
* a ``Never`` pod never evicts anyone (§4.2: not eligible, message
  ``not eligible due to preemptionPolicy=Never.``);
* preemption happens only where the preemptor then fits: with the victims gone its
  requests fit on the node (§4.5 step 4 and the reprieve loop keep that true);
* the same seed gives byte-identical decisions (randomness is injected, §C.3).

``preemption_reference`` re-implements §4 literally and slowly; on every PostFilter
call it is run on the same state with a copy of the same rng state, and must choose
the same node, the same victims in the same order, the same PDB-violation count, and
the same message (not eligible / no candidate histogram).
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


def _check_invariants(cluster: SimCluster) -> None:
    for record in cluster.preemptions:
        decision = record.decision
        if record.never:
            assert decision.victims == ()
            assert decision.node is None
            assert decision.message == "preemption: not eligible due to preemptionPolicy=Never."
        for name, priority in zip(decision.victims, record.victim_priorities, strict=True):
            assert priority < record.priority, (
                f"{record.preemptor} (priority {record.priority}) preempted {name} "
                f"(priority {priority})"
            )
        if decision.node:
            assert decision.victims, "a nomination by preemption always comes with victims"
            assert record.fits_after_eviction is True, record
        else:
            assert decision.victims == ()
    # What the API saw agrees: every Preempted event names a victim of a recorded decision.
    victims = {name for r in cluster.preemptions for name in r.decision.victims}
    for step in cluster.steps:
        for reason, name, _message in step.events:
            if reason == "Preempted":
                assert name in victims


def _check_reference(cluster: SimCluster) -> None:
    for record in cluster.preemptions:
        assert record.diagnosis_mismatch == (), (
            f"{record.preemptor}: the cycle's filter statuses differ from a fresh "
            f"evaluation: {record.diagnosis_mismatch}"
        )
        assert record.decision == record.expected, (
            f"{record.preemptor}: evaluator {record.decision} != reference {record.expected}"
        )


@examples(60)
@given(cs.scenarios())
def test_preemption_invariants_hold(scenario: cs.ScenarioSpec) -> None:
    _check_invariants(SimCluster(scenario).run())


@examples(60)
@given(cs.scenarios())
def test_evaluator_chooses_what_the_reference_chooses(scenario: cs.ScenarioSpec) -> None:
    cluster = SimCluster(scenario, reference=True).run()
    _check_reference(cluster)
    _check_invariants(cluster)


@examples(150)
@given(cs.contended_scenarios())
def test_evaluator_chooses_what_the_reference_chooses_under_contention(
    scenario: cs.ScenarioSpec,
) -> None:
    """Many candidates with victims tied on priority, count and start time: every
    criterion of ``pickOneNodeForPreemption`` and the seeded final tie-break decide."""
    cluster = SimCluster(scenario, reference=True).run()
    _check_reference(cluster)
    _check_invariants(cluster)


@examples(25)
@given(cs.scenarios())
def test_same_seed_gives_byte_identical_decisions(scenario: cs.ScenarioSpec) -> None:
    def decisions(cluster: SimCluster) -> bytes:
        return repr(
            [(r.preemptor, r.decision.node, r.decision.victims) for r in cluster.preemptions]
            + cluster.decisions()
        ).encode()

    first = SimCluster(scenario).run()
    second = SimCluster(scenario).run()
    assert decisions(first) == decisions(second)
    assert first.api_trace == second.api_trace


@pytest.mark.slow
@examples(400)
@given(cs.scenarios(max_nodes=10, max_bound=24, max_pending=12, max_changes=5))
def test_evaluator_chooses_what_the_reference_chooses_many_examples(
    scenario: cs.ScenarioSpec,
) -> None:
    cluster = SimCluster(scenario, reference=True).run()
    _check_reference(cluster)
    _check_invariants(cluster)


@pytest.mark.slow
@examples(40)
@given(cs.scenarios(min_nodes=100, max_nodes=160, max_bound=20, max_pending=12))
def test_evaluator_chooses_what_the_reference_chooses_past_the_candidate_budget(
    scenario: cs.ScenarioSpec,
) -> None:
    """More potential nodes than ``minCandidateNodesAbsolute`` (100): the dry run stops
    once it has a non-violating candidate and 100 candidates (§4.4)."""
    cluster = SimCluster(scenario, reference=True).run()
    _check_reference(cluster)
    _check_invariants(cluster)


@examples(10)
@given(cs.budget_scenarios())
def test_dry_run_goes_past_the_budget_until_a_pdb_respecting_candidate(
    scenario: cs.ScenarioSpec,
) -> None:
    """Upstream ``DryRunPreemption`` stops only when it has a non-violating candidate
    *and* enough candidates; with only violating ones it examines every node."""
    cluster = SimCluster(scenario, reference=True).run()
    _check_reference(cluster)
    _check_invariants(cluster)
    assert any(r.decision.victims for r in cluster.preemptions)
