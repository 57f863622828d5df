"""PDB-aware victim choice (semantics §4.5 steps 6-8, §4.6).

Upstream ``filterPodsWithPDBViolation`` and ``SelectVictimsOnNode`` in
``plugins/defaultpreemption/default_preemption.go``; the DisruptedPods cases of
``TestDryRunPreemption`` are in ``test_preemption_dry_run.py``. The scheduler reads only
``status.disruptionsAllowed`` and ``status.disruptedPods`` (by pod name), starts a fresh
counter per node, and matches PDBs of the pod's own namespace whose selector is non-empty;
pods without labels match nothing.
"""

from __future__ import annotations

import pytest

from kubeprio.api.meta import LabelSelector, LabelSelectorRequirement, ObjectMeta
from kubeprio.api.policy import (
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
    PodDisruptionBudgetStatus,
)
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.preemption import pods_with_pdb_violation
from tests.builders import label_selector, pod
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    SMALL,
    Harness,
    node_obj,
)

FOO = {"app": "foo"}
BAR = {"app": "bar"}


def _pdb(selector, allowed, *, ns="default", disrupted=(), name="pdb"):
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace=ns),
        spec=PodDisruptionBudgetSpec(selector=selector),
        status=PodDisruptionBudgetStatus(
            disruptions_allowed=allowed,
            disrupted_pods={p: "2026-01-01T00:00:00Z" for p in disrupted} or None,
        ),
    )


def _info(name, labels=None, ns="default"):
    builder = pod(name, ns).uid(name)
    if labels is not None:
        builder = builder.labels(**labels)
    return PodInfo.of(builder.build())


INVALID = LabelSelector(
    match_expressions=(LabelSelectorRequirement(key="app", operator="In", values=None),)
)

# (id, pods (name, labels, namespace), pdbs, expected violating names)
CASES = [
    (
        "within budget: nobody violates",
        [("a", FOO, "default"), ("b", FOO, "default")],
        [_pdb(label_selector(FOO), 2)],
        [],
    ),
    (
        "counter goes negative at the second pod: later pods violate, in order",
        [("a", FOO, "default"), ("b", FOO, "default"), ("c", FOO, "default")],
        [_pdb(label_selector(FOO), 1)],
        ["b", "c"],
    ),
    (
        "zero disruptions allowed: every matching pod violates",
        [("a", FOO, "default"), ("b", BAR, "default")],
        [_pdb(label_selector(FOO), 0)],
        ["a"],
    ),
    (
        "a pod without labels matches nothing",
        [("a", None, "default")],
        [_pdb(LabelSelector(), 0), _pdb(label_selector(FOO), 0)],
        [],
    ),
    (
        "an empty selector matches nothing",
        [("a", FOO, "default")],
        [_pdb(LabelSelector(), 0)],
        [],
    ),
    (
        "a nil selector matches nothing",
        [("a", FOO, "default")],
        [_pdb(None, 0)],
        [],
    ),
    (
        "a PDB in another namespace does not count",
        [("a", FOO, "default")],
        [_pdb(label_selector(FOO), 0, ns="other")],
        [],
    ),
    (
        "namespace is matched per pod",
        [("a", FOO, "default"), ("b", FOO, "other")],
        [_pdb(label_selector(FOO), 0, ns="other")],
        ["b"],
    ),
    (
        "a pod listed in disruptedPods is skipped and does not use the budget",
        [("a", FOO, "default"), ("b", FOO, "default")],
        [_pdb(label_selector(FOO), 1, disrupted=("a",))],
        [],
    ),
    (
        "disruptedPods is keyed by pod name only",
        [("a", FOO, "default"), ("b", FOO, "default")],
        [_pdb(label_selector(FOO), 0, disrupted=("default/a", "uid-a"))],
        ["a", "b"],
    ),
    (
        "a pod violates if any matching PDB goes negative",
        [("a", {"app": "foo", "tier": "db"}, "default")],
        [
            _pdb(label_selector(FOO), 5, name="generous"),
            _pdb(label_selector({"tier": "db"}), 0, name="strict"),
        ],
        ["a"],
    ),
    (
        "each PDB keeps its own counter",
        [("a", FOO, "default"), ("b", BAR, "default"), ("c", FOO, "default")],
        [
            _pdb(label_selector(FOO), 1, name="foo"),
            _pdb(label_selector(BAR), 1, name="bar"),
        ],
        ["c"],
    ),
    (
        "an invalid selector is ignored",
        [("a", FOO, "default")],
        [_pdb(INVALID, 0, name="broken"), _pdb(label_selector(FOO), 1, name="ok")],
        [],
    ),
]


