"""Carrying out a preemption through the API (semantics §4.8, upstream
``preemption/executor.go`` ``PreemptPod`` and ``preemption.go`` ``prepareCandidate``).

Checked on the objects the in-process API stores: each victim gets the DisruptionTarget
condition (reason PreemptionByScheduler, message ``<schedulerName>: preempting to
accommodate a higher priority pod``), then a graceful delete with its own grace period,
then a Normal ``Preempted`` event (action Preempting, related = preemptor) reading
``Preempted by pod <uid> on node <node>``. Victims already being deleted are skipped.
Afterwards pods nominated to that node with strictly lower priority lose their
nomination; equal and higher keep it (integration ``TestNominatedNode``).
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Pod, PodCondition
from kubeprio.api.model import evolve
from kubeprio.clock import rfc3339
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nominator import NominatingInfo
from kubeprio.scheduler.preemption import Candidate, Victims
from tests.builders import pod
from tests.unit.scheduler.preemption_harness import HIGH, LOW, MID, VERY_HIGH, Harness, node_obj

MESSAGE = "default-scheduler: preempting to accommodate a higher priority pod"


def _cluster(*victims, nodes=("node1", "node2")):
    h = Harness()
    h.add_nodes(*(node_obj(name, {"cpu": "4"}) for name in nodes))
    h.start()
    for obj in victims:
        h.add_pod(obj)
    return h


def _low(name, *, grace=None, cpu="1", node_name="node1"):
    builder = pod(name).uid(name).priority(LOW).requests(cpu=cpu).on(node_name)
    if grace is not None:
        builder = builder.grace(grace)
    return builder.build()


def _disruption_target(p):
    return [c for c in p.status.conditions or () if c.type == "DisruptionTarget"]


def test_victim_gets_condition_graceful_delete_and_event():
    h = _cluster(_low("v1"), _low("v2", grace=5), _low("v3"), _low("v4"), nodes=("node1",))
    h.clock.advance(7)
    now = h.clock.now()
    h.add_pod(pod("p").priority(HIGH).requests(cpu="2").build())
    h.settle()
    assert h.nominated("p") == "node1"
    preempted = sorted(e.involved_object.name for e in h.events(reason="Preempted"))
    assert len(preempted) == 2  # only as many as needed
    for name in preempted:
        victim = h.pod(name)
        [condition] = _disruption_target(victim)
        assert (condition.status, condition.reason, condition.message) == (
            "True",
            "PreemptionByScheduler",
            MESSAGE,
        )
        assert condition.last_transition_time == rfc3339(now)
        grace = 5 if name == "v2" else 30
        assert victim.metadata.deletion_grace_period_seconds == grace
        assert victim.metadata.deletion_timestamp == rfc3339(now + grace)
        [event] = h.events(reason="Preempted", name=name)
        assert event.type == "Normal"
        assert event.action == "Preempting"
        uid = h.pod("p").metadata.uid
        assert event.message == f"Preempted by pod {uid} on node node1"
        assert event.related is not None
        assert event.related.name == "p"
        assert event.related.uid == uid
    for name in {"v1", "v2", "v3", "v4"} - set(preempted):
        assert h.pod(name).metadata.deletion_timestamp is None
        assert _disruption_target(h.pod(name)) == []


def test_condition_message_names_the_preemptors_scheduler():
    h = _cluster(_low("v1", cpu="4"))
    info = h.pod_info(pod("p").uid("p").priority(HIGH).spec(scheduler_name="my-scheduler").build())
    victim = PodInfo.of(h.pod("v1"))
    status = h.evaluator.executor.prepare_candidate(Candidate("node1", Victims((victim,), 0)), info)
    assert status is None
    [condition] = _disruption_target(h.pod("v1"))
    assert condition.message == "my-scheduler: preempting to accommodate a higher priority pod"


def test_already_terminating_victim_is_skipped():
    """``prepareCandidate``: a victim with a deletionTimestamp is not patched, not deleted
    again and gets no Preempted event."""
    h = _cluster(_low("v1", cpu="2"), _low("v2", cpu="2"))
    h.api.delete(Pod, "v1", "default")
    h.pump()
    before = h.pod("v1")
    info = h.pod_info(pod("p").uid("p").priority(HIGH).build())
    victims = (PodInfo.of(before), PodInfo.of(h.pod("v2")))
    assert (
        h.evaluator.executor.prepare_candidate(Candidate("node1", Victims(victims, 0)), info)
        is None
    )
    after = h.pod("v1")
    assert after.metadata.resource_version == before.metadata.resource_version
    assert [e.involved_object.name for e in h.events(reason="Preempted")] == ["v2"]


def test_identical_condition_is_not_patched_again():
    """``UpdatePodCondition`` reports no change, so the status is not patched; the old
    lastTransitionTime stays."""
    h = _cluster(_low("v1", cpu="4"))
    condition = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": MESSAGE,
        "lastTransitionTime": "2025-06-01T00:00:00Z",
    }
    h.api.patch(
        Pod,
        "v1",
        {"status": {"conditions": [condition]}},
        namespace="default",
        subresource="status",
    )
    h.pump()
    info = h.pod_info(pod("p").uid("p").priority(HIGH).build())
    victim = PodInfo.of(h.pod("v1"))
    h.evaluator.executor.prepare_candidate(Candidate("node1", Victims((victim,), 0)), info)
    [kept] = _disruption_target(h.pod("v1"))
    assert kept.last_transition_time == "2025-06-01T00:00:00Z"
    assert h.pod("v1").metadata.deletion_timestamp is not None


def test_disruption_target_goes_after_the_existing_conditions():
    """Upstream ``PatchPodStatus`` sends a two-way merge patch whose ``$setElementOrder``
    lists the victim's conditions with DisruptionTarget appended: it ends up last."""
    h = _cluster(_low("v1", cpu="4"))
    current = h.pod("v1")
    ready = (
        PodCondition(type="PodScheduled", status="True"),
        PodCondition(type="Ready", status="True"),
    )
    h.api.update_status(evolve(current, status=evolve(current.status, conditions=ready)))
    h.pump()
    info = h.pod_info(pod("p").uid("p").priority(HIGH).build())
    victim = PodInfo.of(h.pod("v1"))
    h.evaluator.executor.prepare_candidate(Candidate("node1", Victims((victim,), 0)), info)
    types = [c.type for c in h.pod("v1").status.conditions]
    assert types == ["PodScheduled", "Ready", "DisruptionTarget"]


