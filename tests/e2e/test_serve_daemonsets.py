"""DaemonSets against a live ``kubeprio serve`` with the real kubectl (v1.32) and the
official Python client.

Each test names the upstream behaviour it checks: one pod per eligible node
(``NodeShouldRunDaemonPod``: nodeSelector, taints), ``kubectl get ds`` columns
(``printDaemonSet``), ``describe ds``, ``get all`` (category ``all``), a new or relabelled
Node gaining or losing its pod (``addNode``/``updateNode``), the rolling update one node at
a time (``maxUnavailable: 1``) with ``kubectl rollout status``, ``rollout history`` (the
ControllerRevisions) and ``rollout undo`` (the revision's patch sent back), deletion with
its pods (garbage collection), the tenant policy, and preemption: a daemon pod at a high
class on full nodes preempts lower-priority pods on its own node only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

ALICE = "kubeprio-alice"

AGENT = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: __NAME__, namespace: __NS__}
spec:
  selector: {matchLabels: {app: __NAME__}}
  template:
    metadata: {labels: {app: __NAME__}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: agent
        image: __IMAGE__
        resources: {requests: {cpu: 100m}}
"""


def agent(name: str, namespace: str = "default", image: str = "fluentd:v1", **extra: str) -> str:
    text = AGENT.replace("__NAME__", name).replace("__NS__", namespace)
    text = text.replace("__IMAGE__", image)
    for key, value in extra.items():
        text += f"      {key}: {value}\n"
    return text


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-ds", ["--preset", "kestrel", "--nodes", "3"]) as server:
        yield server


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _pods(served: ServeProcess, namespace: str, app: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = served.json("get", "pods", "-n", namespace, "-l", f"app={app}")[
        "items"
    ]
    return items


def _running_nodes(served: ServeProcess, namespace: str, app: str) -> list[str]:
    """Nodes of the Running, not terminating pods of ``app``, sorted."""
    return sorted(
        p["spec"].get("nodeName", "")
        for p in _pods(served, namespace, app)
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    )


def _available(served: ServeProcess, name: str, namespace: str, count: int) -> bool:
    status = served.json("get", "ds", name, "-n", namespace).get("status", {})
    return (
        status.get("numberAvailable", 0) == count and status.get("desiredNumberScheduled") == count
    )


def test_apply_runs_one_pod_per_node_shown_as_upstream_prints_it(served, tmp_path):
    """One pod per node, pinned by required affinity ``metadata.name`` and placed by the
    scheduler; ``get ds`` (wide), ``get controllerrevisions``, ``get all`` and ``describe``."""
    created = served.ok("apply", "-f", _write(tmp_path, "ds.yaml", agent("fluentd")))
    assert created.strip() == "daemonset.apps/fluentd created"
    # (A node deleted by an earlier test keeps its bound pod for pod GC's 40 s quarantine.)
    eventually(lambda: "node-3" in _running_nodes(served, "default", "fluentd"))
    eventually(lambda: _available(served, "fluentd", "default", 3))
    rows = table_rows(served.ok("get", "ds", "fluentd"))
    assert rows[0] == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "NODE",
        "SELECTOR",
        "AGE",
    ]
    assert rows[1][:7] == ["fluentd", "3", "3", "3", "3", "3", "<none>"]
    wide = table_rows(served.ok("get", "ds", "fluentd", "-o", "wide"))
    assert wide[0][-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1][-3:] == ["agent", "fluentd:v1", "app=fluentd"]
    pod = _pods(served, "default", "fluentd")[0]
    terms = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert terms["nodeSelectorTerms"] == [
        {
            "matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [pod["spec"]["nodeName"]]}
            ]
        }
    ]
    assert {
        "key": "node.kubernetes.io/unschedulable",
        "operator": "Exists",
        "effect": "NoSchedule",
    } in pod["spec"]["tolerations"]
    revisions = table_rows(served.ok("get", "controllerrevisions", "-n", "default"))
    assert revisions[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert revisions[1][1:3] == ["daemonset.apps/fluentd", "1"]
    assert (
        pod["metadata"]["labels"]["controller-revision-hash"] == revisions[1][0].rsplit("-", 1)[1]
    )
    everything = served.ok("get", "all", "-n", "default")
    assert "daemonset.apps/fluentd" in everything
    describe = served.ok("describe", "ds", "fluentd")
    assert "Desired Number of Nodes Scheduled: 3" in describe
    assert "Pods Status:  3 Running / 0 Waiting / 0 Succeeded / 0 Failed" in describe
    assert "Created pod: fluentd-" in describe


def test_nodes_gain_and_lose_the_pod_with_their_labels(served, tmp_path):
    """updateNode/addNode: a node labelled into the nodeSelector gets a pod, unlabelled it
    loses it; a Node created with ``kubectl create`` gets a kubelet and its pod."""
    served.ok("create", "namespace", "labelled")
    text = agent("gpu-agent", "labelled", nodeSelector="{gpu: 'true'}")
    served.ok("apply", "-f", _write(tmp_path, "gpu.yaml", text))
    assert table_rows(served.ok("get", "ds", "gpu-agent", "-n", "labelled"))[1][6] == "gpu=true"
    served.ok("label", "node", "node-2", "gpu=true")
    eventually(lambda: _running_nodes(served, "labelled", "gpu-agent") == ["node-2"])
    served.ok("label", "node", "node-2", "gpu-")
    eventually(lambda: not _pods(served, "labelled", "gpu-agent"))
    node = (
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-gpu\n  labels: {gpu: 'true'}\n"
        "status:\n  capacity: {cpu: '4', memory: 16Gi, pods: '110'}\n"
        "  allocatable: {cpu: '4', memory: 16Gi, pods: '110'}\n"
    )
    served.ok("create", "-f", _write(tmp_path, "node.yaml", node))
    try:
        eventually(lambda: _running_nodes(served, "labelled", "gpu-agent") == ["node-gpu"])
    finally:
        served.ok("delete", "ds", "gpu-agent", "-n", "labelled")
        served.ok("delete", "node", "node-gpu")


def test_image_change_rolls_node_by_node_and_rollout_commands_work(served):
    """rollingUpdate with maxUnavailable 1: never two old pods deleted before a new one
    is created; ``rollout status`` waits for it; ``rollout history`` lists the revisions;
    ``rollout undo`` sends revision 1's patch back, which becomes revision 3;
    ``undo --to-revision`` of the current one is skipped."""
    served.ok("create", "namespace", "rolling")
    served.ok("apply", "-f", "-", stdin=agent("roll", "rolling"))
    eventually(lambda: _available(served, "roll", "rolling", 3))
    served.ok("set", "image", "ds/roll", "agent=fluentd:v2", "-n", "rolling")
    status = served.kubectl("rollout", "status", "ds/roll", "-n", "rolling", timeout=90)
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines()[-1] == 'daemon set "roll" successfully rolled out'
    images = {p["spec"]["containers"][0]["image"] for p in _pods(served, "rolling", "roll")}
    assert images == {"fluentd:v2"}
    events = served.json(
        "get", "events", "-n", "rolling", "--field-selector", "involvedObject.name=roll"
    )["items"]
    ordered = sorted(events, key=lambda e: int(e["metadata"]["resourceVersion"]))
    steps = [
        e["reason"] for e in ordered if e["reason"] in ("SuccessfulCreate", "SuccessfulDelete")
    ]
    # After the first three creations: one node at a time, its old pod gone first.
    assert steps[3:] == ["SuccessfulDelete", "SuccessfulCreate"] * 3
    history = served.ok("rollout", "history", "ds/roll", "-n", "rolling")
    assert table_rows(history)[1:] == [
        ["REVISION", "CHANGE-CAUSE"],
        ["1", "<none>"],
        ["2", "<none>"],
    ]
    assert (
        served.ok("rollout", "undo", "ds/roll", "-n", "rolling").strip()
        == "daemonset.apps/roll rolled back"
    )
    assert (
        served.kubectl("rollout", "status", "ds/roll", "-n", "rolling", timeout=90).returncode == 0
    )
    images = {p["spec"]["containers"][0]["image"] for p in _pods(served, "rolling", "roll")}
    assert images == {"fluentd:v1"}
    history = served.ok("rollout", "history", "ds/roll", "-n", "rolling")
    assert [row[0] for row in table_rows(history)[2:]] == ["2", "3"]  # revision 1 moved to 3
    skipped = served.ok("rollout", "undo", "ds/roll", "-n", "rolling", "--to-revision=3")
    assert skipped.strip() == (
        "daemonset.apps/roll skipped rollback (current template already matches revision 3)"
    )
    detail = served.ok("rollout", "history", "ds/roll", "-n", "rolling", "--revision=2")
    assert "Image:\tfluentd:v2" in detail


def test_delete_removes_the_pods_and_the_history(served):
    """Garbage collection: the DaemonSet owns its pods and ControllerRevisions."""
    served.ok("create", "namespace", "deleting")
    served.ok("apply", "-f", "-", stdin=agent("gone", "deleting"))
    eventually(lambda: len(_pods(served, "deleting", "gone")) == 3)
    assert (
        served.ok("delete", "ds", "gone", "-n", "deleting").strip()
        == 'daemonset.apps "gone" deleted'
    )
    eventually(lambda: not _pods(served, "deleting", "gone"))
    eventually(lambda: not served.json("get", "controllerrevisions", "-n", "deleting")["items"])


def test_a_tenant_manages_daemonsets_within_its_allowlist(served):
    """Tenant policy: DaemonSets like Deployments (the template's class is checked at
    apply), ControllerRevisions read-only (upstream's admin role only views them)."""
    allowed = agent("tenant-agent", "kestrel-web", priorityClassName="uber-user-preempt-high")
    assert "created" in served.ok("apply", "-f", "-", stdin=allowed, context=ALICE)
    eventually(lambda: len(_pods(served, "kestrel-web", "tenant-agent")) == 3)
    forbidden = agent("infra-agent", "kestrel-web", priorityClassName="uber-infra-critical")
    refused = served.kubectl("apply", "-f", "-", stdin=forbidden, context=ALICE)
    assert refused.returncode == 1
    assert (
        'daemonsets.apps "infra-agent" is forbidden: pod template: PriorityClass '
        '"uber-infra-critical" is not allowed in namespace "kestrel-web" (tenant "kestrel")'
        in refused.stderr
    )
    assert "tenant-agent-" in served.ok(
        "get", "controllerrevisions", "-n", "kestrel-web", context=ALICE
    )
    delete = served.kubectl(
        "delete", "controllerrevisions", "--all", "-n", "kestrel-web", context=ALICE
    )
    assert 'cannot delete resource "controllerrevisions" in API group "apps"' in delete.stderr
    outside = served.kubectl("apply", "-f", "-", stdin=agent("x", "default"), context=ALICE)
    assert (
        'User "alice" cannot get resource "daemonsets" in API group "apps" in the namespace '
        '"default"' in outside.stderr
    )
    served.ok("delete", "ds", "tenant-agent", "-n", "kestrel-web", context=ALICE)
    eventually(lambda: not _pods(served, "kestrel-web", "tenant-agent"))


def test_the_python_client_reads_a_daemon_sets_status(served):
    """The official client decodes DaemonSet status (its four required counts) and lists
    ControllerRevisions."""
    served.ok("create", "namespace", "python")
    served.ok("apply", "-f", "-", stdin=agent("py", "python"))
    eventually(lambda: _available(served, "py", "python", 3))
    with served.client() as api:
        apps = k8s.AppsV1Api(api)
        status = apps.read_namespaced_daemon_set_status("py", "python").status
        assert (status.desired_number_scheduled, status.current_number_scheduled) == (3, 3)
        assert (status.number_ready, status.number_available, status.number_misscheduled) == (
            3,
            3,
            0,
        )
        assert status.observed_generation == 1
        ds = apps.read_namespaced_daemon_set("py", "python")
        assert ds.spec.update_strategy.rolling_update.max_unavailable == 1
        [revision] = apps.list_namespaced_controller_revision("python").items
        assert revision.revision == 1
        assert revision.data["spec"]["template"]["$patch"] == "replace"


def test_drain_leaves_daemon_pods_to_ignore_daemonsets(served):
    """kubectl drain's DaemonSet filter: it finds the owning DaemonSet, refuses without
    ``--ignore-daemonsets`` and, with it, leaves the daemon pods (which tolerate the
    cordon's ``unschedulable`` taint) where they are."""
    # (A node deleted by an earlier test keeps its bound pod for pod GC's 40 s quarantine.)
    eventually(lambda: "node-3" in _running_nodes(served, "default", "fluentd"))
    refused = served.kubectl("drain", "node-3", "--timeout=20s")
    assert refused.returncode == 1
    assert (
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/fluentd-"
        in refused.stderr
    )
    try:
        drained = served.kubectl(
            "drain", "node-3", "--ignore-daemonsets", "--timeout=30s", timeout=60
        )
        assert drained.returncode == 0, drained.stderr
        assert "Warning: ignoring DaemonSet-managed Pods: " in drained.stderr
        assert "default/fluentd-" in drained.stderr
        assert "node/node-3 drained" in drained.stdout
        assert "node-3" in _running_nodes(served, "default", "fluentd")
    finally:
        served.ok("uncordon", "node-3")


# --- preemption: a server of its own, whose nodes are full ----------------------------------------

CLASSES_AND_FILLER = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: node-agent}
value: 1000000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: filler}
value: 100
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: filler, namespace: default}
spec:
  replicas: 4
  selector: {matchLabels: {app: filler}}
  template:
    metadata: {labels: {app: filler}}
    spec:
      priorityClassName: filler
      terminationGracePeriodSeconds: 3
      containers:
      - name: f
        image: busybox
        resources: {requests: {cpu: "2"}}
