"""ResourceQuota against a live ``kubeprio serve`` with the real kubectl (v1.32) and the
official Python client.

One server for the module (each test in its own namespace); the ``limitedResources`` test
starts its own server with ``--admission-control-config-file``. Each test names the
upstream rule it checks (kubernetes-semantics.md §7): the quota controller's
``status.hard``/``status.used`` and ``printResourceQuota``'s NAME REQUEST LIMIT AGE,
the ResourceQuota admission plugin's charges and refusals (``checkRequest`` in
``apiserver/pkg/admission/plugin/resourcequota/controller.go``), the pod evaluator's
PriorityClass scope and constraints, replenishment on delete, and
``ValidateResourceQuota``. Error lines are asserted whole, as kubectl prints them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import ServeProcess, eventually, needs_kubectl, running

pytestmark = [pytest.mark.e2e, needs_kubectl]

COMPUTE = """\
apiVersion: v1
kind: ResourceQuota
metadata: {{name: compute, namespace: {ns}}}
spec:
  hard:
    pods: "2"
    requests.cpu: "1"
    requests.memory: 1Gi
"""

PRIORITY_QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {{name: {name}, namespace: {ns}}}
spec:
  hard:
    pods: "{pods}"
  scopeSelector:
    matchExpressions:
    - scopeName: PriorityClass
      operator: In
      values: [{pc}]
"""

ADMISSION_CONFIGURATION = """\
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchScopes:
      - scopeName: PriorityClass
        operator: In
        values: [high]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-quota") as server:
        yield server


def _manifest(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _pod(
    name: str,
    ns: str,
    *,
    requests: str = "",
    pc: str = "",
    containers: tuple[str, ...] = ("app",),
) -> str:
    """A pod manifest; ``requests`` (``{cpu: 100m}``) goes to every container. It stops
    at once when deleted (``kubeprio.io/termination-seconds``), as nginx on SIGTERM."""
    lines = [
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        f"  name: {name}",
        f"  namespace: {ns}",
        "  annotations: {kubeprio.io/termination-seconds: '0'}",
        "spec:",
    ]
    if pc:
        lines.append(f"  priorityClassName: {pc}")
    lines.append("  containers:")
    for container in containers:
        lines += [f"  - name: {container}", "    image: nginx"]
        if requests:
            lines.append(f"    resources: {{requests: {requests}}}")
    return "\n".join(lines) + "\n"


def _table(text: str) -> list[dict[str, str]]:
    """The rows of a kubectl table, cells cut at the header's column starts (cells such
    as REQUEST hold spaces, LIMIT may be empty)."""
    header, *rows = text.splitlines()
    names = header.split()
    starts = [header.index(name) for name in names]
    ends = [*starts[1:], None]
    return [
        {name: row[start:end].strip() for name, start, end in zip(names, starts, ends, strict=True)}
        for row in rows
    ]


def _status(server: ServeProcess, ns: str, name: str) -> dict[str, Any]:
    status: dict[str, Any] = server.json("get", "quota", name, "-n", ns).get("status") or {}
    return status


def _observed(server: ServeProcess, ns: str, name: str) -> dict[str, Any]:
    """Wait for the quota controller's first sync (``status.used`` set): upstream's
    admission ignores a quota until then (it matches on ``status.hard``)."""

    def synced() -> dict[str, Any] | None:
        status = _status(server, ns, name)
        return status if status.get("used") is not None else None

    return eventually(synced)


def _create(server: ServeProcess, manifest: Path) -> str:
    """``kubectl create -f`` that must fail: kubectl's error line."""
    result = server.kubectl("create", "-f", str(manifest))
    assert result.returncode == 1, result.stdout
    return result.stderr.strip()


