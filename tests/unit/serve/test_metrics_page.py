"""``serve.metrics``: the ``/metrics`` page parses as Prometheus text with upstream's names.

Upstream: ``pkg/scheduler/metrics/metrics.go`` and
``staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go`` (v1.32) for names,
types, labels, help texts (with component-base's ``[STABLE]``/``[BETA]`` prefix) and
buckets; ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`` for who may read
``/metrics`` (``system:monitoring``, and cluster admins).
"""

from __future__ import annotations

import random

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubeprio.apiserver.authn import TokenAuthenticator, TokenRecord
from kubeprio.apiserver.authz import TenantAuthorizer
from kubeprio.apiserver.requestmetrics import RequestMetrics
from kubeprio.apiserver.service import ApiService
from kubeprio.serve.metrics import MetricsPage, go_float
from kubeprio.store.interface import KeyPrefix
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import ManualClock
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    ALICE,
    TENANCY_TOKENS,
    create_tenancy,
    make_client,
    pod_manifest,
)
from tests.unit.scheduler.preemption_harness import HIGH, LOW, Harness, node_obj

PROMETHEUS = {"Authorization": "Bearer prometheus-token"}
TOKENS = [
    *TENANCY_TOKENS,
    TokenRecord("prometheus-token", "prometheus", "prometheus-uid", ("system:monitoring",)),
]


def _families(page: MetricsPage):
    body, content_type = page.render()
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    return {family.name: family for family in text_string_to_metric_families(body.decode())}


