"""NodeAffinity, ported from upstream ``nodeaffinity/node_affinity_test.go``
(``TestNodeAffinity``, ``TestNodeAffinityPriority``)."""

from __future__ import annotations

import pytest

from kubeprio.api.core import Affinity, NodeSelector, PreferredSchedulingTerm
from kubeprio.api.core import NodeAffinity as NodeAffinitySpec
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.nodeaffinity import NodeAffinity, NodeAffinityArgs
from tests.builders import node, node_term, pod, requirement
from tests.unit.scheduler.plugins.harness import node_infos, pre_filter, run_filter, run_scores

NOT_MATCH = framework.Status(
    framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ("node(s) didn't match Pod's node affinity/selector",),
)
NAME = "metadata.name"


def _node(labels=None, name="node1"):
    builder = node(name)
    for key, value in (labels or {}).items():
        builder = builder.label(key, value)
    return builder.build()


FILTER_CASES = [
    ("missing labels", pod("p").node_selector({"foo": "bar"}).build(), {}, NOT_MATCH),
    ("same labels", pod("p").node_selector({"foo": "bar"}).build(), {"foo": "bar"}, None),
    (
        "node labels are superset",
        pod("p").node_selector({"foo": "bar"}).build(),
        {"foo": "bar", "baz": "blah"},
        None,
    ),
    (
        "node labels are subset",
        pod("p").node_selector({"foo": "bar", "baz": "blah"}).build(),
        {"foo": "bar"},
        NOT_MATCH,
    ),
    (
        "Pod with matchExpressions using In operator that matches the existing node",
        pod("p")
        .required_node_affinity(node_term(requirement("foo", "In", "bar", "value2")))
        .build(),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with matchExpressions using Gt operator that matches the existing node",
        pod("p")
        .required_node_affinity(node_term(requirement("kernel-version", "Gt", "0204")))
        .build(),
        {"kernel-version": "0206"},
        None,
    ),
    (
        "Pod with matchExpressions using Lt operator: a non-integer label never matches",
        pod("p")
        .required_node_affinity(node_term(requirement("kernel-version", "Lt", "0204")))
        .build(),
        {"kernel-version": "v2"},
        NOT_MATCH,
    ),
    (
        "Pod with matchExpressions using NotIn operator that matches the existing node",
        pod("p")
        .required_node_affinity(node_term(requirement("mem-type", "NotIn", "DDR", "DDR2")))
        .build(),
        {"mem-type": "DDR3"},
        None,
    ),
    (
        "Pod with matchExpressions using Exists operator that matches the existing node",
        pod("p").required_node_affinity(node_term(requirement("GPU", "Exists"))).build(),
        {"GPU": "NVIDIA-GRID-K1"},
        None,
    ),
    (
        "Pod with DoesNotExist operator does not match a node with the label",
        pod("p").required_node_affinity(node_term(requirement("GPU", "DoesNotExist"))).build(),
        {"GPU": "NVIDIA-GRID-K1"},
        NOT_MATCH,
    ),
    (
        "Pod with affinity that don't match node's labels won't schedule onto the node",
        pod("p")
        .required_node_affinity(node_term(requirement("foo", "In", "value1", "value2")))
        .build(),
        {"foo": "bar"},
        NOT_MATCH,
    ),
    (
        "Pod with empty MatchExpressions is not a valid value will match no objects",
        pod("p").required_node_affinity(node_term()).build(),
        {"foo": "bar"},
        NOT_MATCH,
    ),
    (
        "Pod with multiple matchExpressions ANDed that matches the existing node",
        pod("p")
        .required_node_affinity(
            node_term(requirement("GPU", "Exists"), requirement("GPU", "NotIn", "AMD", "INTER"))
        )
        .build(),
        {"GPU": "NVIDIA-GRID-K1"},
        None,
    ),
    (
        "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        pod("p")
        .required_node_affinity(
            node_term(requirement("GPU", "Exists"), requirement("GPU", "In", "AMD", "INTER"))
        )
        .build(),
        {"GPU": "NVIDIA-GRID-K1"},
        NOT_MATCH,
    ),
    (
        "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels",
        pod("p")
        .required_node_affinity(
            node_term(requirement("foo", "In", "bar", "value2")),
            node_term(requirement("diffkey", "In", "wrong", "value2")),
        )
        .build(),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with an Affinity and a PodSpec.NodeSelector both satisfied",
        pod("p")
        .node_selector({"foo": "bar"})
        .required_node_affinity(node_term(requirement("foo", "Exists")))
        .build(),
        {"foo": "bar"},
        None,
    ),
    (
        "Pod with an Affinity matching the node but the PodSpec.NodeSelector not satisfied",
        pod("p")
        .node_selector({"foo": "bar"})
        .required_node_affinity(node_term(requirement("foo", "Exists")))
        .build(),
        {"foo": "barrrrrr"},
        NOT_MATCH,
    ),
    (
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
        pod("p")
        .required_node_affinity(node_term(requirement("foo", "NotIn", "invalid value: ___@#$%^")))
        .build(),
        {"foo": "bar"},
        NOT_MATCH,
    ),
    (
        "a term that fails to parse does not stop a valid term from matching",
        pod("p")
        .required_node_affinity(
            node_term(requirement("foo", "Bogus", "x")),
            node_term(requirement("foo", "In", "bar")),
        )
        .build(),
        {"foo": "bar"},
        None,
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "labels", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES]
)
def test_node_affinity_filter(name, the_pod, labels, want):
    [info] = node_infos([_node(labels)])
    assert run_filter(NodeAffinity(), the_pod, info) == want


