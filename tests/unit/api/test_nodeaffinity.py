"""Node selector matching, ported from upstream component-helpers
``nodeaffinity/nodeaffinity_test.go`` (``TestNodeSelectorMatch``,
``TestPreferredSchedulingTermsScore``, ``TestNodeSelectorRequirementsAsSelector``)."""

from __future__ import annotations

import pytest

from kubeprio.api.core import NodeSelector, PreferredSchedulingTerm
from kubeprio.api.nodeaffinity import (
    NodeAffinityError,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
)
from kubeprio.api.nodeaffinity import NodeSelector as Selector
from tests.builders import node, node_term, pod, requirement

NAME = "metadata.name"


def _node(name="host_1", **labels):
    builder = node(name)
    for key, value in labels.items():
        builder = builder.label(key, value)
    return builder.build()


MATCH_CASES = [
    ("nil terms", [], _node(), False),
    (
        "node label matches",
        [node_term(requirement("label_1", "In", "label_1_val"))],
        _node(label_1="label_1_val"),
        True,
    ),
    ("node field matches", [node_term(fields=(requirement(NAME, "In", "host_1"),))], _node(), True),
    (
        "invalid node field requirement (two values)",
        [node_term(fields=(requirement(NAME, "In", "host_1", "host_2"),))],
        _node(),
        False,
    ),
    (
        "fieldSelectorTerm with node labels",
        [node_term(fields=(requirement(NAME, "In", "host_1"),))],
        _node("not_host_1", label_1="label_1_val"),
        False,
    ),
    (
        "labelSelectorTerm with node fields",
        [node_term(requirement(NAME, "In", "host_1"))],
        _node(),
        False,
    ),
    (
        "labelSelectorTerm and fieldSelectorTerm was set, but only node fields",
        [
            node_term(
                requirement("label_1", "In", "label_1_val"),
                fields=(requirement(NAME, "In", "host_1"),),
            )
        ],
        _node(),
        False,
    ),
    (
        "labelSelectorTerm and fieldSelectorTerm was set, both node fields and labels (both matched)",
        [
            node_term(
                requirement("label_1", "In", "label_1_val"),
                fields=(requirement(NAME, "In", "host_1"),),
            )
        ],
        _node(label_1="label_1_val"),
        True,
    ),
    (
        "labelSelectorTerm and fieldSelectorTerm was set, both node fields and labels (one mismatched)",
        [
            node_term(
                requirement("label_1", "In", "label_1_val"),
                fields=(requirement(NAME, "In", "host_1"),),
            )
        ],
        _node(label_1="label_1_val-failed"),
        False,
    ),
    (
        "multi-selector was set, both node fields and labels (one mismatched)",
        [
            node_term(requirement("label_1", "In", "label_1_val")),
            node_term(fields=(requirement(NAME, "In", "host_1"),)),
        ],
        _node(label_1="label_1_val-failed"),
        True,
    ),
    (
        "NotIn on the name field",
        [node_term(fields=(requirement(NAME, "NotIn", "host_1"),))],
        _node(),
        False,
    ),
    (
        "an unsupported field operator makes the term unparsable",
        [node_term(fields=(requirement(NAME, "Exists"),))],
        _node(),
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "terms", "the_node", "want"), MATCH_CASES, ids=[c[0] for c in MATCH_CASES]
)
def test_node_selector_match(name, terms, the_node, want):
    assert Selector(NodeSelector(node_selector_terms=tuple(terms))).matches(the_node) is want


def test_parse_errors_are_kept_lazily():
    selector = Selector(NodeSelector(node_selector_terms=(node_term(requirement("foo", "Bogus")),)))
    assert selector.errors == (
        'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Bogus"',
    )


def test_required_node_affinity_ands_node_selector_and_affinity():
    the_pod = (
        pod("p")
        .node_selector({"a": "1"})
        .required_node_affinity(node_term(requirement("b", "Exists")))
        .build()
    )
    required = RequiredNodeAffinity.of(the_pod)
    assert required.matches(_node(a="1", b="x"))
    assert not required.matches(_node(a="1"))
    assert not required.matches(_node(b="x"))
    assert RequiredNodeAffinity.of(pod("p").build()).is_empty


def test_preferred_scheduling_terms_score():
    """``TestPreferredSchedulingTermsScore``: weights of matching terms are summed; zero
    weights and empty terms are dropped."""
    terms = PreferredSchedulingTerms.parse(
        (
            PreferredSchedulingTerm(
                weight=5, preference=node_term(requirement("foo", "In", "bar"))
            ),
            PreferredSchedulingTerm(weight=3, preference=node_term(requirement("baz", "Exists"))),
            PreferredSchedulingTerm(weight=0, preference=node_term(requirement("foo", "Exists"))),
            PreferredSchedulingTerm(weight=7, preference=node_term()),
            PreferredSchedulingTerm(
                weight=2, preference=node_term(fields=(requirement(NAME, "In", "host_1"),))
            ),
        )
    )
    assert terms.score(_node(foo="bar", baz="1")) == 10
    assert terms.score(_node(foo="bar")) == 7
    assert terms.score(_node("other")) == 0


def test_preferred_terms_with_errors_fail_to_parse():
    with pytest.raises(
        NodeAffinityError, match=r"PreferredSchedulingTerms\[0\].matchExpressions\[0\]"
    ):
        PreferredSchedulingTerms.parse(
            (
                PreferredSchedulingTerm(
                    weight=1, preference=node_term(requirement("foo", "Gt", "abc"))
                ),
            )
        )