@pytest.mark.parametrize(
    ("pods", "pdbs", "violating"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_filter_pods_with_pdb_violation(pods, pdbs, violating):
    """Upstream ``filterPodsWithPDBViolation``: (violating, non-violating), order kept."""
    infos = [_info(name, labels, ns) for name, labels, ns in pods]
    got_violating, got_non_violating = pods_with_pdb_violation(infos, pdbs)
    assert [i.pod.metadata.name for i in got_violating] == violating
    assert [i.pod.metadata.name for i in got_non_violating] == [
        name for name, _, _ in pods if name not in violating
    ]


def test_budget_is_fresh_for_every_call():
    """The counter starts at ``disruptionsAllowed`` for every node evaluated."""
    pdbs = [_pdb(label_selector(FOO), 1)]
    infos = [_info("a", FOO)]
    for _ in range(3):
        violating, _ = pods_with_pdb_violation(infos, pdbs)
        assert violating == []


# --- victim selection on a node with PDBs ---------------------------------------------------


def _harness(*pods, pdbs=()):
    h = Harness()
    h.add_nodes(node_obj("node1"))
    h.start()
    for obj in pods:
        h.add_pod(obj)
    for name, labels, allowed, ns in pdbs:
        h.add_pdb(name, labels, allowed=allowed, namespace=ns)
    return h


def _victims(h, preemptor):
    candidates, _ = h.dry_run(preemptor)
    assert len(candidates) == 1
    victims = candidates[0].victims
    return [v.pod.metadata.name for v in victims.pods], victims.num_pdb_violations


def test_violating_pods_are_reprieved_first():
    """§4.5 step 7: the PDB-protected pod is reprieved before a more important free one.

    Importance alone would keep ``free`` (MID) and evict ``protected`` (LOW); the
    violating group is tried first, so ``protected`` stays and ``free`` goes.
    """
    h = _harness(
        pod("protected")
        .uid("protected")
        .priority(LOW)
        .labels(**FOO)
        .requests(**MEDIUM)
        .on("node1")
        .build(),
        pod("free").uid("free").priority(MID).requests(**MEDIUM).on("node1").build(),
        pdbs=[("pdb", FOO, 0, "default")],
    )
    preemptor = pod("p").uid("p").priority(HIGH).requests(**LARGE).build()
    assert _victims(h, preemptor) == (["free"], 0)


def test_without_pdb_importance_decides():
    """The same node without the PDB: the least important pod is the victim."""
    h = _harness(
        pod("protected")
        .uid("protected")
        .priority(LOW)
        .labels(**FOO)
        .requests(**MEDIUM)
        .on("node1")
        .build(),
        pod("free").uid("free").priority(MID).requests(**MEDIUM).on("node1").build(),
    )
    preemptor = pod("p").uid("p").priority(HIGH).requests(**LARGE).build()
    assert _victims(h, preemptor) == (["protected"], 0)


def test_victims_from_both_groups_are_resorted_by_importance():
    """§4.5 step 8: violating victims come first from the reprieve loop, then the list is
    re-sorted by importance (MID before LOW), and each violating victim counts once."""
    h = _harness(
        pod("v-low")
        .uid("v-low")
        .priority(LOW)
        .labels(**FOO)
        .requests(**MEDIUM)
        .on("node1")
        .build(),
        pod("n-mid").uid("n-mid").priority(MID).requests(**MEDIUM).on("node1").build(),
        pod("n-small").uid("n-small").priority(MID).requests(**SMALL).on("node1").build(),
        pdbs=[("pdb", FOO, 0, "default")],
    )
    # 500m node, 500m used; the preemptor needs 400m: only n-small (100m) can stay.
    preemptor = pod("p").uid("p").priority(HIGH).requests(cpu="400m").build()
    assert _victims(h, preemptor) == (["n-mid", "v-low"], 1)


@pytest.mark.parametrize(
    ("labels", "pdb_ns", "violations"),
    [
        pytest.param(FOO, "default", 1, id="same namespace: violation counted"),
        pytest.param(FOO, "other", 0, id="PDB in another namespace: no violation"),
        pytest.param(None, "default", 0, id="pod without labels: no violation"),
    ],
)
def test_violation_count_on_node(labels, pdb_ns, violations):
    """``numPDBViolations`` counts victims taken from the violating group only."""
    builder = pod("victim").uid("victim").priority(LOW).requests(**LARGE).on("node1")
    if labels:
        builder = builder.labels(**labels)
    h = _harness(builder.build(), pdbs=[("pdb", FOO, 0, pdb_ns)])
    preemptor = pod("p").uid("p").priority(HIGH).requests(**LARGE).build()
    assert _victims(h, preemptor) == (["victim"], violations)
