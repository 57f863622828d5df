"""Cluster events and queueing hints (upstream ``framework/events.go``, ``types.go`` and the
plugins' ``isSchedulableAfter*`` functions)."""

from __future__ import annotations

import dataclasses

import pytest

from kubeprio.api.core import Node, Pod, Toleration
from kubeprio.scheduler import events as ev
from kubeprio.scheduler import queueing_hints as qh
from kubeprio.scheduler.events import ActionType as A
from kubeprio.scheduler.events import ClusterEvent, QueueingHint
from kubeprio.scheduler.events import EventResource as R
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.plugins import names
from tests.unit.scheduler.queue_helpers import bound, make_node, make_pod, relabel

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


# Upstream TestMatchClusterEvents: the incoming event must be the same or more specific.
@pytest.mark.parametrize(
    ("registered", "incoming", "matches"),
    [
        (ClusterEvent(R.NODE, A.ADD), ev.NODE_ADD, True),
        (ClusterEvent(R.NODE, A.UPDATE), ClusterEvent(R.NODE, A.UPDATE_NODE_LABEL), True),
        (ClusterEvent(R.NODE, A.UPDATE_NODE_LABEL), ClusterEvent(R.NODE, A.UPDATE), False),
        (
            ClusterEvent(R.NODE, A.ADD | A.UPDATE_NODE_TAINT),
            ClusterEvent(R.NODE, A.UPDATE_NODE_TAINT),
            True,
        ),
        (ClusterEvent(R.NODE, A.ADD), ClusterEvent(R.NODE, A.DELETE), False),
        (ClusterEvent(R.POD, A.DELETE), ev.ASSIGNED_POD_DELETE, True),
        (ClusterEvent(R.POD, A.DELETE), ev.UNSCHEDULED_POD_DELETE, True),
        (ClusterEvent(R.POD, A.ADD), ev.NODE_ADD, False),
        (ClusterEvent(R.WILDCARD, A.ALL), ev.NODE_ADD, True),
        (ClusterEvent(R.NODE, A.ALL), ev.UNSCHEDULABLE_TIMEOUT, False),
        (ClusterEvent(R.WILDCARD, A.ALL), ev.FORCE_ACTIVATE, True),
    ],
    ids=[
        "same",
        "registered-update-matches-specific-update",
        "specific-does-not-match-general-update",
        "one-shared-bit",
        "no-shared-bit",
        "pod-matches-assigned-pod",
        "pod-matches-unscheduled-pod",
        "resource-mismatch",
        "registered-wildcard-matches-all",
        "incoming-wildcard-only-matches-wildcard",
        "wildcard-wildcard",
    ],
)
def test_match_cluster_events(
    registered: ClusterEvent, incoming: ClusterEvent, matches: bool
) -> None:
    assert ev.match_cluster_events(registered, incoming) is matches


def test_labels() -> None:
    assert ev.NODE_ADD.label == "NodeAdd"
    assert ev.ASSIGNED_POD_DELETE.label == "AssignedPodDelete"
    assert ClusterEvent(R.NODE, A.UPDATE_NODE_ALLOCATABLE).label == "NodeUpdateNodeAllocatable"
    assert ev.UNSCHEDULABLE_TIMEOUT.label == "UnschedulableTimeout"
    assert ev.UNSCHEDULABLE_TIMEOUT.is_wildcard()


BASE_NODE = make_node(cpu="4", labels={"zone": "a"})


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (BASE_NODE, []),
        (make_node(cpu="8", labels={"zone": "a"}), [A.UPDATE_NODE_ALLOCATABLE]),
        (make_node(cpu="4", labels={"zone": "b"}), [A.UPDATE_NODE_LABEL]),
        (
            make_node(cpu="4", labels={"zone": "a"}, taints=[("k", "v", "NoSchedule")]),
            [A.UPDATE_NODE_TAINT],
        ),
        (make_node(cpu="2", labels={}), [A.UPDATE_NODE_ALLOCATABLE, A.UPDATE_NODE_LABEL]),
    ],
    ids=["unchanged", "allocatable", "labels", "taints", "several"],
)
def test_node_scheduling_properties_change(new: Node, expected: list[A]) -> None:
    # NodeSchedulingPropertiesChange.
    assert [e.action for e in ev.node_scheduling_properties_change(new, BASE_NODE)] == expected


