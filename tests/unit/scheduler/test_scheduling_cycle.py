"""The scheduling cycle around preemption (semantics §3.7, §4.1, §4.9, §5).

Upstream ``pkg/scheduler/schedule_one.go`` (``schedulingCycle``, ``findNodesThatFitPod``,
``numFeasibleNodesToFind``, ``handleSchedulingFailure``, ``updatePod``) with its tests
``TestNumFeasibleNodesToFind`` and ``TestSchedulerSchedulePod``, the runtime's
``RunFilterPluginsWithNominatedPods`` and the integration tests ``TestNominatedNode`` and
``TestPreferNominatedNode`` (``test/integration/scheduler/preemption/nominatednodename``).
Everything runs through the real scheduler and the in-process API.
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Node, Pod
from kubeprio.scheduler.framework import Code, CycleState
from kubeprio.scheduler.schedulingcycle import num_feasible_nodes_to_find
from tests.builders import affinity_term, label_selector, node, pod
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LOW,
    MID,
    Harness,
    both_paths,  # noqa: F401
    node_obj,
)

pytestmark = pytest.mark.usefixtures("both_paths")


def _cpu_node(name, cpu="1", **extra):
    return node_obj(name, {"cpu": cpu, "memory": "4Gi", **extra})


def _running(name, prio, cpu, on, **kw):
    builder = pod(name).priority(prio).requests(cpu=cpu, **kw).on(on)
    return builder.build()


def _pending(name, prio, cpu, **kw):
    return pod(name).priority(prio).requests(cpu=cpu, **kw).build()


def _condition(h, name):
    current = h.pod(name)
    return next(c for c in current.status.conditions or () if c.type == "PodScheduled")


# --- the FailedScheduling text --------------------------------------------------------------


def _three_equal(h):
    h.add_nodes(*(_cpu_node(f"node{i}") for i in range(1, 4)))
    for i in range(1, 4):
        h.add_pod(_running(f"busy{i}", MID, "1", f"node{i}"))
    h.add_pod(_pending("p", MID, "1"))


def _three_lower(h):
    h.add_nodes(*(_cpu_node(f"node{i}") for i in range(1, 4)))
    for i in range(1, 4):
        h.add_pod(_running(f"low{i}", LOW, "1", f"node{i}"))
    h.add_pod(_pending("p", HIGH, "1"))


def _string_sorted(h):
    h.add_nodes(*(_cpu_node(f"full{i}") for i in range(2)))
    h.add_nodes(*(node(f"cordoned{i:02d}").unschedulable().build() for i in range(10)))
    for i in range(2):
        h.add_pod(_running(f"busy{i}", MID, "1", f"full{i}"))
    h.add_pod(_pending("p", MID, "1"))


def _two_resources(h):
    h.add_nodes(node_obj("node1", {"cpu": "1", "memory": "1Gi"}))
    h.add_pod(pod("busy").priority(MID).requests(cpu="1", memory="1Gi").on("node1").build())
    h.add_pod(pod("p").priority(MID).requests(cpu="1", memory="1Gi").build())


def _not_enough_even_without_lower(h):
    h.add_nodes(_cpu_node("node1", "4"))
    h.add_pod(_running("low1", LOW, "1", "node1"))
    h.add_pod(_running("low2", LOW, "1", "node1"))
    h.add_pod(_running("top", HIGH, "2", "node1"))
    h.add_pod(_pending("p", MID, "3"))


def _larger_than_any_node(h):
    h.add_nodes(_cpu_node("node1", "1"), _cpu_node("node2", "1"))
    h.add_pod(_running("low1", LOW, "1", "node1"))
    h.add_pod(_pending("p", HIGH, "2"))


def _name_affinity(*terms):
    from tests.builders import node_term, requirement

    return (
        pod("p")
        .priority(HIGH)
        .requests(cpu="1")
        .required_node_affinity(
            *(
                node_term(fields=tuple(requirement("metadata.name", "In", n) for n in names))
                for names in terms
            )
        )
        .build()
    )


def _pre_filter_conflict(h):
    h.add_nodes(*(_cpu_node(f"node{i}") for i in range(1, 4)))
    h.add_pod(_running("low", LOW, "1", "node1"))
    h.add_pod(_name_affinity(("node1", "node2")))


def _pre_filter_narrows_to_nothing(h):
    h.add_nodes(*(_cpu_node(f"node{i}") for i in range(1, 4)))
    h.add_pod(_running("low", LOW, "1", "node1"))
    h.add_pod(_name_affinity(("node9",)))


def _no_nodes(h):
    h.add_pod(_pending("p", HIGH, "1"))


def _never(h):
    h.add_nodes(_cpu_node("node1"))
    h.add_pod(_running("low", LOW, "1", "node1"))
    h.add_pod(pod("p").priority(HIGH).requests(cpu="1").preemption_policy("Never").build())


MESSAGE_CASES = [
    (
        "no victims on any node (the issue's example)",
        _three_equal,
        "0/3 nodes are available: 3 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
    ),
    (
        "successful preemption adds no PostFilter message",
        _three_lower,
        "0/3 nodes are available: 3 Insufficient cpu.",
    ),
    (
        "the histogram is sorted as strings, absent nodes are not helpful",
        _string_sorted,
        "0/12 nodes are available: 10 node(s) were unschedulable, 2 Insufficient cpu. "
        "preemption: 0/12 nodes are available: 10 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod.",
    ),
    (
        "a node failing two resources counts both",
        _two_resources,
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    (
        "cannot fit even with every lower-priority pod gone",
        _not_enough_even_without_lower,
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
    ),
    (
        "a request above allocatable is unresolvable: no node is a candidate",
        _larger_than_any_node,
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    ),
    ("no nodes at all", _no_nodes, "no nodes available to schedule pods"),
    (
        "PreFilter rejection: its message replaces the histogram",
        _pre_filter_conflict,
        "0/3 nodes are available: pod affinity terms conflict. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    ),
    (
        "PreFilter narrowed to nodes that do not exist",
        _pre_filter_narrows_to_nothing,
        "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    ),
    (
        "preemptionPolicy Never",
        _never,
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never.",
    ),
]


@pytest.mark.parametrize(
    ("build", "message"), [pytest.param(c[1], c[2], id=c[0]) for c in MESSAGE_CASES]
)
def test_failed_scheduling_message(build, message):
    """``handleSchedulingFailure``: a Warning ``FailedScheduling`` event (action
    Scheduling) and the ``PodScheduled=False`` condition (reason Unschedulable) carry the
    FitError text, then (after a space) the PostFilter message, word for word."""
    h = Harness().start()
    build(h)
    h.settle()
    [event] = h.events(reason="FailedScheduling", name="p")
    assert event.message == message
    assert event.type == "Warning"
    assert event.action == "Scheduling"
    condition = _condition(h, "p")
    assert (condition.status, condition.reason, condition.message) == (
        "False",
        "Unschedulable",
        message,
    )


# --- what happens to status.nominatedNodeName (§4.1 table, TestNominatedNode) --------------


def _nominate(h, name, node_name):
    h.api.patch(
        Pod,
        name,
        {"status": {"nominatedNodeName": node_name}},
        namespace="default",
        subresource="status",
    )
    h.pump()


def test_success_sets_the_nomination():
    h = Harness().start()
    _three_lower(h)
    h.settle()
    nominated = h.nominated("p")
    assert nominated in {"node1", "node2", "node3"}
    assert h.scheduler.queue.nominator.nominated_node(h.pod("p").metadata.uid) == nominated
    assert h.node_of("p") is None


def test_no_candidate_clears_the_nomination():
    """PostFilter found no candidate: result ``""`` clears an earlier nomination."""
    h = Harness().start()
    _three_equal(h)
    _nominate(h, "p", "node2")
    h.settle()
    assert h.nominated("p") is None
    assert h.scheduler.queue.nominator.nominated_node(h.pod("p").metadata.uid) is None


def test_node_deletion_clears_the_nomination():
    """``TestNominatedNode`` "mid-priority pod preempts low-priority pod, followed by a node
    deletion": ``ErrNoNodesAvailable`` carries ``clearNominatedNode``."""
    h = Harness().start()
    h.add_nodes(_cpu_node("fake-node"))
    h.add_pod(_running("low", LOW, "1", "fake-node"))
    h.add_pod(_pending("medium", MID, "1"))
    h.settle()
    assert h.nominated("medium") == "fake-node"
    h.api.delete(Node, "fake-node")
    h.force_delete("low")
    h.settle()
    assert h.messages("medium")[-1] == "no nodes available to schedule pods"
    assert h.nominated("medium") is None


