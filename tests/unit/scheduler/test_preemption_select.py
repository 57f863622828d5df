"""Choosing the node to preempt on (semantics §4.7, upstream ``pickOneNodeForPreemption``).

Two tables. ``test_select_best_candidate`` ports upstream ``default_preemption_test.go``
``TestSelectBestCandidate`` end to end (dry run on the real plugins, then
``SelectCandidate``). ``test_tie_break`` isolates each criterion: the candidates tie on
every earlier criterion and differ on the one under test, and each row also shows a
later criterion pointing the other way, so the order of the rules is checked too:

1. fewest PDB violations;
2. lowest highest-victim priority;
3. smallest sum of (victim priority + 2^31);
4. fewest victims;
5. latest earliest-start-time among the highest-priority victims (none = now);
6. otherwise any of the remaining nodes (Go map order upstream; seeded here).
"""

from __future__ import annotations

import random

import pytest

from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.preemption import (
    Candidate,
    Evaluator,
    PreemptionArgs,
    Victims,
    earliest_start_of_top_victims,
)
from tests.builders import pod
from tests.conftest import EPOCH, ManualClock
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    Harness,
    node_obj,
)


def _p(name, prio, res, on, start=0):
    """Upstream cases all set ``StartTime(epochTime...)``; ``start`` is seconds after EPOCH."""
    return pod(name).uid(name).priority(prio).requests(**res).on(on).build(), start


EPOCH_CASES = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        ["node1", "node2"],
        HIGH,
        LARGE,
        [_p("p1", MID, LARGE, "node1"), _p("p2", MID, LARGE, "node2")],
        {"node1", "node2"},
    ),
    (
        "node with min highest priority pod is picked",
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            _p("p1.1", MID, MEDIUM, "node1"),
            _p("p1.2", MID, LARGE, "node1"),
            _p("p2.1", MID, MEDIUM, "node2"),
            _p("p2.2", LOW, MEDIUM, "node2"),
            _p("p3.1", LOW, MEDIUM, "node3"),
            _p("p3.2", LOW, MEDIUM, "node3"),
        ],
        {"node3"},
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            _p("p1.1", MID, MEDIUM, "node1"),
            _p("p1.2", MID, LARGE, "node1"),
            _p("p2.1", MID, LARGE, "node2"),
            _p("p2.2", LOW, MEDIUM, "node2"),
            _p("p3.1", MID, MEDIUM, "node3"),
            _p("p3.2", MID, MEDIUM, "node3"),
        ],
        {"node2"},
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            _p("p1.1", MID, SMALL, "node1"),
            _p("p1.2", NEG, SMALL, "node1"),
            _p("p1.3", MID, SMALL, "node1"),
            _p("p1.4", NEG, SMALL, "node1"),
            _p("p2.1", MID, LARGE, "node2"),
            _p("p2.2", NEG, MEDIUM, "node2"),
            _p("p3.1", MID, MEDIUM, "node3"),
            _p("p3.2", NEG, SMALL, "node3"),
            _p("p3.3", LOW, SMALL, "node3"),
        ],
        {"node2"},
    ),
    (
        "sum of adjusted priorities is considered",
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            _p("p1.1", MID, SMALL, "node1"),
            _p("p1.2", NEG, SMALL, "node1"),
            _p("p1.3", NEG, SMALL, "node1"),
            _p("p2.1", MID, LARGE, "node2"),
            _p("p2.2", NEG, MEDIUM, "node2"),
            _p("p3.1", MID, MEDIUM, "node3"),
            _p("p3.2", NEG, SMALL, "node3"),
            _p("p3.3", LOW, SMALL, "node3"),
        ],
        {"node2"},
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        ["node1", "node2", "node3", "node4"],
        VERY_HIGH,
        VERY_LARGE,
        [
            _p("p1.1", MID, SMALL, "node1"),
            _p("p1.2", LOW, SMALL, "node1"),
            _p("p1.3", LOW, SMALL, "node1"),
            _p("p2.1", HIGH, LARGE, "node2"),
            _p("p3.1", MID, MEDIUM, "node3"),
            _p("p3.2", LOW, SMALL, "node3"),
            _p("p3.3", LOW, SMALL, "node3"),
            _p("p3.4", LOW, MEDIUM, "node3"),
            _p("p4.1", MID, MEDIUM, "node4"),
            _p("p4.2", MID, SMALL, "node4"),
            _p("p4.3", MID, SMALL, "node4"),
            _p("p4.4", NEG, SMALL, "node4"),
        ],
        {"node1"},
    ),
    (
        "same priority, same number of victims, different start time for each node's pod",
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            _p("p1.1", MID, MEDIUM, "node1", 2),
            _p("p1.2", MID, MEDIUM, "node1", 2),
            _p("p2.1", MID, MEDIUM, "node2", 3),
            _p("p2.2", MID, MEDIUM, "node2", 3),
            _p("p3.1", MID, MEDIUM, "node3", 1),
            _p("p3.2", MID, MEDIUM, "node3", 1),
        ],
        {"node2"},
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            _p("p1.1", MID, MEDIUM, "node1", 4),
            _p("p1.2", MID, MEDIUM, "node1", 2),
            _p("p2.1", MID, MEDIUM, "node2", 5),
            _p("p2.2", MID, MEDIUM, "node2", 1),
            _p("p3.1", MID, MEDIUM, "node3", 3),
            _p("p3.2", MID, MEDIUM, "node3", 6),
        ],
        {"node3"},
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        ["node1", "node2", "node3"],
        HIGH,
        VERY_LARGE,
        [
            _p("p1.1", LOW, MEDIUM, "node1", 4),
            _p("p1.2", MID, MEDIUM, "node1", 2),
            _p("p2.1", MID, MEDIUM, "node2", 6),
            _p("p2.2", LOW, MEDIUM, "node2", 1),
            _p("p3.1", LOW, MEDIUM, "node3", 3),
            _p("p3.2", MID, MEDIUM, "node3", 5),
        ],
        {"node2"},
    ),
]