def test_node_turning_schedulable_is_a_taint_update_and_the_reverse_is_nothing() -> None:
    # extractNodeSpecUnschedulableChange reports only unschedulable -> schedulable.
    cordoned = make_node(cpu="4", labels={"zone": "a"}, unschedulable=True)
    assert [e.action for e in ev.node_scheduling_properties_change(BASE_NODE, cordoned)] == [
        A.UPDATE_NODE_TAINT
    ]
    assert ev.node_scheduling_properties_change(cordoned, BASE_NODE) == []


BASE_POD = make_pod("p", cpu="2", labels={"app": "a"})


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (BASE_POD, [A.UPDATE]),
        (relabel(BASE_POD, app="b"), [A.UPDATE_POD_LABEL]),
        (make_pod("p", cpu="1", labels={"app": "a"}), [A.UPDATE_POD_SCALE_DOWN]),
        (make_pod("p", cpu="3", labels={"app": "a"}), [A.UPDATE]),
        (
            make_pod(
                "p", cpu="2", labels={"app": "a"}, tolerations=(Toleration(operator="Exists"),)
            ),
            [A.UPDATE_POD_TOLERATION],
        ),
    ],
    ids=["nothing-specific", "labels", "scale-down", "scale-up-is-general", "toleration-added"],
)
def test_pod_scheduling_properties_change(new: Pod, expected: list[A]) -> None:
    # PodSchedulingPropertiesChange: unscheduled pods get UnschedulablePod events.
    events = ev.pod_scheduling_properties_change(new, BASE_POD)
    assert [e.action for e in events] == expected
    assert {e.resource for e in events} == {R.UNSCHEDULED_POD}


def test_pod_events_of_bound_pods_are_assigned_pod_events() -> None:
    events = ev.pod_scheduling_properties_change(bound(relabel(BASE_POD, app="b")), bound(BASE_POD))
    assert [(e.resource, e.action) for e in events] == [(R.ASSIGNED_POD, A.UPDATE_POD_LABEL)]


def test_scheduling_gates_eliminated() -> None:
    gated = make_pod("p", gated=True)
    events = ev.pod_scheduling_properties_change(make_pod("p"), gated)
    assert [e.action for e in events] == [A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED]


# --- hint functions ----------------------------------------------------------------------------

TARGET = PodInfo.of(make_pod("target", cpu="2"))


@pytest.mark.parametrize(
    ("hint", "old", "new", "expected"),
    [
        (qh.fit_after_pod_event, bound(make_pod("x", cpu="1")), None, QUEUE),
        (qh.fit_after_pod_event, make_pod("x", cpu="1"), None, SKIP),
        (qh.fit_after_pod_event, make_pod("x", nominated="n1"), None, QUEUE),
        (qh.fit_after_pod_event, make_pod("target", cpu="3"), make_pod("target", cpu="2"), QUEUE),
        (
            qh.fit_after_pod_event,
            bound(make_pod("x", cpu="3")),
            bound(make_pod("x", cpu="1")),
            QUEUE,
        ),
        (qh.fit_after_pod_event, make_pod("x", cpu="3"), make_pod("x", cpu="1"), SKIP),
        (qh.fit_after_node_change, None, make_node(cpu="2"), QUEUE),
        (qh.fit_after_node_change, None, make_node(cpu="1"), SKIP),
        (qh.fit_after_node_change, make_node(cpu="2"), make_node(cpu="3"), QUEUE),
        (
            qh.fit_after_node_change,
            make_node(cpu="3", pods="10"),
            make_node(cpu="3", pods="20"),
            QUEUE,
        ),
        (qh.fit_after_node_change, make_node(cpu="3"), make_node(cpu="3", labels={"a": "b"}), SKIP),
        (
            qh.taint_toleration_after_node_change,
            None,
            make_node(taints=[("k", "v", "NoSchedule")]),
            SKIP,
        ),
        (
            qh.taint_toleration_after_node_change,
            None,
            make_node(taints=[("k", "v", "PreferNoSchedule")]),
            QUEUE,
        ),
        (
            qh.taint_toleration_after_node_change,
            make_node(taints=[("k", "v", "NoExecute")]),
            make_node(),
            QUEUE,
        ),
        (qh.taint_toleration_after_node_change, make_node(), make_node(labels={"a": "b"}), SKIP),
        (qh.node_unschedulable_after_node_change, None, make_node(), QUEUE),
        (qh.node_unschedulable_after_node_change, None, make_node(unschedulable=True), SKIP),
        (
            qh.node_unschedulable_after_node_change,
            make_node(unschedulable=True),
            make_node(),
            QUEUE,
        ),
        (qh.node_unschedulable_after_node_change, make_node(), make_node(), SKIP),
        (qh.node_name_after_node_add, None, make_node("any"), QUEUE),
        (
            qh.scheduling_gates_after_update,
            make_pod("target", gated=True),
            make_pod("target"),
            QUEUE,
        ),
        (qh.scheduling_gates_after_update, make_pod("other", gated=True), make_pod("other"), SKIP),
    ],
    ids=[
        "fit-bound-pod-deleted",
        "fit-unscheduled-pod-deleted",
        "fit-nominated-pod-deleted",
        "fit-self-scaled-down",
        "fit-assigned-pod-scaled-down",
        "fit-unscheduled-other-scaled-down",
        "fit-node-added-fits",
        "fit-node-added-too-small",
        "fit-node-cpu-grew",
        "fit-node-pod-count-grew",
        "fit-node-nothing-grew",
        "taint-untolerated-noschedule",
        "taint-prefer-no-schedule-ignored",
        "taint-removed",
        "taint-was-already-tolerated",
        "unschedulable-schedulable-node-added",
        "unschedulable-cordoned-node-added",
        "unschedulable-uncordoned",
        "unschedulable-no-change",
        "node-name-pod-names-no-node",
        "gates-removed-from-this-pod",
        "gates-removed-from-another-pod",
    ],
)
def test_hint_functions(
    hint: ev.QueueingHintFn, old: object, new: object, expected: QueueingHint
) -> None:
    assert hint(TARGET, old, new) is expected