def test_nominated_node_deleted_and_no_candidate_clears_the_nomination():
    """``TestNominatedNode`` "... but could not find candidates after the nominated node is
    deleted": the only node left is tainted (UnschedulableAndUnresolvable)."""
    h = Harness().start()
    h.add_nodes(
        node("taint-node")
        .resources({"cpu": "1", "pods": "32"})
        .taint("taint-node", "true", "NoSchedule")
        .build()
    )
    h.add_nodes(_cpu_node("fake-node"))
    h.add_pod(_running("low", LOW, "1", "fake-node"))
    h.add_pod(_pending("medium", MID, "1"))
    h.settle()
    assert h.nominated("medium") == "fake-node"
    h.api.delete(Node, "fake-node")
    h.force_delete("low")  # podNamesToDelete: wakes the preemptor up
    h.settle()
    assert h.nominated("medium") is None
    assert h.messages("medium")[-1].endswith(
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_preemption_disabled_clears_the_nomination():
    """Without PostFilter plugins ``schedulingCycle`` returns ``clearNominatedNode``."""
    from kubeprio.scheduler.setup import load_config

    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}},
                }
            ],
        }
    )
    h = Harness(config=config).start()
    _three_lower(h)
    _nominate(h, "p", "node1")
    h.settle()
    # Each attempt saw another resourceVersion of the pod (the nomination, then its
    # clearing), so each is an event of its own (client-go's events getKey).
    assert set(h.messages("p")) == {"0/3 nodes are available: 3 Insufficient cpu."}
    assert h.nominated("p") is None
    assert h.events(reason="Preempted") == []


