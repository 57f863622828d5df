"""The official ``kubernetes`` Python client against ``kubeprio serve`` over TLS with a token.

The client reads ``DATA_DIR/kubeconfig`` as it would a real cluster's: it verifies the
server certificate against the CA in the file and sends the admin's (or alice's) bearer
token.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch

from tests.e2e.serving import CLIENT_SOCKET_WARNINGS, ServeProcess, eventually, running

pytestmark = [pytest.mark.e2e, *CLIENT_SOCKET_WARNINGS]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-py", ["--preset", "kestrel"]) as process:
        yield process


def test_the_admin_lists_nodes_and_runs_a_pod(server):
    with server.client() as api:
        core = k8s.CoreV1Api(api)
        assert k8s.VersionApi(api).get_code().minor == "32"
        assert [n.metadata.name for n in core.list_node().items] == ["node-1", "node-2", "node-3"]
        pod = k8s.V1Pod(
            metadata=k8s.V1ObjectMeta(name="py", namespace="kestrel-web"),
            spec=k8s.V1PodSpec(
                priority_class_name="uber-user-preempt-medium",
                containers=[k8s.V1Container(name="c", image="nginx")],
            ),
        )
        created = core.create_namespaced_pod("kestrel-web", pod)
        assert created.spec.priority == 1000
        phases = []
        events = k8s_watch.Watch().stream(
            core.list_namespaced_pod, "kestrel-web", timeout_seconds=10
        )
        for event in events:
            phases.append(event["object"].status.phase)
            if phases[-1] == "Running":
                break
        # Close the response: an abandoned TLS stream would hold the server's graceful
        # shutdown until its timeout (the peer never answers close_notify).
        events.close()
        assert phases[-1] == "Running"
        assert eventually(lambda: core.read_namespaced_pod("py", "kestrel-web").spec.node_name)


def test_a_tenant_user_is_forbidden_outside_its_namespaces(server):
    with server.client("kubeprio-alice") as api:
        core = k8s.CoreV1Api(api)
        core.list_namespaced_pod("kestrel-web")
        with pytest.raises(k8s.ApiException) as caught:
            core.list_namespaced_pod("default")
        assert caught.value.status == 403


def test_self_reviews_through_the_official_client(server):
    with server.client("kubeprio-alice") as api:
        authz = k8s.AuthorizationV1Api(api)

        def allowed(namespace: str) -> bool:
            review = k8s.V1SelfSubjectAccessReview(
                spec=k8s.V1SelfSubjectAccessReviewSpec(
                    resource_attributes=k8s.V1ResourceAttributes(
                        verb="create", resource="pods", namespace=namespace
                    )
                )
            )
            answer = authz.create_self_subject_access_review(review)
            return bool(answer.status.allowed)

        assert allowed("kestrel-web") is True
        assert allowed("default") is False
        rules = authz.create_self_subject_rules_review(
            k8s.V1SelfSubjectRulesReview(
                spec=k8s.V1SelfSubjectRulesReviewSpec(namespace="kestrel-web")
            )
        )
        assert any("pods" in (rule.resources or ()) for rule in rules.status.resource_rules)
        who = k8s.AuthenticationV1Api(api).create_self_subject_review(k8s.V1SelfSubjectReview())
        assert who.status.user_info.username == "alice"


def test_a_wrong_token_is_unauthorized(server):
    configuration = k8s.Configuration()
    configuration.host = server.url
    configuration.ssl_ca_cert = str(server.data_dir / "pki" / "ca.crt")
    configuration.api_key = {"authorization": "Bearer wrong"}
    with k8s.ApiClient(configuration) as api:
        with pytest.raises(k8s.ApiException) as caught:
            k8s.CoreV1Api(api).list_namespace()
        assert caught.value.status == 401


def test_events_expire_after_the_event_ttl(tmp_path_factory: pytest.TempPathFactory) -> None:
    """``--event-ttl`` as kube-apiserver's: an Event is gone one TTL after its last write
    (the kubelet's and scheduler's events about a pod appear, then disappear)."""
    with (
        running(tmp_path_factory, "serve-ttl", ["--event-ttl", "3s"]) as process,
        process.client() as api,
    ):
        core = k8s.CoreV1Api(api)
        pod = k8s.V1Pod(
            metadata=k8s.V1ObjectMeta(name="short", namespace="default"),
            spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
        )
        core.create_namespaced_pod("default", pod)

        def reasons() -> set[str]:
            return {e.reason for e in core.list_namespaced_event("default").items}

        assert eventually(lambda: "Scheduled" in reasons())
        assert eventually(lambda: not reasons(), timeout=10.0)
        assert core.read_namespaced_pod("short", "default").status.phase == "Running"


def test_services_and_their_endpoint_slices_through_the_official_client(server):
    """The client's strict models decode what the registry allocates and what the
    endpointslice controller writes (``kubernetes.io/service-name`` label, Ready pods)."""
    with server.client() as api:
        core = k8s.CoreV1Api(api)
        kubernetes = core.read_namespaced_service("kubernetes", "default")
        assert kubernetes.spec.cluster_ip == "10.96.0.1"
        assert kubernetes.spec.ports[0].port == 443
        core.create_namespaced_pod(
            "kestrel-web",
            k8s.V1Pod(
                metadata=k8s.V1ObjectMeta(name="backend", labels={"app": "backend"}),
                spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
            ),
        )
        service = core.create_namespaced_service(
            "kestrel-web",
            k8s.V1Service(
                metadata=k8s.V1ObjectMeta(name="backend"),
                spec=k8s.V1ServiceSpec(
                    type="NodePort",
                    selector={"app": "backend"},
                    ports=[k8s.V1ServicePort(port=80, target_port=8080)],
                ),
            ),
        )
        assert 30000 <= service.spec.ports[0].node_port <= 32767
        assert service.spec.ip_families == ["IPv4"]
        discovery = k8s.DiscoveryV1Api(api)

        def ready_addresses() -> list[str]:
            slices = discovery.list_namespaced_endpoint_slice(
                "kestrel-web", label_selector="kubernetes.io/service-name=backend"
            ).items
            return [
                address
                for s in slices
                for e in s.endpoints or []
                if e.conditions.ready
                for address in e.addresses
            ]

        pod_ip = eventually(
            lambda: core.read_namespaced_pod("backend", "kestrel-web").status.pod_ip
        )
        assert eventually(ready_addresses) == [pod_ip]
        core.delete_namespaced_service("backend", "kestrel-web")
        assert eventually(lambda: not ready_addresses() or None) is True
