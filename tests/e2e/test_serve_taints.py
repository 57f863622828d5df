"""Taint-based eviction and lost nodes against a live ``kubeprio serve`` with the real kubectl.

* ``kubectl taint nodes N k=v:NoExecute`` evicts the pods that do not tolerate it at once
  and the one tolerating it for 5 s five seconds later (taint eviction controller,
  ``taint_eviction.go``); ``kubectl get events`` shows ``TaintManagerEviction`` and
  ``kubectl describe pod`` the ``DisruptionTarget`` condition;
* ``kubectl annotate node N kubeprio.io/fail-at=0s`` stops that kubelet; with short
  ``--node-monitor-grace-period`` (15 s: above the 10 s lease renewals) and
  ``--node-monitor-period`` the node turns ``NotReady`` in
  ``kubectl get nodes`` and gets the ``unreachable`` taints (node lifecycle controller);
  its pod, which tolerates ``unreachable`` for 2 s by
  ``--default-unreachable-toleration-seconds 2`` (the DefaultTolerationSeconds plugin),
  is then evicted. The ``NoExecute`` taint comes at the health check after the one that
  wrote ``Unknown`` (``test_nodelifecycle_realtime.py`` has the rule on a moving clock),
  and kubelets that keep running post Ready again if a stalled loop let their leases
  look stale (``kubelet.nodestatussync``), so a stall of the server cannot leave the zone
  fully disrupted (no tainting) for good.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl, running, table_rows

pytestmark = [pytest.mark.e2e, needs_kubectl]

T = TypeVar("T")

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: __NAME__, namespace: default}
spec:
  nodeName: __NODE__
  terminationGracePeriodSeconds: __GRACE__
  containers: [{name: c, image: busybox}]
__TOLERATIONS__
"""


def pod(name: str, node: str, tolerations: str = "", grace: int = 1) -> str:
    text = POD.replace("__NAME__", name).replace("__NODE__", node)
    text = text.replace("__GRACE__", str(grace))
    return text.replace("__TOLERATIONS__", tolerations)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    args = ["--nodes", "3", "--node-monitor-grace-period", "15s", "--node-monitor-period", "1s"]
    args += ["--default-unreachable-toleration-seconds", "2"]
    with running(tmp_path_factory, "taints", args) as process:
        yield process


def gone(server: ServeProcess, name: str) -> bool | None:
    result = server.kubectl("get", "pod", name, "-o", "name")
    return True if result.returncode != 0 else None


def test_kubectl_taint_no_execute_evicts_untolerating_pods(server: ServeProcess) -> None:
    server.ok("apply", "-f", "-", stdin=pod("plain", "node-1"))
    tolerating = (
        "  tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 5}]"
    )
    server.ok("apply", "-f", "-", stdin=pod("patient", "node-1", tolerating, grace=30))
    eventually(lambda: "Running" in server.ok("get", "pod", "patient") or None)
    server.ok("taint", "nodes", "node-1", "k=v:NoExecute")
    eventually(lambda: gone(server, "plain"))
    assert server.kubectl("get", "pod", "patient").returncode == 0

    # The controller's events name the pod without its uid (as upstream's), so
    # ``kubectl describe pod`` (which selects events by uid) does not list them; ``kubectl
    # get events`` does, and describe shows the DisruptionTarget condition.
    def marked() -> str | None:
        text = server.ok("get", "events", "--field-selector", "involvedObject.name=patient")
        return text if "Marking for deletion Pod default/patient" in text else None

    assert "TaintManagerEviction" in eventually(marked, timeout=30)
    described = server.ok("describe", "pod", "patient")
    assert "DisruptionTarget" in described
    server.ok("taint", "nodes", "node-1", "k=v:NoExecute-")


def node_history(server: ServeProcess) -> str:
    """What a failure report needs: the nodes' Ready conditions and taints, their Leases,
    and the node events (a node that went NotReady without being annotated means the
    server stalled past the grace period's slack)."""
    nodes = server.json("get", "nodes")["items"]
    lines = []
    for node in nodes:
        ready = [c for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
        lines.append(f"{node['metadata']['name']}: {ready} taints={node['spec'].get('taints')}")
    lines.append(server.ok("get", "leases", "-n", "kube-node-lease", "-o", "wide"))
    lines.append(server.ok("get", "events", "--field-selector", "involvedObject.kind=Node"))
    lines.append("server log (last lines):\n" + "".join(server.output[-40:]))
    return "\n".join(lines)


def explained(server: ServeProcess, probe: Callable[[], T | None], timeout: float) -> T:
    """``eventually``, with the nodes' history in the failure."""
    try:
        return eventually(probe, timeout=timeout)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{node_history(server)}") from exc


def test_a_failed_kubelet_makes_its_node_not_ready_and_its_pods_go(server: ServeProcess) -> None:
    server.ok("apply", "-f", "-", stdin=pod("lost", "node-2"))
    eventually(lambda: "Running" in server.ok("get", "pod", "lost") or None)
    seconds = server.ok(
        "get", "pod", "lost", "-o", "jsonpath={.spec.tolerations[*].tolerationSeconds}"
    )
    assert seconds.split() == ["300", "2"]  # not-ready keeps the default
    server.ok("annotate", "node", "node-2", "kubeprio.io/fail-at=0s")

    def not_ready() -> bool | None:
        rows = table_rows(server.ok("get", "nodes"))
        return any(row[0] == "node-2" and row[1].startswith("NotReady") for row in rows) or None

    explained(server, not_ready, timeout=40)

    # The taints follow the Unknown status in later passes (the NoSchedule one on the
    # node's update event, the NoExecute one from the next health check's tainting
    # queue), as upstream's separate workers do: kubectl may see NotReady first.
    def tainted() -> bool | None:
        taints = server.json("get", "node", "node-2")["spec"].get("taints") or []
        keys = {(t["key"], t["effect"]) for t in taints}
        return ("node.kubernetes.io/unreachable", "NoExecute") in keys or None

    explained(server, tainted, timeout=20)
    # Deleted, but no kubelet runs there to stop it: it stays Terminating.
    explained(
        server,
        lambda: server.json("get", "pod", "lost")["metadata"].get("deletionTimestamp"),
        timeout=40,
    )
    server.ok("annotate", "node", "node-2", "kubeprio.io/fail-at-")
    eventually(lambda: gone(server, "lost"), timeout=40)
