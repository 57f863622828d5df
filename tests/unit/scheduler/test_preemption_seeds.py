"""The behaviours the seed documents spell out, end to end with kubelets.

Seeds: 000 (design doc "Priority in Kubernetes API": a pod that cannot be scheduled even
with the lower-priority pods gone preempts nobody), 001 (v1.8 docs "Pod Priority and
Preemption": only as many victims as needed; no preemption for inter-pod affinity to
lower-priority pods), 002 (OpenShift "Understanding pod preemption": while victims
terminate the room is kept for the preemptor, the preemptor may land elsewhere so that
nodeName differs from nominatedNodeName, and a higher-priority pod may take the room,
clearing the first preemptor's nomination).

Victims run on simulated kubelets and terminate gracefully (``kubeprio.io/termination-
seconds`` after SIGTERM), so the time between preemption and room is real. Upstream
counterparts: integration ``TestPreemption`` ("preemption is not performed when ..."),
``TestPreemptionStarvation``, ``TestNominatedNode`` and ``TestPreferNominatedNode``.
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Pod
from kubeprio.client.eventsrecord import occurrences
from kubeprio.clock import rfc3339_micro
from kubeprio.scheduler.setup import load_config
from tests.builders import affinity_term, label_selector, pod
from tests.conftest import EPOCH
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LOW,
    MID,
    VERY_HIGH,
    Harness,
    both_paths,  # noqa: F401
    node_obj,
)

pytestmark = pytest.mark.usefixtures("both_paths")

TERMINATION = "kubeprio.io/termination-seconds"
DURATION = "kubeprio.io/duration"


def _cluster(*nodes, config=None):
    h = Harness(config=config)
    h.add_nodes(
        *(node_obj(name, {"cpu": cpu, "memory": "8Gi"}, hostname=name) for name, cpu in nodes)
    )
    h.start()
    for name, _ in nodes:
        h.kubelet(name)
    return h


def _run(h, name, prio, cpu, node_name, *, exit_after=None, labels=None, finishes_at=None):
    builder = pod(name).priority(prio).requests(cpu=cpu).on(node_name)
    if exit_after is not None:
        builder = builder.annotate(TERMINATION, str(exit_after))
    if finishes_at is not None:
        builder = builder.annotate(DURATION, f"{finishes_at}s")
    if labels:
        builder = builder.labels(**labels)
    h.add_pod(builder.build())
    h.settle()
    assert h.pod(name).status.phase == "Running"


def _pending(h, name, prio, cpu, **spec):
    builder = pod(name).priority(prio).requests(cpu=cpu)
    for key, value in spec.items():
        builder = getattr(builder, key)(*value) if isinstance(value, tuple) else builder
    h.add_pod(builder.build())


def _preempted(h):
    return sorted(e.involved_object.name for e in h.events(reason="Preempted"))


def _alive(h, name):
    current = h.pod(name)
    return current is not None and current.metadata.deletion_timestamp is None


# --- seed 000 -----------------------------------------------------------------------------


def test_pod_that_cannot_fit_even_without_lower_priority_pods_preempts_nobody():
    """Seed 000: "If scheduler determines that a high priority pod cannot be scheduled even
    if lower priority pods are preempted, it will not preempt lower priority pods."""
    h = _cluster(("node1", "4"))
    _run(h, "low1", LOW, "1", "node1")
    _run(h, "low2", LOW, "1", "node1")
    _run(h, "top", VERY_HIGH, "2", "node1")
    h.add_pod(pod("p").priority(MID).requests(cpu="3").build())
    h.advance(60)
    assert _preempted(h) == []
    assert all(_alive(h, name) for name in ("low1", "low2", "top"))
    assert h.node_of("p") is None
    assert h.nominated("p") is None
    assert h.messages("p") == [
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 Insufficient cpu."
    ]


# --- seed 001 -----------------------------------------------------------------------------


def test_only_as_many_victims_as_needed_are_removed():
    """Seed 001: "Preemption does not necessarily remove all lower-priority Pods"; the
    least important ones go (latest started first among equals), the rest keep running."""
    h = _cluster(("node1", "4"))
    for i in range(4):
        _run(h, f"low{i}", LOW, "1", "node1", exit_after=5)
        h.advance(1)  # distinct start times: low0 oldest
    h.add_pod(pod("high").priority(HIGH).requests(cpu="2").build())
    h.settle()
    assert h.nominated("high") == "node1"
    assert _preempted(h) == ["low2", "low3"]
    h.advance(30)
    assert h.node_of("high") == "node1"
    assert h.pod("high").status.phase == "Running"
    assert _alive(h, "low0")
    assert _alive(h, "low1")
    assert h.pod("low2") is None
    assert h.pod("low3") is None


def test_victims_of_mixed_priority_lowest_first():
    """Seed 001 with priorities: the lower-priority pod is the victim even though it is
    older; the MID pod, more important, is reprieved first."""
    h = _cluster(("node1", "2"))
    _run(h, "old-low", LOW, "1", "node1")
    h.advance(10)
    _run(h, "new-mid", MID, "1", "node1")
    h.add_pod(pod("high").priority(HIGH).requests(cpu="1").build())
    h.settle()
    assert _preempted(h) == ["old-low"]


DB = {"app": "db"}


def _web(h, name="web"):
    h.add_pod(
        pod(name)
        .priority(HIGH)
        .requests(cpu="1")
        .pod_affinity(affinity_term("hostname", label_selector(DB)))
        .build()
    )


def test_affinity_to_lower_priority_pods_is_not_satisfied_by_preempting_them():
    """Seed 001 "Inter-Pod affinity on lower-priority Pods": a node is a candidate only if
    the pod fits with *all* lower-priority pods removed; the affinity target is one of them,
    so no node qualifies and nothing is preempted, though evicting only the filler would
    have made room (upstream ``SelectVictimsOnNode`` deliberately ignores this case)."""
    h = _cluster(("node1", "2"), ("node2", "2"))
    _run(h, "db", LOW, "1", "node1", labels=DB)
    _run(h, "filler1", LOW, "1", "node1")
    _run(h, "filler2", LOW, "2", "node2")
    _web(h)
    h.advance(60)
    assert _preempted(h) == []
    assert h.node_of("web") is None
    assert h.nominated("web") is None
    assert h.messages("web") == [
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 node(s) didn't match pod affinity rules."
    ]


def test_affinity_to_an_equal_priority_pod_preempts_the_rest():
    """The recommended setup ("create inter-Pod affinity only towards equal or higher
    priority pods"): the affinity target stays, the filler is preempted."""
    h = _cluster(("node1", "2"), ("node2", "2"))
    _run(h, "db", HIGH, "1", "node1", labels=DB)
    _run(h, "filler1", LOW, "1", "node1", exit_after=3)
    _run(h, "filler2", LOW, "2", "node2")
    _web(h)
    h.settle()
    assert _preempted(h) == ["filler1"]
    assert h.nominated("web") == "node1"
    h.advance(10)
    assert h.node_of("web") == "node1"
    assert _alive(h, "db")


# --- seed 002 -----------------------------------------------------------------------------


def _slow_backoff():
    """30 s backoff so that, when room appears, both waiting pods are in backoffQ and the
    one that failed first (the lower-priority pod) is popped first (PopFromBackoffQ)."""
    return load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "podInitialBackoffSeconds": 30,
            "podMaxBackoffSeconds": 30,
        }
    )


