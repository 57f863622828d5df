"""``kubeprio simulate`` applies LimitRange defaults as a real API server does.

Upstream's LimitRanger admission writes a namespace's default requests and limits into
pods that set none, before the scheduler ever sees them: the defaults decide whether a
pod fits (``NodeResourcesFit``: ``Insufficient cpu``) and whom it preempts. A LimitRange
applies to the pods submitted after it in the input (docs/design.md), as admission reads
it straight away; pods before it keep what they asked for.
"""

from __future__ import annotations

import re
from typing import Any

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "1", memory: 4Gi, pods: "110"}
  allocatable: {cpu: "1", memory: 4Gi, pods: "110"}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
"""

TWO_CPU_DEFAULT = """\
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: team-a}
spec:
  limits:
  - type: Container
    defaultRequest: {cpu: "2"}
    default: {cpu: "2"}
    max: {cpu: "2"}
"""


def _pod(name: str, resources: str = "{}", extra: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: team-a}}
spec:{extra}
  containers:
  - {{name: app, image: nginx, resources: {resources}}}
"""


def _run(*documents: str) -> dict[str, Any]:
    report, _ = simulate(manifest.parse_text("---\n".join(documents), "input.yaml"), seed=0)
    return report


def _pods(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in report["pods"]}


def test_a_defaulted_request_that_no_node_has_leaves_the_pod_pending():
    report = _run(CLUSTER, TWO_CPU_DEFAULT, _pod("web"))
    web = _pods(report)["web"]
    assert web["node"] is None
    # schedule_one.go's FitError text: NodeResourcesFit's reason for the 2-CPU request, which
    # is more than the node's allocatable, so no eviction could help.
    assert web["pendingMessage"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
    failed = [e for e in report["events"] if e["reason"] == "FailedScheduling"]
    assert failed[0]["object"] == "Pod/team-a/web"
    assert failed[0]["message"] == web["pendingMessage"]


def test_pods_before_the_limit_range_keep_what_they_asked_for():
    report = _run(CLUSTER, _pod("early"), TWO_CPU_DEFAULT, _pod("late"))
    pods = _pods(report)
    assert pods["early"]["node"] == "n1"
    assert pods["late"]["node"] is None


def test_a_defaulted_request_makes_the_pod_preempt():
    # Without the LimitRange "web" requests nothing and fits beside "batch"; with its 1-CPU
    # default request it must evict the lower-priority pod (DefaultPreemption).
    classes = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
"""
    one_cpu = TWO_CPU_DEFAULT.replace('"2"', '"1"')
    # "batch" is already running (a snapshot pod, bound by spec.nodeName).
    batch = _pod(
        "batch",
        "{requests: {cpu: 500m}, limits: {cpu: 500m}}",
        "\n  nodeName: n1\n  priorityClassName: low",
    )
    web = _pod("web", extra="\n  priorityClassName: high")
    report = _run(CLUSTER, classes, batch, one_cpu, web)
    assert [(p["preemptor"], p["victims"]) for p in report["preemptions"]] == [
        ("team-a/web", ["team-a/batch"])
    ]
    assert _pods(report)["web"]["node"] == "n1"


def test_a_pod_beyond_the_range_is_rejected_with_upstreams_text():
    report = _run(CLUSTER, TWO_CPU_DEFAULT, _pod("huge", "{limits: {cpu: '4'}}"))
    assert [(r["name"], r["code"], r["message"]) for r in report["rejected"]] == [
        (
            "huge",
            403,
            'pods "huge" is forbidden: maximum cpu usage per Container is 2, but limit is 4',
        )
    ]


def test_a_refused_replica_is_its_replica_sets_failed_create_event():
    # The ReplicaSet controller's pods go through the same admission; its create error is
    # recorded as upstream's FailedCreate event, naming the generated pod.
    replica_set = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: big, namespace: team-a}
spec:
  replicas: 1
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers:
      - {name: app, image: nginx, resources: {limits: {cpu: "4"}}}
"""
    report = _run(CLUSTER, TWO_CPU_DEFAULT, replica_set)
    failed = [e for e in report["events"] if e["reason"] == "FailedCreate"]
    assert failed
    assert failed[0]["object"] == "ReplicaSet/team-a/big"
    assert re.fullmatch(
        r'Error creating: pods "big-[a-z0-9]{5}" is forbidden: maximum cpu usage per '
        r"Container is 2, but limit is 4",
        failed[0]["message"],
    )


def test_a_request_above_the_default_limit_is_refused_by_pod_validation():
    # The range's default limit is written beside the larger request; pod validation then
    # refuses the pair (upstream kubernetes#51430: the default limit acts as a maximum).
    report = _run(CLUSTER, TWO_CPU_DEFAULT.replace('max: {cpu: "2"}', 'max: {cpu: "4"}'),
                  _pod("greedy", "{requests: {cpu: '3'}}"))  # fmt: skip
    [rejected] = report["rejected"]
    assert (rejected["code"], rejected["message"]) == (
        422,
        'Pod "greedy" is invalid: spec.containers[0].resources.requests: Invalid value: "3": '
        "must be less than or equal to cpu limit of 2",
    )
