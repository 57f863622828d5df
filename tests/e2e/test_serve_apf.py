"""ComponentStatus and API Priority and Fairness against a live ``kubeprio serve``, with
the real kubectl (v1.32) and the official Python client.

One server for the module. Rules checked: ``componentstatuses`` as
``pkg/registry/core/componentstatus/rest.go`` serves it over storage_core.go's servers
(``controller-manager``, ``scheduler``, ``etcd-0``), kubectl's deprecation warning and
``printComponentStatus``'s NAME STATUS MESSAGE ERROR; an unknown component's plain error.
"""

from __future__ import annotations

from collections.abc import Iterator

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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-apf", ["--nodes", "1"]) as server:
        yield server


def test_kubectl_get_cs_warns_and_prints_every_component(served):
    result = served.kubectl("get", "cs")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "Warning: v1 ComponentStatus is deprecated in v1.19+\n"
    assert table_rows(result.stdout) == [
        ["NAME", "STATUS", "MESSAGE", "ERROR"],
        ["controller-manager", "Healthy", "ok"],
        ["scheduler", "Healthy", "ok"],
        ["etcd-0", "Healthy", "ok"],
    ]


def test_kubectl_get_an_unknown_component(served):
    result = served.kubectl("get", "componentstatus", "nope")
    assert result.returncode == 1
    assert result.stderr.endswith("Error from server: Component not found: nope\n")


def test_python_client_lists_component_statuses(served):
    with served.client() as api:
        listed = k8s.CoreV1Api(api).list_component_status()
        names = [item.metadata.name for item in listed.items]
        assert names == ["controller-manager", "scheduler", "etcd-0"]
        one = k8s.CoreV1Api(api).read_component_status("scheduler")
        assert [(c.type, c.status, c.message) for c in one.conditions] == [
            ("Healthy", "True", "ok")
        ]


# --- API Priority and Fairness -------------------------------------------------------------

BOOTSTRAP_SCHEMAS = [
    # name, priority level, precedence, distinguisher (bootstrap/default.go)
    ("catch-all", "catch-all", "10000", "ByUser"),
    ("endpoint-controller", "workload-high", "150", "ByUser"),
    ("exempt", "exempt", "1", "<none>"),
    ("global-default", "global-default", "9900", "ByUser"),
    ("kube-controller-manager", "workload-high", "800", "ByNamespace"),
    ("kube-scheduler", "workload-high", "800", "ByNamespace"),
    ("kube-system-service-accounts", "workload-high", "900", "ByNamespace"),
    ("probes", "exempt", "2", "<none>"),
    ("service-accounts", "workload-low", "9000", "ByUser"),
    ("system-leader-election", "leader-election", "100", "ByUser"),
    ("system-node-high", "node-high", "400", "ByUser"),
    ("system-nodes", "system", "500", "ByUser"),
    ("workload-leader-election", "leader-election", "200", "ByUser"),
]
BOOTSTRAP_LEVELS = [
    ("catch-all", "Limited", "5", "<none>", "<none>", "<none>"),
    ("exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"),
    ("global-default", "Limited", "20", "128", "6", "50"),
    ("leader-election", "Limited", "10", "16", "4", "50"),
    ("node-high", "Limited", "40", "64", "6", "50"),
    ("system", "Limited", "30", "64", "6", "50"),
    ("workload-high", "Limited", "40", "128", "6", "50"),
    ("workload-low", "Limited", "100", "128", "6", "50"),
]


def test_kubectl_get_flowschemas_lists_the_bootstrap_schemas(served):
    def listed() -> list[list[str]] | None:
        rows = table_rows(served.ok("get", "flowschemas"))
        # MISSINGPL is "?" until the configuration loop has written Dangling.
        return rows if all(row[-1] == "False" for row in rows[1:]) else None

    rows = eventually(listed)
    assert rows[0] == [
        "NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"
    ]  # fmt: skip
    assert [(r[0], r[1], r[2], r[3]) for r in rows[1:]] == BOOTSTRAP_SCHEMAS


