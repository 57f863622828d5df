"""Services against a live ``kubeprio serve`` with the real kubectl (v1.32).

Each test names the upstream behaviour it checks: the ``default/kubernetes`` Service of
kube-apiserver's reconciler, ``kubectl cluster-info``/``get all``/``expose``/``create
service nodeport``/``describe svc`` (which reads EndpointSlices labelled
``kubernetes.io/service-name``), client-side apply of a changed Service (strategic merge
on ``spec.ports`` by ``port``), the registry's allocation errors, and the tenant policy.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl, running, table_rows

pytestmark = [pytest.mark.e2e, needs_kubectl]

ALICE = "kubeprio-alice"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve", ["--preset", "kestrel", "--nodes", "2"]) as server:
        yield server


def _field(describe: str, name: str) -> str:
    """The value of a ``kubectl describe`` line ``Name:   value``."""
    line = next(line for line in describe.splitlines() if line.startswith(f"{name}:"))
    return line.split(":", 1)[1].strip()


def test_cluster_info_and_get_all_show_the_kubernetes_service(served):
    """kube-apiserver's reconciler: default/kubernetes, first service IP, 443 -> the API port."""
    info = served.ok("cluster-info")
    assert info.startswith(f"Kubernetes control plane is running at {served.url}")
    rows = table_rows(served.ok("get", "all", "-n", "default"))
    assert rows[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert rows[1][:5] == ["service/kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    service = served.json("get", "svc", "kubernetes", "-n", "default")
    assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    port = int(served.url.rsplit(":", 1)[1])
    assert service["spec"]["ports"] == [
        {"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}
    ]
    describe = served.ok("describe", "svc", "kubernetes", "-n", "default")
    # Served on 127.0.0.1: ValidateNonSpecialIP refuses a loopback address in the
    # EndpointSlice (as it would keep a real kube-apiserver from advertising one).
    assert _field(describe, "Endpoints") == "<none>"
    slices = served.json(
        "get", "endpointslices", "-n", "default", "-l", "kubernetes.io/service-name=kubernetes"
    )
    assert slices["items"] == []
    assert _field(describe, "IP") == "10.96.0.1"
    listed = table_rows(served.ok("get", "svc", "-A"))
    assert listed[0][:2] == ["NAMESPACE", "NAME"]
    assert ["default", "kubernetes"] in [row[:2] for row in listed]


def test_expose_deployment_selects_its_pods_and_describe_lists_their_endpoints(served, tmp_path):
    """kubectl expose copies the Deployment's selector; the endpoints controller lists the
    Ready pods (pod IP : targetPort) in the EndpointSlice describe reads and in Endpoints."""
    served.ok("create", "deployment", "web", "--image=nginx", "--replicas=2", "-n", "default")
    served.ok(
        "expose", "deployment", "web", "--port", "80", "--target-port", "8080", "-n", "default"
    )
    service = served.json("get", "svc", "web", "-n", "default")
    assert service["spec"]["selector"] == {"app": "web"}
    assert service["spec"]["ports"][0]["targetPort"] == 8080
    ip = service["spec"]["clusterIP"]
    assert ip.startswith("10.")
    assert ip != "10.96.0.1"
    wide = table_rows(served.ok("get", "svc", "web", "-o", "wide", "-n", "default"))
    assert wide[0] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert wide[1][:5] == ["web", "ClusterIP", ip, "<none>", "80/TCP"]
    assert wide[1][6] == "app=web"
    pod_ips = eventually(
        lambda: (
            sorted(
                p["status"]["podIP"]
                for p in served.json("get", "pods", "-l", "app=web", "-n", "default")["items"]
                if p["status"].get("podIP")
            )
            if len(served.json("get", "pods", "-l", "app=web", "-n", "default")["items"]) == 2
            else None
        )
    )
    expected = ",".join(f"{ip}:8080" for ip in pod_ips)

    def described() -> str | None:
        text = served.ok("describe", "svc", "web", "-n", "default")
        shown = sorted(_field(text, "Endpoints").split(","))
        return text if shown == expected.split(",") else None

    text = eventually(described, timeout=30)
    assert _field(text, "Selector") == "app=web"
    assert _field(text, "TargetPort") == "8080/TCP"
    endpoints = table_rows(served.ok("get", "ep", "web", "-n", "default"))
    assert endpoints[0] == ["NAME", "ENDPOINTS", "AGE"]
    assert sorted(endpoints[1][1].split(",")) == expected.split(",")
    slices = table_rows(
        served.ok("get", "endpointslices", "-n", "default", "-l", "kubernetes.io/service-name=web")
    )
    assert slices[0] == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert slices[1][1:3] == ["IPv4", "8080"]


def test_create_service_nodeport_allocates_a_port_and_a_taken_one_is_refused(served):
    """portallocator: a node port from 30000-32767; a taken one is upstream's 422."""
    served.ok("create", "service", "nodeport", "np", "--tcp=80:8080", "-n", "default")
    port = served.json("get", "svc", "np", "-n", "default")["spec"]["ports"][0]
    assert 30000 <= port["nodePort"] <= 32767
    row = table_rows(served.ok("get", "svc", "np", "-n", "default"))[1]
    assert row[1] == "NodePort"
    assert row[4] == f"80:{port['nodePort']}/TCP"
    taken = served.kubectl(
        "create", "service", "nodeport", "np2", "--tcp=80:8080",
        f"--node-port={port['nodePort']}", "-n", "default",
    )  # fmt: skip
    assert taken.returncode == 1
    # kubectl create service wraps the server's message in its own prefix.
    assert taken.stderr.strip() == (
        f'error: failed to create NodePort service: Service "np2" is invalid: '
        f"spec.ports[0].nodePort: Invalid value: {port['nodePort']}: "
        "provided port is already allocated"
    )


def test_apply_then_reapply_patches_and_a_taken_cluster_ip_is_refused_then_freed(served, tmp_path):
    """Client-side apply (strategic merge on ports by port); ipallocator's 'already
    allocated' under spec.clusterIPs; kubectl delete frees the address."""
    manifest = tmp_path / "svc.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: applied\n  namespace: default\n"
        "spec:\n  clusterIP: 10.96.0.50\n  selector:\n    app: a\n  ports:\n  - port: 80\n"
    )
    assert "service/applied created" in served.ok("apply", "-f", str(manifest))
    manifest.write_text(manifest.read_text().replace("port: 80", "port: 81"))
    assert "service/applied configured" in served.ok("apply", "-f", str(manifest))
    ports = served.json("get", "svc", "applied", "-n", "default")["spec"]["ports"]
    assert [(p["port"], p["targetPort"]) for p in ports] == [(81, 81)]
    clash = tmp_path / "clash.yaml"
    clash.write_text(manifest.read_text().replace("name: applied", "name: clash"))
    refused = served.kubectl("create", "-f", str(clash))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'The Service "clash" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.50"}: '
        "failed to allocate IP 10.96.0.50: provided IP is already allocated"
    )
    served.ok("delete", "svc", "applied", "-n", "default")
    assert "service/clash created" in served.ok("create", "-f", str(clash))


def test_a_tenant_may_create_services_in_its_namespaces_only(served):
    """The tenant policy: services like other namespaced kinds; endpoints read-only."""
    served.ok(
        "create", "service", "clusterip", "mine", "--tcp=80", "-n", "kestrel-web", context=ALICE
    )
    assert "mine" in served.ok("get", "svc", "-n", "kestrel-web", context=ALICE)
    other = served.kubectl(
        "create", "service", "clusterip", "x", "--tcp=80", "-n", "default", context=ALICE
    )
    assert other.returncode == 1
    assert (
        'cannot create resource "services" in API group "" in the namespace "default"'
        in other.stderr
    )
    ep = served.kubectl("delete", "endpoints", "mine", "-n", "kestrel-web", context=ALICE)
    assert 'cannot delete resource "endpoints"' in ep.stderr
