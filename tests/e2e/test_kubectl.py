"""The real kubectl (v1.32 through the dispatcher) against kubeprio's HTTP API.

Each case is a command from shared/reference/kubectl-wire.md with the output a real
cluster prints for it.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request

import pytest

from tests.e2e.conftest import needs_kubectl

pytestmark = [pytest.mark.e2e, needs_kubectl]

CLASSES = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
description: high
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web-pdb
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      priorityClassName: high
      containers:
      - name: c
        image: nginx
        env: [{name: A, value: "1"}]
"""

BAD_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: bad
spec:
  priorityClassName: nosuch
  containers:
  - name: c
    image: nginx
"""


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def test_get_pc_shows_the_system_classes_with_upstream_columns(server):
    result = server.kubectl("get", "pc")
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    assert lines[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE"]
    assert [line[:3] for line in lines[1:]] == [
        ["system-cluster-critical", "2000000000", "false"],
        ["system-node-critical", "2000001000", "false"],
    ]
    wide = server.kubectl("get", "pc", "-o", "wide").stdout.splitlines()[0].split()
    assert wide[-1] == "PREEMPTIONPOLICY"


def test_api_resources_lists_short_names(server):
    result = server.kubectl("api-resources")
    assert result.returncode == 0, result.stderr
    rows: dict[str, list[str]] = {}
    for line in result.stdout.splitlines()[1:]:
        # The first of a name: core pods, not metrics.k8s.io's (listed after the core group).
        rows.setdefault(line.split()[0], line.split())
    for resource, short in (
        ("priorityclasses", "pc"),
        ("pods", "po"),
        ("poddisruptionbudgets", "pdb"),
        ("deployments", "deploy"),
    ):
        assert rows[resource][1] == short
    # The legacy create-only collection a real server still lists: NAME APIVERSION
    # NAMESPACED KIND, no short name.
    assert rows["bindings"] == ["bindings", "v1", "true", "Binding"]


def test_client_side_apply_creates_then_patches(server, tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(CLASSES)
    first = server.kubectl("apply", "-f", str(manifest))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "priorityclass.scheduling.k8s.io/high created",
        "poddisruptionbudget.policy/web-pdb created",
        "deployment.apps/web created",
    ]
    manifest.write_text(
        CLASSES.replace("replicas: 2", "replicas: 3").replace("minAvailable: 1", "minAvailable: 2")
    )
    second = server.kubectl("apply", "-f", str(manifest))
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [
        "priorityclass.scheduling.k8s.io/high unchanged",
        "poddisruptionbudget.policy/web-pdb configured",
        "deployment.apps/web configured",
    ]
    replicas = server.kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
    assert replicas.stdout == "3"


def test_server_side_apply_creates_then_applies(server, tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(CLASSES)
    for _ in range(2):
        result = server.kubectl("apply", "--server-side", "-f", str(manifest))
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == [
            "priorityclass.scheduling.k8s.io/high serverside-applied",
            "poddisruptionbudget.policy/web-pdb serverside-applied",
            "deployment.apps/web serverside-applied",
        ]
        manifest.write_text(CLASSES.replace("replicas: 2", "replicas: 4"))
    assert server.kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "4"


def test_admission_rejection_prints_kubectls_forbidden_line(server, tmp_path):
    manifest = tmp_path / "badpod.yaml"
    manifest.write_text(BAD_POD)
    result = server.kubectl("create", "-f", str(manifest))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f'Error from server (Forbidden): error when creating "{manifest}": pods "bad" is '
        "forbidden: no PriorityClass with name nosuch was found"
    )


def test_strict_validation_of_unknown_fields(server, tmp_path):
    manifest = tmp_path / "unknown.yaml"
    manifest.write_text(BAD_POD.replace("priorityClassName: nosuch", "foo: 1"))
    result = server.kubectl("create", "-f", str(manifest))
    assert result.stderr.strip() == (
        f'Error from server (BadRequest): error when creating "{manifest}": Pod in version "v1" '
        'cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"'
    )


def test_delete_returns_once_the_object_is_gone(server, tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(CLASSES.split("---")[0])
    server.kubectl("apply", "-f", str(manifest))
    result = server.kubectl("delete", "pc", "high")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == 'priorityclass.scheduling.k8s.io "high" deleted'
    gone = server.kubectl("get", "pc", "high")
    assert gone.stderr.strip() == (
        'Error from server (NotFound): priorityclasses.scheduling.k8s.io "high" not found'
    )


def test_get_pods_watch_streams_changes(server):
    watcher = subprocess.Popen(
        server.kubectl_args("get", "pods", "-w"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.0)  # kubectl lists, prints, then opens the watch
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w1"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }
        _post(f"{server.url}/api/v1/namespaces/default/pods", pod)
        time.sleep(1.0)
    finally:
        watcher.terminate()
        out, _ = watcher.communicate(timeout=10)
    lines = [line.split() for line in out.splitlines()]
    assert lines[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert lines[1][:3] == ["w1", "0/1", "Pending"]


def test_explain_shows_a_kind_with_its_fields_types_and_enums(server):
    """kubectl explain finds the schema by its x-kubernetes-group-version-kind list."""
    result = server.kubectl("explain", "pc")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "GROUP:      scheduling.k8s.io",
        "KIND:       PriorityClass",
        "VERSION:    v1",
    ]
    assert "DESCRIPTION:" in lines
    assert "  value\t<integer>" in lines
    assert "  metadata\t<ObjectMeta>" in lines
    assert lines[lines.index("  preemptionPolicy\t<string>") + 1] == (
        "  enum: Never, PreemptLowerPriority"
    )


@pytest.mark.parametrize(
    ("path", "field_line"),
    [
        ("pod.spec.priorityClassName", "FIELD: priorityClassName <string>"),
        ("pod.status.nominatedNodeName", "FIELD: nominatedNodeName <string>"),
        ("pdb.spec.minAvailable", "FIELD: minAvailable <IntOrString>"),
        ("deploy.spec.template.spec", "FIELD: spec <PodSpec>"),
        ("pod.spec.containers.resources.limits", "FIELD: limits <map[string]Quantity>"),
        ("tenant.spec.priorityClasses", "FIELD: priorityClasses <TenantPriorityClasses>"),
    ],
)
def test_explain_walks_field_paths_through_refs_lists_and_maps(server, path, field_line):
    result = server.kubectl("explain", path)
    assert result.returncode == 0, result.stderr
    assert field_line in result.stdout.splitlines()


def test_explain_recursive_lists_nested_fields(server):
    result = server.kubectl("explain", "pdb.spec", "--recursive")
    assert result.returncode == 0, result.stderr
    assert "    matchLabels\t<map[string]string>" in result.stdout.splitlines()


def test_explain_of_an_unknown_field_is_kubectls_error(server):
    result = server.kubectl("explain", "pc.nosuch")
    assert result.returncode == 1
    assert result.stderr.strip() == 'error: field "nosuch" does not exist'


def test_client_side_apply_still_patches_from_kubectls_own_structs(server, tmp_path):
    """With schemas published but no SMP request body, kubectl falls back to its Go structs,
    whose list merge keys produce ``$setElementOrder`` directives (kubectl-wire.md §4)."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text(CLASSES)
    assert server.kubectl("apply", "-f", str(manifest)).returncode == 0
    manifest.write_text(CLASSES.replace("image: nginx", "image: nginx:2"))
    result = server.kubectl("apply", "-f", str(manifest), "-v=9")
    assert result.returncode == 0, result.stderr
    assert "$setElementOrder/containers" in result.stderr