def test_a_stale_victim_copy_still_gets_its_condition_and_keeps_newer_status():
    """The patch applies to the server's latest object; so does kubeprio's status write
    (a conflict on the stale copy is re-read and the condition set on the latest)."""
    h = _cluster(_low("v1", cpu="4"))
    stale = PodInfo.of(h.pod("v1"))
    current = h.pod("v1")
    h.api.update_status(evolve(current, status=evolve(current.status, pod_ip="10.0.0.9")))
    info = h.pod_info(pod("p").uid("p").priority(HIGH).build())
    h.evaluator.executor.prepare_candidate(Candidate("node1", Victims((stale,), 0)), info)
    victim = h.pod("v1")
    assert victim.status.pod_ip == "10.0.0.9"
    [condition] = _disruption_target(victim)
    assert condition.reason == "PreemptionByScheduler"
    assert victim.metadata.deletion_timestamp is not None


def test_a_victim_replaced_under_the_same_name_is_left_alone():
    """A deliberate difference: upstream patches and deletes by name, so a newcomer with
    the victim's name would be hit; kubeprio writes only to the victim's uid."""
    from kubeprio.client.protocol import DeleteRequest

    h = _cluster(_low("v1", cpu="4"))
    stale = PodInfo.of(h.pod("v1"))
    h.api.delete(Pod, "v1", "default", options=DeleteRequest(grace_period_seconds=0))
    newcomer = h.api.create(pod("v1").priority(LOW).requests(cpu="1").build())
    info = h.pod_info(pod("p").uid("p").priority(HIGH).build())
    status = h.evaluator.executor.prepare_candidate(Candidate("node1", Victims((stale,), 0)), info)
    assert status is None
    after = h.pod("v1")
    assert after.metadata.uid == newcomer.metadata.uid
    assert after.metadata.resource_version == newcomer.metadata.resource_version
    assert h.events(reason="Preempted") == []


def test_victim_already_gone_is_not_an_error():
    """NotFound on the patch or delete is ignored and no event is recorded."""
    from kubeprio.client.protocol import DeleteRequest

    h = _cluster(_low("v1", cpu="4"))
    stale = PodInfo.of(h.pod("v1"))
    h.api.delete(Pod, "v1", "default", options=DeleteRequest(grace_period_seconds=0))
    info = h.pod_info(pod("p").uid("p").priority(HIGH).build())
    status = h.evaluator.executor.prepare_candidate(Candidate("node1", Victims((stale,), 0)), info)
    assert status is None
    assert h.pod("v1") is None
    assert h.events(reason="Preempted") == []


# (id, nominated pods (name, priority, node), nominations expected to remain)
NOMINATION_CASES = [
    (
        "lower priority on the chosen node is cleared",
        [("n-low", LOW, "node1")],
        {"n-low": None},
    ),
    (
        "equal priority on the chosen node keeps its nomination",
        [("n-eq", HIGH, "node1")],
        {"n-eq": "node1"},
    ),
    (
        "higher priority on the chosen node keeps its nomination",
        [("n-high", VERY_HIGH, "node1")],
        {"n-high": "node1"},
    ),
    (
        "lower priority on another node keeps its nomination",
        [("n-other", LOW, "node2")],
        {"n-other": "node2"},
    ),
    (
        "mixed",
        [("a", LOW, "node1"), ("b", MID, "node1"), ("c", HIGH, "node1"), ("d", LOW, "node2")],
        {"a": None, "b": None, "c": "node1", "d": "node2"},
    ),
]


@pytest.mark.parametrize(
    ("nominated", "remaining"),
    [pytest.param(case[1], case[2], id=case[0]) for case in NOMINATION_CASES],
)
def test_lower_priority_nominations_are_cleared(nominated, remaining):
    """``prepareCandidate`` -> ``getLowerPriorityNominatedPods`` + ``clearNominatedNodeName``."""
    h = _cluster(_low("v1", cpu="4"))
    for name, prio, node_name in nominated:
        # Gated pods stay in the queue untried; their nominations come from the status.
        h.add_pod(
            pod(name)
            .uid(name)
            .priority(prio)
            .spec(extra={"schedulingGates": [{"name": "example.com/hold"}]})
            .build()
        )
        h.api.patch(
            Pod,
            name,
            {"status": {"nominatedNodeName": node_name}},
            namespace="default",
            subresource="status",
        )
        h.pump()
        h.scheduler.queue.add_nominated_pod(PodInfo.of(h.pod(name)), NominatingInfo(node_name))
    info = h.pod_info(pod("p").uid("p").priority(HIGH).build())
    victim = PodInfo.of(h.pod("v1"))
    h.evaluator.executor.prepare_candidate(Candidate("node1", Victims((victim,), 0)), info)
    h.pump()
    assert {name: h.nominated(name) for name in remaining} == remaining
    for name, node_name in remaining.items():
        assert h.scheduler.queue.nominator.nominated_node(h.pod(name).metadata.uid) == node_name
