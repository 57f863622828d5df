"""networking.k8s.io/v1 against a live ``kubeprio serve`` with the real kubectl (v1.32) and
the official Python client.

Each test names the upstream behaviour it checks: ``kubectl apply -f`` of a Helm-style
bundle (Deployment, Service, IngressClass, Ingress, NetworkPolicy); the DefaultIngressClass
admission plugin giving a class-less Ingress the default class; ``kubectl get ing``,
``ingressclass`` and ``netpol`` columns (``printIngress``, ``printIngressClass``,
``printNetworkPolicy``); ``kubectl describe ingress``, which reads the backend Services and
their Endpoints; ``kubectl create ingress`` (kubectl's typed client sends protobuf);
validation texts of ``pkg/apis/networking/validation``; object-count quotas
(``count/ingresses.networking.k8s.io``); ``NetworkingV1Api`` reads, writes and the
Ingress ``status`` subresource.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

BUNDLE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: __NS__, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: nginx, image: nginx:1.27, ports: [{containerPort: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: __NS__}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: __NS__}
spec:
  tls: [{hosts: [web.example.com], secretName: web-tls}]
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
      - {path: /api, pathType: Exact, backend: {service: {name: api, port: {number: 8080}}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web-allow, namespace: __NS__}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress:
  - from:
    - {namespaceSelector: {matchLabels: {team: a}}, podSelector: {matchLabels: {role: fe}}}
    - {ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}
    ports: [{port: 80}]
  egress:
  - to: [{ipBlock: {cidr: 0.0.0.0/0}}]
    ports: [{port: 53, protocol: UDP}]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-networking", ["--nodes", "2"]) as server:
        yield server


def _apply(served: ServeProcess, manifest: str, namespace: str) -> str:
    return served.ok("apply", "-f", "-", stdin=manifest.replace("__NS__", namespace))


def test_a_bundle_applies_and_lists_with_upstream_columns(served):
    namespace = new_namespace(served, "net")
    assert _apply(served, BUNDLE, namespace) == (
        "deployment.apps/web created\n"
        "service/web created\n"
        "ingressclass.networking.k8s.io/nginx created\n"
        "ingress.networking.k8s.io/web created\n"
        "networkpolicy.networking.k8s.io/web-allow created\n"
    )
    ingresses = table_rows(served.ok("get", "ing", "-n", namespace))
    assert ingresses[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    # DefaultIngressClass filled in the class; ADDRESS is empty (no ingress controller).
    assert ingresses[1][:5] == ["web", "nginx", "web.example.com", "80,", "443"]
    policies = table_rows(served.ok("get", "netpol", "-n", namespace))
    assert policies[0] == ["NAME", "POD-SELECTOR", "AGE"]
    assert policies[1][:2] == ["web-allow", "app=web"]
    classes = table_rows(served.ok("get", "ingressclass"))
    assert classes[0] == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert ["nginx", "k8s.io/ingress-nginx", "<none>"] in [row[:3] for row in classes[1:]]
    stored = served.json("get", "ingress", "web", "-n", namespace)
    assert stored["spec"]["ingressClassName"] == "nginx"
    assert stored["status"] == {"loadBalancer": {}}
    assert stored["metadata"]["generation"] == 1
    policy = served.json("get", "networkpolicy", "web-allow", "-n", namespace)
    # SetDefaults_NetworkPolicy / SetDefaults_NetworkPolicyPort.
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["ingress"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    # The bundle applies again unchanged.
    assert "ingress.networking.k8s.io/web unchanged" in _apply(served, BUNDLE, namespace)


def test_describe_ingress_reads_the_backend_services_and_endpoints(served):
    namespace = new_namespace(served, "net-describe")
    _apply(served, BUNDLE, namespace)
    eventually(
        lambda: (
            len(served.json("get", "endpoints", "web", "-n", namespace).get("subsets", [{}])[0]
                .get("addresses", [])) == 2
        ),
        timeout=60,
    )  # fmt: skip
    described = served.ok("describe", "ingress", "web", "-n", namespace)
    assert "Ingress Class:    nginx\n" in described
    assert "  web-tls terminates web.example.com\n" in described
    lines = [line.split() for line in described.splitlines()]
    web = next(line for line in lines if line[:2] == ["/", "web:http"])
    # The two pod endpoints of Service web, port 80.
    assert web[2].startswith("(")
    assert web[2].count(":80") == 2
    assert ["/api", "api:8080", "(<error:", "services", '"api"', "not", "found>)"] in lines
    netpol = served.ok("describe", "netpol", "web-allow", "-n", namespace)
    assert "  PodSelector:     app=web\n" in netpol
    assert "    To Port: 53/UDP\n" in netpol
    assert "  Policy Types: Ingress, Egress\n" in netpol


def test_kubectl_create_ingress_sends_protobuf(served):
    """``kubectl create ingress`` encodes the Ingress as protobuf (its typed client);
    ``host/path`` is an Exact path, ``host/*`` a Prefix ``/``, ``tls=`` a TLS entry."""
    namespace = new_namespace(served, "net-create")
    out = served.kubectl(
        "create", "ingress", "simple", "-n", namespace, "--class", "other",
        "--rule=foo.com/bar=svc1:8080,tls=my-cert", "--rule=bar.com/*=svc2:http", "-v=8",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "ingress.networking.k8s.io/simple created" in out.stdout
    assert "Content-Type: application/vnd.kubernetes.protobuf" in out.stderr
    spec = served.json("get", "ingress", "simple", "-n", namespace)["spec"]
    assert spec == {
        "ingressClassName": "other",
        "rules": [
            {"host": "foo.com", "http": {"paths": [{
                "backend": {"service": {"name": "svc1", "port": {"number": 8080}}},
                "path": "/bar", "pathType": "Exact"}]}},
            {"host": "bar.com", "http": {"paths": [{
                "backend": {"service": {"name": "svc2", "port": {"name": "http"}}},
                "path": "/", "pathType": "Prefix"}]}},
        ],
        "tls": [{"hosts": ["foo.com"], "secretName": "my-cert"}],
    }  # fmt: skip


def test_invalid_objects_are_refused_with_upstream_texts(served):
    namespace = new_namespace(served, "net-invalid")
    bad = served.kubectl("create", "ingress", "bad", "-n", namespace, "--rule=foo.com/=Svc:80")
    assert bad.returncode != 0
    assert bad.stderr.strip() == (
        'error: failed to create ingress: Ingress.networking.k8s.io "bad" is invalid: '
        'spec.rules[0].http.paths[0].backend.service.name: Invalid value: "Svc": a DNS-1035 '
        "label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    )
    no_path_type = (
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: nopt}\n"
        "spec:\n  rules:\n  - http:\n      paths:\n"
        "      - {path: /, backend: {service: {name: web, port: {number: 80}}}}\n"
    )
    result = served.kubectl("apply", "-n", namespace, "-f", "-", stdin=no_path_type)
    assert result.returncode != 0
    assert result.stderr.strip() == (
        'The Ingress "nopt" is invalid: spec.rules[0].http.paths[0].pathType: Required value: '
        "pathType must be specified"
    )
    policy = (
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: p}\n"
        "spec:\n  podSelector: {}\n  ingress:\n"
        "  - from: [{ipBlock: {cidr: 10.0.0.0/16, except: [10.1.0.0/24]}}]\n"
    )
    result = served.kubectl("apply", "-n", namespace, "-f", "-", stdin=policy)
    assert result.returncode != 0
    assert result.stderr.strip() == (
        'The NetworkPolicy "p" is invalid: spec.ingress[0].from[0].ipBlock.except[0]: Invalid '
        'value: "10.1.0.0/24": must be a strict subset of `cidr`'
    )


def test_object_count_quota_for_ingresses(served):
    namespace = new_namespace(served, "net-quota")
    served.ok("create", "quota", "q", "-n", namespace, "--hard=count/ingresses.networking.k8s.io=1")
    eventually(
        lambda: served.json("get", "quota", "q", "-n", namespace).get("status", {}).get("used")
    )
    served.ok("create", "ingress", "one", "-n", namespace, "--default-backend=web:80")
    result = served.kubectl("create", "ingress", "two", "-n", namespace, "--default-backend=web:80")
    assert result.returncode != 0
    assert result.stderr.strip() == (
        'error: failed to create ingress: ingresses.networking.k8s.io "two" is forbidden: '
        "exceeded quota: q, requested: count/ingresses.networking.k8s.io=1, used: "
        "count/ingresses.networking.k8s.io=1, limited: count/ingresses.networking.k8s.io=1"
    )
    served.ok("delete", "ingress", "one", "-n", namespace)
    eventually(
        lambda: (
            served.json("get", "quota", "q", "-n", namespace)["status"]["used"]
            == {"count/ingresses.networking.k8s.io": "0"}
        )
    )


def test_networking_v1_api(served):
    namespace = new_namespace(served, "net-py")
    with served.client() as api_client:
        networking = k8s.NetworkingV1Api(api_client)
        body = k8s.V1Ingress(
            metadata=k8s.V1ObjectMeta(name="site"),
            spec=k8s.V1IngressSpec(
                ingress_class_name="explicit",
                default_backend=k8s.V1IngressBackend(
                    service=k8s.V1IngressServiceBackend(
                        name="site", port=k8s.V1ServiceBackendPort(number=8080)
                    )
                ),
            ),
        )
        created = networking.create_namespaced_ingress(namespace, body)
        assert created.spec.ingress_class_name == "explicit"
        assert created.metadata.generation == 1
        # An ingress controller publishes its address through the status subresource.
        patched = networking.patch_namespaced_ingress_status(
            "site", namespace, {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}}
        )
        assert patched.status.load_balancer.ingress[0].ip == "192.0.2.10"
        assert patched.metadata.generation == 1
        rows = table_rows(served.ok("get", "ing", "site", "-n", namespace))
        assert rows[1][:5] == ["site", "explicit", "*", "192.0.2.10", "80"]
        with pytest.raises(ApiException) as raised:
            networking.patch_namespaced_ingress_status(
                "site", namespace, {"status": {"loadBalancer": {"ingress": [{"ip": "nope"}]}}}
            )
        assert raised.value.status == 422
        policy = networking.create_namespaced_network_policy(
            namespace,
            k8s.V1NetworkPolicy(
                metadata=k8s.V1ObjectMeta(name="deny-all"),
                spec=k8s.V1NetworkPolicySpec(pod_selector=k8s.V1LabelSelector()),
            ),
        )
        assert policy.spec.policy_types == ["Ingress"]
        listed = networking.list_namespaced_network_policy(namespace)
        assert [p.metadata.name for p in listed.items] == ["deny-all"]
        names = [c.metadata.name for c in networking.list_ingress_class().items]
        assert names == sorted(names)
        assert [i.metadata.name for i in networking.list_namespaced_ingress(namespace).items] == [
            "site"
        ]
