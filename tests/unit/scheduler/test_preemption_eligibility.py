"""Who may preempt (semantics §4.2, upstream ``PodEligibleToPreemptOthers``).

Ported from ``default_preemption_test.go`` ``TestPodEligibleToPreemptOthers`` plus the
conditions around it: ``preemptionPolicy: Never`` never preempts (``TestPreempt`` "no
preempting in pod"; integration ``TestNonPreemption``), and a pod already nominated waits
while a lower-priority pod on its nominated node is terminating *because of scheduler
preemption* (deletionTimestamp and DisruptionTarget=True/PreemptionByScheduler), unless
the nominated node is UnschedulableAndUnresolvable in this cycle.
"""

from __future__ import annotations

import pytest

from kubeprio.api.core import Pod
from kubeprio.scheduler.framework import PostFilterResult, unresolvable, unschedulable
from kubeprio.scheduler.preemption import NEVER_POLICY, TERMINATING_ON_NOMINATED
from tests.builders import pod
from tests.unit.scheduler.preemption_harness import (
    HIGH,
    LOW,
    MID,
    VERY_LARGE,
    Harness,
    node_obj,
)

PREEMPTED = ("True", "PreemptionByScheduler")


def _victim(h, name, node_name, prio, *, condition=None, terminating=False):
    h.add_pod(pod(name).uid(name).priority(prio).requests(cpu="500m").on(node_name).build())
    if condition is not None:
        status, reason = condition
        h.api.patch(
            Pod,
            name,
            {
                "status": {
                    "conditions": [{"type": "DisruptionTarget", "status": status, "reason": reason}]
                }
            },
            namespace="default",
            subresource="status",
        )
    if terminating:
        h.api.delete(Pod, name, "default")  # graceful: stays with a deletionTimestamp
    h.pump()


def _preemptor(h, *, nominated=None, policy=None):
    builder = pod("p").uid("p").priority(HIGH).requests(cpu="500m")
    if policy:
        builder = builder.preemption_policy(policy)
    h.add_pod(builder.build())
    if nominated:
        h.api.patch(
            Pod,
            "p",
            {"status": {"nominatedNodeName": nominated}},
            namespace="default",
            subresource="status",
        )
        h.pump()
    return h.pod_info(h.pod("p"))


# (id, victims (name, node, prio, condition, terminating), preemptor nominated node,
#  policy, nominated node's status this cycle, eligible, message)
CASES = [
    (
        "Pod with nominated node",
        [("p1", "node1", LOW, None, True)],
        "node1",
        None,
        unresolvable("node(s) had untolerated taint {k: v}"),
        True,
        "",
    ),
    ("Pod without nominated node", [], None, None, None, True, ""),
    ("Pod with 'PreemptNever' preemption policy", [], None, "Never", None, False, NEVER_POLICY),
    (
        "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
        [("p1", "node1", LOW, PREEMPTED, True)],
        "node1",
        None,
        None,
        False,
        TERMINATING_ON_NOMINATED,
    ),
    (
        "non-victim Pods terminating",
        [("p1", "node1", LOW, None, True)],
        "node1",
        None,
        None,
        True,
        "",
    ),
    (
        "Never with a nominated node: the policy is checked first",
        [("p1", "node1", LOW, PREEMPTED, True)],
        "node1",
        "Never",
        None,
        False,
        NEVER_POLICY,
    ),
    (
        "terminating victim, but the nominated node is UnschedulableAndUnresolvable now",
        [("p1", "node1", LOW, PREEMPTED, True)],
        "node1",
        None,
        unresolvable("node(s) were unschedulable"),
        True,
        "",
    ),
    (
        "terminating victim and the nominated node merely Unschedulable",
        [("p1", "node1", LOW, PREEMPTED, True)],
        "node1",
        None,
        unschedulable("Insufficient cpu"),
        False,
        TERMINATING_ON_NOMINATED,
    ),
    (
        "DisruptionTarget not True does not block",
        [("p1", "node1", LOW, ("False", "PreemptionByScheduler"), True)],
        "node1",
        None,
        None,
        True,
        "",
    ),
    (
        "DisruptionTarget for another reason does not block",
        [("p1", "node1", LOW, ("True", "DeletionByTaintManager"), True)],
        "node1",
        None,
        None,
        True,
        "",
    ),
    (
        "the condition without a deletionTimestamp does not block",
        [("p1", "node1", LOW, PREEMPTED, False)],
        "node1",
        None,
        None,
        True,
        "",
    ),
    (
        "a terminating victim of equal priority does not block (only lower ones count)",
        [("p1", "node1", HIGH, PREEMPTED, True)],
        "node1",
        None,
        None,
        True,
        "",
    ),
    (
        "a terminating victim on another node does not block",
        [("p1", "node2", LOW, PREEMPTED, True)],
        "node1",
        None,
        None,
        True,
        "",
    ),
    (
        "a nominated node that no longer exists does not block",
        [("p1", "node1", LOW, PREEMPTED, True)],
        "gone",
        None,
        None,
        True,
        "",
    ),
    (
        "one terminating victim among running lower pods blocks",
        [("p0", "node1", MID, None, False), ("p1", "node1", LOW, PREEMPTED, True)],
        "node1",
        None,
        None,
        False,
        TERMINATING_ON_NOMINATED,
    ),
]