def test_get_and_describe_quota_show_the_controllers_status(served, tmp_path):
    """The quota controller copies spec.hard to status.hard and lists every tracked
    resource in status.used, at 0 when nothing is charged (CalculateUsageStats);
    printResourceQuota (v1.32 column order NAME REQUEST LIMIT AGE) prints each
    ``name: used/hard`` sorted, ``limits.*`` in LIMIT; kubectl describe prints the
    Resource/Used/Hard table from status."""
    ns = "quota-table"
    served.ok("create", "namespace", ns)
    applied = served.ok("apply", "-f", str(_manifest(tmp_path, "quota", COMPUTE.format(ns=ns))))
    assert applied == "resourcequota/compute created\n"

    served.ok("create", "quota", "mem-limits", "--hard=pods=4,limits.memory=2Gi", "-n", ns)

    def filled() -> list[dict[str, str]] | None:
        rows = _table(served.ok("get", "quota", "-n", ns))
        return rows if all(row["REQUEST"] for row in rows) else None

    text = served.ok("get", "quota", "-n", ns)
    assert text.splitlines()[0].split() == ["NAME", "REQUEST", "LIMIT", "AGE"]
    compute, limits = eventually(filled, timeout=10)
    assert compute["NAME"] == "compute"
    assert compute["REQUEST"] == "pods: 0/2, requests.cpu: 0/1, requests.memory: 0/1Gi"
    assert compute["LIMIT"] == ""
    assert compute["AGE"].endswith("s")
    assert (limits["NAME"], limits["REQUEST"], limits["LIMIT"]) == (
        "mem-limits",
        "pods: 0/4",
        "limits.memory: 0/2Gi",
    )
    assert _status(served, ns, "compute") == {
        "hard": {"pods": "2", "requests.cpu": "1", "requests.memory": "1Gi"},
        "used": {"pods": "0", "requests.cpu": "0", "requests.memory": "0"},
    }
    describe = served.ok("describe", "quota", "compute", "-n", ns)
    assert [line.split() for line in describe.splitlines()] == [
        ["Name:", "compute"],
        ["Namespace:", ns],
        ["Resource", "Used", "Hard"],
        ["--------", "----", "----"],
        ["pods", "0", "2"],
        ["requests.cpu", "0", "1"],
        ["requests.memory", "0", "1Gi"],
    ]


def test_pods_charge_the_quota_and_the_one_beyond_it_is_forbidden(served, tmp_path):
    """Admission charges each admitted pod to status.used before answering (the next
    create sees it); a pod that would exceed status.hard is refused with
    admission.NewForbidden: ``exceeded quota: <quota>, requested: ..., used: ...,
    limited: ...``, each list only the exceeded resources, ``name=value`` sorted and
    comma-joined (prettyPrint)."""
    ns = "quota-charge"
    served.ok("create", "namespace", ns)
    served.ok("apply", "-f", str(_manifest(tmp_path, "quota", COMPUTE.format(ns=ns))))
    _observed(served, ns, "compute")
    small = "{cpu: 100m, memory: 64Mi}"
    served.ok("create", "-f", str(_manifest(tmp_path, "p1", _pod("p1", ns, requests=small))))
    assert _status(served, ns, "compute")["used"] == {
        "pods": "1",
        "requests.cpu": "100m",
        "requests.memory": "64Mi",
    }
    served.ok("create", "-f", str(_manifest(tmp_path, "p2", _pod("p2", ns, requests=small))))
    assert _status(served, ns, "compute")["used"] == {
        "pods": "2",
        "requests.cpu": "200m",
        "requests.memory": "128Mi",
    }
    [row] = _table(served.ok("get", "quota", "-n", ns))
    assert row["REQUEST"] == "pods: 2/2, requests.cpu: 200m/1, requests.memory: 128Mi/1Gi"
    p3 = _manifest(tmp_path, "p3", _pod("p3", ns, requests=small))
    assert _create(served, p3) == (
        f'Error from server (Forbidden): error when creating "{p3}": pods "p3" is forbidden: '
        "exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2"
    )
    big = _manifest(tmp_path, "big", _pod("big", ns, requests="{cpu: '2', memory: 2Gi}"))
    assert _create(served, big) == (
        f'Error from server (Forbidden): error when creating "{big}": pods "big" is forbidden: '
        "exceeded quota: compute, requested: pods=1,requests.cpu=2,requests.memory=2Gi, "
        "used: pods=2,requests.cpu=200m,requests.memory=128Mi, "
        "limited: pods=2,requests.cpu=1,requests.memory=1Gi"
    )
    # Refused pods are neither stored nor charged.
    assert sorted(served.ok("get", "pods", "-n", ns, "-o", "name").split()) == [
        "pod/p1",
        "pod/p2",
    ]
    assert _status(served, ns, "compute")["used"]["pods"] == "2"


