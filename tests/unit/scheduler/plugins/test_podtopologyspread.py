"""PodTopologySpread, ported from upstream ``podtopologyspread/filtering_test.go``
(``TestSingleConstraint``, ``TestMultipleConstraints``, ``TestPreFilterStateAddPod`` /
``RemovePod``, the minDomains and node inclusion policy cases) and ``scoring_test.go``
(``TestPodTopologySpreadScore``)."""

from __future__ import annotations

import pytest

from kubeprio.api.core import TopologySpreadConstraint
from kubeprio.api.meta import LabelSelector
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.helper.validation import PluginArgsError
from kubeprio.scheduler.plugins.podtopologyspread import (
    DefaultingType,
    PodTopologySpread,
    PodTopologySpreadArgs,
)
from tests.builders import label_selector, node, node_term, pod, requirement
from tests.unit.scheduler.plugins.harness import lister, node_infos, run_filters, run_scores

OK = None
U = framework.Code.UNSCHEDULABLE
UU = framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
FOO = label_selector(None, ("foo", "Exists", ()))
HOST = "kubernetes.io/hostname"
LIST_DEFAULTING = PodTopologySpreadArgs(defaulting_type=DefaultingType.LIST)


def _node(name, **labels):
    builder = node(name)
    for key, value in labels.items():
        builder = builder.label(key, value)
    return builder.build()


def _four_nodes():
    return [
        _node("node-a", zone="zone1", node="node-a"),
        _node("node-b", zone="zone1", node="node-b"),
        _node("node-x", zone="zone2", node="node-x"),
        _node("node-y", zone="zone2", node="node-y"),
    ]


def _pods(spread: dict[str, int], label="foo", namespace="default"):
    """Matching pods per node, named p-<node>-<i>."""
    return [
        pod(f"p-{name}-{i}", namespace).label(label, "").on(name).build()
        for name, count in spread.items()
        for i in range(count)
    ]


def _incoming(*constraints, label="foo"):
    builder = pod("p").label(label, "")
    for max_skew, key in constraints:
        builder = builder.spread_constraint(max_skew, key, "DoNotSchedule", FOO)
    return builder.build()


def _codes(statuses):
    return {name: (status.code if status is not None else OK) for name, status in statuses.items()}


def _filter(the_pod, nodes, pods, args=LIST_DEFAULTING):
    infos = node_infos(nodes, pods)
    return _codes(run_filters(PodTopologySpread(lister(infos), args), the_pod, infos))