@pytest.mark.parametrize(
    ("victims", "nominated", "policy", "node_status", "eligible", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_pod_eligible_to_preempt_others(victims, nominated, policy, node_status, eligible, message):
    """Upstream ``TestPodEligibleToPreemptOthers``, with the rule's corners."""
    h = Harness()
    h.add_nodes(node_obj("node1", {"cpu": "2"}), node_obj("node2", {"cpu": "2"}))
    h.start()
    for name, node_name, prio, condition, terminating in victims:
        _victim(h, name, node_name, prio, condition=condition, terminating=terminating)
    info = _preemptor(h, nominated=nominated, policy=policy)
    assert h.evaluator.pod_eligible_to_preempt_others(info, node_status) == (eligible, message)


def test_never_pod_preempts_nobody():
    """``TestPreempt`` "no preempting in pod": nil result, the message, no API writes."""
    h = Harness()
    h.add_nodes(node_obj("node1", VERY_LARGE))
    h.start()
    h.add_pod(pod("low").uid("low").priority(LOW).requests(cpu="500m").on("node1").build())
    preemptor = pod("p").uid("p").priority(HIGH).requests(cpu="500m").preemption_policy("Never")
    result, status = h.preempt(preemptor.build())
    assert result is None
    assert status.message == "preemption: not eligible due to preemptionPolicy=Never."
    low = h.pod("low")
    assert low is not None
    assert low.metadata.deletion_timestamp is None
    assert h.events(reason="Preempted") == []


def test_preemption_policy_nil_preempts():
    """``TestPreempt`` "PreemptionPolicy is nil": an unset policy is PreemptLowerPriority."""
    h = Harness()
    h.add_nodes(node_obj("node1", VERY_LARGE))
    h.start()
    h.add_pod(pod("low").uid("low").priority(LOW).requests(cpu="500m").on("node1").build())
    result, status = h.preempt(pod("p").uid("p").priority(HIGH).requests(cpu="500m").build())
    assert (result, status) == (PostFilterResult("node1"), None)


def test_never_pod_in_the_cycle():
    """Through a scheduling cycle: FailedScheduling carries the Never message, nothing is
    evicted, no nomination is made, and a Never pod can itself be preempted."""
    h = Harness()
    h.add_nodes(node_obj("node1", {"cpu": "1"}))
    h.start()
    h.add_pod(pod("low").uid("low").priority(LOW).requests(cpu="1").on("node1").build())
    h.add_pod(
        pod("never").uid("never").priority(MID).preemption_policy("Never").requests(cpu="1").build()
    )
    h.settle()
    assert h.messages("never") == [
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never."
    ]
    assert h.nominated("never") is None
    assert h.pod("low").metadata.deletion_timestamp is None
    assert h.events(reason="Preempted") == []


def test_never_pod_can_be_preempted():
    """A pod with preemptionPolicy Never is still a victim for higher-priority pods."""
    h = Harness()
    h.add_nodes(node_obj("node1", {"cpu": "1"}))
    h.start()
    h.add_pod(
        pod("never")
        .uid("never")
        .priority(LOW)
        .preemption_policy("Never")
        .requests(cpu="1")
        .on("node1")
        .build()
    )
    h.add_pod(pod("high").uid("high").priority(HIGH).requests(cpu="1").build())
    h.settle()
    assert h.pod("never").metadata.deletion_timestamp is not None
    assert h.nominated("high") == "node1"


def test_waiting_for_own_victims_keeps_the_nomination():
    """While its own victim terminates the preemptor is ineligible: the cycle reports
    ``not eligible due to a terminating pod on the nominated node.``, evicts nothing more
    and leaves ``nominatedNodeName`` as it is."""
    h = Harness()
    h.add_nodes(node_obj("node1", {"cpu": "2"}))
    h.start()
    h.add_pod(pod("low1").uid("low1").priority(LOW).requests(cpu="1").on("node1").build())
    h.add_pod(pod("low2").uid("low2").priority(LOW).requests(cpu="1").on("node1").build())
    h.add_pod(pod("high").uid("high").priority(HIGH).requests(cpu="2").build())
    h.settle()
    assert h.nominated("high") == "node1"
    first = [e.involved_object.name for e in h.events(reason="Preempted")]
    assert sorted(first) == ["low1", "low2"]
    # Something wakes the pod up while the victims are still terminating.
    h.scheduler.queue.activate([h.pod("high")])
    h.settle()
    assert h.messages("high")[-1] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    assert h.nominated("high") == "node1"
    assert len(h.events(reason="Preempted")) == 2