SKIP_CASES = [
    ("Pod with no Affinity will schedule onto a node", pod("p").build()),
    (
        "Pod with Affinity but nil NodeSelector will schedule onto a node",
        pod("p").spec(affinity=Affinity(node_affinity=NodeAffinitySpec())).build(),
    ),
]


@pytest.mark.parametrize(("name", "the_pod"), SKIP_CASES, ids=[c[0] for c in SKIP_CASES])
def test_pre_filter_skips_pods_without_required_affinity(name, the_pod):
    _, result, status = pre_filter(NodeAffinity(), the_pod)
    assert (result, status) == (None, framework.SKIP)


def test_empty_node_selector_map_is_not_skipped():
    """``pod.Spec.NodeSelector == nil`` is the check: an empty map still runs the filter (and fits)."""
    the_pod = pod("p").node_selector({}).build()
    _, _, status = pre_filter(NodeAffinity(), the_pod)
    assert status is None
    [info] = node_infos([_node({"foo": "bar"})])
    assert run_filter(NodeAffinity(), the_pod, info) is None


FIELD_CASES = [
    (
        "Pod with matchFields using In operator that matches the existing node",
        [node_term(fields=(requirement(NAME, "In", "node1"),))],
        "node1",
        {},
        frozenset({"node1"}),
        None,
    ),
    (
        "Pod with matchFields using In operator that does not match the existing node",
        [node_term(fields=(requirement(NAME, "In", "node1"),))],
        "node2",
        {},
        frozenset({"node1"}),
        NOT_MATCH,
    ),
    (
        "Pod with two terms: matchFields does not match, but matchExpressions matches",
        [
            node_term(fields=(requirement(NAME, "In", "node1"), requirement(NAME, "In", "node2"))),
            node_term(requirement("foo", "In", "bar")),
        ],
        "node2",
        {"foo": "bar"},
        None,
        None,
    ),
    (
        "Pod with one term: matchFields does not match, but matchExpressions matches",
        [node_term(requirement("foo", "In", "bar"), fields=(requirement(NAME, "In", "node1"),))],
        "node2",
        {"foo": "bar"},
        frozenset({"node1"}),
        NOT_MATCH,
    ),
    (
        "Pod with one term: both matchFields and matchExpressions match",
        [node_term(requirement("foo", "In", "bar"), fields=(requirement(NAME, "In", "node1"),))],
        "node1",
        {"foo": "bar"},
        frozenset({"node1"}),
        None,
    ),
    (
        "Pod with two terms: both matchFields pin a node: the union",
        [
            node_term(fields=(requirement(NAME, "In", "node1"),)),
            node_term(fields=(requirement(NAME, "In", "node2"),)),
        ],
        "node2",
        {},
        frozenset({"node1", "node2"}),
        None,
    ),
    (
        "Pod with NotIn matchFields excludes the named node",
        [node_term(fields=(requirement(NAME, "NotIn", "node1"),))],
        "node1",
        {},
        None,
        NOT_MATCH,
    ),
]


@pytest.mark.parametrize(
    ("name", "terms", "node_name", "labels", "want_result", "want"),
    FIELD_CASES,
    ids=[c[0] for c in FIELD_CASES],
)
def test_match_fields_and_pre_filter_result(name, terms, node_name, labels, want_result, want):
    the_pod = pod("p").required_node_affinity(*terms).build()
    [info] = node_infos([_node(labels, node_name)])
    state, result, status = pre_filter(NodeAffinity(), the_pod, [info])
    assert status is None
    assert (result.node_names if result else None) == want_result
    assert NodeAffinity().filter(state, framework.PodInfo.of(the_pod), info) == want


