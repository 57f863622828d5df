"""InterPodAffinity, ported from upstream ``interpodaffinity/filtering_test.go``
(``TestRequiredAffinitySingleNode``, ``TestRequiredAffinityMultipleNodes``,
``TestPreFilterStateAddRemovePod``) and ``scoring_test.go`` (``TestPreferredAffinity``,
``TestPreferredAffinityWithHardPodAffinitySymmetricWeight``).

Current upstream reports a single reason per failure (the older aggregate reason
``node(s) didn't match pod affinity/anti-affinity`` is gone).
"""

from __future__ import annotations

import pytest

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.interpodaffinity import InterPodAffinity, InterPodAffinityArgs
from tests.builders import affinity_term, label_selector, node, pod
from tests.unit.scheduler.plugins.harness import lister, node_infos, run_filters, run_scores

AFFINITY = framework.unresolvable("node(s) didn't match pod affinity rules")
ANTI = framework.unschedulable("node(s) didn't match pod anti-affinity rules")
EXISTING = framework.unschedulable("node(s) didn't satisfy existing pods anti-affinity rules")

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}


def _node(name, **labels):
    builder = node(name)
    for key, value in labels.items():
        builder = builder.label(key, value)
    return builder.build()


NODE1 = _node("machine1", region="r1", zone="z11")


def _sel(key, op, *values):
    return label_selector(None, (key, op, values))


def _pod(name, labels, *, on=None, affinity=(), anti=(), namespace="default"):
    """Upstream ``createPodWithAffinityTerms``."""
    builder = pod(name, namespace)
    for key, value in labels.items():
        builder = builder.label(key, value)
    for term in affinity:
        builder = builder.pod_affinity(term)
    for term in anti:
        builder = builder.pod_anti_affinity(term)
    if on:
        builder = builder.on(on)
    return builder.build()


def _filter(the_pod, nodes, pods, namespaces=None):
    infos = node_infos(nodes, pods)
    lookup = (namespaces or {}).get
    return run_filters(InterPodAffinity(lister(infos), lookup), the_pod, infos)


SECURITYSCAN_IN_REGION = affinity_term("region", _sel("service", "In", "securityscan", "value2"))
ANTIVIRUS_ON_NODE = affinity_term("node", _sel("service", "In", "antivirusscan", "value2"))