"""


@pytest.fixture
def full(tmp_path: Path) -> Iterator[ServeProcess]:
    server = ServeProcess(tmp_path / "data", tmp_path / "cache", ["--nodes", "2"]).start()
    try:
        yield server
    finally:
        assert server.stop() == 0, server.log()


def test_a_high_class_daemon_set_preempts_on_each_full_node(full, tmp_path):
    """DefaultPreemption for daemon pods: on each full node the agent preempts one filler
    pod there (its affinity makes that node the only candidate); the victim gets
    DisruptionTarget/PreemptionByScheduler and a Preempted event, the agent is nominated
    to its node while the victim terminates, then runs there."""
    full.ok("apply", "-f", _write(tmp_path, "filler.yaml", CLASSES_AND_FILLER))
    eventually(lambda: _running_nodes(full, "default", "filler") == ["node-1"] * 2 + ["node-2"] * 2)
    with full.watch_events("pods", "-n", "default", into=tmp_path / "watch.json") as events:
        text = agent("log-agent", "default", priorityClassName="node-agent")
        full.ok("apply", "-f", "-", stdin=text)
        eventually(
            lambda: _running_nodes(full, "default", "log-agent") == ["node-1", "node-2"], timeout=30
        )
    victims: dict[str, str] = {}
    for event in events:
        obj = event["object"]
        if any(
            c["type"] == "DisruptionTarget" and c.get("reason") == "PreemptionByScheduler"
            for c in obj["status"].get("conditions", [])
        ):
            victims[obj["metadata"]["name"]] = obj["spec"]["nodeName"]
    assert sorted(victims.values()) == ["node-1", "node-2"]
    assert all(name.startswith("filler-") for name in victims)
    nominated = {
        e["object"]["metadata"]["name"]: e["object"]["status"]["nominatedNodeName"]
        for e in events
        if e["object"]["metadata"]["labels"].get("app") == "log-agent"
        and e["object"]["status"].get("phase") == "Pending"
        and e["object"]["status"].get("nominatedNodeName")
    }
    placed = {
        p["metadata"]["name"]: p["spec"]["nodeName"] for p in _pods(full, "default", "log-agent")
    }
    assert nominated == placed
    preempted = full.ok("get", "events", "-n", "default", "--field-selector", "reason=Preempted")
    assert preempted.count("Preempted by pod ") == 2
    # Two filler replacements wait: the nodes are full of pods of at least their priority.
    eventually(
        lambda: (
            sum(p["status"].get("phase") == "Pending" for p in _pods(full, "default", "filler"))
            == 2
        )
    )
    rows = table_rows(full.ok("get", "ds", "log-agent"))
    assert rows[1][1:6] == ["2", "2", "2", "2", "2"]
