"""A platform engineer's kubectl session against ``kubeprio serve``, pinned where an audit
against upstream v1.32 found the server answering differently.

* ``kubectl rollout history deploy/x`` shows the ``kubernetes.io/change-cause`` annotated
  on the Deployment after its rollout began: the deployment controller copies the
  Deployment's annotations to the existing new ReplicaSet (``getNewReplicaSet`` /
  ``SetNewReplicaSetAnnotations`` / ``copyDeploymentAnnotationsToReplicaSet`` in
  ``pkg/controller/deployment``), and ``rollout history --revision=N`` prints it as the
  template's annotation; ``rollout undo`` reuses the old set with
  ``deployment.kubernetes.io/revision-history``.
* ``kubectl rollout pause`` makes ``kubectl describe deploy`` show ``Progressing Unknown
  DeploymentPaused`` (``checkPausedConditions``); resuming passes through
  ``DeploymentResumed`` back to ``NewReplicaSetAvailable``; ``rollout undo`` of a paused
  Deployment fails with kubectl's own text.
* ``kubectl describe node`` prints ``PodCIDRs`` under ``PodCIDR``: the API serves both
  fields, as upstream's NodeSpec conversion does; and the annotations of the TTL
  controller (``node.alpha.kubernetes.io/ttl: 0``) and the kubelet
  (``volumes.kubernetes.io/controller-managed-attach-detach: true``).
* ``rollout undo`` of a Deployment applied without ``resources`` reuses its first
  ReplicaSet: kubectl sends the template back with ``resources: {}``, which containers now
  always carry (upstream's field is a struct), so it equals and hashes as the first.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl, new_namespace, running

pytestmark = [pytest.mark.e2e, needs_kubectl]

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: c, image: "nginx:1.25"}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "kubectlaudit", ["--nodes", "2"]) as process:
        yield process


def _rolled_out(server: ServeProcess, ns: str) -> None:
    server.ok("rollout", "status", "deploy/web", "-n", ns, "--timeout=30s")


def _progressing(server: ServeProcess, ns: str) -> tuple[str, str]:
    conditions = server.json("get", "deploy/web", "-n", ns)["status"]["conditions"]
    (condition,) = [c for c in conditions if c["type"] == "Progressing"]
    return condition["status"], condition["reason"]


def test_rollout_history_shows_change_cause_annotated_after_the_rollout(
    server: ServeProcess,
) -> None:
    ns = new_namespace(server, "history")
    server.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)
    _rolled_out(server, ns)
    server.ok("set", "image", "deploy/web", "c=nginx:1.26", "-n", ns)
    server.ok("annotate", "deploy/web", "kubernetes.io/change-cause=bump to 1.26", "-n", ns)
    _rolled_out(server, ns)

    def history() -> str | None:
        text = server.ok("rollout", "history", "deploy/web", "-n", ns)
        return text if "bump to 1.26" in text else None

    assert eventually(history) == (
        "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         bump to 1.26\n\n"
    )
    detail = server.ok("rollout", "history", "deploy/web", "-n", ns, "--revision=2")
    assert "  Annotations:\tkubernetes.io/change-cause: bump to 1.26\n" in detail
    assert "    Image:\tnginx:1.26\n" in detail

    assert (
        server.ok("rollout", "undo", "deploy/web", "-n", ns) == "deployment.apps/web rolled back\n"
    )
    _rolled_out(server, ns)
    # The first set is the new one again: revision 3, remembering it was 1; kubectl's
    # rollback copied the set's (absent) change-cause over the Deployment's.
    assert server.ok("rollout", "history", "deploy/web", "-n", ns) == (
        "deployment.apps/web \nREVISION  CHANGE-CAUSE\n2         bump to 1.26\n3         <none>\n\n"
    )
    columns = "custom-columns=REV:.metadata.annotations.deployment\\.kubernetes\\.io/revision,"
    columns += "HISTORY:.metadata.annotations.deployment\\.kubernetes\\.io/revision-history"
    rows = server.ok(
        "get",
        "rs",
        "-n",
        ns,
        "-o",
        columns,
        "--no-headers",
        "--sort-by=.metadata.annotations.deployment\\.kubernetes\\.io/revision",
    ).split()
    assert rows == ["2", "<none>", "3", "1"]


def test_paused_deployment_reports_progressing_unknown(server: ServeProcess) -> None:
    ns = new_namespace(server, "pause")
    server.ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)
    _rolled_out(server, ns)
    server.ok("set", "image", "deploy/web", "c=nginx:1.26", "-n", ns)
    _rolled_out(server, ns)
    server.ok("rollout", "pause", "deploy/web", "-n", ns)
    assert eventually(lambda: _progressing(server, ns) == ("Unknown", "DeploymentPaused") or None)
    described = server.ok("describe", "deploy/web", "-n", ns)
    assert "  Progressing    Unknown  DeploymentPaused\n" in described
    message = server.ok(
        "get",
        "deploy/web",
        "-n",
        ns,
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Progressing")].message}',
    )
    assert message == "Deployment is paused"

    server.ok("set", "image", "deploy/web", "c=nginx:1.27", "-n", ns)
    undo = server.kubectl("rollout", "undo", "deploy/web", "-n", ns)
    assert undo.returncode == 1
    assert undo.stderr == (
        "error: you cannot rollback a paused deployment; resume it first with "
        "'kubectl rollout resume' and try again\n"
    )
    # Paused: the new template waits, no third ReplicaSet.
    assert len(server.ok("get", "rs", "-n", ns, "-o", "name").split()) == 2

    server.ok("rollout", "resume", "deploy/web", "-n", ns)
    _rolled_out(server, ns)
    assert eventually(
        lambda: _progressing(server, ns) == ("True", "NewReplicaSetAvailable") or None
    )
    assert len(server.ok("get", "rs", "-n", ns, "-o", "name").split()) == 3


def test_describe_node_prints_pod_cidr_and_pod_cidrs(server: ServeProcess) -> None:
    spec = server.json("get", "node", "node-1")["spec"]
    assert spec["podCIDRs"] == [spec["podCIDR"]]
    described = server.ok("describe", "node", "node-1")
    assert f"PodCIDR:                      {spec['podCIDR']}\n" in described
    assert f"PodCIDRs:                     {spec['podCIDR']}\n" in described

    # The TTL controller's annotation (``ttl_controller.go``, 0 s up to 100 nodes) and the
    # kubelet's (``initialNode``), as on a real cluster without kubeadm or CSI drivers.
    def annotated() -> str | None:
        text = server.ok("describe", "node", "node-1")
        return text if "node.alpha.kubernetes.io/ttl" in text else None

    assert (
        "Annotations:        node.alpha.kubernetes.io/ttl: 0\n"
        "                    volumes.kubernetes.io/controller-managed-attach-detach: true\n"
        "CreationTimestamp:  "
    ) in eventually(annotated)