SINGLE_NODE_CASES = [
    (
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        pod("p").build(),
        [],
        None,
    ),
    (
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        _pod("p", POD_LABEL2, affinity=[SECURITYSCAN_IN_REGION]),
        [_pod("e", POD_LABEL, on="machine1")],
        None,
    ),
    (
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator",
        _pod(
            "p",
            POD_LABEL2,
            affinity=[affinity_term("region", _sel("service", "NotIn", "securityscan3", "value3"))],
        ),
        [_pod("e", POD_LABEL, on="machine1")],
        None,
    ),
    (
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        _pod(
            "p",
            POD_LABEL2,
            affinity=[
                affinity_term(
                    "region",
                    _sel("service", "In", "securityscan", "value2"),
                    namespaces=("DiffNameSpace",),
                )
            ],
        ),
        [_pod("e", POD_LABEL, on="machine1", namespace="ns")],
        AFFINITY,
    ),
    (
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        _pod(
            "p",
            POD_LABEL,
            affinity=[affinity_term("region", _sel("service", "In", "antivirusscan", "value2"))],
        ),
        [_pod("e", POD_LABEL, on="machine1")],
        AFFINITY,
    ),
    (
        "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution",
        _pod(
            "p",
            POD_LABEL2,
            affinity=[
                affinity_term(
                    "region",
                    label_selector(
                        None, ("service", "Exists", ()), ("wrongkey", "DoesNotExist", ())
                    ),
                ),
                affinity_term(
                    "region",
                    label_selector(
                        None,
                        ("service", "In", ("securityscan",)),
                        ("service", "NotIn", ("WrongValue",)),
                    ),
                ),
            ],
        ),
        [_pod("e", POD_LABEL, on="machine1")],
        None,
    ),
    (
        "The labelSelector requirements are ANDed: one matchExpression item doesn't match",
        _pod(
            "p",
            POD_LABEL2,
            affinity=[
                affinity_term(
                    "region",
                    label_selector(
                        None, ("service", "Exists", ()), ("wrongkey", "DoesNotExist", ())
                    ),
                ),
                affinity_term(
                    "region",
                    label_selector(
                        None,
                        ("service", "In", ("securityscan2",)),
                        ("service", "NotIn", ("WrongValue",)),
                    ),
                ),
            ],
        ),
        [_pod("e", POD_LABEL, on="machine1")],
        AFFINITY,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        _pod("p", POD_LABEL2, affinity=[SECURITYSCAN_IN_REGION], anti=[ANTIVIRUS_ON_NODE]),
        [_pod("e", POD_LABEL, on="machine1")],
        None,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        _pod("p", POD_LABEL2, affinity=[SECURITYSCAN_IN_REGION], anti=[ANTIVIRUS_ON_NODE]),
        [_pod("e", POD_LABEL, on="machine1", anti=[ANTIVIRUS_ON_NODE])],
        None,
    ),
    (
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        _pod(
            "p",
            POD_LABEL2,
            affinity=[SECURITYSCAN_IN_REGION],
            anti=[affinity_term("zone", _sel("service", "In", "securityscan", "value2"))],
        ),
        [_pod("e", POD_LABEL, on="machine1")],
        ANTI,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        _pod("p", POD_LABEL, affinity=[SECURITYSCAN_IN_REGION], anti=[ANTIVIRUS_ON_NODE]),
        [
            _pod(
                "e",
                POD_LABEL,
                on="machine1",
                anti=[affinity_term("zone", _sel("service", "In", "securityscan", "value2"))],
            )
        ],
        EXISTING,
    ),
    (
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        _pod(
            "p",
            POD_LABEL,
            affinity=[affinity_term("region", _sel("service", "NotIn", "securityscan", "value2"))],
        ),
        [_pod("e", POD_LABEL, on="machine2")],
        AFFINITY,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy",
        _pod("p", POD_LABEL),
        [
            _pod(
                "e",
                POD_LABEL,
                on="machine1",
                anti=[affinity_term("zone", _sel("service", "In", "securityscan", "value2"))],
            )
        ],
        EXISTING,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy",
        _pod("p", POD_LABEL),
        [
            _pod(
                "e",
                POD_LABEL,
                on="machine1",
                anti=[affinity_term("zone", _sel("service", "NotIn", "securityscan", "value2"))],
            )
        ],
        None,
    ),
    (
        "verify that PodAffinity is satisfied when no pod matches and the pod matches its own terms (first pod of a group)",
        _pod("p", POD_LABEL, affinity=[SECURITYSCAN_IN_REGION]),
        [],
        None,
    ),
    (
        "the first-pod exception needs every topology key on the node",
        _pod(
            "p", POD_LABEL, affinity=[affinity_term("rack", _sel("service", "In", "securityscan"))]
        ),
        [],
        AFFINITY,
    ),
    (
        "the first-pod exception does not apply when a matching pod exists elsewhere",
        _pod("p", POD_LABEL, affinity=[SECURITYSCAN_IN_REGION]),
        [_pod("e", POD_LABEL, on="machine2")],
        AFFINITY,
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "pods", "want"), SINGLE_NODE_CASES, ids=[c[0] for c in SINGLE_NODE_CASES]
)
def test_required_affinity_single_node(name, the_pod, pods, want):
    nodes = [NODE1, _node("machine2", region="r2", zone="z21")]
    assert _filter(the_pod, nodes, pods)["machine1"] == want


def test_required_affinity_multiple_nodes():
    """``TestRequiredAffinityMultipleNodes`` "A pod can be scheduled onto all the nodes that
    have the same topology key & label value with one of them has an existing pod that matches"."""
    nodes = [
        _node("machine1", region="India"),
        _node("machine2", region="India"),
        _node("machine3", region="China"),
        _node("machine4", region="India", zone="foo"),
    ]
    the_pod = _pod(
        "p", {"foo": "bar"}, affinity=[affinity_term("region", _sel("foo", "In", "bar"))]
    )
    pods = [_pod("e", {"foo": "bar"}, on="machine1")]
    statuses = _filter(the_pod, nodes, pods)
    assert statuses == {"machine1": None, "machine2": None, "machine3": AFFINITY, "machine4": None}


def test_anti_affinity_to_zone_blocks_the_whole_zone():
    """``TestRequiredAffinityMultipleNodes``: anti-affinity on a zone rejects every node in it."""
    nodes = [
        _node("nodeA", zone="az1", hostname="nodeA"),
        _node("nodeB", zone="az1", hostname="nodeB"),
        _node("nodeC", zone="az2", hostname="nodeC"),
    ]
    the_pod = _pod("p", {"foo": "bar"}, anti=[affinity_term("zone", _sel("foo", "In", "bar"))])
    pods = [_pod("e", {"foo": "bar"}, on="nodeA")]
    assert _filter(the_pod, nodes, pods) == {"nodeA": ANTI, "nodeB": ANTI, "nodeC": None}


