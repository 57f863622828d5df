"""LimitRange and the LimitRanger admission plugin against a live ``kubeprio serve``, with
the real kubectl (v1.32) and the official Python client.

One server for the module, each test in its own namespace. Rules checked: the resource and
its ``limits`` short name (discovery), ``printLimitRange``'s NAME CREATED AT,
``SetDefaults_LimitRangeItem`` (what ``-o yaml`` shows), ``ValidateLimitRange``'s texts,
and the plugin (``plugin/pkg/admission/limitranger/admission.go``): defaults and the
``kubernetes.io/limit-ranger`` annotation on pods created without requests, directly or by
a Deployment's ReplicaSet, and ``admission.NewForbidden`` of every violated bound. Error
lines are asserted whole, as kubectl prints them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

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

LIMITS = """\
apiVersion: v1
kind: LimitRange
metadata: {{name: defaults, namespace: {ns}}}
spec:
  limits:
  - type: Container
    defaultRequest: {{cpu: 100m, memory: 128Mi}}
    default: {{cpu: 500m, memory: 512Mi}}
    min: {{cpu: 50m}}
    max: {{cpu: "1", memory: 1Gi}}
  - type: Pod
    max: {{cpu: 1500m}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-limitrange") as server:
        yield server


def _apply_limits(server: ServeProcess, tmp_path: Path, ns: str) -> None:
    path = tmp_path / "limits.yaml"
    path.write_text(LIMITS.format(ns=ns))
    assert server.ok("apply", "-f", str(path)) == "limitrange/defaults created\n"


def _pod(name: str, ns: str, *containers: tuple[str, str]) -> str:
    """A pod whose containers have the given ``resources`` flow maps (``""``: none)."""
    lines = ["apiVersion: v1", "kind: Pod", f"metadata: {{name: {name}, namespace: {ns}}}",
             "spec:", "  containers:"]  # fmt: skip
    for container, resources in containers:
        lines += [f"  - name: {container}", "    image: nginx"]
        if resources:
            lines.append(f"    resources: {resources}")
    return "\n".join(lines) + "\n"


def test_get_limits_lists_the_range_with_its_creation_time(served, tmp_path):
    """Discovery serves ``limitranges`` with short name ``limits``; printLimitRange prints
    NAME and CREATED AT (the creation time, RFC 3339 in UTC, not an age); the stored object
    shows SetDefaults_LimitRangeItem's filled-in defaults."""
    ns = new_namespace(served, "lr-get")
    _apply_limits(served, tmp_path, ns)
    text = served.ok("get", "limits", "-n", ns)
    [header, row] = table_rows(text)
    assert header == ["NAME", "CREATED", "AT"]
    assert row[0] == "defaults"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row[1])
    resources = served.ok("api-resources", "--api-group=", "--no-headers")
    assert ["limitranges", "limits", "v1", "true", "LimitRange"] in table_rows(resources)
    stored = served.json("get", "limitrange", "defaults", "-n", ns)
    assert stored["spec"]["limits"] == [
        {
            "type": "Container",
            "default": {"cpu": "500m", "memory": "512Mi"},
            "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
            "max": {"cpu": "1", "memory": "1Gi"},
            "min": {"cpu": "50m"},
        },
        {"type": "Pod", "max": {"cpu": "1500m"}},
    ]
    describe = table_rows(served.ok("describe", "limits", "defaults", "-n", ns))
    assert ["Container", "cpu", "50m", "1", "100m", "500m", "-"] in describe
    assert ["Pod", "cpu", "-", "1500m", "-", "-", "-"] in describe


def test_a_pod_created_without_requests_gets_the_defaults(served, tmp_path):
    """mergePodResourceRequirements: requests and limits the container lacks, and the
    annotation listing them (requests before limits, names sorted)."""
    ns = new_namespace(served, "lr-defaults")
    _apply_limits(served, tmp_path, ns)
    assert served.ok("run", "web", "--image=nginx", "-n", ns) == "pod/web created\n"
    pod = served.json("get", "pod", "web", "-n", ns)
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "512Mi"},
        "requests": {"cpu": "100m", "memory": "128Mi"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit "
        "for container web"
    )
    assert pod["status"]["qosClass"] == "Burstable"


def test_pods_of_a_deployment_get_the_defaults_too(served, tmp_path):
    """The ReplicaSet controller's pods go through the same admission."""
    ns = new_namespace(served, "lr-deploy")
    _apply_limits(served, tmp_path, ns)
    served.ok("create", "deployment", "shop", "--image=nginx", "--replicas=2", "-n", ns)

    def pods() -> list[dict[str, Any]] | None:
        items: list[dict[str, Any]] = served.json("get", "pods", "-n", ns)["items"]
        return items if len(items) == 2 else None

    for pod in eventually(pods):
        assert pod["spec"]["containers"][0]["resources"]["requests"] == {
            "cpu": "100m",
            "memory": "128Mi",
        }
        assert "kubernetes.io/limit-ranger" in pod["metadata"]["annotations"]