def test_a_pod_without_cpu_requests_fails_a_quota_on_requests_cpu(served, tmp_path):
    """podConstraintsFunc: when a pertinent quota limits requests.cpu, every container
    must request cpu: ``failed quota: <quota>: must specify requests.cpu for: <names>``
    (containers sorted, comma-joined), as admission.NewForbidden."""
    ns = "quota-cpu"
    served.ok("create", "namespace", ns)
    served.ok("create", "quota", "cpu", "--hard=requests.cpu=1", "-n", ns)
    _observed(served, ns, "cpu")
    memory_only = _manifest(tmp_path, "mem", _pod("mem", ns, requests="{memory: 64Mi}"))
    assert _create(served, memory_only) == (
        f'Error from server (Forbidden): error when creating "{memory_only}": pods "mem" is '
        "forbidden: failed quota: cpu: must specify requests.cpu for: app"
    )
    bare = _manifest(tmp_path, "bare", _pod("bare", ns, containers=("sidecar", "app")))
    assert _create(served, bare) == (
        f'Error from server (Forbidden): error when creating "{bare}": pods "bare" is '
        "forbidden: failed quota: cpu: must specify requests.cpu for: app,sidecar"
    )
    ok = _manifest(tmp_path, "ok", _pod("ok", ns, requests="{cpu: 250m}"))
    assert served.ok("create", "-f", str(ok)) == "pod/ok created\n"
    assert _status(served, ns, "cpu")["used"] == {"requests.cpu": "250m"}


def test_a_priority_class_scope_limits_only_pods_of_that_class(served, tmp_path):
    """PriorityClass scope (§7.1): a quota with scopeSelector PriorityClass In [high]
    tracks only pods whose priorityClassName is ``high`` (the name, not the value);
    pods of another class, or of none, are neither limited nor counted."""
    ns = "quota-prio"
    served.ok("create", "namespace", ns)
    served.ok("create", "priorityclass", "high", "--value=1000")
    served.ok("create", "priorityclass", "low", "--value=100")
    quota = PRIORITY_QUOTA.format(name="high-pods", ns=ns, pods=1, pc="high")
    served.ok("apply", "-f", str(_manifest(tmp_path, "quota", quota)))
    _observed(served, ns, "high-pods")
    served.ok("create", "-f", str(_manifest(tmp_path, "h1", _pod("h1", ns, pc="high"))))
    h2 = _manifest(tmp_path, "h2", _pod("h2", ns, pc="high"))
    assert _create(served, h2) == (
        f'Error from server (Forbidden): error when creating "{h2}": pods "h2" is forbidden: '
        "exceeded quota: high-pods, requested: pods=1, used: pods=1, limited: pods=1"
    )
    for name, pc in (("l1", "low"), ("l2", "low"), ("none", "")):
        created = served.ok("create", "-f", str(_manifest(tmp_path, name, _pod(name, ns, pc=pc))))
        assert created == f"pod/{name} created\n"
    pods = served.json("get", "pods", "-n", ns)["items"]
    assert {p["metadata"]["name"]: p["spec"].get("priority") for p in pods} == {
        "h1": 1000,
        "l1": 100,
        "l2": 100,
        "none": 0,
    }
    [row] = _table(served.ok("get", "quota", "-n", ns))
    assert row["REQUEST"] == "pods: 1/1"
    # A full recount by the controller (on a spec change) counts the high pod only.
    served.ok("patch", "quota", "high-pods", "-n", ns, "-p", '{"spec":{"hard":{"pods":"3"}}}')
    eventually(lambda: _status(served, ns, "high-pods")["hard"] == {"pods": "3"})
    assert _status(served, ns, "high-pods")["used"] == {"pods": "1"}