# --- the nominated node is tried first (§3.7, TestPreferNominatedNode) ---------------------


def test_nominated_node_that_fits_wins_without_scoring():
    """A nominated node that passes every filter is used even though scoring would prefer
    the emptier node."""
    h = Harness().start()
    h.add_nodes(_cpu_node("node-1", "8"), _cpu_node("node-2", "8"))
    h.add_pod(_running("busy", MID, "6", "node-2"))
    h.add_pod(_pending("p", HIGH, "1"))
    _nominate(h, "p", "node-2")
    h.settle()
    assert h.node_of("p") == "node-2"


def test_nominated_node_that_fails_falls_back_to_the_others():
    """``TestPreferNominatedNode`` "nominated node cannot pass all the filters, preemptor
    should find a different node"."""
    h = Harness().start()
    h.add_nodes(_cpu_node("node-1", "1"), _cpu_node("node-2", "1"))
    h.add_pod(_running("low-pod", LOW, "1", "node-1"))
    h.add_pod(_pending("preemptor-pod1", HIGH, "1"))
    _nominate(h, "preemptor-pod1", "node-1")
    h.settle()
    assert h.node_of("preemptor-pod1") == "node-2"
    assert h.events(reason="Preempted") == []


# --- nominated pods during filtering (§5, RunFilterPluginsWithNominatedPods) ----------------

APP_X = {"app": "x"}


FILTER_CASES = [
    ("no nominated pod: fits", None, {}, None),
    ("lower-priority nominated pod is ignored", LOW, {}, None),
    ("equal-priority nominated pod takes the room", MID, {}, "Insufficient cpu"),
    ("higher-priority nominated pod takes the room", HIGH, {}, "Insufficient cpu"),
    (
        "pass 2 without the nominated pod: affinity to it alone is not enough",
        HIGH,
        {"labels": APP_X, "cpu": "0"},
        "node(s) didn't match pod affinity rules",
    ),
    (
        "pass 1 with the nominated pod: its anti-affinity rejects the pod",
        HIGH,
        {"anti": True, "cpu": "0", "own_anti": True},
        "node(s) didn't satisfy existing pods anti-affinity rules",
    ),
    (
        # Upstream InterPodAffinity.PreFilter returns Skip when no existing pod has required
        # anti-affinity and the pod has no affinity terms; the nominated pod is then only
        # added through the other plugins' extensions, so its anti-affinity is not seen.
        "InterPodAffinity skipped: a nominated pod's anti-affinity is not consulted",
        HIGH,
        {"anti": True, "cpu": "0"},
        None,
    ),
]