@pytest.mark.parametrize(
    ("nodes", "prio", "res", "pods", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in EPOCH_CASES],
)
@pytest.mark.parametrize("offset", [0, 1])
def test_select_best_candidate(nodes, prio, res, pods, expected, offset):
    """Upstream ``TestSelectBestCandidate``: the chosen node is one of ``expected``,
    whatever the dry run's starting offset."""
    h = Harness()
    h.add_nodes(*(node_obj(n) for n in nodes))
    h.start()
    for obj, start in pods:
        h.add_pod(obj, start=start)
    preemptor = pod("p").uid("p").priority(prio).requests(**res).build()
    candidates, _ = h.dry_run(preemptor, offset=offset % len(nodes))
    best = h.evaluator.select_candidate(candidates)
    assert best is not None
    assert best.node_name in expected


# --- each rule on its own ---------------------------------------------------------------------

S = 2**31
NOW = 1000.0


def _victim(name, prio, start=None):
    builder = pod(name).uid(name).priority(prio)
    built = builder.build()
    if start is not None:
        import dataclasses

        from kubeprio.api.core import PodStatus
        from kubeprio.clock import rfc3339

        built = dataclasses.replace(built, status=PodStatus(start_time=rfc3339(EPOCH + start)))
    return PodInfo.of(built)


def _cand(node, victims, pdb=0):
    """Victims are given most important first, as ``SelectVictimsOnNode`` returns them."""
    return Candidate(node, Victims(tuple(_victim(*v) for v in victims), pdb))


def _evaluator(seed=0):
    clock = ManualClock(EPOCH + NOW)
    return Evaluator(
        handle=None,  # type: ignore[arg-type]  # selection reads only the candidates
        executor=None,  # type: ignore[arg-type]
        pdbs=list,
        current_pod=lambda p: p,
        clock=clock,
        rng=random.Random(seed),
        args=PreemptionArgs(),
    )