def test_deleting_a_pod_gives_its_charge_back(served, tmp_path):
    """Replenishment: the quota controller recounts a namespace's quotas when one of its
    pods is deleted, so status.used goes down and the next pod is admitted."""
    ns = "quota-free"
    served.ok("create", "namespace", ns)
    served.ok("create", "quota", "one", "--hard=pods=1", "-n", ns)
    _observed(served, ns, "one")
    served.ok("create", "-f", str(_manifest(tmp_path, "a", _pod("a", ns))))
    assert _status(served, ns, "one")["used"] == {"pods": "1"}
    b = _manifest(tmp_path, "b", _pod("b", ns))
    assert _create(served, b) == (
        f'Error from server (Forbidden): error when creating "{b}": pods "b" is forbidden: '
        "exceeded quota: one, requested: pods=1, used: pods=1, limited: pods=1"
    )
    assert served.ok("delete", "pod", "a", "-n", ns) == 'pod "a" deleted\n'
    eventually(lambda: _status(served, ns, "one")["used"] == {"pods": "0"}, timeout=10)
    [row] = _table(served.ok("get", "quota", "-n", ns))
    assert row["REQUEST"] == "pods: 0/1"
    assert served.ok("create", "-f", str(b)) == "pod/b created\n"
    assert _status(served, ns, "one")["used"] == {"pods": "1"}


def _status_body(error: k8s.ApiException) -> dict[str, Any]:
    """The Status object an ApiException carries."""
    assert error.body is not None
    body: dict[str, Any] = json.loads(error.body)
    return body


def test_limited_resources_need_a_covering_quota_for_the_scope(tmp_path):
    """limitedResources matchScopes (§7.2): a pod matching a limited scope needs a quota in
    its namespace with a scope selector of the same scope name that matches the pod;
    without one, upstream returns a plain error (HTTP 500, no reason) ``insufficient
    quota to match these scopes: [{PriorityClass In [high]}]``. Pods outside the scope
    are unaffected; a quota for another class does not cover; one for ``high`` does."""
    config = _manifest(tmp_path, "admission", ADMISSION_CONFIGURATION)
    server = ServeProcess(
        tmp_path / "data", tmp_path / "cache", ["--admission-control-config-file", str(config)]
    ).start()
    try:
        ns = "limited"
        server.ok("create", "namespace", ns)
        server.ok("create", "priorityclass", "high", "--value=1000")
        server.ok("create", "priorityclass", "low", "--value=100")
        high = _manifest(tmp_path, "hp", _pod("hp", ns, pc="high"))
        refused = (
            f'Error from server: error when creating "{high}": '
            "insufficient quota to match these scopes: [{PriorityClass In [high]}]"
        )
        assert _create(server, high) == refused
        with server.client() as api, pytest.raises(k8s.ApiException) as caught:
            k8s.CoreV1Api(api).create_namespaced_pod(
                ns,
                k8s.V1Pod(
                    metadata=k8s.V1ObjectMeta(name="hp"),
                    spec=k8s.V1PodSpec(
                        priority_class_name="high",
                        containers=[k8s.V1Container(name="app", image="nginx")],
                    ),
                ),
            )
        assert caught.value.status == 500
        status = _status_body(caught.value)
        assert "reason" not in status
        assert (status["kind"], status["status"], status["code"], status["message"]) == (
            "Status",
            "Failure",
            500,
            "insufficient quota to match these scopes: [{PriorityClass In [high]}]",
        )
        low = _manifest(tmp_path, "lp", _pod("lp", ns, pc="low"))
        assert server.ok("create", "-f", str(low)) == "pod/lp created\n"
        other = PRIORITY_QUOTA.format(name="low-pods", ns=ns, pods=5, pc="low")
        server.ok("apply", "-f", str(_manifest(tmp_path, "low-quota", other)))
        _observed(server, ns, "low-pods")
        assert _create(server, high) == refused
        covering = PRIORITY_QUOTA.format(name="high-pods", ns=ns, pods=5, pc="high")
        server.ok("apply", "-f", str(_manifest(tmp_path, "high-quota", covering)))
        _observed(server, ns, "high-pods")
        assert server.ok("create", "-f", str(high)) == "pod/hp created\n"
        assert _status(server, ns, "high-pods")["used"] == {"pods": "1"}
        assert _status(server, ns, "low-pods")["used"] == {"pods": "1"}
    finally:
        assert server.stop() == 0, server.log()