@pytest.mark.parametrize(
    ("nominated_prio", "opts", "reason"), [pytest.param(*c[1:], id=c[0]) for c in FILTER_CASES]
)
def test_filter_with_nominated_pods(nominated_prio, opts, reason):
    """Upstream ``RunFilterPluginsWithNominatedPods`` / ``addGENominatedPods``: pods of
    >= priority nominated to the node are added for a first pass; if any were added the
    pod must also pass without them."""
    h = Harness().start()
    h.add_nodes(node_obj("node1", {"cpu": "2"}, hostname="node1"))
    h.add_pod(_running("busy", LOW, "1", "node1"))
    if nominated_prio is not None:
        builder = pod("nominee").priority(nominated_prio).requests(cpu=opts.get("cpu", "1"))
        if opts.get("labels"):
            builder = builder.labels(**opts["labels"])
        if opts.get("anti"):
            builder = builder.pod_anti_affinity(
                affinity_term("hostname", label_selector({"app": "p"}))
            )
        nominee = h.pod_info(builder.build())
        h.scheduler.framework.nominated_pods = lambda name: [nominee] if name == "node1" else []
    target = pod("p").priority(MID).requests(cpu="1").labels(app="p")
    if opts.get("own_anti"):
        target = target.pod_anti_affinity(
            affinity_term("hostname", label_selector({"app": "unrelated"}))
        )
    if opts.get("labels"):
        target = target.pod_affinity(affinity_term("hostname", label_selector(APP_X)))
    info = h.pod_info(target.build())
    state = CycleState()
    nodes = h.scheduler.node_infos()
    h.scheduler.framework.run_pre_filter_plugins(state, info, nodes)
    status = h.scheduler.framework.run_filter_plugins_with_nominated_pods(
        state, info, h.scheduler.node_info("node1")
    )
    if reason is None:
        assert status is None
    else:
        assert status is not None
        assert reason in status.reasons
        assert status.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


def test_pod_does_not_count_its_own_nomination():
    """The pod's own nomination (same UID) is not added against it."""
    h = Harness().start()
    h.add_nodes(node_obj("node1", {"cpu": "2"}))
    h.add_pod(_running("busy", LOW, "1", "node1"))
    info = h.pod_info(pod("p").priority(MID).requests(cpu="1").build())
    h.scheduler.framework.nominated_pods = lambda name: [info]
    state = CycleState()
    h.scheduler.framework.run_pre_filter_plugins(state, info, h.scheduler.node_infos())
    node_info = h.scheduler.node_info("node1")
    assert (
        h.scheduler.framework.run_filter_plugins_with_nominated_pods(state, info, node_info) is None
    )


def test_lower_priority_pod_does_not_take_the_nominated_room():
    """Integration ``TestPreemptionStarvation`` in small: the room a nominated (gated,
    so never tried) pod waits for is not given to a pending pod of lower priority, while a
    pod of higher priority may take it."""
    h = Harness().start()
    h.add_nodes(_cpu_node("node1", "2"))
    h.add_pod(_running("busy", LOW, "1", "node1"))
    blocked = h.pod_info(
        pod("nominee")
        .priority(HIGH)
        .requests(cpu="1")
        .spec(extra={"schedulingGates": [{"name": "example.com/hold"}]})
        .build()
    )
    _nominate(h, "nominee", "node1")
    assert h.scheduler.queue.nominator.nominated_node(blocked.uid) == "node1"
    h.add_pod(_pending("late", MID, "1"))
    h.settle()
    assert h.node_of("late") is None
    assert h.messages("late")[0].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    h.add_pod(_pending("urgent", HIGH + 1, "1"))
    h.settle()
    assert h.node_of("urgent") == "node1"


# --- how many nodes are examined, and from where -------------------------------------------