def test_conflicting_node_name_pins_are_unresolvable_in_pre_filter():
    """``TestNodeAffinity`` "Pod with two terms: both matchFields conflict": PreFilter rejects."""
    the_pod = (
        pod("p")
        .required_node_affinity(
            node_term(fields=(requirement(NAME, "In", "node1"), requirement(NAME, "In", "node2")))
        )
        .build()
    )
    _, result, status = pre_filter(NodeAffinity(), the_pod)
    assert result is None
    assert status == framework.Status(
        framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",)
    )


def test_added_affinity_is_enforced():
    """``TestNodeAffinity`` "Matches added affinity and Pod's node affinity" family."""
    args = NodeAffinityArgs(
        added_affinity=NodeAffinitySpec(
            required_during_scheduling_ignored_during_execution=NodeSelector(
                node_selector_terms=(node_term(requirement("zone", "In", "foo")),)
            )
        )
    )
    plugin = NodeAffinity(args)
    the_pod = pod("p").build()
    # With added affinity, PreFilter does not skip a pod without its own constraints.
    assert pre_filter(plugin, the_pod)[2] is None
    [inside] = node_infos([_node({"zone": "foo"})])
    [outside] = node_infos([_node({"zone": "bar"})])
    assert run_filter(plugin, the_pod, inside) is None
    assert run_filter(plugin, the_pod, outside) == framework.Status(
        framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) didn't match scheduler-enforced node affinity",),
    )


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def _affinity1(builder):
    return builder.preferred_node_affinity(2, node_term(requirement("foo", "In", "bar")))


def _affinity2(builder):
    return (
        builder.preferred_node_affinity(2, node_term(requirement("foo", "In", "bar")))
        .preferred_node_affinity(4, node_term(requirement("key", "In", "value")))
        .preferred_node_affinity(
            5,
            node_term(
                requirement("foo", "In", "bar"),
                requirement("key", "In", "value"),
                requirement("az", "In", "az1"),
            ),
        )
    )


SCORE_CASES = [
    (
        "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
        _affinity1(pod("p")).build(),
        [("machine1", LABEL4), ("machine2", LABEL2), ("machine3", LABEL3)],
        {"machine1": 0, "machine2": 0, "machine3": 0},
    ),
    (
        "only machine1 matches the preferred scheduling requirements of pod",
        _affinity1(pod("p")).build(),
        [("machine1", LABEL1), ("machine2", LABEL2), ("machine3", LABEL3)],
        {"machine1": 100, "machine2": 0, "machine3": 0},
    ),
    (
        "all machines matches the preferred scheduling requirements of pod but with different priorities",
        _affinity2(pod("p")).build(),
        [("machine1", LABEL1), ("machine5", LABEL5), ("machine2", LABEL2)],
        {"machine1": 18, "machine5": 100, "machine2": 36},
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "nodes", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES]
)
def test_node_affinity_priority(name, the_pod, nodes, want):
    infos = node_infos([_node(labels, name) for name, labels in nodes])
    assert run_scores(NodeAffinity(), the_pod, infos) == want


def test_pre_score_skips_pods_without_preferred_terms():
    """``TestNodeAffinityPriority`` "all nodes are same priority as NodeAffinity is nil"."""
    infos = node_infos([_node(LABEL1, "machine1")])
    assert run_scores(NodeAffinity(), pod("p").build(), infos) == framework.SKIP


def test_added_preferred_affinity_adds_weights():
    """``TestNodeAffinityPriority`` "Added affinity": the profile's terms add to the pod's."""
    args = NodeAffinityArgs(
        added_affinity=NodeAffinitySpec(
            preferred_during_scheduling_ignored_during_execution=(
                PreferredSchedulingTerm(
                    weight=3, preference=node_term(requirement("key", "In", "value"))
                ),
            )
        )
    )
    infos = node_infos(
        [_node(LABEL1, "machine1"), _node(LABEL2, "machine2"), _node(LABEL5, "machine5")]
    )
    scores = run_scores(NodeAffinity(args), _affinity1(pod("p")).build(), infos)
    assert scores == {"machine1": 40, "machine2": 60, "machine5": 100}


def test_invalid_preferred_term_is_an_error_in_pre_score():
    the_pod = (
        pod("p").preferred_node_affinity(1, node_term(requirement("foo", "Bogus", "x"))).build()
    )
    status = run_scores(NodeAffinity(), the_pod, node_infos([_node(LABEL1)]))
    assert isinstance(status, framework.Status)
    assert status.code is framework.Code.ERROR