def test_the_python_client_creates_reads_and_is_refused_by_a_quota(served):
    """The official client's models decode ResourceQuota (spec.hard, the controller's
    status, an object-count ``count/pods`` beside ``pods``); an exceeded quota is
    upstream's 403 Forbidden Status naming only the exceeded resource, whose message
    kubectl prints after ``Error from server (Forbidden):``."""
    ns = "quota-py"
    with served.client() as api:
        core = k8s.CoreV1Api(api)
        core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
        created = core.create_namespaced_resource_quota(
            ns,
            k8s.V1ResourceQuota(
                metadata=k8s.V1ObjectMeta(name="py"),
                spec=k8s.V1ResourceQuotaSpec(hard={"pods": "1", "count/pods": "2"}),
            ),
        )
        assert created.kind == "ResourceQuota"
        assert created.spec is not None
        assert created.spec.hard == {"pods": "1", "count/pods": "2"}

        def status() -> k8s.V1ResourceQuotaStatus | None:
            read = core.read_namespaced_resource_quota("py", ns)
            assert read.metadata is not None
            assert created.metadata is not None
            assert read.metadata.uid == created.metadata.uid
            return read.status if read.status is not None and read.status.used else None

        synced = eventually(status)
        assert synced.hard == {"pods": "1", "count/pods": "2"}
        assert synced.used == {"pods": "0", "count/pods": "0"}

        def pod(name: str) -> k8s.V1Pod:
            return k8s.V1Pod(
                metadata=k8s.V1ObjectMeta(name=name),
                spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="app", image="nginx")]),
            )

        core.create_namespaced_pod(ns, pod("a"))
        charged = status()
        assert charged is not None
        assert charged.used == {"pods": "1", "count/pods": "1"}
        with pytest.raises(k8s.ApiException) as caught:
            core.create_namespaced_pod(ns, pod("b"))
    message = (
        'pods "b" is forbidden: exceeded quota: py, requested: pods=1, used: pods=1, '
        "limited: pods=1"
    )
    assert (caught.value.status, caught.value.reason) == (403, "Forbidden")
    body = _status_body(caught.value)
    assert (body["reason"], body["code"], body["message"]) == ("Forbidden", 403, message)
    assert body["details"] == {"name": "b", "kind": "pods"}
    kubectl = served.kubectl("run", "b", "-n", ns, "--image=nginx", "--restart=Never")
    assert (kubectl.returncode, kubectl.stderr.strip()) == (
        1,
        f"Error from server (Forbidden): {message}",
    )


BAD_HARD = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: bad, namespace: default}
spec:
  hard: {foo: "1"}
"""

BAD_SCOPE = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: bad-scope, namespace: default}
spec:
  hard: {pods: "1"}
  scopeSelector:
    matchExpressions:
    - {scopeName: PriorityClass, operator: Exists, values: [high]}
"""


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        (
            BAD_HARD,
            # validateResourceName then ValidateResourceQuotaResourceName: both fail for a
            # name without "/" that is no standard resource; kubectl lists the causes.
            'The ResourceQuota "bad" is invalid: \n'
            '* spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified\n'
            '* spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota',
        ),
        (
            BAD_SCOPE,
            # validateScopedResourceSelectorRequirement: the path has no list index, the
            # text says 'Exist', the bad value is the values list (%#v of a []string).
            'The ResourceQuota "bad-scope" is invalid: spec.scopeSelector.matchExpressions.values: '
            "Invalid value: []string{\"high\"}: must be no value when `operator` is 'Exist' or "
            "'DoesNotExist' for scope selector",
        ),
    ],
    ids=["not-a-quota-resource", "exists-with-values"],
)
def test_kubectl_apply_shows_upstreams_validation_errors(served, tmp_path, manifest, expected):
    """ValidateResourceQuota through kubectl apply: 422 Invalid, kubectl's
    ``The ResourceQuota "<name>" is invalid: ...`` with one cause inline, several as a
    ``* `` list."""
    result = served.kubectl("apply", "-f", str(_manifest(tmp_path, "bad", manifest)))
    assert result.returncode == 1
    assert result.stderr.strip() == expected
    assert "bad" not in served.ok("get", "quota", "-n", "default", "-o", "name")