def test_kubectl_get_prioritylevelconfigurations_lists_the_bootstrap_levels(served):
    rows = table_rows(served.ok("get", "prioritylevelconfigurations"))
    assert rows[0] == [
        "NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"
    ]  # fmt: skip
    assert [tuple(r[:6]) for r in rows[1:]] == BOOTSTRAP_LEVELS


def test_every_request_carries_the_pf_headers_of_its_schema(served):
    uids = {
        item["metadata"]["name"]: item["metadata"]["uid"]
        for item in served.json("get", "flowschemas")["items"]
    }
    levels = {
        item["metadata"]["name"]: item["metadata"]["uid"]
        for item in served.json("get", "prioritylevelconfigurations")["items"]
    }
    # The admin is in system:masters: the exempt schema and level.
    result = served.kubectl("get", "ns", "default", "-v=8")
    assert result.returncode == 0, result.stderr
    assert f"X-Kubernetes-Pf-Flowschema-Uid: {uids['exempt']}" in result.stderr
    assert f"X-Kubernetes-Pf-Prioritylevel-Uid: {levels['exempt']}" in result.stderr


def test_python_client_reads_flowcontrol_objects_and_headers(served):
    with served.client() as api:
        flowcontrol = k8s.FlowcontrolApiserverV1Api(api)
        catch_all = flowcontrol.read_flow_schema("catch-all")
        assert catch_all.spec.matching_precedence == 10000
        assert catch_all.spec.distinguisher_method.type == "ByUser"
        [dangling] = catch_all.status.conditions
        assert (dangling.type, dangling.status, dangling.reason) == ("Dangling", "False", "Found")
        level = flowcontrol.read_priority_level_configuration("workload-low")
        assert level.spec.limited.nominal_concurrency_shares == 100
        assert level.spec.limited.lendable_percent == 90
        _, code, headers = flowcontrol.read_flow_schema_with_http_info("exempt")
        assert code == 200
        assert headers["X-Kubernetes-PF-FlowSchema-UID"] == (
            flowcontrol.read_flow_schema("exempt").metadata.uid
        )


def test_a_deleted_mandatory_object_comes_back_and_a_dangling_schema_is_marked(served):
    assert served.ok("delete", "flowschema", "catch-all") == (
        'flowschema.flowcontrol.apiserver.k8s.io "catch-all" deleted\n'
    )
    eventually(lambda: served.kubectl("get", "flowschema", "catch-all").returncode == 0 or None)
    manifest = """\
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: orphan}
spec:
  priorityLevelConfiguration: {name: nowhere}
  rules:
  - subjects: [{kind: User, user: {name: nobody}}]
    nonResourceRules: [{verbs: [get], nonResourceURLs: [/version]}]
"""
    assert served.ok("apply", "-f", "-", stdin=manifest) == (
        "flowschema.flowcontrol.apiserver.k8s.io/orphan created\n"
    )

    def marked() -> list[str] | None:
        rows = {r[0]: r for r in table_rows(served.ok("get", "flowschema"))[1:]}
        return rows["orphan"] if rows["orphan"][-1] == "True" else None

    row = eventually(marked)
    assert row[1:4] == ["nowhere", "1000", "<none>"]
    served.ok("delete", "flowschema", "orphan")


def test_validation_texts_reach_kubectl(served):
    manifest = """\
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: bad}
spec:
  type: Limited
  limited:
    lendablePercent: 101
    limitResponse: {type: Queue, queuing: {queues: 4, handSize: 5}}
"""
    result = served.kubectl("apply", "-f", "-", stdin=manifest)
    assert result.returncode == 1
    assert result.stderr == (
        'The PriorityLevelConfiguration "bad" is invalid: \n'
        "* spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be "
        "greater than queues (4)\n"
        "* spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive\n"
    )