def test_lower_priority_pods_do_not_take_the_nominated_room():
    """Seed 002 / ``TestPreemptionStarvation``: while the victim terminates, and right after
    it is gone, a waiting lower-priority pod is tried and finds the room reserved for the
    nominated preemptor (nominated pods of >= priority count against the node)."""
    h = _cluster(("node1", "2"), config=_slow_backoff())
    _run(h, "keeper", LOW, "1", "node1")
    h.advance(1)
    _run(h, "victim", LOW, "1", "node1", exit_after=20)  # newer: less important
    h.add_pod(pod("waiting").priority(LOW).requests(cpu="1").build())
    h.settle()
    assert h.messages("waiting") == [
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    ]
    h.advance(1)
    h.add_pod(pod("preemptor").priority(HIGH).requests(cpu="1").build())
    h.settle()
    assert h.nominated("preemptor") == "node1"
    assert _preempted(h) == ["victim"]
    h.advance(30)
    # The victim left at t=22; "waiting" (backoff window 31) was tried before "preemptor"
    # (window 32) and found no room although no running pod held it.
    # The latest FailedScheduling event was seen then (upstream's getKey folds repeats
    # about one resourceVersion of the pod into a series, else starts a new event).
    failures = h.events(reason="FailedScheduling", name="waiting")
    latest = failures[-1]
    seen = latest.series.last_observed_time if latest.series else latest.event_time
    assert seen == rfc3339_micro(EPOCH + 22)
    assert sum(occurrences(event) for event in failures) >= 2
    assert h.pod("victim") is None
    assert h.node_of("preemptor") == "node1"
    assert h.node_of("waiting") is None