def _json(server, *args):
    result = server.kubectl("get", *args, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_create_generators_send_protobuf_and_the_objects_read_as_upstreams(server):
    """``kubectl create <kind>`` posts Kubernetes protobuf (Content-Type
    application/vnd.kubernetes.protobuf); the server decodes it like upstream's, leaving
    out Go's zero values of non-pointer omitempty fields and keeping pointer zeros."""
    commands = [
        (
            "priorityclass",
            "high",
            "--value=1000",
            "--description=batch work",
            "--preemption-policy=Never",
        ),
        ("deployment", "web", "--image=nginx", "--replicas=0", "--port=80"),
        ("poddisruptionbudget", "web-pdb", "--selector=app=web", "--min-available=50%"),
        ("namespace", "team-a"),
        ("job", "once", "--image=busybox", "--", "sleep", "5"),
    ]
    for command in commands:
        result = server.kubectl("create", *command)
        assert result.returncode == 0, (command, result.stderr)
    pc = _json(server, "pc", "high")
    assert (pc["value"], pc["description"], pc["preemptionPolicy"]) == (1000, "batch work", "Never")
    assert "globalDefault" not in pc
    assert "generation" not in pc["metadata"]
    deploy = _json(server, "deploy", "web")
    assert deploy["spec"]["replicas"] == 0
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert "stdin" not in container
    pdb = _json(server, "pdb", "web-pdb")
    assert pdb["spec"]["minAvailable"] == "50%"
    assert pdb["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert _json(server, "ns", "team-a")["status"]["phase"] == "Active"
    job = _json(server, "job", "once")
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["sleep", "5"]


def test_a_protobuf_create_meets_the_same_admission_as_json(server):
    result = server.kubectl("create", "priorityclass", "huge", "--value=2000000000")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'error: failed to create priorityclass: PriorityClass.scheduling.k8s.io "huge" is '
        "invalid: value: Forbidden: maximum allowed value of a user defined priority is "
        "1000000000"
    )
