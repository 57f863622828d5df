"""Real cluster snapshots simulate as the real clusters behaved (issue 4, "Real clusters").

The k3s set (shared/fixtures/real-clusters, SOURCES.md set A) is a complete scheduling
snapshot: every bound pod stays where it was (Succeeded pods hold no resources) and the
two 800m ``cpu-intensive-app`` pods stay Pending with the real scheduler's message.
"""

from __future__ import annotations

import pytest

from kubeprio.api import manifest
from kubeprio.api.core import Pod
from kubeprio.api.serialization import to_dict
from kubeprio.sim.report import to_json
from kubeprio.sim.simulate import simulate
from tests.conftest import REAL_CLUSTERS

K3S = [
    "replicatedhq__troubleshoot__k3s-bundle-nodes.json",
    "replicatedhq__troubleshoot__k3s-bundle-priorityclasses.json",
    "replicatedhq__troubleshoot__k3s-bundle-pods-default.json",
    "replicatedhq__troubleshoot__k3s-bundle-pods-kube-system.json",
]
REAL_MESSAGE = (
    "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
    "1 No preemption victims found for incoming pod."
)


def _documents() -> list[manifest.Document]:
    documents: list[manifest.Document] = []
    for name in K3S:
        documents += manifest.parse_text((REAL_CLUSTERS / name).read_text(), name)
    return documents


def test_k3s_snapshot_keeps_every_bound_pod_and_leaves_the_two_800m_pods_pending() -> None:
    documents = _documents()
    given = {
        d.data["metadata"]["name"]: d.data["spec"].get("nodeName")
        for d in documents
        if d.data.get("kind") == "Pod"
    }
    report, _cluster = simulate(documents, seed=0)
    pods = {p["name"]: p for p in report["pods"]}
    assert set(pods) == set(given)
    for name, node in given.items():
        if node:
            assert pods[name]["node"] == node, name
    pending = sorted(name for name, p in pods.items() if p["node"] is None)
    assert pending == ["cpu-intensive-app-7bcfc5d944-hw2vc", "cpu-intensive-app-7bcfc5d944-n79rt"]
    for name in pending:
        assert pods[name]["pendingMessage"] == REAL_MESSAGE
    assert {p["phase"] for p in pods.values() if p["name"].startswith("helm-install")} == {
        "Succeeded"
    }
    assert report["rejected"] == []
    assert {e["name"] for e in report["existing"]} == {
        "system-cluster-critical",
        "system-node-critical",
    }
    assert report["preemptions"] == []


def test_same_inputs_and_seed_give_a_byte_identical_report() -> None:
    first, _ = simulate(_documents(), seed=3)
    second, _ = simulate(_documents(), seed=3)
    assert to_json(first) == to_json(second)


GKE = [
    "criticalhop__kalc__gke-daemonset-eviction-nodes.yaml",
    "criticalhop__kalc__gke-daemonset-eviction-priorityclass.yaml",
    "criticalhop__kalc__gke-daemonset-eviction-pods.yaml",
]
OPENSHIFT = [
    "openshift__must-gather-clean__aws-openshift-ingress-pods.yaml",
    "openshift__must-gather-clean__aws-openshift-ingress-pdb.yaml",
    "openshift__must-gather-clean__aws-openshift-ingress-replicasets.yaml",
]


@pytest.mark.parametrize("files", [GKE, OPENSHIFT], ids=["gke-1.12", "openshift-4.8"])
def test_snapshot_of_a_settled_cluster_stays_as_it_was(files: list[str]) -> None:
    """SOURCES.md sets B and C: every pod was Running or Succeeded, none Pending.

    Loaded as they are (old API versions, unquoted timestamps, a ReplicaSet owning its
    pods by uid), nothing moves, no controller creates extra pods, nobody is preempted.
    """
    documents: list[manifest.Document] = []
    for name in files:
        documents += manifest.parse_text((REAL_CLUSTERS / name).read_text(), name)
    given = {
        d.data["metadata"]["name"]: (d.data["spec"].get("nodeName"), d.data["status"]["phase"])
        for d in documents
        if d.data.get("kind") == "Pod"
    }
    report, _cluster = simulate(documents, seed=0, until=600)
    pods = {p["name"]: p for p in report["pods"]}
    assert set(pods) == set(given)
    for name, (node, phase) in given.items():
        assert pods[name]["node"] == node, name
        assert pods[name]["phase"] == phase, name
        assert not pods[name]["deleted"], name
    assert report["preemptions"] == []
    assert report["rejected"] == []


ACCOUNT_FIELDS = ("serviceAccountName", "serviceAccount", "automountServiceAccountToken")


@pytest.mark.parametrize(
    "files", [K3S, GKE, OPENSHIFT], ids=["k3s-1.33", "gke-1.12", "openshift-4.8"]
)
def test_pods_keep_their_service_accounts_and_token_volumes(files: list[str]) -> None:
    """simulate runs no ServiceAccount admission plugin (docs/admission.md): a snapshot's pods
    name accounts the dump does not hold and already carry their ``kube-api-access-*``
    volumes and mounts; they load as written, neither refused nor given a second volume."""
    documents: list[manifest.Document] = []
    for name in files:
        documents += manifest.parse_text((REAL_CLUSTERS / name).read_text(), name)
    given = {
        (d.data["metadata"]["namespace"], d.data["metadata"]["name"]): d.data["spec"]
        for d in documents
        if d.data.get("kind") == "Pod"
    }
    report, cluster = simulate(documents, seed=0, until=1)
    assert report["rejected"] == []
    for (namespace, name), spec in given.items():
        stored = to_dict(cluster.api.get(Pod, name, namespace))["spec"]  # type: ignore[attr-defined]
        for field in ACCOUNT_FIELDS:
            assert stored.get(field) == spec.get(field), (name, field)
        assert stored.get("volumes") == spec.get("volumes"), name
        for kind in ("initContainers", "containers"):
            mounts = [c.get("volumeMounts") for c in stored.get(kind) or ()]
            assert mounts == [c.get("volumeMounts") for c in spec.get(kind) or ()], name


def test_a_manifest_pod_gets_no_account_or_token_in_a_simulation() -> None:
    documents = manifest.parse_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\n"
        "spec: {containers: [{name: c, image: nginx}]}\n",
        "pod.yaml",
    )
    report, cluster = simulate(documents, seed=0, until=1)
    assert report["rejected"] == []
    spec = to_dict(cluster.api.get(Pod, "p", "team"))["spec"]  # type: ignore[attr-defined]
    assert "serviceAccountName" not in spec
    assert "volumes" not in spec
