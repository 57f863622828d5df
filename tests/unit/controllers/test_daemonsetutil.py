"""Where daemon pods belong and what they look like, as ``pkg/controller/daemon/util``.

Placement cases mirror ``daemon_controller_test.go`` ``TestNodeShouldRunDaemonPod``
(node selector, required affinity, taints with and without tolerations, nodeName);
tolerations follow ``TestAddOrUpdateDaemonPodTolerations``-style expectations of
``AddOrUpdateDaemonPodTolerations``; pinning ``TestReplaceDaemonSetPodNodeNameNodeAffinity``;
the target node ``TestGetTargetNodeName``.
"""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.core import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    Pod,
    PodSpec,
    PodTemplateSpec,
    PreferredSchedulingTerm,
    Toleration,
)
from kubeprio.api.daemonset import (
    DaemonSet,
    DaemonSetSpec,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
)
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.controllers import daemonsetutil
from tests.builders import node, node_term, pod, requirement

NO_SCHEDULE, NO_EXECUTE, PREFER = "NoSchedule", "NoExecute", "PreferNoSchedule"


def daemon_set(**pod_spec: object) -> DaemonSet:
    spec = pod("t").build().spec
    assert spec is not None
    return DaemonSet(
        metadata=ObjectMeta(name="agent", namespace="default", uid="ds-uid"),
        spec=DaemonSetSpec(
            selector=LabelSelector(match_labels={"app": "agent"}),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels={"app": "agent"}),
                spec=dataclasses.replace(spec, **pod_spec),  # type: ignore[arg-type]
            ),
        ),
    )


def required(*terms: object) -> Affinity:
    return Affinity(
        node_affinity=NodeAffinity(
            required_during_scheduling_ignored_during_execution=NodeSelector(
                node_selector_terms=terms  # type: ignore[arg-type]
            )
        )
    )


PLACEMENT_CASES = [
    ("no constraints: runs everywhere", node("n1"), {}, (True, True)),
    (
        "nodeSelector matches",
        node("n1").label("disk", "ssd"),
        {"node_selector": {"disk": "ssd"}},
        (True, True),
    ),
    (
        "nodeSelector does not match: neither runs nor keeps running",
        node("n1").label("disk", "hdd"),
        {"node_selector": {"disk": "ssd"}},
        (False, False),
    ),
    (
        "required node affinity matches",
        node("n1").label("zone", "a"),
        {"affinity": required(node_term(requirement("zone", "In", "a", "b")))},
        (True, True),
    ),
    (
        "required node affinity does not match",
        node("n1").label("zone", "c"),
        {"affinity": required(node_term(requirement("zone", "In", "a", "b")))},
        (False, False),
    ),
    (
        "template nodeName names another node",
        node("n1"),
        {"node_name": "n2"},
        (False, False),
    ),
    ("template nodeName names this node", node("n1"), {"node_name": "n1"}, (True, True)),
    (
        "untolerated NoSchedule taint: no new pod, a running one stays",
        node("n1").taint("dedicated", "gpu", NO_SCHEDULE),
        {},
        (False, True),
    ),
    (
        "untolerated NoExecute taint: the pod must go",
        node("n1").taint("dedicated", "gpu", NO_EXECUTE),
        {},
        (False, False),
    ),
    (
        "tolerated NoSchedule taint",
        node("n1").taint("dedicated", "gpu", NO_SCHEDULE),
        {"tolerations": (Toleration(key="dedicated", operator="Exists"),)},
        (True, True),
    ),
    (
        "tolerated NoExecute taint (Equal, value and effect)",
        node("n1").taint("dedicated", "gpu", NO_EXECUTE),
        {
            "tolerations": (
                Toleration(key="dedicated", operator="Equal", value="gpu", effect=NO_EXECUTE),
            )
        },
        (True, True),
    ),
    (
        "PreferNoSchedule never blocks",
        node("n1").taint("dedicated", "gpu", PREFER),
        {},
        (True, True),
    ),
    ("cordoned node (spec.unschedulable)", node("n1").unschedulable(), {}, (True, True)),
    (
        "unschedulable taint is tolerated by every daemon pod",
        node("n1").taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE),
        {},
        (True, True),
    ),
    (
        "not-ready NoExecute taint is tolerated by every daemon pod",
        node("n1").taint("node.kubernetes.io/not-ready", "", NO_EXECUTE),
        {},
        (True, True),
    ),
    (
        "memory-pressure taint is tolerated by every daemon pod",
        node("n1").taint("node.kubernetes.io/memory-pressure", "", NO_SCHEDULE),
        {},
        (True, True),
    ),
    (
        "network-unavailable: only hostNetwork pods tolerate it",
        node("n1").taint("node.kubernetes.io/network-unavailable", "", NO_SCHEDULE),
        {},
        (False, True),
    ),
    (
        "network-unavailable with hostNetwork",
        node("n1").taint("node.kubernetes.io/network-unavailable", "", NO_SCHEDULE),
        {"host_network": True},
        (True, True),
    ),
]


@pytest.mark.parametrize(
    ("builder", "pod_spec", "expected"),
    [c[1:] for c in PLACEMENT_CASES],
    ids=[c[0] for c in PLACEMENT_CASES],
)
def test_node_should_run_daemon_pod(builder, pod_spec, expected) -> None:
    """NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning)."""
    assert daemonsetutil.node_should_run(builder.build(), daemon_set(**pod_spec)) == expected