def _sample(families, family, name, **labels):
    values = [
        s.value
        for s in families[family].samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(values) == 1, (name, labels, values)
    return values[0]


def _preempting_cluster(victims: int) -> Harness:
    h = Harness().start()
    h.add_nodes(node_obj("node1", {"cpu": str(victims), "memory": "4Gi"}))
    for i in range(victims):
        h.add_pod(pod(f"low{i}").priority(LOW).requests(cpu="1").on("node1").build())
    h.add_pod(pod("high").priority(HIGH).requests(cpu=str(victims)).build())
    h.settle()
    for i in range(victims):
        h.force_delete(f"low{i}")
    h.advance(2)
    return h


def _page(h: Harness) -> MetricsPage:
    return MetricsPage.for_serve(
        scheduler=h.scheduler, requests=RequestMetrics(), store=h.api.store
    )


# parsed names drop ``_total`` from counters (the text keeps it).
EXPECTED = {
    "scheduler_schedule_attempts": (
        "counter",
        "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a "
        "pod could not be scheduled, while 'error' means an internal scheduler problem.",
    ),
    "scheduler_scheduling_attempt_duration_seconds": (
        "histogram",
        "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
    ),
    "scheduler_preemption_attempts": (
        "counter",
        "[STABLE] Total preemption attempts in the cluster till now",
    ),
    "scheduler_preemption_victims": ("histogram", "[STABLE] Number of selected preemption victims"),
    "scheduler_pending_pods": (
        "gauge",
        "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in "
        "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of "
        "pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' "
        "is the number of unschedulable pods that the scheduler never attempted to schedule "
        "because they are gated.",
    ),
    "scheduler_pod_scheduling_attempts": (
        "histogram",
        "[STABLE] Number of attempts to successfully schedule a pod.",
    ),
    "scheduler_pod_scheduling_sli_duration_seconds": (
        "histogram",
        "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the "
        "scheduling queue and might involve multiple scheduling attempts.",
    ),
    "scheduler_queue_incoming_pods": (
        "counter",
        "[STABLE] Number of pods added to scheduling queues by event and queue type.",
    ),
    "apiserver_request": (
        "counter",
        "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, "
        "version, resource, scope, component, and HTTP response code.",
    ),
    "apiserver_request_duration_seconds": (
        "histogram",
        "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, "
        "version, resource, subresource, scope and component.",
    ),
    "apiserver_storage_objects": (
        "gauge",
        "[STABLE] Number of stored objects at the time of last check split by kind. In case of "
        "a fetching error, the value will be -1.",
    ),
    "process_cpu_seconds": ("counter", "Total user and system CPU time spent in seconds."),
    "process_resident_memory_bytes": ("gauge", "Resident memory size in bytes."),
    "process_start_time_seconds": (
        "gauge",
        "Start time of the process since unix epoch in seconds.",
    ),
}


def test_the_page_has_upstreams_names_types_and_help_texts():
    families = _families(_page(_preempting_cluster(1)))
    assert {
        name: (f.type, f.documentation) for name, f in families.items() if name in EXPECTED
    } == EXPECTED


def test_the_page_has_no_python_only_collectors():
    names = _families(_page(Harness().start()))
    assert not [name for name in names if name.startswith(("python_", "go_"))]


@pytest.mark.parametrize(
    ("family", "bounds"),
    [
        ("scheduler_preemption_victims", ["1", "2", "4", "8", "16", "32", "64", "+Inf"]),
        ("scheduler_pod_scheduling_attempts", ["1", "2", "4", "8", "16", "+Inf"]),
        (
            "scheduler_scheduling_attempt_duration_seconds",
            [
                "0.001", "0.002", "0.004", "0.008", "0.016", "0.032", "0.064", "0.128",
                "0.256", "0.512", "1.024", "2.048", "4.096", "8.192", "16.384", "+Inf",
            ],
        ),
        (
            "scheduler_pod_scheduling_sli_duration_seconds",
            [
                "0.01", "0.02", "0.04", "0.08", "0.16", "0.32", "0.64", "1.28", "2.56",
                "5.12", "10.24", "20.48", "40.96", "81.92", "163.84", "327.68", "655.36",
                "1310.72", "2621.44", "5242.88", "+Inf",
            ],
        ),
    ],
)  # fmt: skip
def test_bucket_bounds_are_upstreams_written_as_go_writes_them(family, bounds):
    families = _families(_page(_preempting_cluster(1)))
    buckets = [s for s in families[family].samples if s.name.endswith("_bucket")]
    first_series = {k: v for k, v in buckets[0].labels.items() if k != "le"}
    les = [
        s.labels["le"]
        for s in buckets
        if {k: v for k, v in s.labels.items() if k != "le"} == first_series
    ]
    assert les == bounds


@pytest.mark.parametrize("victims", [1, 2, 5])
def test_a_preemption_shows_as_upstream_would_count_it(victims):
    families = _families(_page(_preempting_cluster(victims)))
    attempts = "scheduler_schedule_attempts"
    profile = "default-scheduler"
    assert (
        _sample(families, attempts, f"{attempts}_total", profile=profile, result="scheduled") == 1
    )
    assert (
        _sample(families, attempts, f"{attempts}_total", profile=profile, result="unschedulable")
        == 1
    )
    assert not [s for s in families[attempts].samples if s.labels["result"] == "error"]
    assert (
        _sample(families, "scheduler_preemption_attempts", "scheduler_preemption_attempts_total")
        == 1
    )
    victims_family = "scheduler_preemption_victims"
    assert _sample(families, victims_family, f"{victims_family}_count") == 1
    assert _sample(families, victims_family, f"{victims_family}_sum") == victims
    smallest = next(b for b in (1, 2, 4, 8) if b >= victims)
    assert _sample(families, victims_family, f"{victims_family}_bucket", le=str(smallest)) == 1
    if smallest > 1:
        assert (
            _sample(families, victims_family, f"{victims_family}_bucket", le=str(smallest // 2))
            == 0
        )
    per_pod = "scheduler_pod_scheduling_attempts"
    assert _sample(families, per_pod, f"{per_pod}_sum") == 2
    sli = "scheduler_pod_scheduling_sli_duration_seconds"
    assert _sample(families, sli, f"{sli}_count", attempts="2") == 1
    for queue in ("active", "backoff", "unschedulable", "gated"):
        assert (
            _sample(families, "scheduler_pending_pods", "scheduler_pending_pods", queue=queue) == 0
        )
    incoming = "scheduler_queue_incoming_pods"
    added = _sample(
        families, incoming, f"{incoming}_total", queue="active", event="UnschedulablePodAdd"
    )
    assert added == 1  # the victims were created bound: never queued


def test_pending_pods_show_by_queue():
    h = Harness().start()
    h.add_nodes(node_obj("node1", {"cpu": "1", "memory": "4Gi"}))
    h.add_pod(pod("big").priority(LOW).requests(cpu="2").build())
    h.add_pod(pod("waiting").priority(LOW).requests(cpu="500m").build())  # not yet popped
    h.schedule_one()  # "big" first? PrioritySort: equal priority, first come
    families = _families(_page(h))
    values = {s.labels["queue"]: s.value for s in families["scheduler_pending_pods"].samples}
    assert values == {"active": 1, "backoff": 0, "unschedulable": 1, "gated": 0}


def test_storage_objects_count_each_stored_kind():
    h = Harness().start()
    h.add_nodes(node_obj("node1"), node_obj("node2"))
    h.add_pod(pod("a").priority(LOW).build())
    families = _families(_page(h))
    counts = {s.labels["resource"]: s.value for s in families["apiserver_storage_objects"].samples}
    assert counts["nodes"] == 2
    assert counts["pods"] == 1
    assert counts["namespaces"] == len(h.api.store.list(KeyPrefix("namespaces", None))[0])
    assert counts["deployments.apps"] == 0
    assert counts["priorityclasses.scheduling.k8s.io"] == 2  # the two system classes
    assert "selfsubjectaccessreviews.authorization.k8s.io" not in counts  # never stored


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (0.005, "0.005"),
        (16.384, "16.384"),
        (5242.88, "5242.88"),
        (1e-05, "1e-05"),
        (0.0001, "0.0001"),
        (123456.0, "123456"),
        (1e21, "1e+21"),
        (float("inf"), "+Inf"),
        (0.0, "0"),
    ],
)
def test_go_float_formats_as_strconv(value, text):
    assert go_float(value) == text


# --- who may read /metrics ------------------------------------------------------------------


@pytest.fixture
def http():
    clock = ManualClock()
    api = ApiService(MemoryStore(), clock=clock, rng=random.Random(0))
    requests = RequestMetrics()
    h = Harness().start()
    page = MetricsPage.for_serve(scheduler=h.scheduler, requests=requests, store=api.store)
    client = make_client(
        api,
        authenticator=TokenAuthenticator(TOKENS),
        authorizer=TenantAuthorizer(api.listers),
        request_metrics=requests,
        metrics=page.render,
    )
    create_tenancy(api)
    return client


@pytest.mark.parametrize("headers", [ADMIN, PROMETHEUS], ids=["admin", "system:monitoring"])
def test_admins_and_monitoring_read_the_page(http, headers):
    http.get("/api/v1/namespaces/team-a/pods", headers=ADMIN)
    response = http.get("/metrics", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    assert (
        _sample(
            families,
            "apiserver_request",
            "apiserver_request_total",
            verb="LIST",
            resource="pods",
            scope="namespace",
            code="200",
            component="apiserver",
            version="v1",
            group="",
            subresource="",
            dry_run="",
        )
        == 1
    )


def test_monitoring_reads_health_checks_but_not_resources(http):
    assert http.get("/readyz/etcd", headers=PROMETHEUS).status_code == 200
    assert http.get("/api/v1/namespaces/team-a/pods", headers=PROMETHEUS).status_code == 403


def test_a_tenant_user_gets_upstreams_non_resource_refusal(http):
    http.post("/api/v1/namespaces/team-a/pods", json=pod_manifest("x"), headers=ALICE)
    response = http.get("/metrics", headers=ALICE)
    assert response.status_code == 403
    assert response.json()["message"] == 'forbidden: User "alice" cannot get path "/metrics"'


def test_an_unauthenticated_scrape_is_401(http):
    response = http.get("/metrics")
    assert response.status_code == 401
    assert response.json()["message"] == "Unauthorized"


def test_an_app_without_a_page_answers_404(api):
    client = make_client(api)
    assert client.get("/metrics").status_code == 404


def test_monitoring_rules_list_upstreams_non_resource_urls(api):
    from kubeprio.admission.chain import UserInfo
    from kubeprio.apiserver.authz import MONITORING_PATHS, non_resource_attributes

    authorizer = TenantAuthorizer(api.listers)
    prometheus = UserInfo(name="prometheus", groups=("system:monitoring",))
    rules = authorizer.rules_for(prometheus, "default").non_resource_rules
    assert any(rule.non_resource_urls == MONITORING_PATHS for rule in rules)
    assert authorizer.authorize(non_resource_attributes(prometheus, "GET", "/metrics/slis"))
    assert not authorizer.authorize(non_resource_attributes(prometheus, "POST", "/metrics"))