@pytest.mark.parametrize(
    ("percentage", "nodes", "want"),
    [
        pytest.param(None, 10, 10, id="not set, nodes not more than 50"),
        pytest.param(40, 10, 10, id="set, nodes not more than 50"),
        pytest.param(None, 99, 99, id="fewer than 100 nodes: all"),
        pytest.param(None, 1000, 420, id="not set, 1000 nodes: adaptive 42%"),
        pytest.param(40, 1000, 400, id="set 40, 1000 nodes"),
        pytest.param(70, 1000, 700, id="set 70, 1000 nodes"),
        pytest.param(0, 1000, 420, id="0 means adaptive"),
        pytest.param(None, 6000, 300, id="not set, more than 50*125 nodes: 5% floor"),
        pytest.param(40, 6000, 2400, id="set 40, 6000 nodes"),
        pytest.param(10, 150, 100, id="never fewer than 100"),
        pytest.param(100, 150, 150, id="100%"),
    ],
)
def test_num_feasible_nodes_to_find(percentage, nodes, want):
    """Upstream ``TestNumFeasibleNodesToFind`` (profile percentage; no global one here)."""
    assert num_feasible_nodes_to_find(percentage, nodes) == want


def _wide(count, percentage=None, seed=0):
    from kubeprio.scheduler.setup import load_config

    config = None
    if percentage is not None:
        config = load_config(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {"schedulerName": "default-scheduler", "percentageOfNodesToScore": percentage}
                ],
            }
        )
    h = Harness(seed=seed, config=config)
    h.add_nodes(*(_cpu_node(f"n{i:03d}", "4") for i in range(count)))
    return h.start()


def test_search_resumes_where_the_last_cycle_stopped():
    """``findNodesThatFitPod``: ``nextStartNodeIndex`` advances by the nodes processed."""
    h = _wide(150, percentage=10)
    h.add_pod(_pending("a", MID, "1"))
    assert h.schedule_one()
    assert h.scheduler.next_start_node_index == 100
    h.add_pod(_pending("b", MID, "1"))
    assert h.schedule_one()
    assert h.scheduler.next_start_node_index == 50


def test_unschedulable_pod_examines_every_node():
    """With no feasible node every node is processed, so the start index comes round."""
    h = _wide(150, percentage=10)
    h.add_pod(_pending("a", MID, "1"))
    h.schedule_one()
    h.add_pod(_pending("huge", MID, "64"))
    h.schedule_one()
    assert h.scheduler.next_start_node_index == 100
    assert h.messages("huge")[0].startswith("0/150 nodes are available: 150 Insufficient cpu.")


def test_score_ties_are_broken_by_the_seed():
    """``selectHost``: among equal scores each node may win; the seed decides."""
    picks = {}
    for seed in range(12):
        h = Harness(seed=seed)
        h.add_nodes(*(_cpu_node(f"node{i}", "4") for i in range(3)))
        h.start()
        h.add_pod(_pending("p", MID, "1"))
        h.settle()
        picks[seed] = h.node_of("p")
    assert set(picks.values()) == {"node0", "node1", "node2"}
    again = Harness(seed=5)
    again.add_nodes(*(_cpu_node(f"node{i}", "4") for i in range(3)))
    again.start()
    again.add_pod(_pending("p", MID, "1"))
    again.settle()
    assert again.node_of("p") == picks[5]


def test_same_seed_same_preemption_decisions():
    """Two runs with one seed preempt the same victims on the same nodes."""

    def run():
        h = Harness(seed=3)
        h.add_nodes(*(_cpu_node(f"node{i}", "2") for i in range(4)))
        h.start()
        for i in range(4):
            for j in range(2):
                h.add_pod(_running(f"low{i}-{j}", LOW, "1", f"node{i}"))
        for k in range(3):
            h.add_pod(_pending(f"high{k}", HIGH, "2"))
        h.settle()
        return (
            {f"high{k}": h.nominated(f"high{k}") for k in range(3)},
            sorted(e.involved_object.name for e in h.events(reason="Preempted")),
        )

    assert run() == run()


# --- failures after a node was chosen (schedulingCycle Reserve/Permit, bindingCycle) ----------


class _Rejecting:
    """A Reserve or Permit plugin answering with ``status``."""

    def __init__(self, name, status):
        self.name = name
        self._status = status

    def reserve(self, state, pod, node_name):
        return self._status

    def unreserve(self, state, pod, node_name):
        return None

    def permit(self, state, pod, node_name):
        return self._status


def _with(h, *, reserve=(), permit=()):
    from kubeprio.scheduler.runtime import Framework

    old = h.scheduler.framework
    new = Framework(
        profile_name=old.profile_name,
        queue_sort=old.queue_sort,
        pre_filter=old.pre_filter_plugins,
        filter=old.filter_plugins,
        post_filter=old.post_filter_plugins,
        pre_score=old.pre_score_plugins,
        score=old.score_plugins,
        reserve=reserve,
        permit=permit,
        bind=old.bind_plugins,
    )
    new.nominated_pods = old.nominated_pods
    h.scheduler.framework = new
    h.scheduler.fast = None  # the swapped profile is not the default one