NAMESPACE_LABELS = {"team-a": {"team": "a"}, "team-b": {"team": "b"}, "default": {}}

NAMESPACE_CASES = [
    (
        "namespaceSelector selects the existing pod's namespace",
        affinity_term(
            "region",
            _sel("service", "In", "securityscan"),
            namespace_selector=label_selector({"team": "a"}),
        ),
        "team-a",
        None,
    ),
    (
        "namespaceSelector does not select the existing pod's namespace",
        affinity_term(
            "region",
            _sel("service", "In", "securityscan"),
            namespace_selector=label_selector({"team": "a"}),
        ),
        "team-b",
        AFFINITY,
    ),
    (
        "an empty namespaceSelector selects every namespace",
        affinity_term(
            "region", _sel("service", "In", "securityscan"), namespace_selector=label_selector({})
        ),
        "team-b",
        None,
    ),
    (
        "namespaces and namespaceSelector are ORed",
        affinity_term(
            "region",
            _sel("service", "In", "securityscan"),
            namespaces=("team-b",),
            namespace_selector=label_selector({"team": "a"}),
        ),
        "team-b",
        None,
    ),
    (
        "without namespaces or selector only the pod's own namespace counts",
        affinity_term("region", _sel("service", "In", "securityscan")),
        "team-a",
        AFFINITY,
    ),
]


@pytest.mark.parametrize(
    ("name", "term", "existing_namespace", "want"),
    NAMESPACE_CASES,
    ids=[c[0] for c in NAMESPACE_CASES],
)
def test_namespace_selector(name, term, existing_namespace, want):
    """``TestRequiredAffinitySingleNode`` namespaceSelector cases: labels come from the lookup."""
    # The incoming pod does not match its own term, so no "first pod" exception applies.
    the_pod = _pod("p", POD_LABEL2, affinity=[term])
    pods = [_pod("e", POD_LABEL, on="machine1", namespace=existing_namespace)]
    assert _filter(the_pod, [NODE1], pods, NAMESPACE_LABELS)["machine1"] == want


def test_existing_anti_affinity_namespace_selector_uses_the_incoming_pods_namespace_labels():
    term = affinity_term(
        "region",
        _sel("service", "In", "securityscan"),
        namespace_selector=label_selector({"team": "a"}),
    )
    existing = [_pod("e", {}, on="machine1", namespace="team-b", anti=[term])]
    in_a = _pod("p", POD_LABEL, namespace="team-a")
    in_b = _pod("p", POD_LABEL, namespace="team-b")
    assert _filter(in_a, [NODE1], existing, NAMESPACE_LABELS)["machine1"] == EXISTING
    assert _filter(in_b, [NODE1], existing, NAMESPACE_LABELS)["machine1"] is None


def test_pre_filter_skips_pods_without_affinity_when_no_existing_anti_affinity():
    infos = node_infos([NODE1], [_pod("e", POD_LABEL, on="machine1")])
    plugin = InterPodAffinity(lister(infos), {}.get)
    _, status = plugin.pre_filter(
        framework.CycleState(), framework.PodInfo.of(pod("p").build()), infos
    )
    assert status == framework.SKIP


def test_unparsable_affinity_is_unresolvable():
    bad = affinity_term("region", label_selector(None, ("service", "Bogus", ("x",))))
    infos = node_infos([NODE1])
    plugin = InterPodAffinity(lister(infos), {}.get)
    _, status = plugin.pre_filter(
        framework.CycleState(), framework.PodInfo.of(_pod("p", {}, affinity=[bad])), infos
    )
    assert status is not None
    assert status.code is framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message.startswith("parsing pod: requiredAffinityTerms: ")


