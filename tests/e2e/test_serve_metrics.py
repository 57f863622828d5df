"""``kubectl get --raw /metrics`` against ``kubeprio serve``, after kubectl made pods preempt.

One server (``--preset kestrel``, three 4-CPU nodes) with a ``system:monitoring`` user in
its token file. Three fillers take every CPU, a higher-priority pod preempts one of them;
the page must then count what kube-scheduler and kube-apiserver would have counted
(upstream ``pkg/scheduler/metrics``, ``endpoints/metrics``), and only admins and
``system:monitoring`` may read it (``bootstrappolicy``'s ``system:monitoring`` role).
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl

pytestmark = [pytest.mark.e2e, needs_kubectl]

PROMETHEUS = "kubeprio-prometheus"
ALICE = "kubeprio-alice"
PROFILE = "default-scheduler"


def _pod(name: str, priority_class: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  priorityClassName: {priority_class}
  terminationGracePeriodSeconds: 1
  containers:
  - name: work
    image: busybox
    resources: {{requests: {{cpu: "4"}}}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    base = tmp_path_factory.mktemp("serve-metrics")
    (base / "data").mkdir()
    # A scraper's identity, as a cluster would bind Prometheus to system:monitoring.
    (base / "data" / "tokens.csv").write_text(
        'prometheus-token,prometheus,prometheus,"system:monitoring"\n'
    )
    process = ServeProcess(
        base / "data", base / "cache", ["--preset", "kestrel", "--nodes", "3", "--node-cpu", "4"]
    ).start()
    try:
        yield process
    finally:
        assert process.stop() == 0, process.log()


def _scrape(server: ServeProcess, context: str | None = None) -> dict[str, list]:
    text = server.ok("get", "--raw", "/metrics", context=context)
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def _value(families: dict[str, list], family: str, name: str, **labels: str) -> float:
    found = [
        s.value
        for s in families[family]
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def _requests(families: dict[str, list], **labels: str) -> float:
    """``apiserver_request_total`` for one full label set (``""`` where not given)."""
    full = dict.fromkeys(
        ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "code"), ""
    )
    full.update({"component": "apiserver", "version": "v1", **labels})
    matches = [
        s.value
        for s in families["apiserver_request"]
        if s.name == "apiserver_request_total" and s.labels == full
    ]
    return matches[0] if matches else 0.0


@pytest.fixture(scope="module")
def preempted(server: ServeProcess, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Fill the three nodes, then preempt one filler; the page once everything settled."""
    base = tmp_path_factory.mktemp("manifests")
    for i in range(3):
        path = base / f"filler-{i}.yaml"
        path.write_text(_pod(f"filler-{i}", "uber-user-preempt-medium"))
        server.ok("create", "-f", str(path))

    def running(names: set[str]) -> bool:
        pods = server.json("get", "pods", "-n", "default")["items"]
        phases = {p["metadata"]["name"]: p["status"].get("phase") for p in pods}
        return set(phases) == names and all(phase == "Running" for phase in phases.values())

    fillers = {f"filler-{i}" for i in range(3)}
    eventually(lambda: running(fillers) or None)
    path = base / "preemptor.yaml"
    path.write_text(_pod("preemptor", "uber-user-preempt-high"))
    server.ok("create", "-f", str(path))
    victims: list[str] = []

    def settled() -> bool | None:
        pods = {p["metadata"]["name"] for p in server.json("get", "pods", "-n", "default")["items"]}
        gone = fillers - pods
        if "preemptor" in pods and len(gone) == 1 and running(pods):
            victims.extend(gone)
            return True
        return None

    eventually(settled, timeout=30)
    return {"victims": victims, "families": _scrape(server)}