@pytest.mark.parametrize(
    ("point", "status", "reason", "message"),
    [
        pytest.param(
            "reserve",
            "unschedulable",
            "Unschedulable",
            "0/1 nodes are available: 1 no room in the reservation.",
            id="Reserve rejection: a FitError over the chosen node",
        ),
        pytest.param(
            "permit",
            "unschedulable",
            "Unschedulable",
            "0/1 nodes are available: 1 no room in the reservation.",
            id="Permit rejection: a FitError over the chosen node",
        ),
        pytest.param(
            "reserve",
            "error",
            "SchedulerError",
            'running Reserve plugin "fake": no room in the reservation',
            id="Reserve error: wrapped with the plugin name",
        ),
        pytest.param(
            "permit",
            "error",
            "SchedulerError",
            'running Permit plugin "fake": no room in the reservation',
            id="Permit error: wrapped with the plugin name",
        ),
    ],
)
def test_reserve_and_permit_failures(point, status, reason, message):
    """``schedulingCycle``: Reserve/Permit rejections become ``FitError{NumAllNodes: 1}``;
    errors carry upstream's ``running <point> plugin %q: %w``; the nomination is cleared."""
    from kubeprio.scheduler import framework

    make = framework.unschedulable if status == "unschedulable" else framework.error
    h = Harness().start()
    h.add_nodes(_cpu_node("node1"))
    _with(h, **{point: [_Rejecting("fake", make("no room in the reservation"))]})
    h.add_pod(_pending("p", MID, "1"))
    _nominate(h, "p", "node1")
    h.settle()
    assert h.messages("p") == [message]
    condition = _condition(h, "p")
    assert (condition.reason, condition.message) == (reason, message)
    assert h.node_of("p") is None
    assert h.nominated("p") is None
    assert h.scheduler.cache.node_info("node1").pods == []


def test_bind_error_message():
    """``RunBindPlugins``: ``running Bind plugin "DefaultBinder": <API error>``, reason
    SchedulerError; the assumed pod is forgotten."""
    h = Harness().start()
    h.add_nodes(_cpu_node("node1"), _cpu_node("node2"))
    h.add_pod(_pending("p", MID, "1"))
    from kubeprio.api.core import Binding, ObjectReference
    from kubeprio.api.meta import ObjectMeta

    # Someone else binds the pod; the scheduler has not seen it yet.
    h.api.bind(
        Binding(
            metadata=ObjectMeta(name="p", namespace="default"),
            target=ObjectReference(kind="Node", name="node2"),
        )
    )
    assert h.scheduler.run_once()
    [message] = h.messages("p")
    assert message == (
        'running Bind plugin "DefaultBinder": Operation cannot be fulfilled on '
        'pods/binding "p": pod p is already assigned to node "node2"'
    )
    assert _condition(h, "p").reason == "SchedulerError"


# --- events are written when the scheduler is idle ---------------------------------------------


def test_scheduled_events_wait_until_nothing_is_left_to_schedule():
    """Upstream's scheduler records events through a broadcaster whose goroutine writes
    them, so a binding never waits for its event. kubeprio's scheduler queues them and
    writes them once no pod is ready: after each bind the event is not stored yet, and the
    run_once that finds the queue empty writes all of them, with the binding's time."""
    from kubeprio.api.core import Event

    h = Harness().start()
    h.add_nodes(_cpu_node("node1", cpu="4"))
    h.add_pods(_pending("a", MID, "1"), _pending("b", MID, "1"))
    h.pump()
    assert h.scheduler.run_once()
    assert h.scheduler.run_once()
    assert (h.node_of("a"), h.node_of("b")) == ("node1", "node1")
    assert h.api.list(Event).items == []
    assert h.scheduler.next_wakeup() == h.clock.now()
    assert h.scheduler.run_once()  # nothing to schedule: the events are written
    stored = h.api.list(Event).items
    assert sorted(e.message or "" for e in stored) == [
        "Successfully assigned default/a to node1",
        "Successfully assigned default/b to node1",
    ]
    assert not h.scheduler.run_once()
