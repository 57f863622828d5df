"""SchedulingQueue: cluster events, queueing hints, in-flight replay, gating, activation.

Upstream tests cited are in ``pkg/scheduler/backend/queue/scheduling_queue_test.go`` unless
stated otherwise; hint rules are those of the plugins named (semantics §3.4-§3.5).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kubeprio.api.core import (
    Affinity,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    Toleration,
)
from kubeprio.api.meta import LabelSelector
from kubeprio.scheduler import events as ev
from kubeprio.scheduler.events import ClusterEvent, ClusterEventWithHint
from kubeprio.scheduler.framework import Code, QueuedPodInfo
from kubeprio.scheduler.nominator import NominatingInfo
from kubeprio.scheduler.plugins import names
from kubeprio.scheduler.queue import SchedulingQueue
from kubeprio.scheduler.queueing_hints import queueing_hint_map
from tests.conftest import ManualClock
from tests.unit.scheduler.queue_helpers import (
    FAKE_PLUGIN,
    HIGH,
    LOW,
    GatePlugin,
    LabelGate,
    bound,
    fail,
    make_node,
    make_pod,
    make_queue,
    pop_name,
    relabel,
    ungated,
    where,
)

FIT = names.NODE_RESOURCES_FIT
TAINT = names.TAINT_TOLERATION
AFFINITY = names.INTER_POD_AFFINITY
SPREAD = names.POD_TOPOLOGY_SPREAD
TAINTED = make_node(taints=[("dedicated", "gpu", "NoSchedule")])


def _rejected(
    queue: SchedulingQueue, target: Pod, *plugins: str, pending: tuple[str, ...] = ()
) -> QueuedPodInfo:
    queue.add(target)
    qpi = queue.pop()
    assert qpi is not None
    fail(queue, qpi, *plugins, pending=pending)
    assert where(queue, target) == "Unschedulable"
    return qpi


def _node_update(old: Node, new: Node) -> list[tuple[ClusterEvent, object, object]]:
    return [(event, old, new) for event in ev.node_scheduling_properties_change(new, old)]


@dataclass(frozen=True)
class EventCase:
    rejectors: tuple[str, ...]
    events: list[tuple[ClusterEvent, object | None, object | None]]
    wait: float
    expected: str
    pending: tuple[str, ...] = ()


TARGET = make_pod("target", cpu="2")
OTHER = make_pod("other", cpu="1")

EVENT_CASES = {
    # NodeResourcesFit: Node/Add|UpdateNodeAllocatable, Pod/Delete|UpdatePodScaleDown.
    "fit-node-added-big-enough-backing-off": EventCase(
        (FIT,), [(ev.NODE_ADD, None, make_node(cpu="4"))], 0, "Backoff"
    ),
    "fit-node-added-big-enough-backoff-over": EventCase(
        (FIT,), [(ev.NODE_ADD, None, make_node(cpu="4"))], 5, "Active"
    ),
    "fit-node-added-too-small": EventCase(
        (FIT,), [(ev.NODE_ADD, None, make_node(cpu="1"))], 5, "Unschedulable"
    ),
    "fit-node-added-without-pod-capacity": EventCase(
        (FIT,), [(ev.NODE_ADD, None, make_node(cpu="4", pods=None))], 5, "Unschedulable"
    ),
    "fit-node-allocatable-grew": EventCase(
        (FIT,), _node_update(make_node(cpu="1"), make_node(cpu="4")), 5, "Active"
    ),
    "fit-node-allocatable-shrank": EventCase(
        (FIT,), _node_update(make_node(cpu="8"), make_node(cpu="4")), 5, "Unschedulable"
    ),
    "fit-node-label-change-not-registered": EventCase(
        (FIT,), _node_update(make_node(), make_node(labels={"a": "b"})), 5, "Unschedulable"
    ),
    "fit-assigned-pod-deleted": EventCase(
        (FIT,), [(ev.ASSIGNED_POD_DELETE, bound(OTHER), None)], 5, "Active"
    ),
    "fit-unscheduled-pod-deleted": EventCase(
        (FIT,), [(ev.UNSCHEDULED_POD_DELETE, OTHER, None)], 5, "Unschedulable"
    ),
    "fit-nominated-pod-deleted": EventCase(
        (FIT,),
        [(ev.UNSCHEDULED_POD_DELETE, make_pod("other", nominated="node1"), None)],
        5,
        "Active",
    ),
    # TaintToleration: Node/Add|UpdateNodeTaint.
    "taint-removed": EventCase((TAINT,), _node_update(TAINTED, make_node()), 5, "Active"),
    "taint-node-added-untolerated": EventCase(
        (TAINT,), [(ev.NODE_ADD, None, TAINTED)], 5, "Unschedulable"
    ),
    "taint-node-added-clean": EventCase((TAINT,), [(ev.NODE_ADD, None, make_node())], 5, "Active"),
    # NodeUnschedulable: spec.unschedulable turning false is reported as a taint update.
    "node-became-schedulable": EventCase(
        (names.NODE_UNSCHEDULABLE,),
        _node_update(make_node(unschedulable=True), make_node()),
        5,
        "Active",
    ),
    "node-became-unschedulable": EventCase(
        (names.NODE_UNSCHEDULABLE,),
        [
            (
                ev.ClusterEvent(ev.EventResource.NODE, ev.ActionType.UPDATE_NODE_TAINT),
                make_node(),
                make_node(unschedulable=True),
            )
        ],
        5,
        "Unschedulable",
    ),
    # InterPodAffinity: Node/Add|UpdateNodeLabel, Pod/Add|UpdatePodLabel|Delete.
    "affinity-node-labels-changed": EventCase(
        (AFFINITY,), _node_update(make_node(), make_node(labels={"zone": "a"})), 5, "Active"
    ),
    "affinity-node-allocatable-changed": EventCase(
        (AFFINITY,), _node_update(make_node(cpu="1"), make_node(cpu="4")), 5, "Unschedulable"
    ),
    "affinity-assigned-pod-deleted": EventCase(
        (AFFINITY,), [(ev.ASSIGNED_POD_DELETE, bound(OTHER), None)], 5, "Active"
    ),
    # Several rejectors: any one plugin's Queue is enough.
    "two-rejectors-one-interested": EventCase(
        (TAINT, FIT), [(ev.NODE_ADD, None, make_node(cpu="1"))], 5, "Active"
    ),
    # Pending plugins requeue straight to activeQ, skipping backoff.
    "pending-plugin-queue-immediately": EventCase(
        (), [(ev.NODE_ADD, None, make_node(cpu="4"))], 0, "Active", pending=(FIT,)
    ),
    # A plugin absent from the hint map registered nothing: only the leftover flush helps.
    "unknown-plugin-not-in-map": EventCase(
        ("Custom",), [(ev.NODE_ADD, None, make_node())], 5, "Unschedulable"
    ),
    # Wildcards move everyone (after backoff)...
    "wildcard-unschedulable-timeout": EventCase(
        (FIT,), [(ev.UNSCHEDULABLE_TIMEOUT, None, None)], 0, "Backoff"
    ),
    # ...unless they carry another pod.
    "wildcard-force-activate-for-another-pod": EventCase(
        (FIT,), [(ev.FORCE_ACTIVATE, None, OTHER)], 5, "Unschedulable"
    ),
    "wildcard-force-activate-for-this-pod": EventCase(
        (FIT,), [(ev.FORCE_ACTIVATE, None, TARGET)], 5, "Active"
    ),
}


@pytest.mark.parametrize("case", list(EVENT_CASES.values()), ids=list(EVENT_CASES))
def test_cluster_event_moves_pod_per_rejector_hints(clock: ManualClock, case: EventCase) -> None:
    # TestPriorityQueue_MoveAllToActiveOrBackoffQueue / isPodWorthRequeuing.
    queue = make_queue(clock)
    _rejected(queue, TARGET, *case.rejectors, pending=case.pending)
    clock.advance(case.wait)
    for event, old, new in case.events:
        queue.move_all_to_active_or_backoff(event, old, new)
    assert where(queue, TARGET) == case.expected


def test_unknown_plugin_registered_for_everything_when_in_the_map(clock: ManualClock) -> None:
    # A plugin without EventsToRegister is interested in every Pod and Node event.
    queue = make_queue(clock, queueing_hints=queueing_hint_map(["Custom"]))
    _rejected(queue, TARGET, "Custom")
    clock.advance(5)
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    assert where(queue, TARGET) == "Active"


def test_event_no_plugin_registered_is_ignored_and_not_logged(clock: ManualClock) -> None:
    # isEventOfInterest: an event no enabled plugin registered returns early.
    queue = make_queue(clock, queueing_hints=queueing_hint_map([FIT]))
    queue.add(TARGET)
    qpi = queue.pop()
    assert qpi is not None
    queue.move_all_to_active_or_backoff(ev.NODE_DELETE, make_node(), None)
    fail(queue, qpi, FIT)
    assert where(queue, TARGET) == "Unschedulable"


def test_pre_check_filters_candidates(clock: ManualClock) -> None:
    # MoveAllToActiveOrBackoffQueue's preCheck.
    queue = make_queue(clock)
    a, b = make_pod("a", cpu="1"), make_pod("b", cpu="1")
    _rejected(queue, a, FIT)
    _rejected(queue, b, FIT)
    clock.advance(5)
    queue.move_all_to_active_or_backoff(
        ev.NODE_ADD, None, make_node(), pre_check=lambda p: p.metadata.name == "b"
    )
    assert (where(queue, a), where(queue, b)) == ("Unschedulable", "Active")


def test_events_move_pods_in_pool_order(clock: ManualClock) -> None:
    # Equal priority and timestamp: the order pods entered the pool decides (upstream: map order).
    queue = make_queue(clock)
    pods = [make_pod(f"p{i}", cpu="1") for i in range(5)]
    for p in pods:
        queue.add(p)
    popped = [queue.pop() for _ in pods]
    for qpi in reversed(popped):
        assert qpi is not None
        fail(queue, qpi, FIT if qpi.pod.metadata.name != "p2" else AFFINITY)
    clock.advance(5)
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    assert [pop_name(queue) for _ in range(5)] == ["p4", "p3", "p2", "p1", "p0"]


# --- own updates of pooled pods --------------------------------------------------------------


@pytest.mark.parametrize(
    ("rejector", "change", "expected"),
    [
        (AFFINITY, lambda p: relabel(p, app="web"), "Active"),
        (FIT, lambda p: relabel(p, app="web"), "Unschedulable"),
        (FIT, lambda p: make_pod("target", cpu="1"), "Active"),
        (
            TAINT,
            lambda p: make_pod("target", cpu="2", tolerations=(Toleration(operator="Exists"),)),
            "Active",
        ),
        (names.SCHEDULING_GATES, lambda p: relabel(p, app="web"), "Unschedulable"),
    ],
    ids=[
        "label-change-helps-inter-pod-affinity",
        "label-change-does-not-help-fit",
        "own-scale-down-helps-fit",
        "toleration-added-helps-taint-toleration",
        "label-change-does-not-help-scheduling-gates",
    ],
)
def test_update_of_pooled_pod_is_judged_by_pod_update_events(
    clock: ManualClock, rejector: str, change: object, expected: str
) -> None:
    # Update with queueing hints: PodSchedulingPropertiesChange events go through the hints.
    queue = make_queue(clock)
    _rejected(queue, TARGET, rejector)
    clock.advance(5)
    assert callable(change)
    queue.update(TARGET, change(TARGET))
    assert where(queue, TARGET) == expected
    assert len(queue) == 1


def test_update_of_pooled_pod_still_backing_off_goes_to_backoff(clock: ManualClock) -> None:
    queue = make_queue(clock)
    _rejected(queue, TARGET, AFFINITY)
    queue.update(TARGET, relabel(TARGET, app="web"))
    assert where(queue, TARGET) == "Backoff"
    assert len(queue) == 1
    assert queue.unschedulable_pods() == []


# --- in-flight event replay ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rejectors", "during", "expected"),
    [
        ((FIT,), [], "Unschedulable"),
        ((FIT,), [(ev.NODE_ADD, None, make_node())], "Backoff"),
        ((FIT,), _node_update(make_node(), make_node(labels={"a": "b"})), "Unschedulable"),
        ((AFFINITY,), _node_update(make_node(), make_node(labels={"a": "b"})), "Backoff"),
        ((), [], "Backoff"),
    ],
    ids=[
        "no-event-meanwhile",
        "relevant-event-meanwhile",
        "irrelevant-event-meanwhile",
        "relevant-label-event-meanwhile",
        "error-goes-to-error-backoff",
    ],
)
def test_events_seen_in_flight_are_replayed_on_failure(
    clock: ManualClock,
    rejectors: tuple[str, ...],
    during: list[tuple[ClusterEvent, object, object]],
    expected: str,
) -> None:
    # determineSchedulingHintForInFlightPod (TestPriorityQueue_AddUnschedulableIfNotPresent
    # with in-flight events).
    queue = make_queue(clock)
    queue.add(TARGET)
    qpi = queue.pop()
    assert qpi is not None
    for event, old, new in during:
        queue.move_all_to_active_or_backoff(event, old, new)
    fail(queue, qpi, *rejectors)
    assert where(queue, TARGET) == expected


def test_only_events_after_the_pods_pop_are_replayed(clock: ManualClock) -> None:
    queue = make_queue(clock)
    first, second = (
        make_pod("first", priority=HIGH, cpu="1"),
        make_pod("second", priority=LOW, cpu="1"),
    )
    queue.add(first)
    queue.add(second)
    a = queue.pop()
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())  # while only `first` flies
    b = queue.pop()
    assert a is not None
    assert b is not None
    fail(queue, b, FIT)
    fail(queue, a, FIT)
    assert (where(queue, first), where(queue, second)) == ("Backoff", "Unschedulable")


def test_events_before_pop_are_not_replayed(clock: ManualClock) -> None:
    queue = make_queue(clock)
    queue.add(TARGET)
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    qpi = queue.pop()
    assert qpi is not None
    fail(queue, qpi, FIT)
    assert where(queue, TARGET) == "Unschedulable"


def test_own_update_in_flight_is_replayed(clock: ManualClock) -> None:
    # Update of an in-flight pod: addEventsIfPodInFlight records the pod-update events.
    queue = make_queue(clock)
    queue.add(TARGET)
    qpi = queue.pop()
    assert qpi is not None
    queue.update(TARGET, make_pod("target", cpu="2", tolerations=(Toleration(operator="Exists"),)))
    fail(queue, qpi, TAINT)
    assert where(queue, TARGET) == "Backoff"


def test_pending_plugin_with_relevant_event_requeues_immediately(clock: ManualClock) -> None:
    queue = make_queue(clock)
    queue.add(TARGET)
    qpi = queue.pop()
    assert qpi is not None
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    fail(queue, qpi, pending=(FIT,), code=Code.PENDING)
    assert where(queue, TARGET) == "Active"


def test_in_flight_log_is_pruned_when_pods_are_done(clock: ManualClock) -> None:
    queue = make_queue(clock)
    for name in ("a", "b"):
        queue.add(make_pod(name))
    a, b = queue.pop(), queue.pop()
    assert a is not None
    assert b is not None
    for _ in range(3):
        queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    in_flight = queue._in_flight
    assert in_flight.log_size() == 5
    queue.done(b.pod_info.uid)
    assert in_flight.log_size() == 5  # `a` still needs the three events after its marker
    queue.done(a.pod_info.uid)
    assert in_flight.log_size() == 0
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    assert in_flight.log_size() == 0  # nothing in flight: nothing recorded


# --- PreEnqueue gating -----------------------------------------------------------------------


def test_gated_pod_waits_in_pool_until_its_gates_are_removed(clock: ManualClock) -> None:
    # TestPriorityQueue_addToActiveQ / SchedulingGates: gated pods sit in unschedulablePods
    # with GatingPlugin set, ignore other events and the leftover flush.
    gate = GatePlugin()
    queue = make_queue(clock, pre_enqueue=[gate])
    gated = make_pod("gated", gated=True)
    queue.add(gated)
    qpi = queue.get("gated", "default")
    assert qpi is not None
    assert (where(queue, gated), qpi.gating_plugin) == ("Unschedulable", names.SCHEDULING_GATES)
    assert qpi.unschedulable_plugins == {names.SCHEDULING_GATES}
    assert queue.pop() is None
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    clock.advance(301)
    queue.flush_unschedulable_leftover()
    assert queue.next_wakeup() is None
    queue.update(gated, relabel(gated, still="gated"))
    assert where(queue, gated) == "Unschedulable"
    queue.update(gated, ungated(gated))
    assert where(queue, gated) == "Active"
    assert qpi.gating_plugin == ""
    assert pop_name(queue) == "gated"


def test_gating_plugin_runs_first_and_first_gate_wins(clock: ManualClock) -> None:
    # runPreEnqueuePlugins: the recorded gating plugin is retried first; iteration stops
    # at the first plugin that gates.
    queue = make_queue(clock, pre_enqueue=[LabelGate("one"), LabelGate("two")])
    p = make_pod("p", labels={"hold": "two"})
    queue.add(p)
    qpi = queue.get("p", "default")
    assert qpi is not None
    assert qpi.gating_plugin == "two"
    queue.activate([p])  # still held by "two"
    assert where(queue, p) == "Unschedulable"
    queue.update(p, relabel(p, hold="one"))  # no plugin registered the label change
    queue.activate([p])
    assert qpi.gating_plugin == "one"
    queue.update(p, relabel(p))
    queue.activate([p])
    assert where(queue, p) == "Active"


def test_pre_enqueue_runs_when_entering_backoff_not_when_leaving(clock: ManualClock) -> None:
    # moveToBackoffQ with SchedulerPopFromBackoffQ runs PreEnqueue; flushing from backoffQ
    # to activeQ skips it.
    gate = GatePlugin()
    queue = make_queue(clock, pre_enqueue=[gate])
    queue.add(TARGET)
    qpi = queue.pop()
    assert qpi is not None
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    calls = gate.calls
    fail(queue, qpi, FIT)
    assert (where(queue, TARGET), gate.calls) == ("Backoff", calls + 1)
    clock.advance(5)
    queue.flush_backoff_completed()
    assert (where(queue, TARGET), gate.calls) == ("Active", calls + 1)


# --- Activate --------------------------------------------------------------------------------


@pytest.mark.parametrize("place", ["Unschedulable", "Backoff", "Active"])
def test_activate_moves_pod_to_active_q(clock: ManualClock, place: str) -> None:
    # TestPriorityQueue_Activate.
    queue = make_queue(clock)
    queue.add(TARGET)
    if place != "Active":
        qpi = queue.pop()
        assert qpi is not None
        if place == "Backoff":
            queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
        fail(queue, qpi, FIT)
    assert where(queue, TARGET) == place
    queue.activate([TARGET, make_pod("unknown")])
    assert where(queue, TARGET) == "Active"
    assert where(queue, make_pod("unknown")) is None


def test_activate_of_in_flight_pod_requeues_it_when_it_returns(clock: ManualClock) -> None:
    # Activate: "If a pod isn't found in unschedulablePods or backoffQ and it's in-flight,
    # the wildcard event is registered so that the pod will be requeued when it comes back."
    queue = make_queue(clock)
    queue.add(TARGET)
    qpi = queue.pop()
    assert qpi is not None
    queue.activate([TARGET])
    fail(queue, qpi, FIT)
    assert where(queue, TARGET) == "Backoff"


# --- assigned pod events ---------------------------------------------------------------------


def _with_affinity_to(name: str, namespace: str = "default", **labels: str) -> Pod:
    term = PodAffinityTerm(label_selector=LabelSelector(match_labels=labels), topology_key="zone")
    affinity = Affinity(
        pod_affinity=PodAffinity(required_during_scheduling_ignored_during_execution=(term,))
    )
    return make_pod(name, namespace=namespace, affinity=affinity)


def test_assigned_pod_added_moves_only_pods_with_matching_cross_topology_terms(
    clock: ManualClock,
) -> None:
    # TestPriorityQueue_AssignedPodAdded / getUnschedulablePodsWithCrossTopologyTerm.
    queue = make_queue(clock)
    wants_db = _with_affinity_to("wants-db", app="db")
    wants_cache = _with_affinity_to("wants-cache", app="cache")
    spread_here = make_pod("spread-here")
    spread_elsewhere = make_pod("spread-elsewhere", namespace="other")
    fit_only = make_pod("fit-only", cpu="1")
    for target, rejector in [
        (wants_db, AFFINITY),
        (wants_cache, AFFINITY),
        (spread_here, SPREAD),
        (spread_elsewhere, SPREAD),
        (fit_only, FIT),
    ]:
        _rejected(queue, target, rejector)
    clock.advance(5)
    queue.assigned_pod_added(bound(make_pod("db-0", labels={"app": "db"})))
    assert {
        p.metadata.name: where(queue, p)
        for p in (wants_db, wants_cache, spread_here, spread_elsewhere, fit_only)
    } == {
        "wants-db": "Active",
        "wants-cache": "Unschedulable",
        "spread-here": "Active",
        "spread-elsewhere": "Unschedulable",
        "fit-only": "Unschedulable",
    }


def test_assigned_pod_scale_down_considers_every_pod(clock: ManualClock) -> None:
    # AssignedPodUpdated: a scale-down skips the cross-topology pre-filter.
    queue = make_queue(clock)
    _rejected(queue, TARGET, FIT)
    clock.advance(5)
    old = bound(make_pod("big", cpu="3"))
    new = bound(make_pod("big", cpu="1"))
    (event,) = ev.pod_scheduling_properties_change(new, old)
    queue.assigned_pod_updated(old, new, event)
    assert where(queue, TARGET) == "Active"


# --- nominations kept by the queue -----------------------------------------------------------


def test_queue_keeps_nominator_in_step(clock: ManualClock) -> None:
    # TestPriorityQueue_NominatedPodsForNode / UpdateNominatedPodForNode / NominatedPodDeleted.
    queue = make_queue(clock)
    nominated = make_pod("nominated", nominated="node1")
    queue.add(nominated)
    queue.add(make_pod("plain"))
    assert [i.pod.metadata.name for i in queue.nominated_pods_for_node("node1")] == ["nominated"]
    queue.update(nominated, relabel(nominated, version="2"))
    (info,) = queue.nominated_pods_for_node("node1")
    assert info.pod.metadata.labels == {"version": "2"}  # the freshest queued copy
    queue.delete(nominated)
    assert queue.nominated_pods_for_node("node1") == []


def test_in_memory_nomination_survives_status_less_update(clock: ManualClock) -> None:
    # UpdateNominatedPod: preemption nominated the pod before its status patch arrived.
    queue = make_queue(clock)
    p = make_pod("preemptor", cpu="1")
    queue.add(p)
    qpi = queue.pop()
    assert qpi is not None
    queue.add_nominated_pod(qpi.pod_info, NominatingInfo("node1"))
    assert queue.nominated_pods_for_node("node1")[0] is qpi.pod_info  # in flight
    fail(queue, qpi, FIT)
    queue.update(p, relabel(p, seen="yes"))
    assert [i.pod.metadata.labels for i in queue.nominated_pods_for_node("node1")] == [
        {"seen": "yes"}
    ]
    queue.delete_nominated_pod_if_exists(p)  # e.g. bound (assumed) elsewhere
    assert queue.nominated_pods_for_node("node1") == []


def test_custom_hint_overrides_table_row(clock: ManualClock) -> None:
    # A plugin may bring its own EventsToRegister row.
    never = ClusterEventWithHint(ev.NODE_ADD, lambda info, old, new: ev.QueueingHint.QUEUE_SKIP)
    queue = make_queue(clock, queueing_hints=queueing_hint_map([FIT], {FIT: [never]}))
    _rejected(queue, TARGET, FIT)
    clock.advance(5)
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node(cpu="64"))
    assert where(queue, TARGET) == "Unschedulable"


def test_fake_plugin_table_entry_is_used(clock: ManualClock) -> None:
    queue = make_queue(clock)
    _rejected(queue, TARGET, FAKE_PLUGIN)
    clock.advance(5)
    queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, make_node())
    assert where(queue, TARGET) == "Active"