TIE_BREAKS = [
    (
        "1 fewest PDB violations beats a lower highest priority",
        [
            _cand("a", [("a1", LOW)], pdb=1),
            _cand("b", [("b1", HIGH)], pdb=0),
        ],
        "b",
    ),
    (
        "1 fewest PDB violations, counted not per victim",
        [
            _cand("a", [("a1", LOW), ("a2", LOW)], pdb=2),
            _cand("b", [("b1", LOW), ("b2", LOW), ("b3", LOW)], pdb=1),
        ],
        "b",
    ),
    (
        "2 lowest highest-victim priority beats a smaller sum and fewer victims",
        [
            _cand("a", [("a1", MID)]),
            _cand("b", [("b1", LOW), ("b2", LOW), ("b3", LOW)]),
        ],
        "b",
    ),
    (
        "2 highest victim priority can be negative",
        [
            _cand("a", [("a1", LOW)]),
            _cand("b", [("b1", NEG)]),
        ],
        "b",
    ),
    (
        "3 smallest priority sum among equal highest priorities",
        [
            _cand("a", [("a1", MID), ("a2", 50)]),
            _cand("b", [("b1", MID), ("b2", 10)]),
        ],
        "b",
    ),
    (
        "3 the sum is shifted by 2^31 per victim: more negative victims do not win",
        [
            _cand("a", [("a1", MID), ("a2", NEG), ("a3", NEG)]),
            _cand("b", [("b1", MID), ("b2", LOW)]),
        ],
        "b",
    ),
    (
        "3 smaller shifted sum beats a later start time",
        [
            _cand("a", [("a1", MID, 500), ("a2", LOW, 500)]),
            _cand("b", [("b1", MID, 1), ("b2", NEG, 1)]),
        ],
        "b",
    ),
    (
        "4 fewest victims when highest priority and shifted sum tie",
        # a: (0+2^31) + (-2^31+2^31) = 2^31 = b: (0+2^31), with one victim fewer
        [
            _cand("a", [("a1", LOW, 900), ("a2", -S, 900)]),
            _cand("b", [("b1", LOW, 1)]),
        ],
        "b",
    ),
    (
        "5 latest earliest start time among equal victims",
        [
            _cand("a", [("a1", MID, 2), ("a2", MID, 2)]),
            _cand("b", [("b1", MID, 3), ("b2", MID, 3)]),
            _cand("c", [("c1", MID, 1), ("c2", MID, 1)]),
        ],
        "b",
    ),
    (
        "5 only the highest-priority victims' start times count",
        # over all victims a's earliest is 1 and b's is 3; over the top priority a has 5
        [
            _cand("a", [("a1", MID, 5), ("a2", LOW, 1)]),
            _cand("b", [("b1", MID, 3), ("b2", LOW, 4)]),
        ],
        "a",
    ),
    (
        "5 a victim without startTime counts as now (newest)",
        [
            _cand("a", [("a1", MID, 999)]),
            _cand("b", [("b1", MID)]),
        ],
        "b",
    ),
]


@pytest.mark.parametrize(
    ("candidates", "expected"),
    [pytest.param(case[1], case[2], id=case[0]) for case in TIE_BREAKS],
)
@pytest.mark.parametrize("seed", range(4))
def test_tie_break(candidates, expected, seed):
    """Upstream ``pickOneNodeForPreemption``: one rule at a time, in order; neither the
    candidates' order nor the seed matters when a rule decides."""
    evaluator = _evaluator(seed)
    for ordering in (candidates, list(reversed(candidates))):
        best = evaluator.select_candidate(ordering)
        assert best is not None
        assert best.node_name == expected


def test_single_candidate_is_returned_directly():
    """``SelectCandidate``: one candidate is returned without scoring or randomness."""
    evaluator = _evaluator()
    before = evaluator.rng.getstate()
    only = _cand("a", [("a1", LOW)])
    assert evaluator.select_candidate([only]) is only
    assert evaluator.rng.getstate() == before
    assert evaluator.select_candidate([]) is None


def test_full_tie_is_a_seeded_choice():
    """Rule 6: upstream takes whichever node Go's map order yields first; kubeprio draws
    from the injected rng, so the same seed picks the same node and every tied node can be
    picked."""
    tied = [_cand(n, [(f"{n}1", LOW, 7)]) for n in ("a", "b", "c")]
    picks = {seed: _evaluator(seed).select_candidate(tied).node_name for seed in range(40)}
    assert set(picks.values()) == {"a", "b", "c"}
    assert all(_evaluator(s).select_candidate(tied).node_name == picks[s] for s in range(40))


@pytest.mark.parametrize(
    ("victims", "expected"),
    [
        pytest.param([("a", MID, 5)], 5, id="single victim"),
        pytest.param([("a", MID, 5), ("b", MID, 2), ("c", MID, 9)], 2, id="earliest of equals"),
        pytest.param([("a", MID, 5), ("b", LOW, 1)], 5, id="lower priority ignored"),
        pytest.param([("a", MID), ("b", MID, 3)], 3, id="no startTime counts as now"),
        pytest.param([("a", MID)], NOW, id="only victims without startTime: now"),
    ],
)
def test_earliest_start_of_top_victims(victims, expected):
    """Upstream ``util.GetEarliestPodStartTime``."""
    infos = Victims(tuple(_victim(*v) for v in victims), 0)
    now_nanos = round((EPOCH + NOW) * 1e9)
    assert earliest_start_of_top_victims(infos, now_nanos) == round((EPOCH + expected) * 1e9)
