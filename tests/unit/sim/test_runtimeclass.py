"""``kubeprio simulate`` with RuntimeClasses: admission changes where pods fit and whom
they preempt.

Upstream's RuntimeClass admission (``plugin/pkg/admission/runtimeclass``) copies a class's
``overhead.podFixed`` into the pod's ``spec.overhead`` and merges its
``scheduling.nodeSelector`` into the pod before the scheduler sees it. The scheduler
then counts the overhead in the pod's requests (``NodeResourcesFit`` through
``resourcehelper.PodRequests``, and DefaultPreemption with it) and filters nodes by the
merged selector (``NodeAffinity``). A RuntimeClass applies to the pods after it in the
input (docs/design.md), as admission reads it at once.
"""

from __future__ import annotations

from typing import Any

from kubeprio.api import manifest
from kubeprio.sim.simulate import simulate

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: sandboxed, labels: {sandbox: gvisor}}
status:
  capacity: {cpu: "1", memory: 4Gi, pods: "110"}
  allocatable: {cpu: "1", memory: 4Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: plain}
status:
  capacity: {cpu: "4", memory: 4Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 4Gi, pods: "110"}
"""

GVISOR = """\
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
overhead: {podFixed: {cpu: 250m}}
scheduling: {nodeSelector: {sandbox: gvisor}}
"""

CLASSES = """\
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


def _pod(name: str, cpu: str, extra: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:{extra}
  containers:
  - {{name: app, image: nginx, resources: {{requests: {{cpu: {cpu}}}}}}}
"""


def _run(*documents: str) -> dict[str, Any]:
    report, _ = simulate(manifest.parse_text("---\n".join(documents), "input.yaml"), seed=0)
    return report


def _pods(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in report["pods"]}


def test_the_class_selector_steers_its_pods_to_the_labelled_node():
    report = _run(
        NODES,
        GVISOR,
        _pod("sandboxed-web", "100m", "\n  runtimeClassName: gvisor"),
        _pod("web", "2"),
    )
    pods = _pods(report)
    assert pods["sandboxed-web"]["node"] == "sandboxed"
    assert pods["web"]["node"] == "plain"


def test_the_overhead_makes_a_pod_that_would_fit_pending():
    # 900m fits the 1-CPU node alone; with the class's 250m overhead it does not, and the
    # class's selector rules out the bigger node (schedule_one.go's FitError text).
    report = _run(NODES, GVISOR, _pod("web", "900m", "\n  runtimeClassName: gvisor"))
    web = _pods(report)["web"]
    assert web["node"] is None
    assert web["pendingMessage"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful "
        "for scheduling."
    )
    without_class = _run(NODES, GVISOR, _pod("web", "900m", "\n  nodeSelector: {sandbox: gvisor}"))
    assert _pods(without_class)["web"]["node"] == "sandboxed"


def test_the_overhead_makes_a_pod_preempt():
    # "batch" (300m) runs on the sandboxed node. "web" asks 500m: 800m would fit beside
    # it, but 500m + 250m overhead does not, so DefaultPreemption evicts the lower-priority
    # pod, on overhead-inclusive requests.
    batch = _pod("batch", "300m", "\n  nodeName: sandboxed\n  priorityClassName: low")
    web = _pod("web", "500m", "\n  runtimeClassName: gvisor\n  priorityClassName: high")
    report = _run(NODES, CLASSES, batch, GVISOR, web)
    assert [(p["preemptor"], p["victims"]) for p in report["preemptions"]] == [
        ("default/web", ["default/batch"])
    ]
    assert _pods(report)["web"]["node"] == "sandboxed"
    no_overhead = GVISOR.replace("overhead: {podFixed: {cpu: 250m}}\n", "")
    calm = _run(NODES, CLASSES, batch, no_overhead, web)
    assert calm["preemptions"] == []
    assert _pods(calm)["web"]["node"] == "sandboxed"


def test_an_unknown_class_is_rejected_with_upstreams_text():
    report = _run(NODES, _pod("web", "100m", "\n  runtimeClassName: kata"))
    assert [(r["name"], r["code"], r["message"]) for r in report["rejected"]] == [
        ("web", 403, 'pods "web" is forbidden: pod rejected: RuntimeClass "kata" not found')
    ]


def test_a_class_after_the_pod_does_not_apply_to_it():
    report = _run(NODES, _pod("early", "100m", "\n  runtimeClassName: gvisor"), GVISOR)
    assert [r["name"] for r in report["rejected"]] == ["early"]
