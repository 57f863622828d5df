"""``kubectl debug`` end to end against ``kubeprio serve``, and the official Python client's
``pods/ephemeralcontainers`` calls.

kubectl v1.32's ``debug`` (``pkg/cmd/debug/debug.go``): for a pod it reads the pod, builds
the ephemeral container (``generateDebugContainer``: name ``debugger-<5 random>`` unless
``-c``, ``terminationMessagePolicy: File``, stdin/tty from ``-i``/``-t``), diffs the two
pods into a strategic merge patch (``CreateTwoWayMergePatch``) and PATCHes
``pods/<name>/ephemeralcontainers``; with ``-it`` it then watches the pod until the
container's status is running (``waitForContainer``) and attaches, falling back to the
container's log when attaching fails (``handleAttachPod``). ``node/NAME`` creates a pod on
the node in the host namespaces (``generateNodeDebugPod``); ``--copy-to`` creates a copy of
the pod with the debugger as an extra container (``generatePodCopyWithDebugContainer``).
The default ``legacy`` profile prints its deprecation line on stderr.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

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

pytestmark = [pytest.mark.e2e, *CLIENT_SOCKET_WARNINGS]

ALICE = "kubeprio-alice"
LEGACY_WARNING = (
    "--profile=legacy is deprecated and will be removed in the future. It is recommended to "
    'explicitly specify a profile, for example "--profile=general".'
)
NO_PROCESS = "kubeprio's simulated containers run no processes"
DEFAULTING = re.compile(r"^Defaulting debug container name to (debugger-[a-z0-9]{5})\.$")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(
        tmp_path_factory, "serve-debug", ["--preset", "kestrel", "--nodes", "2"]
    ) as process:
        yield process


def _running_pod(server: ServeProcess, ns: str, name: str = "web", context: str | None = None):
    server.ok("run", name, "-n", ns, "--image=nginx", "--restart=Never", context=context)
    eventually(
        lambda: (
            "Running" in server.ok("get", "pod", name, "-n", ns, "--no-headers", context=context)
        )
    )


def _pod(server: ServeProcess, ns: str, name: str = "web") -> Any:
    return server.json("get", "pod", name, "-n", ns)


def _ephemeral_status(pod: Any, name: str) -> Any:
    for status in pod["status"].get("ephemeralContainerStatuses") or ():
        if status["name"] == name:
            return status
    return None


@needs_kubectl
def test_kubectl_debug_adds_a_running_ephemeral_container(server):
    ns = new_namespace(server, "debug")
    _running_pod(server, ns)
    result = server.kubectl("debug", "web", "-n", ns, "--image=busybox")
    assert result.returncode == 0, result.stderr
    match = DEFAULTING.match(result.stdout.strip())
    assert match is not None, result.stdout
    name = match.group(1)
    assert result.stderr.strip() == LEGACY_WARNING
    pod = _pod(server, ns)
    [added] = pod["spec"]["ephemeralContainers"]
    assert added == {
        "name": name,
        "image": "busybox",
        "imagePullPolicy": "Always",
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    status = eventually(lambda: _ephemeral_status(_pod(server, ns), name))
    assert (status["ready"], status["restartCount"], list(status["state"])) == (
        False,
        0,
        ["running"],
    )
    assert status["containerID"].startswith("containerd://")
    # READY counts regular containers only (upstream printPod).
    assert table_rows(server.ok("get", "pod", "web", "-n", ns))[1][1:3] == ["1/1", "Running"]
    described = server.ok("describe", "pod", "web", "-n", ns)
    section = described.split("Ephemeral Containers:\n", 1)[1]
    assert section.startswith(f"  {name}:\n")
    assert "    Image:          busybox\n" in section
    assert "    State:          Running\n" in section
    assert "    Ready:          False\n" in section
    # kubectl logs/attach know the container; it prints nothing and runs no process.
    logs = server.kubectl("logs", "web", "-n", ns, "-c", name)
    assert (logs.returncode, logs.stdout) == (0, ""), logs.stderr
    attach = server.kubectl("attach", "web", "-n", ns, "-c", name)
    assert attach.returncode == 1
    assert attach.stderr.strip().endswith(
        "Error from server (InternalError): Internal error occurred: error attaching to "
        f"container: {NO_PROCESS}"
    )
    # The default container is still the pod's only regular one.
    default = server.kubectl("logs", "web", "-n", ns)
    assert default.returncode == 0
    assert default.stderr.strip() == (f'Defaulted container "web" out of: web, {name} (ephem)')


@needs_kubectl
def test_kubectl_debug_it_falls_back_to_the_log_when_attach_fails(server):
    ns = new_namespace(server, "debug")
    _running_pod(server, ns)
    result = server.kubectl(
        "debug", "web", "-n", ns, "-it", "--image=busybox", "--profile=general", stdin=""
    )
    assert result.returncode == 0, result.stderr
    assert DEFAULTING.match(result.stdout.strip()) is not None
    assert (
        "warning: couldn't attach to pod/web, falling back to streaming logs: Internal error "
        f"occurred: error attaching to container: {NO_PROCESS}"
    ) in result.stderr
    [added] = _pod(server, ns)["spec"]["ephemeralContainers"]
    assert (added["stdin"], added["tty"]) == (True, True)


@needs_kubectl
def test_kubectl_debug_target_must_name_a_container(server):
    ns = new_namespace(server, "debug")
    _running_pod(server, ns)
    good = server.kubectl(
        "debug", "web", "-n", ns, "--image=busybox", "--target=web", "-c", "dbg",
        "--profile=general",
    )  # fmt: skip
    assert good.returncode == 0, good.stderr
    assert good.stdout == (
        'Targeting container "web". If you don\'t see processes from this container it may be '
        "because the container runtime doesn't support this feature.\n"
    )
    assert _pod(server, ns)["spec"]["ephemeralContainers"][0]["targetContainerName"] == "web"
    bad = server.kubectl(
        "debug", "web", "-n", ns, "--image=busybox", "--target=nope", "-c", "dbg2",
        "--profile=general",
    )  # fmt: skip
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        'The Pod "web" is invalid: spec.ephemeralContainers[1].targetContainerName: '
        'Not found: "nope"'
    )
    again = server.kubectl(
        "debug", "web", "-n", ns, "--image=alpine", "-c", "dbg", "--profile=general"
    )
    assert again.returncode == 1
    assert again.stderr.startswith(
        'The Pod "web" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral '
        'containers "dbg" may not be changed\n'
    )


@needs_kubectl
def test_kubectl_debug_node_runs_a_host_namespace_pod_on_it(server):
    ns = new_namespace(server, "debug")
    result = server.kubectl("debug", "node/node-2", "-n", ns, "--image=busybox")
    assert result.returncode == 0, result.stderr
    match = re.fullmatch(
        r"Creating debugging pod (node-debugger-node-2-[a-z0-9]{5}) with container debugger "
        r"on node node-2\.\n",
        result.stdout,
    )
    assert match is not None, result.stdout
    name = match.group(1)
    pod = eventually(
        lambda: (p := _pod(server, ns, name))["status"].get("phase") == "Running" and p
    )
    spec = pod["spec"]
    assert (spec["nodeName"], spec["hostNetwork"], spec["hostPID"], spec["hostIPC"]) == (
        "node-2",
        True,
        True,
        True,
    )
    # (A real API server also defaults the hostPath's ``type: ""``; kubeprio defaults no
    # volume fields.)
    assert spec["volumes"][0]["hostPath"]["path"] == "/"
    assert pod["status"]["podIP"] == pod["status"]["hostIP"]


@needs_kubectl
def test_kubectl_debug_copy_to_creates_a_copy_with_the_debugger(server):
    ns = new_namespace(server, "debug")
    _running_pod(server, ns)
    result = server.kubectl(
        "debug", "web", "-n", ns, "--copy-to=web-copy", "--image=busybox", "--profile=general"
    )
    assert result.returncode == 0, result.stderr
    name = DEFAULTING.match(result.stdout.strip())
    assert name is not None
    eventually(lambda: "2/2" in server.ok("get", "pod", "web-copy", "-n", ns, "--no-headers"))
    copy = _pod(server, ns, "web-copy")
    assert [c["name"] for c in copy["spec"]["containers"]] == ["web", name.group(1)]
    assert "ephemeralContainers" not in copy["spec"]


@needs_kubectl
def test_a_tenant_user_debugs_pods_of_its_namespaces(server):
    ns = "kestrel-web"
    _running_pod(server, ns, "tenant-web", context=ALICE)
    result = server.kubectl(
        "debug", "tenant-web", "-n", ns, "--image=busybox", "--profile=general", context=ALICE
    )
    assert result.returncode == 0, result.stderr
    assert len(_pod(server, ns, "tenant-web")["spec"]["ephemeralContainers"]) == 1
    elsewhere = new_namespace(server, "debug")
    _running_pod(server, elsewhere)
    refused = server.kubectl(
        "debug", "web", "-n", elsewhere, "--image=busybox", "--profile=general", context=ALICE
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f'Error from server (Forbidden): pods "web" is forbidden: User "alice" cannot get '
        f'resource "pods" in API group "" in the namespace "{elsewhere}"'
    )


def test_the_python_client_patches_reads_and_replaces_ephemeral_containers(server):
    ns = "kestrel-research"
    with server.client() as api:
        core = k8s.CoreV1Api(api)
        core.create_namespaced_pod(
            ns,
            k8s.V1Pod(
                metadata=k8s.V1ObjectMeta(name="py"),
                spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
            ),
        )
        patched = core.patch_namespaced_pod_ephemeralcontainers(
            "py",
            ns,
            {"spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}},
        )
        assert [c.name for c in patched.spec.ephemeral_containers] == ["dbg"]
        assert patched.spec.ephemeral_containers[0].termination_message_policy == "File"
        # The kubelet starts it (a status write, a new resourceVersion): read after that.
        eventually(lambda: core.read_namespaced_pod("py", ns).status.ephemeral_container_statuses)
        read = core.read_namespaced_pod_ephemeralcontainers("py", ns)
        assert [c.name for c in read.spec.ephemeral_containers] == ["dbg"]
        read.spec.ephemeral_containers.append(
            k8s.V1EphemeralContainer(name="dbg2", image="alpine", target_container_name="c")
        )
        replaced = core.replace_namespaced_pod_ephemeralcontainers("py", ns, read)
        assert [c.name for c in replaced.spec.ephemeral_containers] == ["dbg", "dbg2"]
        replaced.spec.ephemeral_containers = replaced.spec.ephemeral_containers[1:]
        # Unconditional (the kubelet is writing dbg2's status meanwhile): the rule decides.
        replaced.metadata.resource_version = None
        with pytest.raises(ApiException) as caught:
            core.replace_namespaced_pod_ephemeralcontainers("py", ns, replaced)
        assert caught.value.status == 422
        assert json.loads(caught.value.body)["message"] == (
            'Pod "py" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral '
            'containers "dbg" may not be removed\n'
        )
        pod = core.read_namespaced_pod("py", ns)
        pod.metadata.resource_version = None
        pod.spec.ephemeral_containers.append(k8s.V1EphemeralContainer(name="x", image="y"))
        with pytest.raises(ApiException) as added_by_update:
            core.replace_namespaced_pod("py", ns, pod)
        assert added_by_update.value.status == 422
        assert (
            "may not change fields other than" in json.loads(added_by_update.value.body)["message"]
        )
        eventually(
            lambda: len(core.read_namespaced_pod("py", ns).status.ephemeral_container_statuses) == 2
        )