def test_add_and_remove_pod_update_the_counts():
    """``TestPreFilterStateAddRemovePod``: removing the pod an anti-affinity term matches frees
    the node (preemption's dry run); removing the one an affinity term needs blocks it."""
    nodes = [_node("nodeA", zone="az1"), _node("nodeB", zone="az2")]
    blocker = _pod("blocker", {"foo": "bar"}, on="nodeA")
    infos = node_infos(nodes, [blocker])
    by_name = {info.name: info for info in infos}
    plugin = InterPodAffinity(lister(infos), {}.get)

    anti_pod = framework.PodInfo.of(
        _pod("p", {}, anti=[affinity_term("zone", _sel("foo", "In", "bar"))])
    )
    state = framework.CycleState()
    plugin.pre_filter(state, anti_pod, infos)
    assert plugin.filter(state, anti_pod, by_name["nodeA"]) == ANTI
    copy = state.clone()
    victim = by_name["nodeA"].pods[0]
    assert plugin.remove_pod(copy, anti_pod, victim, by_name["nodeA"]) is None
    assert plugin.filter(copy, anti_pod, by_name["nodeA"]) is None
    assert plugin.filter(state, anti_pod, by_name["nodeA"]) == ANTI  # clone is independent
    plugin.add_pod(copy, anti_pod, victim, by_name["nodeA"])
    assert plugin.filter(copy, anti_pod, by_name["nodeA"]) == ANTI

    affinity_pod = framework.PodInfo.of(
        _pod("q", {}, affinity=[affinity_term("zone", _sel("foo", "In", "bar"))])
    )
    state = framework.CycleState()
    plugin.pre_filter(state, affinity_pod, infos)
    assert plugin.filter(state, affinity_pod, by_name["nodeA"]) is None
    plugin.remove_pod(state, affinity_pod, victim, by_name["nodeA"])
    # No matching pod is left anywhere, but the pod does not match its own term: rejected.
    assert plugin.filter(state, affinity_pod, by_name["nodeA"]) == AFFINITY

    # An existing pod's anti-affinity term, added during the dry run, is counted too (once
    # PreFilter has state: with nothing to check it returns SKIP and, as upstream, the
    # runtime skips the extensions as well).
    web = framework.PodInfo.of(_pod("w", {"app": "web"}))
    assert plugin.pre_filter(framework.CycleState(), web, infos)[1] == framework.SKIP
    guard = _pod("g", {}, on="nodeA", anti=[affinity_term("zone", _sel("app", "In", "web"))])
    infos = node_infos(nodes, [blocker, guard])
    by_name = {info.name: info for info in infos}
    plugin = InterPodAffinity(lister(infos), {}.get)
    state = framework.CycleState()
    plugin.pre_filter(state, web, infos)
    assert plugin.filter(state, web, by_name["nodeA"]) == EXISTING
    assert plugin.filter(state, web, by_name["nodeB"]) is None
    symmetric = framework.PodInfo.of(
        _pod("s", {}, on="nodeB", anti=[affinity_term("zone", _sel("app", "In", "web"))])
    )
    plugin.add_pod(state, web, symmetric, by_name["nodeB"])
    assert plugin.filter(state, web, by_name["nodeB"]) == EXISTING


# --- scoring -------------------------------------------------------------------------------

RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

STAY_WITH_S1_IN_REGION = (5, affinity_term("region", _sel("security", "In", "S1")))
STAY_WITH_S2_IN_REGION = (6, affinity_term("region", _sel("security", "In", "S2")))
AWAY_FROM_S1_IN_AZ = (5, affinity_term("az", _sel("security", "In", "S1")))
AWAY_FROM_S2_IN_AZ = (5, affinity_term("az", _sel("security", "In", "S2")))


def _preferred(name, labels, *, on=None, affinity=(), anti=(), required_affinity=()):
    builder = pod(name)
    for key, value in labels.items():
        builder = builder.label(key, value)
    for weight, term in affinity:
        builder = builder.pod_affinity(term, weight=weight)
    for weight, term in anti:
        builder = builder.pod_anti_affinity(term, weight=weight)
    for term in required_affinity:
        builder = builder.pod_affinity(term)
    if on:
        builder = builder.on(on)
    return builder.build()


def _score(the_pod, nodes, pods, args=None):
    infos = node_infos(nodes, pods)
    return run_scores(InterPodAffinity(lister(infos), {}.get, args), the_pod, infos)


