"""StatefulSets against a live ``kubeprio serve`` with the real kubectl (v1.32) and the
official Python client.

Each test names the upstream behaviour it checks: pods ``web-0``, ``web-1``, ... created
one at a time (OrderedReady), ``kubectl rollout status statefulset/NAME`` (kubectl's
``StatefulSetStatusViewer`` on the defaulted ``partition: 0``), ``kubectl get sts``
columns (``printStatefulSet``: NAME READY AGE, wide CONTAINERS IMAGES), ``get all``
(category ``all``), ``kubectl scale sts`` through the ``scale`` subresource with the
highest ordinals removed first, a template change rolled out from the highest ordinal,
the forbidden-update text, and deletion with its pods (garbage collection).
"""

from __future__ import annotations

from collections.abc import Iterator
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

WEB = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: __NS__}
spec:
  replicas: 3
  serviceName: nginx
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: nginx
        image: nginx:1.27
        resources: {requests: {cpu: 100m}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-sts", ["--preset", "kestrel", "--nodes", "2"]) as server:
        yield server


def _pods(served: ServeProcess, namespace: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = served.json("get", "pods", "-n", namespace, "-l", "app=web")[
        "items"
    ]
    return items


def _live(served: ServeProcess, namespace: str) -> list[str]:
    """Names of the Running, not terminating pods."""
    return sorted(
        p["metadata"]["name"]
        for p in _pods(served, namespace)
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    )


def _events(served: ServeProcess, namespace: str, reason: str) -> list[str]:
    items = served.json(
        "get", "events", "-n", namespace, "--field-selector", "involvedObject.name=web"
    )["items"]
    ordered = sorted(items, key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [e["message"] for e in ordered if e["reason"] == reason]


def _apply(served: ServeProcess, namespace: str) -> None:
    created = served.ok("apply", "-f", "-", stdin=WEB.replace("__NS__", namespace))
    assert created.strip() == "statefulset.apps/web created"
    status = served.kubectl("rollout", "status", "statefulset/web", "-n", namespace, timeout=90)
    assert status.returncode == 0, status.stderr
    assert (
        status.stdout.splitlines()[-1]
        == "partitioned roll out complete: 3 new pods have been updated..."
    )


def test_apply_creates_ordered_pods_and_get_shows_upstream_columns(served):
    namespace = new_namespace(served, "sts")
    _apply(served, namespace)
    assert _live(served, namespace) == ["web-0", "web-1", "web-2"]
    assert _events(served, namespace, "SuccessfulCreate") == [
        f"create Pod web-{n} in StatefulSet web successful" for n in range(3)
    ]
    rows = table_rows(served.ok("get", "sts", "-n", namespace))
    assert rows[0] == ["NAME", "READY", "AGE"]
    assert rows[1][:2] == ["web", "3/3"]
    wide = table_rows(served.ok("get", "statefulsets", "-n", namespace, "-o", "wide"))
    assert wide[0] == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert wide[1][-2:] == ["nginx", "nginx:1.27"]
    assert "statefulset.apps/web" in served.ok("get", "all", "-n", namespace)
    pod = served.json("get", "pod", "web-1", "-n", namespace)
    assert pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "web-1"
    assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "nginx")
    sts = served.json("get", "sts", "web", "-n", namespace)
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady"
    assert sts["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 0},
    }
    assert sts["status"]["currentRevision"] == pod["metadata"]["labels"]["controller-revision-hash"]
    revisions = table_rows(served.ok("get", "controllerrevisions", "-n", namespace))
    assert revisions[1][1:3] == ["statefulset.apps/web", "1"]


def test_scale_removes_the_highest_ordinals_first(served):
    namespace = new_namespace(served, "sts-scale")
    _apply(served, namespace)
    assert served.ok("scale", "sts", "web", "--replicas=1", "-n", namespace).strip() == (
        "statefulset.apps/web scaled"
    )
    eventually(
        lambda: _live(served, namespace) == ["web-0"] and len(_pods(served, namespace)) == 1,
        timeout=60,
    )
    assert _events(served, namespace, "SuccessfulDelete") == [
        "delete Pod web-2 in StatefulSet web successful",
        "delete Pod web-1 in StatefulSet web successful",
    ]
    rows = table_rows(served.ok("get", "sts", "web", "-n", namespace))
    assert rows[1][:2] == ["web", "1/1"]


def test_image_change_rolls_from_the_highest_ordinal(served):
    namespace = new_namespace(served, "sts-roll")
    _apply(served, namespace)
    served.ok("set", "image", "sts/web", "nginx=nginx:1.28", "-n", namespace)
    status = served.kubectl("rollout", "status", "sts/web", "-n", namespace, timeout=120)
    assert status.returncode == 0, status.stderr
    eventually(
        lambda: (
            {p["spec"]["containers"][0]["image"] for p in _pods(served, namespace)}
            == {"nginx:1.28"}
            and _live(served, namespace) == ["web-0", "web-1", "web-2"]
        ),
        timeout=60,
    )
    deleted = _events(served, namespace, "SuccessfulDelete")
    assert deleted == [f"delete Pod web-{n} in StatefulSet web successful" for n in (2, 1, 0)]


def test_fixed_fields_refuse_an_update_with_upstreams_text(served):
    namespace = new_namespace(served, "sts-fixed")
    _apply(served, namespace)
    result = served.kubectl(
        "patch", "sts", "web", "-n", namespace, "-p", '{"spec":{"serviceName":"other"}}'
    )
    assert result.returncode != 0
    assert (
        'The StatefulSet "web" is invalid: spec: Forbidden: updates to statefulset spec for '
        "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    ) in result.stderr


def test_python_client_reads_status_and_scales(served):
    namespace = new_namespace(served, "sts-py")
    _apply(served, namespace)
    with served.client() as api:
        apps = k8s.AppsV1Api(api)
        sts = apps.read_namespaced_stateful_set("web", namespace)
        assert (sts.status.replicas, sts.status.ready_replicas, sts.status.available_replicas) == (
            3,
            3,
            3,
        )
        assert sts.status.current_revision == sts.status.update_revision
        scale = apps.read_namespaced_stateful_set_scale("web", namespace)
        assert (scale.spec.replicas, scale.status.replicas, scale.status.selector) == (
            3,
            3,
            "app=web",
        )
        apps.patch_namespaced_stateful_set_scale("web", namespace, {"spec": {"replicas": 2}})
        eventually(lambda: _live(served, namespace) == ["web-0", "web-1"], timeout=60)
        apps.delete_namespaced_stateful_set("web", namespace)
    eventually(lambda: not _pods(served, namespace), timeout=60)