def test_the_scheduler_counts_what_kube_scheduler_would(preempted):
    families = preempted["families"]
    attempts = "scheduler_schedule_attempts"
    assert _value(families, attempts, f"{attempts}_total", profile=PROFILE, result="scheduled") == 4
    # The preemptor's first attempt at least (retries while the victim exits count too).
    assert (
        _value(families, attempts, f"{attempts}_total", profile=PROFILE, result="unschedulable")
        >= 1
    )
    assert not [s for s in families[attempts] if s.labels.get("result") == "error"]
    duration = "scheduler_scheduling_attempt_duration_seconds"
    assert _value(families, duration, f"{duration}_count", profile=PROFILE, result="scheduled") == 4
    victims = "scheduler_preemption_victims"
    assert _value(families, victims, f"{victims}_count") == 1
    assert _value(families, victims, f"{victims}_sum") == 1
    assert _value(families, victims, f"{victims}_bucket", le="1") == 1
    assert (
        _value(families, "scheduler_preemption_attempts", "scheduler_preemption_attempts_total")
        >= 1
    )
    per_pod = "scheduler_pod_scheduling_attempts"
    assert _value(families, per_pod, f"{per_pod}_count") == 4
    sli = "scheduler_pod_scheduling_sli_duration_seconds"
    assert _value(families, sli, f"{sli}_count", attempts="1") == 3  # the fillers
    for queue in ("active", "backoff", "unschedulable", "gated"):
        assert (
            _value(families, "scheduler_pending_pods", "scheduler_pending_pods", queue=queue) == 0
        )
    incoming = "scheduler_queue_incoming_pods"
    assert (
        _value(families, incoming, f"{incoming}_total", queue="active", event="UnschedulablePodAdd")
        == 4
    )


def test_the_api_server_counts_kubectls_requests(server, preempted):
    families = preempted["families"]
    pods = {"group": "", "resource": "pods"}
    # kubectl create -f: one POST per pod (scope resource), answered 201.
    assert _requests(families, verb="POST", scope="resource", code="201", **pods) == 4
    assert _requests(families, verb="LIST", scope="namespace", code="200", **pods) >= 1
    before_list = _requests(families, verb="LIST", scope="namespace", code="200", **pods)

    server.ok("get", "pods", "-n", "default")
    server.ok("get", "pods", "-n", "default")
    missing = server.kubectl("get", "pod", "nosuch", "-n", "default")
    assert missing.returncode == 1
    server.ok("get", "priorityclasses")
    after = _scrape(server)

    assert _requests(after, verb="LIST", scope="namespace", code="200", **pods) == before_list + 2
    assert _requests(after, verb="GET", scope="resource", code="404", **pods) == 1
    assert (
        _requests(
            after,
            verb="LIST",
            scope="cluster",
            code="200",
            group="scheduling.k8s.io",
            resource="priorityclasses",
        )
        >= 1
    )
    # kubectl's discovery: aggregated, instrumented as upstream (subresource = path).
    assert _requests(after, verb="GET", subresource="/apis", version="", code="200") >= 1
    duration = [
        s
        for s in after["apiserver_request_duration_seconds"]
        if s.name == "apiserver_request_duration_seconds_bucket"
        and s.labels.get("verb") == "POST"
        and s.labels.get("resource") == "pods"
    ]
    assert [s.labels["le"] for s in duration][:3] == ["0.005", "0.025", "0.05"]
    assert duration[-1].labels["le"] == "+Inf"
    assert duration[-1].value == 4


def test_storage_objects_and_process_metrics(server, preempted):
    families = preempted["families"]
    stored = {s.labels["resource"]: s.value for s in families["apiserver_storage_objects"]}
    assert stored["nodes"] == 3
    assert stored["priorityclasses.scheduling.k8s.io"] >= 2
    assert stored["tenants.kubeprio.io"] == 1
    assert _value(families, "process_resident_memory_bytes", "process_resident_memory_bytes") > 0
    assert _value(families, "process_cpu_seconds", "process_cpu_seconds_total") > 0


def test_system_monitoring_reads_metrics_and_nothing_else(server, preempted):
    families = _scrape(server, context=PROMETHEUS)
    assert "scheduler_pending_pods" in families
    refused = server.kubectl("get", "pods", "-n", "default", context=PROMETHEUS)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): pods is forbidden: User "prometheus" cannot list '
        'resource "pods" in API group "" in the namespace "default"'
    )


def test_a_tenant_user_is_refused_with_upstreams_text(server):
    result = server.kubectl("get", "--raw", "/metrics", context=ALICE)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'Error from server (Forbidden): forbidden: User "alice" cannot get path "/metrics"'
    )


def test_an_unauthenticated_scrape_is_401(server):
    context = ssl.create_default_context(cafile=str(Path(server.data_dir) / "pki" / "ca.crt"))
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(f"{server.url}/metrics", context=context, timeout=10)
    assert raised.value.code == 401
    assert json.loads(raised.value.read())["message"] == "Unauthorized"