def test_preemptor_goes_to_a_node_that_frees_up_first():
    """Seed 002: "If another node becomes available while scheduler is waiting for the
    lower-priority pod to terminate, the scheduler can schedule the higher-priority pod on
    that node. As a result, the nominatedNodeName field and nodeName field ... might be
    different." (``TestPreferNominatedNode``: the nominated node is only tried first.)"""
    h = _cluster(("node1", "1"), ("node2", "1"))
    _run(h, "victim", LOW, "1", "node1", exit_after=60)
    _run(h, "batch", VERY_HIGH, "1", "node2", finishes_at=10)
    h.add_pod(pod("preemptor").priority(HIGH).requests(cpu="1").build())
    h.settle()
    assert h.nominated("preemptor") == "node1"
    assert _preempted(h) == ["victim"]
    h.advance(15)
    assert h.node_of("preemptor") == "node2"
    assert h.nominated("preemptor") == "node1"
    assert h.pod("victim") is not None  # still terminating on node1


def test_higher_priority_pod_takes_the_room_without_preempting():
    """Seed 002 / ``TestNominatedNode`` "mid-priority pod preempts low-priority pod,
    followed by a high-priority pod without additional preemption": the high pod ignores the
    lower nomination and takes the free room; once the victim is gone the medium pod finds
    no victims and its nomination is cleared."""
    h = _cluster(("fake-node", "2"))
    _run(h, "low", LOW, "1", "fake-node", exit_after=10)
    h.add_pod(pod("medium").priority(MID).requests(cpu="2").build())
    h.settle()
    assert h.nominated("medium") == "fake-node"
    h.add_pod(pod("high").priority(HIGH).requests(cpu="1").build())
    h.settle()
    assert h.node_of("high") == "fake-node"
    h.advance(30)
    assert h.pod("low") is None
    assert h.node_of("medium") is None
    assert h.nominated("medium") is None
    assert h.messages("medium")[-1] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_higher_priority_preemptor_clears_the_first_nomination():
    """Seed 002 / ``TestNominatedNode`` "mid-priority pod preempts low-priority pod,
    followed by a high-priority pod with another preemption": the high pod preempts on the
    same node while the first victims terminate; ``prepareCandidate`` clears the medium
    pod's nomination (lower priority), the high pod is nominated and gets the node."""
    h = _cluster(("fake-node", "5"))
    for i in range(1, 5):
        _run(h, f"low-{i}", LOW, "1", "fake-node", exit_after=10)
        h.advance(1)
    h.add_pod(pod("medium").priority(MID).requests(cpu="4").build())
    h.settle()
    assert h.nominated("medium") == "fake-node"
    assert _preempted(h) == ["low-2", "low-3", "low-4"]
    h.add_pod(pod("high").priority(HIGH).requests(cpu="3").build())
    h.settle()
    assert h.nominated("high") == "fake-node"
    assert h.nominated("medium") is None
    # Terminating pods are potential victims too: reprieving low-1 and low-2 (the most
    # important) leaves low-3 and low-4, already being deleted, so nothing new is evicted.
    assert _preempted(h) == ["low-2", "low-3", "low-4"]
    h.advance(30)
    assert h.node_of("high") == "fake-node"
    assert h.node_of("medium") is None


def test_nomination_survives_unrelated_updates_while_waiting():
    """While its victims terminate the preemptor keeps its nomination through its own
    retries (ineligible: a terminating victim on the nominated node)."""
    h = _cluster(("node1", "1"))
    _run(h, "victim", LOW, "1", "node1", exit_after=20)
    h.add_pod(pod("preemptor").priority(HIGH).requests(cpu="1").build())
    h.settle()
    h.api.patch(Pod, "preemptor", {"metadata": {"labels": {"touched": "yes"}}}, namespace="default")
    h.advance(5)
    assert h.nominated("preemptor") == "node1"
    assert _preempted(h) == ["victim"]
    h.advance(20)
    assert h.node_of("preemptor") == "node1"