def test_a_pod_outside_the_bounds_is_forbidden(served, tmp_path):
    """PodValidateLimitFunc: every broken Container and Pod bound in one
    admission.NewForbidden, joined as utilerrors.NewAggregate joins them."""
    ns = new_namespace(served, "lr-bounds")
    _apply_limits(served, tmp_path, ns)
    path = tmp_path / "big.yaml"
    path.write_text(
        _pod("big", ns, ("a", "{requests: {cpu: 10m}, limits: {cpu: '2', memory: 2Gi}}"),
             ("b", "{limits: {cpu: '1'}}"))
    )  # fmt: skip
    result = served.kubectl("create", "-f", str(path))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f'Error from server (Forbidden): error when creating "{path}": pods "big" is forbidden: '
        "[minimum cpu usage per Container is 50m, but request is 10m, maximum cpu usage per "
        "Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit "
        "is 2Gi, maximum cpu usage per Pod is 1500m, but limit is 3]"
    )
    overrides = json.dumps(
        {"spec": {"containers": [{"name": "huge", "image": "nginx",
                                  "resources": {"limits": {"cpu": "4"}}}]}}
    )  # fmt: skip
    result = served.kubectl("run", "huge", "--image=nginx", "-n", ns, f"--overrides={overrides}")
    assert result.stderr.strip() == (
        'Error from server (Forbidden): pods "huge" is forbidden: [maximum cpu usage per '
        "Container is 1, but limit is 4, maximum cpu usage per Pod is 1500m, but limit is 4]"
    )
    assert served.ok("get", "pods", "-n", ns, "-o", "name") == ""


def test_an_invalid_limit_range_is_refused_with_upstreams_causes(served, tmp_path):
    ns = new_namespace(served, "lr-invalid")
    path = tmp_path / "bad.yaml"
    path.write_text(
        f"apiVersion: v1\nkind: LimitRange\nmetadata: {{name: bad, namespace: {ns}}}\n"
        "spec:\n  limits:\n  - type: Pod\n    min: {cpu: '2'}\n    max: {cpu: '1'}\n"
        "  - type: Pod\n"
    )
    result = served.kubectl("create", "-f", str(path))
    assert result.stderr.strip() == (
        'The LimitRange "bad" is invalid: \n* spec.limits[0].min[cpu]: Invalid value: "2": '
        "min value 2 is greater than max value 1\n* spec.limits[1].type: Duplicate value: "
        '"Pod"'
    )


def test_the_python_client_creates_a_range_and_sees_the_defaults(served):
    """The official client's models decode LimitRange and the defaulted pod; a violation is
    the 403 Forbidden Status kubectl prints."""
    ns = new_namespace(served, "lr-py")
    with served.client() as api:
        core = k8s.CoreV1Api(api)
        created = core.create_namespaced_limit_range(
            ns,
            k8s.V1LimitRange(
                metadata=k8s.V1ObjectMeta(name="py"),
                spec=k8s.V1LimitRangeSpec(
                    limits=[k8s.V1LimitRangeItem(type="Container", max={"cpu": "1"})]
                ),
            ),
        )
        assert created.spec is not None
        [item] = created.spec.limits
        assert (item.default, item.default_request) == ({"cpu": "1"}, {"cpu": "1"})
        listed = core.list_namespaced_limit_range(ns)
        assert [lr.metadata.name for lr in listed.items] == ["py"]

        def pod(name: str, limits: dict[str, str] | None = None) -> k8s.V1Pod:
            resources = k8s.V1ResourceRequirements(limits=limits) if limits else None
            container = k8s.V1Container(name="app", image="nginx", resources=resources)
            return k8s.V1Pod(metadata=k8s.V1ObjectMeta(name=name),
                             spec=k8s.V1PodSpec(containers=[container]))  # fmt: skip

        made = core.create_namespaced_pod(ns, pod("a"))
        assert made.spec is not None
        resources = made.spec.containers[0].resources
        assert (resources.requests, resources.limits) == ({"cpu": "1"}, {"cpu": "1"})
        with pytest.raises(k8s.ApiException) as caught:
            core.create_namespaced_pod(ns, pod("b", {"cpu": "2"}))
    assert (caught.value.status, caught.value.reason) == (403, "Forbidden")
    assert caught.value.body is not None
    body = json.loads(caught.value.body)
    assert body["message"] == (
        'pods "b" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    )
    assert body["details"] == {"name": "b", "kind": "pods"}
