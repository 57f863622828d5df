"""Server-side Tables: upstream's columns and cells per kind (kubectl-wire.md §3).

Upstream: ``pkg/printers/internalversion/printers.go`` (column definitions, printPod,
printNode, printEvent, printJob, ...) and ``apimachinery/pkg/util/duration/duration_test.go``.
"""

from __future__ import annotations

import pytest

from kubeprio.api.coordination import Lease, LeaseSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver import podtable, tableformat, tables, workloadtables
from tests.conftest import EPOCH
from tests.unit.apiserver.http_helpers import TABLE_ACCEPT, make_client, pod_manifest


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-2, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (5 * 60 + 3, "5m3s"),
        (10 * 60, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 5 * 60, "3h5m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (48 * 3600, "2d"),
        (2 * 86400 + 4 * 3600, "2d4h"),
        (8 * 86400, "8d"),
        (2 * 365 * 86400, "2y"),
        (3 * 365 * 86400 + 20 * 86400, "3y20d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration_matches_upstream(seconds, text):
    """``duration.HumanDuration`` (duration_test.go TestHumanDuration)."""
    assert tableformat.human_duration(seconds) == text


def _pod(**overrides):
    data = pod_manifest("p")
    data["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    for key, value in overrides.items():
        data.setdefault(key, {}).update(value)
    from kubeprio.api.core import Pod

    return from_dict(Pod, data)


RUNNING = {
    "phase": "Running",
    "containerStatuses": [
        {"name": "c", "ready": True, "restartCount": 2, "state": {"running": {}}}
    ],
}


@pytest.mark.parametrize(
    ("overrides", "ready", "status", "restarts"),
    [
        ({}, "0/1", "", "0"),
        ({"status": {"phase": "Pending"}}, "0/1", "Pending", "0"),
        ({"status": RUNNING}, "1/1", "Running", "2"),
        (
            {"status": RUNNING, "metadata": {"deletionTimestamp": "2026-01-01T00:01:00Z"}},
            "1/1",
            "Terminating",
            "2",
        ),
        ({"status": {"phase": "Failed", "reason": "Evicted"}}, "0/1", "Evicted", "0"),
        (
            {
                "status": {
                    "phase": "Pending",
                    "containerStatuses": [
                        {"name": "c", "state": {"waiting": {"reason": "ContainerCreating"}}}
                    ],
                }
            },
            "0/1",
            "ContainerCreating",
            "0",
        ),
        (
            {
                "status": {
                    "phase": "Succeeded",
                    "containerStatuses": [
                        {
                            "name": "c",
                            "state": {"terminated": {"reason": "Completed", "exitCode": 0}},
                        }
                    ],
                }
            },
            "0/1",
            "Completed",
            "0",
        ),
        (
            {
                "status": {
                    "phase": "Failed",
                    "containerStatuses": [{"name": "c", "state": {"terminated": {"exitCode": 3}}}],
                }
            },
            "0/1",
            "ExitCode:3",
            "0",
        ),
        (
            {
                "status": {"phase": "Succeeded"},
                "metadata": {"deletionTimestamp": "2026-01-01T00:01:00Z"},
            },
            "0/1",
            "Succeeded",
            "0",
        ),
    ],
    ids=[
        "no-status",
        "pending",
        "running",
        "terminating",
        "evicted",
        "waiting",
        "completed",
        "exit-code",
        "terminal-not-terminating",
    ],
)
def test_pod_ready_status_restarts(overrides, ready, status, restarts):
    cells, _ = podtable.print_pod(_pod(**overrides), EPOCH + 90)
    assert cells[:5] == ["p", ready, status, restarts, "90s"]


def test_pod_wide_cells_ip_node_nominated_node_readiness_gates():
    pod = _pod(spec={"nodeName": "n1"}, status={"podIP": "10.0.0.1", "nominatedNodeName": "n2"})
    cells, _ = podtable.print_pod(pod, EPOCH)
    assert cells[5:] == ["10.0.0.1", "n1", "n2", "<none>"]


def _columns(client, path):
    body = client.get(path, headers={"Accept": TABLE_ACCEPT}).json()
    assert body["kind"] == "Table"
    return [(c["name"], c["priority"]) for c in body["columnDefinitions"]], body


@pytest.mark.parametrize(
    ("path", "columns"),
    [
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            [("Name", 0), ("Value", 0), ("Global-Default", 0), ("Age", 0), ("PreemptionPolicy", 1)],
        ),
        (
            "/api/v1/namespaces/default/pods",
            [
                ("Name", 0),
                ("Ready", 0),
                ("Status", 0),
                ("Restarts", 0),
                ("Age", 0),
                ("IP", 1),
                ("Node", 1),
                ("Nominated Node", 1),
                ("Readiness Gates", 1),
            ],
        ),
        (
            "/api/v1/nodes",
            [
                ("Name", 0),
                ("Status", 0),
                ("Roles", 0),
                ("Age", 0),
                ("Version", 0),
                ("Internal-IP", 1),
                ("External-IP", 1),
                ("OS-Image", 1),
                ("Kernel-Version", 1),
                ("Container-Runtime", 1),
            ],
        ),
        (
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            [
                ("Name", 0),
                ("Min Available", 0),
                ("Max Unavailable", 0),
                ("Allowed Disruptions", 0),
                ("Age", 0),
            ],
        ),
        (
            "/apis/apps/v1/namespaces/default/deployments",
            [
                ("Name", 0),
                ("Ready", 0),
                ("Up-to-date", 0),
                ("Available", 0),
                ("Age", 0),
                ("Containers", 1),
                ("Images", 1),
                ("Selector", 1),
            ],
        ),
        (
            "/apis/apps/v1/namespaces/default/replicasets",
            [
                ("Name", 0),
                ("Desired", 0),
                ("Current", 0),
                ("Ready", 0),
                ("Age", 0),
                ("Containers", 1),
                ("Images", 1),
                ("Selector", 1),
            ],
        ),
        (
            "/api/v1/namespaces/default/events",
            [
                ("Last Seen", 0),
                ("Type", 0),
                ("Reason", 0),
                ("Object", 0),
                ("Subobject", 1),
                ("Source", 1),
                ("Message", 0),
                ("First Seen", 1),
                ("Count", 1),
                ("Name", 1),
            ],
        ),
        ("/api/v1/namespaces", [("Name", 0), ("Status", 0), ("Age", 0)]),
        (
            "/apis/batch/v1/namespaces/default/jobs",
            [
                ("Name", 0),
                ("Status", 0),
                ("Completions", 0),
                ("Duration", 0),
                ("Age", 0),
                ("Containers", 1),
                ("Images", 1),
                ("Selector", 1),
            ],
        ),
        ("/apis/kubeprio.io/v1alpha1/tenants", [("Name", 0), ("Age", 0)]),
        (
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            [("Name", 0), ("Holder", 0), ("Age", 0)],
        ),
    ],
    ids=[
        "priorityclasses",
        "pods",
        "nodes",
        "pdbs",
        "deployments",
        "replicasets",
        "events",
        "namespaces",
        "jobs",
        "tenants",
        "leases",
    ],
)
def test_column_definitions_per_kind(api, path, columns):
    client = make_client(api)
    got, body = _columns(client, path)
    assert got == columns
    assert body["metadata"]["resourceVersion"]


def test_priority_class_rows_and_partial_object_metadata(api, clock):
    client = make_client(api)
    clock.advance(300)
    _, body = _columns(client, "/apis/scheduling.k8s.io/v1/priorityclasses")
    row = body["rows"][0]
    assert row["cells"] == [
        "system-cluster-critical",
        2000000000,
        False,
        "5m",
        "PreemptLowerPriority",
    ]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["apiVersion"] == "meta.k8s.io/v1"
    assert row["object"]["metadata"]["name"] == "system-cluster-critical"


@pytest.mark.parametrize(("include", "kind"), [("Object", "PriorityClass"), ("None", None)])
def test_include_object(api, include, kind):
    client = make_client(api)
    body = client.get(
        f"/apis/scheduling.k8s.io/v1/priorityclasses?includeObject={include}",
        headers={"Accept": TABLE_ACCEPT},
    ).json()
    assert body["rows"][0].get("object", {}).get("kind") == kind


def test_single_get_is_a_one_row_table(api):
    client = make_client(api)
    body = client.get(
        "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical",
        headers={"Accept": TABLE_ACCEPT},
    ).json()
    assert [row["cells"][0] for row in body["rows"]] == ["system-node-critical"]


def test_node_status_roles_and_cordon():
    from kubeprio.api.core import Node

    node = from_dict(
        Node,
        {
            "metadata": {
                "name": "n1",
                "labels": {
                    "node-role.kubernetes.io/control-plane": "",
                    "kubernetes.io/role": "worker",
                },
            },
            "spec": {"unschedulable": True},
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
                "nodeInfo": {"kubeletVersion": "v1.32.0"},
            },
        },
    )
    cells, _ = tables.print_node(node, EPOCH)
    assert cells[:3] == ["n1", "Ready,SchedulingDisabled", "control-plane,worker"]
    assert cells[4:6] == ["v1.32.0", "10.0.0.5"]


def test_pdb_unset_bound_is_na():
    from kubeprio.api.policy import PodDisruptionBudget

    pdb = from_dict(
        PodDisruptionBudget,
        {
            "metadata": {"name": "b"},
            "spec": {"maxUnavailable": "50%"},
            "status": {"disruptionsAllowed": 2},
        },
    )
    cells, _ = tables.print_pdb(pdb, EPOCH)
    assert cells[:4] == ["b", "N/A", "50%", 2]


def test_event_object_source_and_count():
    from kubeprio.api.core import Event

    event = from_dict(
        Event,
        {
            "metadata": {"name": "e1"},
            "involvedObject": {"kind": "Pod", "name": "web-1"},
            "reason": "Preempted",
            "message": " by default/high on node n1 ",
            "type": "Normal",
            "source": {"component": "default-scheduler"},
            "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": "2026-01-01T00:00:30Z",
        },
    )
    cells, _ = tables.print_event(event, EPOCH + 60)
    assert cells == [
        "30s",
        "Normal",
        "Preempted",
        "pod/web-1",
        "",
        "default-scheduler",
        "by default/high on node n1",
        "60s",
        1,
        "e1",
    ]


def test_job_status_completions_and_duration():
    from kubeprio.api.batch import Job

    job = from_dict(
        Job,
        {
            "metadata": {"name": "j"},
            "spec": {"completions": 3},
            "status": {
                "succeeded": 3,
                "startTime": "2026-01-01T00:00:00Z",
                "completionTime": "2026-01-01T00:02:05Z",
                "conditions": [{"type": "Complete", "status": "True"}],
            },
        },
    )
    cells, _ = workloadtables.print_job(job, EPOCH + 600)
    assert cells[:4] == ["j", "Complete", "3/3", "2m5s"]


def test_lease_rows_show_the_holder_and_an_unset_holder_as_empty(api, clock):
    # printLease: NAME HOLDER AGE, an unset holderIdentity prints as "".
    for name, holder in (("node-1", "node-1"), ("orphan", None)):
        api.create(
            Lease(
                metadata=ObjectMeta(name=name, namespace="kube-node-lease"),
                spec=LeaseSpec(holder_identity=holder, lease_duration_seconds=40),
            )
        )
    clock.advance(90)
    _, body = _columns(
        make_client(api), "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    )
    assert [row["cells"] for row in body["rows"]] == [
        ["node-1", "node-1", "90s"],
        ["orphan", "", "90s"],
    ]
