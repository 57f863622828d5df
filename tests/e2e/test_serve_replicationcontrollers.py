"""ReplicationControllers and SubjectAccessReviews against a live ``kubeprio serve``, with
the real kubectl (v1.32) and the official Python client.

Upstream behaviour checked:

* ``kubectl create -f`` of an RC without a selector: ``SetDefaults_ReplicationController``
  takes it (and the labels) from the template; the ReplicationManager (the ReplicaSet
  controller, ``pkg/controller/replication``) makes the pods; ``kubectl get rc``
  (``printReplicationController``: NAME DESIRED CURRENT READY AGE, wide CONTAINERS IMAGES
  SELECTOR), ``get all`` (category ``all``), ``kubectl scale rc`` through the ``scale``
  subresource, ``kubectl describe rc`` (kubectl's ``ReplicationControllerDescriber``),
  ``kubectl delete rc`` with its pods (background cascading, the garbage collector);
* a ResourceQuota on ``replicationcontrollers`` (``legacyObjectCountAliases``) refuses
  the second RC with the quota admission's text;
* ``CoreV1Api`` RC create/read/scale; ``AuthorizationV1Api.create_subject_access_review``
  and ``create_namespaced_local_subject_access_review`` answer as ``kubectl auth can-i
  --as=...`` does (the same authorizer chain).
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
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: __NS__}
spec:
  replicas: 3
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
    with running(tmp_path_factory, "serve-rc", ["--nodes", "2"]) as server:
        yield server


def _pods(served: ServeProcess, namespace: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = served.json("get", "pods", "-n", namespace, "-l", "app=web")[
        "items"
    ]
    return items


def _running(served: ServeProcess, namespace: str, count: int) -> list[dict[str, Any]] | None:
    live = [
        p
        for p in _pods(served, namespace)
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    ]
    return live if len(live) == count and len(_pods(served, namespace)) == count else None


def test_kubectl_create_get_scale_describe_delete(served):
    namespace = new_namespace(served, "rc")
    created = served.ok("create", "-f", "-", stdin=WEB.replace("__NS__", namespace))
    assert created == "replicationcontroller/web created\n"
    rc = served.json("get", "rc", "web", "-n", namespace)
    assert rc["spec"]["selector"] == {"app": "web"}
    assert rc["metadata"]["labels"] == {"app": "web"}
    pods = eventually(lambda: _running(served, namespace, 3), timeout=60)
    for pod in pods:
        (ref,) = pod["metadata"]["ownerReferences"]
        assert (ref["apiVersion"], ref["kind"], ref["name"]) == (
            "v1",
            "ReplicationController",
            "web",
        )
    eventually(
        lambda: served.json("get", "rc", "web", "-n", namespace)["status"].get("readyReplicas") == 3
    )
    rows = table_rows(served.ok("get", "rc", "-n", namespace))
    assert rows[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert rows[1][:4] == ["web", "3", "3", "3"]
    wide = table_rows(served.ok("get", "replicationcontrollers", "-n", namespace, "-o", "wide"))
    assert wide[0] == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert wide[1][-3:] == ["nginx", "nginx:1.27", "app=web"]
    assert "replicationcontroller/web" in served.ok("get", "all", "-n", namespace)

    assert served.ok("scale", "rc", "web", "--replicas=1", "-n", namespace) == (
        "replicationcontroller/web scaled\n"
    )
    eventually(lambda: _running(served, namespace, 1), timeout=60)
    eventually(lambda: served.json("get", "rc", "web", "-n", namespace)["status"]["replicas"] == 1)
    described = served.ok("describe", "rc", "web", "-n", namespace)
    lines = described.splitlines()
    assert lines[0].split() == ["Name:", "web"]
    assert "Selector:     app=web" in lines
    assert "Replicas:     1 current / 1 desired" in lines
    assert "Pods Status:  1 Running / 0 Waiting / 0 Succeeded / 0 Failed" in lines
    assert any("SuccessfulCreate" in line and "Created pod: web-" in line for line in lines)
    assert any("SuccessfulDelete" in line and "Deleted pod: web-" in line for line in lines)

    assert served.ok("delete", "rc", "web", "-n", namespace) == (
        'replicationcontroller "web" deleted\n'
    )
    eventually(lambda: not _pods(served, namespace), timeout=60)


def test_validation_and_quota_texts(served):
    namespace = new_namespace(served, "rc-bad")
    bad = WEB.replace("__NS__", namespace).replace("labels: {app: web}", "labels: {}")
    refused = served.kubectl("create", "-f", "-", stdin=bad)
    assert refused.returncode == 1
    assert refused.stderr == (
        'The ReplicationController "web" is invalid: spec.selector: Required value\n'
    )
    served.ok("create", "quota", "rcs", "--hard=replicationcontrollers=1", "-n", namespace)
    served.ok("create", "-f", "-", stdin=WEB.replace("__NS__", namespace))

    def second() -> str | None:
        result = served.kubectl(
            "create",
            "-f",
            "-",
            stdin=WEB.replace("__NS__", namespace).replace("name: web", "name: two"),
        )
        return result.stderr if "exceeded quota" in result.stderr else None

    assert eventually(second) == (
        'Error from server (Forbidden): error when creating "STDIN": replicationcontrollers '
        '"two" is forbidden: exceeded quota: rcs, requested: replicationcontrollers=1, '
        "used: replicationcontrollers=1, limited: replicationcontrollers=1\n"
    )


def test_python_client_replication_controllers_and_scale(served):
    namespace = new_namespace(served, "rc-py")
    with served.client() as api:
        core = k8s.CoreV1Api(api)
        body = k8s.V1ReplicationController(
            metadata=k8s.V1ObjectMeta(name="py"),
            spec=k8s.V1ReplicationControllerSpec(
                replicas=2,
                selector={"app": "py"},
                template=k8s.V1PodTemplateSpec(
                    metadata=k8s.V1ObjectMeta(labels={"app": "py"}),
                    spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
                ),
            ),
        )
        created = core.create_namespaced_replication_controller(namespace, body)
        assert created.spec.replicas == 2
        assert created.metadata.generation == 1
        scale = core.read_namespaced_replication_controller_scale("py", namespace)
        assert (scale.spec.replicas, scale.status.selector) == (2, "app=py")
        core.patch_namespaced_replication_controller_scale(
            "py", namespace, {"spec": {"replicas": 4}}
        )
        assert core.read_namespaced_replication_controller("py", namespace).spec.replicas == 4
        eventually(
            lambda: (
                core.read_namespaced_replication_controller_status("py", namespace).status.replicas
                == 4
            )
        )
        listed = core.list_namespaced_replication_controller(
            namespace, field_selector="status.replicas=4"
        )
        assert [rc.metadata.name for rc in listed.items] == ["py"]


def _can_i(served: ServeProcess, *args: str) -> bool:
    result = served.kubectl("auth", "can-i", *args)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout.startswith("yes")


def test_subject_access_reviews_agree_with_can_i_as(served):
    namespace = new_namespace(served, "sar")
    served.ok(
        "create",
        "role",
        "rc-reader",
        "--verb=get,list",
        "--resource=replicationcontrollers",
        "-n",
        namespace,
    )
    served.ok(
        "create", "rolebinding", "erin-reads", "--role=rc-reader", "--user=erin", "-n", namespace
    )
    with served.client() as api:
        authz = k8s.AuthorizationV1Api(api)
        for user, verb in (("erin", "list"), ("erin", "delete"), ("frank", "list")):
            attributes = k8s.V1ResourceAttributes(
                namespace=namespace, verb=verb, resource="replicationcontrollers"
            )
            review = authz.create_subject_access_review(
                k8s.V1SubjectAccessReview(
                    spec=k8s.V1SubjectAccessReviewSpec(
                        user=user, groups=["system:authenticated"], resource_attributes=attributes
                    )
                )
            )
            local = authz.create_namespaced_local_subject_access_review(
                namespace,
                k8s.V1LocalSubjectAccessReview(
                    metadata=k8s.V1ObjectMeta(namespace=namespace),
                    spec=k8s.V1SubjectAccessReviewSpec(
                        user=user, groups=["system:authenticated"], resource_attributes=attributes
                    ),
                ),
            )
            expected = _can_i(
                served, verb, "replicationcontrollers", "-n", namespace, f"--as={user}"
            )
            assert review.status.allowed is expected, (user, verb)
            assert local.status.allowed is expected, (user, verb)
            assert local.metadata.namespace == namespace
        with pytest.raises(k8s.ApiException) as refused:
            authz.create_namespaced_local_subject_access_review(
                namespace,
                k8s.V1LocalSubjectAccessReview(
                    metadata=k8s.V1ObjectMeta(namespace=namespace),
                    spec=k8s.V1SubjectAccessReviewSpec(
                        user="erin",
                        resource_attributes=k8s.V1ResourceAttributes(namespace="other", verb="get"),
                    ),
                ),
            )
        assert refused.value.status == 422
        assert (
            '"message":".authorization.k8s.io \\"\\" is invalid: spec.resourceAttributes.namespace: Invalid value: \\"other\\": must match metadata.namespace"'
            in refused.value.body
        )
    # A plain user may not ask about others cluster-wide (system:auth-delegator's right).
    refused_sar = served.kubectl("--as=erin", "create", "-f", "-", "-o", "name", stdin=(
        "apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\n"
        "spec: {user: frank, resourceAttributes: {verb: get, resource: pods}}\n"
    ))  # fmt: skip
    assert refused_sar.stderr.startswith(
        'Error from server (Forbidden): error when creating "STDIN": subjectaccessreviews.'
        'authorization.k8s.io is forbidden: User "erin" cannot create resource '
        '"subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope'
    )