def test_node_name_hint_checks_the_named_node() -> None:
    # NodeName.isSchedulableAfterNodeAdd: only the node the pod names helps.
    pinned = PodInfo.of(make_pod("pinned", node_name="node-a"))
    assert qh.node_name_after_node_add(pinned, None, make_node("node-a")) is QUEUE
    assert qh.node_name_after_node_add(pinned, None, make_node("node-b")) is SKIP


def test_tolerations_match_upstream_rules() -> None:
    # v1helper ToleratesTaint: empty effect/key with Exists match everything.
    pod = PodInfo.of(
        make_pod(
            "t",
            tolerations=(Toleration(key="k", operator="Equal", value="v", effect="NoSchedule"),),
        )
    )
    assert (
        qh.taint_toleration_after_node_change(
            pod, None, make_node(taints=[("k", "v", "NoSchedule")])
        )
        is QUEUE
    )
    assert (
        qh.taint_toleration_after_node_change(
            pod, None, make_node(taints=[("k", "w", "NoSchedule")])
        )
        is SKIP
    )
    assert (
        qh.taint_toleration_after_node_change(
            pod, None, make_node(taints=[("k", "v", "NoExecute")])
        )
        is SKIP
    )


def test_table_covers_filter_plugins_and_unknown_plugins_get_everything() -> None:
    for plugin in (
        names.NODE_RESOURCES_FIT,
        names.NODE_UNSCHEDULABLE,
        names.NODE_NAME,
        names.TAINT_TOLERATION,
        names.NODE_AFFINITY,
        names.NODE_PORTS,
        names.POD_TOPOLOGY_SPREAD,
        names.INTER_POD_AFFINITY,
        names.SCHEDULING_GATES,
    ):
        assert qh.events_to_register(plugin), plugin
    assert qh.events_to_register("SomethingElse") == qh.ALL_EVENTS
    assert set(names.ALL) >= set(qh.DEFAULT_EVENTS)


def test_writes_that_share_the_spec_are_label_or_general_updates() -> None:
    """A status write or a deletion mark keeps the spec object: upstream finds no request,
    gate or toleration change in it, so only a label change (or the general update) is
    reported, for bound and unscheduled pods alike."""
    marked = dataclasses.replace(
        BASE_POD,
        metadata=dataclasses.replace(BASE_POD.metadata, deletion_timestamp="2026-01-01T00:00:00Z"),
    )
    assert marked.spec is BASE_POD.spec
    assert [e.action for e in ev.pod_scheduling_properties_change(marked, BASE_POD)] == [A.UPDATE]
    relabelled = relabel(BASE_POD, app="b")
    assert relabelled.spec is BASE_POD.spec
    events = ev.pod_scheduling_properties_change(relabelled, BASE_POD)
    assert [e.action for e in events] == [A.UPDATE_POD_LABEL]
    bound_pod = bound(BASE_POD)
    bound_marked = dataclasses.replace(
        bound_pod,
        metadata=dataclasses.replace(bound_pod.metadata, deletion_timestamp="2026-01-01T00:00:00Z"),
    )
    events = ev.pod_scheduling_properties_change(bound_marked, bound_pod)
    assert [(e.resource, e.action) for e in events] == [(R.ASSIGNED_POD, A.UPDATE)]