def test_daemon_tolerations_are_added_and_matching_ones_replaced() -> None:
    """AddOrUpdateDaemonPodTolerations: the six tolerations in order; a user toleration with
    the same key, operator, value and effect is replaced (its tolerationSeconds dropped),
    others are kept in front."""
    own = Toleration(key="dedicated", operator="Exists", effect=NO_SCHEDULE)
    limited = Toleration(
        key="node.kubernetes.io/not-ready",
        operator="Exists",
        effect=NO_EXECUTE,
        toleration_seconds=300,
    )
    spec = daemonsetutil.add_daemon_tolerations(PodSpec(tolerations=(own, limited)))
    assert spec.tolerations == (own, *daemonsetutil.DAEMON_TOLERATIONS)
    assert [t.key for t in daemonsetutil.DAEMON_TOLERATIONS] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/unschedulable",
    ]
    host = daemonsetutil.add_daemon_tolerations(PodSpec(host_network=True))
    assert host.tolerations is not None
    assert host.tolerations[-1] == daemonsetutil.HOST_NETWORK_TOLERATION


def test_create_pod_template_labels_generation_and_hash() -> None:
    """CreatePodTemplate: pod-template-generation and controller-revision-hash labels."""
    ds = daemon_set()
    assert ds.spec is not None
    template = daemonsetutil.create_pod_template(ds.spec.template, 3, "abc")
    assert template.metadata is not None
    assert template.metadata.labels == {
        "app": "agent",
        "pod-template-generation": "3",
        "controller-revision-hash": "abc",
    }
    assert template.spec is not None
    assert template.spec.tolerations is not None
    unlabelled = daemonsetutil.create_pod_template(ds.spec.template, None, "")
    assert unlabelled.metadata is not None
    assert unlabelled.metadata.labels == {"app": "agent"}


def test_pin_to_node_replaces_required_terms_and_keeps_the_rest() -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: required terms become matchFields
    metadata.name In [node]; preferred terms survive."""
    preferred = PreferredSchedulingTerm(weight=5, preference=node_term(requirement("a", "Exists")))
    affinity = dataclasses.replace(
        required(node_term(requirement("zone", "In", "a"))),
    )
    assert affinity.node_affinity is not None
    affinity = dataclasses.replace(
        affinity,
        node_affinity=dataclasses.replace(
            affinity.node_affinity,
            preferred_during_scheduling_ignored_during_execution=(preferred,),
        ),
    )
    pinned = daemonsetutil.pin_to_node(affinity, "n7")
    assert pinned.node_affinity is not None
    terms = pinned.node_affinity.required_during_scheduling_ignored_during_execution
    assert terms is not None
    assert terms.node_selector_terms is not None
    assert len(terms.node_selector_terms) == 1
    (field,) = terms.node_selector_terms[0].match_fields or ()
    assert (field.key, field.operator, field.values) == ("metadata.name", "In", ("n7",))
    assert terms.node_selector_terms[0].match_expressions is None
    assert pinned.node_affinity.preferred_during_scheduling_ignored_during_execution == (preferred,)
    assert daemonsetutil.pin_to_node(None, "n1").node_affinity is not None


def test_target_node_is_the_bound_node_or_the_pinned_one() -> None:
    """GetTargetNodeName: spec.nodeName, else the single value of the metadata.name term."""
    bound = pod("p").on("n2").build()
    assert daemonsetutil.target_node(bound) == "n2"
    pinned = Pod(spec=PodSpec(affinity=daemonsetutil.pin_to_node(None, "n3")))
    assert daemonsetutil.target_node(pinned) == "n3"
    assert daemonsetutil.target_node(pod("free").build()) is None


def test_is_pod_updated_by_hash_or_template_generation() -> None:
    """IsPodUpdated: the revision hash label, or the template generation label."""
    by_hash = pod("a").labels(**{"controller-revision-hash": "h2"}).build()
    by_generation = pod("b").labels(**{"pod-template-generation": "4"}).build()
    assert daemonsetutil.is_pod_updated(by_hash, "h2", None)
    assert not daemonsetutil.is_pod_updated(by_hash, "h3", 4)
    assert daemonsetutil.is_pod_updated(by_generation, "h3", 4)
    assert not daemonsetutil.is_pod_updated(by_generation, "", None)


@pytest.mark.parametrize(
    ("strategy", "desired", "surge", "unavailable"),
    [
        (DaemonSetUpdateStrategy(type="OnDelete"), 10, 0, 0),
        (
            DaemonSetUpdateStrategy(
                type="RollingUpdate",
                rolling_update=RollingUpdateDaemonSet(max_unavailable=1, max_surge=0),
            ),
            10,
            0,
            1,
        ),
        (
            DaemonSetUpdateStrategy(
                type="RollingUpdate",
                rolling_update=RollingUpdateDaemonSet(max_unavailable="25%", max_surge=0),
            ),
            10,
            0,
            3,
        ),
        (
            DaemonSetUpdateStrategy(
                type="RollingUpdate",
                rolling_update=RollingUpdateDaemonSet(max_unavailable=0, max_surge="10%"),
            ),
            3,
            1,
            0,
        ),
    ],
    ids=["OnDelete", "one node", "25% of 10 rounds up to 3", "10% of 3 surge rounds up to 1"],
)
def test_surge_and_unavailable_counts(
    strategy: DaemonSetUpdateStrategy, desired: int, surge: int, unavailable: int
) -> None:
    """SurgeCount/UnavailableCount: GetScaledValueFromIntOrPercent with roundUp."""
    ds = daemon_set()
    assert ds.spec is not None
    ds = dataclasses.replace(ds, spec=dataclasses.replace(ds.spec, update_strategy=strategy))
    assert daemonsetutil.surge_count(ds, desired) == surge
    assert daemonsetutil.unavailable_count(ds, desired) == unavailable
    assert daemonsetutil.allows_surge(ds) == (surge > 0)