PREFERRED_CASES = [
    (
        "all nodes have same priority as the pod has no preferred terms and no existing pod has affinity",
        _preferred("p", S1),
        [_node("node1", **RG_CHINA), _node("node2", **RG_INDIA), _node("node3", **AZ1)],
        [],
        framework.SKIP,
    ),
    (
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others",
        _preferred("p", S1, affinity=[STAY_WITH_S1_IN_REGION]),
        [_node("node1", **RG_CHINA), _node("node2", **RG_INDIA), _node("node3", **AZ1)],
        [
            _preferred("e1", S1, on="node1"),
            _preferred("e2", S2, on="node2"),
            _preferred("e3", S1, on="node3"),
        ],
        {"node1": 100, "node2": 0, "node3": 0},
    ),
    (
        "Affinity: all nodes in the same region as the matching pod score high",
        _preferred("p", {}, affinity=[STAY_WITH_S1_IN_REGION]),
        [_node("node1", **RG_CHINA), _node("node2", **RG_CHINA_AZ1), _node("node3", **RG_INDIA)],
        [_preferred("e1", S1, on="node1")],
        {"node1": 100, "node2": 100, "node3": 0},
    ),
    (
        "Affinity: different weights decide between regions",
        _preferred("p", {}, affinity=[STAY_WITH_S1_IN_REGION, STAY_WITH_S2_IN_REGION]),
        [_node("node1", **RG_CHINA), _node("node2", **RG_INDIA), _node("node3", **AZ1)],
        [_preferred("e1", S1, on="node1"), _preferred("e2", S2, on="node2")],
        # China 5, India 6, no region 0: 0..6 -> 83, 100, 0
        {"node1": 83, "node2": 100, "node3": 0},
    ),
    (
        "Anti Affinity: pod that does not match existing pods in node will get high score",
        _preferred("p", {}, anti=[AWAY_FROM_S1_IN_AZ]),
        [_node("node1", **AZ1), _node("node2", **RG_CHINA), _node("node3", **AZ2)],
        [_preferred("e1", S1, on="node1"), _preferred("e2", S2, on="node2")],
        {"node1": 0, "node2": 100, "node3": 100},
    ),
    (
        "Affinity and Anti Affinity together",
        _preferred("p", {}, affinity=[STAY_WITH_S1_IN_REGION], anti=[AWAY_FROM_S2_IN_AZ]),
        [_node("node1", **RG_CHINA), _node("node2", **AZ1)],
        [_preferred("e1", S1, on="node1"), _preferred("e2", S2, on="node2")],
        # node1: +5 (China), node2: -5 (az1): -5..5 -> 100, 0
        {"node1": 100, "node2": 0},
    ),
    (
        "existing pods' preferred affinity to the incoming pod counts (symmetry)",
        _preferred("p", S1),
        [_node("node1", **RG_CHINA), _node("node2", **RG_INDIA)],
        [_preferred("e1", {}, on="node1", affinity=[STAY_WITH_S1_IN_REGION])],
        {"node1": 100, "node2": 0},
    ),
    (
        "existing pods' preferred anti-affinity to the incoming pod counts (symmetry)",
        _preferred("p", S1),
        [_node("node1", **RG_CHINA), _node("node2", **RG_INDIA)],
        [_preferred("e1", {}, on="node1", anti=[STAY_WITH_S1_IN_REGION])],
        {"node1": 0, "node2": 100},
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "nodes", "pods", "want"),
    PREFERRED_CASES,
    ids=[c[0] for c in PREFERRED_CASES],
)
def test_preferred_affinity(name, the_pod, nodes, pods, want):
    assert _score(the_pod, nodes, pods) == want


def test_hard_pod_affinity_symmetric_weight():
    """``TestPreferredAffinityWithHardPodAffinitySymmetricWeight``: an existing pod's required
    affinity to the incoming pod adds ``hardPodAffinityWeight`` to its topology."""
    nodes = [_node("node1", **RG_CHINA), _node("node2", **RG_INDIA), _node("node3", **AZ1)]
    pods = [
        _preferred(
            "e1",
            {},
            on="node1",
            required_affinity=[affinity_term("region", _sel("service", "In", "S1"))],
        ),
        _preferred("e2", {}, on="node2"),
    ]
    the_pod = _preferred("p", {"service": "S1"})
    assert _score(the_pod, nodes, pods) == {"node1": 100, "node2": 0, "node3": 0}
    zero = InterPodAffinityArgs(hard_pod_affinity_weight=0)
    assert _score(the_pod, nodes, pods, zero) == framework.SKIP


def test_ignore_preferred_terms_of_existing_pods():
    nodes = [_node("node1", **RG_CHINA), _node("node2", **RG_INDIA)]
    pods = [_preferred("e1", {}, on="node1", affinity=[STAY_WITH_S1_IN_REGION])]
    args = InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True)
    assert _score(_preferred("p", S1), nodes, pods, args) == framework.SKIP