SINGLE_CASES = [
    (
        "no existing pods",
        _incoming((1, "zone")),
        _four_nodes(),
        [],
        dict.fromkeys(("node-a", "node-b", "node-x", "node-y"), OK),
    ),
    (
        "no existing pods, incoming pod doesn't match itself",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", label_selector(None, ("bar", "Exists", ())))
        .build(),
        _four_nodes(),
        [],
        dict.fromkeys(("node-a", "node-b", "node-x", "node-y"), OK),
    ),
    (
        "existing pods in a different namespace do not count",
        _incoming((1, "zone")),
        _four_nodes(),
        _pods({"node-a": 1}, namespace="ns1")
        + _pods({"node-a": 1}, namespace="ns2")
        + _pods({"node-x": 1, "node-y": 1}),
        {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U},
    ),
    (
        "pods spread across zones as 3/3, all nodes fit",
        _incoming((1, "zone")),
        _four_nodes(),
        _pods({"node-a": 2, "node-b": 1, "node-y": 3}),
        dict.fromkeys(("node-a", "node-b", "node-x", "node-y"), OK),
    ),
    (
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        _incoming((1, "zone")),
        [
            _node("node-a", zone="zone1", node="node-a"),
            _node("node-b", zon="zone1", node="node-b"),
            _node("node-x", zone="zone2", node="node-x"),
            _node("node-y", zone="zone2", node="node-y"),
        ],
        _pods({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1}),
        {"node-a": OK, "node-b": UU, "node-x": U, "node-y": U},
    ),
    (
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        _incoming((1, "rack")),
        [
            _node("node-a", zone="zone1", node="node-a"),
            _node("node-x", zone="zone2", node="node-x"),
        ],
        [],
        {"node-a": UU, "node-x": UU},
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        _incoming((1, "node")),
        _four_nodes(),
        _pods({"node-a": 2, "node-b": 1, "node-y": 3}),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        _incoming((2, "node")),
        _four_nodes(),
        _pods({"node-a": 2, "node-b": 1, "node-y": 3}),
        {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U},
    ),
    (
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        _incoming((1, "node"), label="bar"),
        _four_nodes(),
        _pods({"node-a": 2, "node-b": 1, "node-y": 3}),
        {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U},
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        pod("p")
        .label("foo", "")
        .required_node_affinity(node_term(requirement("node", "In", "node-a", "node-y")))
        .spread_constraint(1, "node", "DoNotSchedule", FOO)
        .build(),
        _four_nodes(),
        _pods({"node-a": 2, "node-b": 1, "node-y": 3}),
        # node-b and node-x would fail NodeAffinity; this plugin only ignores their pods.
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": U},
    ),
    (
        "terminating Pods should be excluded",
        _incoming((1, "node")),
        [_node("node-a", node="node-a"), _node("node-b", node="node-b")],
        [pod("p-a").label("foo", "").on("node-a").terminating().build(), *_pods({"node-b": 1})],
        {"node-a": OK, "node-b": U},
    ),
    (
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        _incoming((1, "zone"), (1, "node")),
        _four_nodes(),
        _pods({"node-a": 2, "node-b": 1, "node-y": 3}),
        {"node-a": U, "node-b": U, "node-x": OK, "node-y": U},
    ),
    (
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        _incoming((1, "zone"), (1, "node")),
        _four_nodes(),
        _pods({"node-a": 2, "node-b": 1, "node-y": 4}),
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    (
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        _incoming((1, "zone"), (1, "node")),
        [
            _node("node-a", zone="zone1", node="node-a"),
            _node("node-b", zone="zone1", node="node-b"),
            _node("node-x", zone="zone2"),
            _node("node-y", zone="zone2", node="node-y"),
        ],
        _pods({"node-a": 1, "node-y": 1}),
        {"node-a": U, "node-b": OK, "node-x": UU, "node-y": U},
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "nodes", "pods", "want"), SINGLE_CASES, ids=[c[0] for c in SINGLE_CASES]
)
def test_spread_constraints_filter(name, the_pod, nodes, pods, want):
    assert _filter(the_pod, nodes, pods) == want


def test_filter_reasons_are_upstream_texts():
    nodes = [
        _node("node-a", zone="zone1"),
        _node("node-b", other="x"),
        _node("node-x", zone="zone2"),
    ]
    infos = node_infos(nodes, _pods({"node-a": 2}))
    statuses = run_filters(
        PodTopologySpread(lister(infos), LIST_DEFAULTING), _incoming((1, "zone")), infos
    )
    assert statuses["node-a"] == framework.unschedulable(
        "node(s) didn't match pod topology spread constraints"
    )
    assert statuses["node-b"] == framework.unresolvable(
        "node(s) didn't match pod topology spread constraints (missing required label)"
    )
    assert statuses["node-x"] is None


MIN_DOMAINS_CASES = [
    # zones spread 1/1; minDomains 3 > 2 domains: the global minimum is 0.
    (
        "minDomains greater than the number of domains: global minimum is 0",
        3,
        {"node-a": 1, "node-x": 1},
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    (
        "minDomains equal to the number of domains: the real minimum",
        2,
        {"node-a": 1, "node-x": 1},
        dict.fromkeys(("node-a", "node-b", "node-x", "node-y"), OK),
    ),
    (
        "minDomains 3 with zones 0/1: only zone1 fits",
        3,
        {"node-x": 1},
        {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U},
    ),
]


@pytest.mark.parametrize(
    ("name", "min_domains", "spread", "want"),
    MIN_DOMAINS_CASES,
    ids=[c[0] for c in MIN_DOMAINS_CASES],
)
def test_min_domains(name, min_domains, spread, want):
    the_pod = (
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", "DoNotSchedule", FOO, min_domains=min_domains)
        .build()
    )
    assert _filter(the_pod, _four_nodes(), _pods(spread)) == want


def test_node_taints_policy_honor_ignores_pods_on_untolerated_nodes():
    """NodeTaintsPolicy Honor: a tainted node's domain is not counted (``matchNodeInclusionPolicies``)."""
    nodes = [
        _node("node-a", node="node-a"),
        node("node-b").label("node", "node-b").taint("k", "v", "NoSchedule").build(),
        _node("node-x", node="node-x"),
    ]
    pods = _pods({"node-a": 1, "node-x": 1})
    honor = (
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, node_taints_policy="Honor")
        .build()
    )
    ignore = pod("p").label("foo", "").spread_constraint(1, "node", "DoNotSchedule", FOO).build()
    # Ignore (default): node-b counts as an empty domain, so the minimum is 0.
    assert _filter(ignore, nodes, pods) == {"node-a": U, "node-b": OK, "node-x": U}
    # Honor: node-b is left out; the minimum over a and x is 1.
    assert _filter(honor, nodes, pods) == {"node-a": OK, "node-b": OK, "node-x": OK}


def test_node_affinity_policy_ignore_counts_every_node():
    the_pod = (
        pod("p")
        .label("foo", "")
        .node_selector({"pool": "a"})
        .spread_constraint(1, "node", "DoNotSchedule", FOO, node_affinity_policy="Ignore")
        .build()
    )
    nodes = [_node("node-a", node="node-a", pool="a"), _node("node-b", node="node-b", pool="b")]
    # node-b (outside the selector) still counts with its 0 pods: node-a would be at skew 2.
    assert _filter(the_pod, nodes, _pods({"node-a": 1})) == {"node-a": U, "node-b": OK}


def test_match_label_keys_narrow_the_selector():
    """matchLabelKeys adds ``key=<pod's value>`` to the selector (rolling-update revisions)."""
    the_pod = (
        pod("p")
        .label("foo", "")
        .label("rev", "2")
        .spread_constraint(1, "node", "DoNotSchedule", FOO, match_label_keys=("rev",))
        .build()
    )
    nodes = [_node("node-a", node="node-a"), _node("node-b", node="node-b")]
    old = [
        pod(f"old-{i}").label("foo", "").label("rev", "1").on("node-a").build() for i in range(3)
    ]
    assert _filter(the_pod, nodes, old) == {"node-a": OK, "node-b": OK}


def test_pre_filter_skips_pods_without_hard_constraints():
    the_pod = pod("p").label("foo", "").spread_constraint(1, "node", "ScheduleAnyway", FOO).build()
    infos = node_infos(_four_nodes())
    plugin = PodTopologySpread(lister(infos), LIST_DEFAULTING)
    _, status = plugin.pre_filter(framework.CycleState(), framework.PodInfo.of(the_pod), infos)
    assert status == framework.SKIP


def test_add_and_remove_pod_update_counts_and_critical_paths():
    """``TestPreFilterStateAddPod``/``RemovePod``: preemption's incremental updates."""
    infos = node_infos(_four_nodes(), _pods({"node-a": 2, "node-b": 1, "node-y": 3}))
    by_name = {info.name: info for info in infos}
    plugin = PodTopologySpread(lister(infos), LIST_DEFAULTING)
    the_pod = framework.PodInfo.of(_incoming((1, "node")))
    state = framework.CycleState()
    plugin.pre_filter(state, the_pod, infos)
    assert plugin.filter(state, the_pod, by_name["node-b"]) is not None
    # Remove node-a's two pods (a dry run on a clone of the state).
    victims = state.clone()
    for victim in list(by_name["node-a"].pods):
        assert plugin.remove_pod(victims, the_pod, victim, by_name["node-a"]) is None
    assert plugin.filter(victims, the_pod, by_name["node-a"]) is None
    # The original state is untouched.
    assert plugin.filter(state, the_pod, by_name["node-a"]) is not None
    # Adding a matching pod to node-x raises the minimum from 0 to 1: node-b now fits.
    added = framework.PodInfo.of(pod("new").label("foo", "").on("node-x").build())
    assert plugin.add_pod(state, the_pod, added, by_name["node-x"]) is None
    assert plugin.filter(state, the_pod, by_name["node-b"]) is None
    # A pod in another namespace or not matching the selector changes nothing.
    other = framework.PodInfo.of(pod("o", "other").label("foo", "").on("node-b").build())
    plugin.add_pod(state, the_pod, other, by_name["node-b"])
    assert plugin.filter(state, the_pod, by_name["node-b"]) is None


# --- scoring (TestPodTopologySpreadScore) ---------------------------------------------------

SOFT_FOO = label_selector(None, ("foo", "Exists", ()))


def _soft(*constraints, selector: LabelSelector | None = SOFT_FOO):
    builder = pod("p").label("foo", "")
    for max_skew, key in constraints:
        builder = builder.spread_constraint(max_skew, key, "ScheduleAnyway", selector)
    return builder.build()


def _hosts(*names, **extra):
    return [
        _node(name, **{"kubernetes.io/hostname": name} if False else {}, **extra) for name in names
    ]


def _host_node(name, **labels):
    return (
        node(name).label(HOST, name).build()
        if not labels
        else _labelled(name, {HOST: name, **labels})
    )


def _labelled(name, labels):
    builder = node(name)
    for key, value in labels.items():
        builder = builder.label(key, value)
    return builder.build()


def _score(the_pod, candidates, failed, pods, args=LIST_DEFAULTING, owner_selector=None):
    all_infos = node_infos([*candidates, *failed], pods)
    by_name = {info.name: info for info in all_infos}
    filtered = [by_name[n.metadata.name] for n in candidates]
    plugin = PodTopologySpread(lister(all_infos), args, owner_selector=owner_selector)
    return run_scores(plugin, the_pod, filtered)


SCORE_CASES = [
    (
        "one constraint on node, no existing pods",
        _soft((1, HOST)),
        [_host_node("node-a"), _host_node("node-b")],
        [],
        {},
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, only one node is candidate",
        _soft((1, HOST)),
        [_host_node("node-a")],
        [_host_node("node-b")],
        {"node-a": 2, "node-b": 1},
        {"node-a": 100},
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        _soft((1, HOST)),
        [_host_node("node-a"), _host_node("node-b")],
        [],
        {"node-a": 1, "node-b": 1},
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates",
        _soft((1, HOST)),
        [_host_node(n) for n in ("node-a", "node-b", "node-c", "node-d")],
        [],
        {"node-a": 2, "node-b": 1, "node-d": 3},
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    (
        "one constraint on node, null selector",
        _soft((1, HOST), selector=None),
        [_host_node(n) for n in ("node-a", "node-b", "node-c", "node-d")],
        [],
        {"node-a": 2, "node-b": 1, "node-d": 3},
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        _soft((2, HOST)),
        [_host_node(n) for n in ("node-a", "node-b", "node-c", "node-d")],
        [],
        {"node-a": 2, "node-b": 1, "node-d": 3},
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        _soft((3, HOST)),
        [_host_node(n) for n in ("node-a", "node-b", "node-c", "node-d")],
        [],
        {"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1},
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        _soft((1, HOST)),
        [_host_node(n) for n in ("node-a", "node-b", "node-x")],
        [_host_node("node-y")],
        {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3},
        {"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        _soft((1, HOST)),
        [_host_node("node-a"), _labelled("node-b", {"n": "node-b"}), _host_node("node-x")],
        [_host_node("node-y")],
        {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3},
        {"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        _soft((1, "zone")),
        [
            _host_node("node-a", zone="zone1"),
            _host_node("node-b", zone="zone1"),
            _host_node("node-x", zone="zone2"),
        ],
        [_host_node("node-y", zone="zone2")],
        {"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3},
        {"node-a": 75, "node-b": 75, "node-x": 100},
    ),
]


@pytest.mark.parametrize(
    ("name", "the_pod", "candidates", "failed", "spread", "want"),
    SCORE_CASES,
    ids=[c[0] for c in SCORE_CASES],
)
def test_pod_topology_spread_score(name, the_pod, candidates, failed, spread, want):
    assert _score(the_pod, candidates, failed, _pods(spread)) == want


def test_system_defaulting_spreads_pods_of_a_replica_set():
    """upstream's "system defaulting, nodes don't have zone, pods match service" scores,
    with the selector coming from the pod's ReplicaSet instead; scores as one hostname
    constraint with maxSkew 3."""

    def owner_selector(api_version, kind, namespace, name):
        assert (api_version, kind, namespace, name) == ("apps/v1", "ReplicaSet", "default", "rs")
        return label_selector({"foo": ""})

    the_pod = pod("p").label("foo", "").owner("ReplicaSet", "rs").build()
    candidates = [_host_node(n) for n in ("node-a", "node-b", "node-c", "node-d")]
    pods = _pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1})
    system = PodTopologySpreadArgs()
    want = {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    assert _score(the_pod, candidates, [], pods, system, owner_selector) == want


DEFAULTS_CASES = [
    ("a pod without a controller gets no default constraints", pod("p").label("foo", "").build()),
    (
        "a pod owned by an unsupported kind gets none",
        pod("p").label("foo", "").owner("Job", "j", "batch/v1").build(),
    ),
    (
        "a controller with an empty selector gives none",
        pod("p").label("foo", "").owner("ReplicaSet", "empty").build(),
    ),
]


@pytest.mark.parametrize(("name", "the_pod"), DEFAULTS_CASES, ids=[c[0] for c in DEFAULTS_CASES])
def test_system_default_constraints_need_a_controller_selector(name, the_pod):
    def owner_selector(api_version, kind, namespace, name):
        return label_selector({}) if name == "empty" else label_selector({"foo": ""})

    infos = node_infos([_host_node("node-a")])
    plugin = PodTopologySpread(
        lister(infos), PodTopologySpreadArgs(), owner_selector=owner_selector
    )
    assert run_scores(plugin, the_pod, infos) == framework.SKIP


def test_list_defaulting_uses_the_configured_constraints():
    args = PodTopologySpreadArgs(
        default_constraints=(
            TopologySpreadConstraint(
                max_skew=1, topology_key="zone", when_unsatisfiable="DoNotSchedule"
            ),
        ),
        defaulting_type=DefaultingType.LIST,
    )
    nodes = [_node("node-a", zone="zone1"), _node("node-x", zone="zone2")]
    pods = [pod("m").label("app", "web").on("node-a").build()]
    infos = node_infos(nodes, pods)
    plugin = PodTopologySpread(
        lister(infos), args, owner_selector=lambda *_: label_selector({"app": "web"})
    )
    the_pod = pod("p").label("app", "web").owner("ReplicaSet", "rs").build()
    assert _codes(run_filters(plugin, the_pod, infos)) == {"node-a": U, "node-x": OK}


ARGS_ERRORS = [
    (
        "System defaulting with default constraints",
        PodTopologySpreadArgs(
            default_constraints=(
                TopologySpreadConstraint(
                    max_skew=1, topology_key="zone", when_unsatisfiable="ScheduleAnyway"
                ),
            )
        ),
        'defaultConstraints: Invalid value: "...": when .defaultingType is "System", .defaultConstraints must be empty',
    ),
    (
        "a default constraint with a selector",
        PodTopologySpreadArgs(
            default_constraints=(
                TopologySpreadConstraint(
                    max_skew=1,
                    topology_key="zone",
                    when_unsatisfiable="ScheduleAnyway",
                    label_selector=label_selector({"a": "b"}),
                ),
            ),
            defaulting_type=DefaultingType.LIST,
        ),
        "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod",
    ),
    (
        "a default constraint with maxSkew 0",
        PodTopologySpreadArgs(
            default_constraints=(
                TopologySpreadConstraint(
                    max_skew=0, topology_key="zone", when_unsatisfiable="ScheduleAnyway"
                ),
            ),
            defaulting_type=DefaultingType.LIST,
        ),
        "defaultConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
    ),
]


@pytest.mark.parametrize(("name", "args", "message"), ARGS_ERRORS, ids=[c[0] for c in ARGS_ERRORS])
def test_invalid_args_are_rejected(name, args, message):
    """``ValidatePodTopologySpreadArgs``."""
    with pytest.raises(PluginArgsError) as info:
        PodTopologySpread(lister([]), args)
    assert str(info.value) == message


def test_bad_constraint_selector_is_an_error_status():
    bad = label_selector(None, ("foo", "Bogus", ("x",)))
    the_pod = pod("p").spread_constraint(1, "zone", "DoNotSchedule", bad).build()
    infos = node_infos([_node("node-a", zone="z")])
    _, status = PodTopologySpread(lister(infos), LIST_DEFAULTING).pre_filter(
        framework.CycleState(), framework.PodInfo.of(the_pod), infos
    )
    assert status is not None
    assert status.code is framework.Code.ERROR
    assert status.message.startswith(
        "get constraints from pod: obtaining pod's hard topology spread constraints: "
    )
