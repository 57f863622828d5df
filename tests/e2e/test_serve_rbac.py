"""RBAC in a live ``kubeprio serve``, with the real kubectl and the official Python client.

What a user of a real v1.32 cluster sees (``kubectl create role/rolebinding``: kubectl's
``create_role.go``/``create_rolebinding.go``; the server side: ``plugin/pkg/auth/
authorizer/rbac/rbac.go``, ``pkg/registry/rbac/*/policybased``, the bootstrap policy and
the aggregation controller):

* a Role and a RoleBinding grant ``bob`` reads of pods in one namespace: ``kubectl
  --as=bob get pods`` works there, deleting is upstream's 403, ``auth can-i`` agrees;
* a ServiceAccount bound to the aggregated ``view`` role reads with its token;
* ``kubectl get clusterroles`` lists the bootstrap roles (NAME CREATED AT), ``get
  rolebinding -o wide`` the subjects;
* a binding's roleRef cannot change; granting what one does not hold is refused with
  upstream's escalation text;
* ``kubectl auth reconcile -f`` creates and then leaves alone;
* ``RbacAuthorizationV1Api`` creates and lists the four kinds.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-rbac", ["--nodes", "1"]) as server:
        yield server


def test_a_role_and_binding_grant_reads_in_one_namespace(served):
    ns = new_namespace(served, "rbac")
    served.ok("run", "web", "--image=nginx", "-n", ns)
    refused = served.kubectl("--as=bob", "get", "pods", "-n", ns)
    assert refused.stderr == (
        'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource '
        f'"pods" in API group "" in the namespace "{ns}"\n'
    )
    assert (
        served.ok("create", "role", "pod-reader", "--verb=get,list", "--resource=pods", "-n", ns)
        == "role.rbac.authorization.k8s.io/pod-reader created\n"
    )
    assert (
        served.ok("create", "rolebinding", "bob-reads", "--role=pod-reader", "--user=bob", "-n", ns)
        == "rolebinding.rbac.authorization.k8s.io/bob-reads created\n"
    )
    assert served.ok("--as=bob", "get", "pods", "-n", ns, "-o", "name") == "pod/web\n"
    deleting = served.kubectl("--as=bob", "delete", "pod", "web", "-n", ns)
    assert deleting.returncode == 1
    assert deleting.stderr == (
        'Error from server (Forbidden): pods "web" is forbidden: User "bob" cannot delete '
        f'resource "pods" in API group "" in the namespace "{ns}"\n'
    )
    assert served.ok("auth", "can-i", "list", "pods", "-n", ns, "--as=bob") == "yes\n"
    no = served.kubectl("auth", "can-i", "delete", "pods", "-n", ns, "--as=bob")
    # RBAC gives no reason for "no"; the tenant policy's reason stays.
    assert (no.returncode, no.stdout) == (
        1,
        f'no - kubeprio: namespace "{ns}" belongs to no Tenant\n',
    )
    elsewhere = served.kubectl("auth", "can-i", "list", "pods", "-n", "default", "--as=bob")
    assert elsewhere.stdout.startswith("no")
    rows = table_rows(served.ok("get", "rolebinding", "bob-reads", "-n", ns, "-o", "wide"))
    assert rows[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert rows[1][:2] == ["bob-reads", "Role/pod-reader"]
    assert rows[1][3] == "bob"
    listed = served.ok("auth", "can-i", "--list", "-n", ns, "--as=bob")
    assert any(
        line.split()[:1] == ["pods"] and "[get list]" in line for line in listed.splitlines()
    )


def test_a_service_account_bound_to_view_reads(served):
    ns = new_namespace(served, "rbac-sa")
    served.ok("create", "sa", "reader", "-n", ns)
    served.ok("create", "deployment", "web", "--image=nginx", "-n", ns)
    token = served.ok("create", "token", "reader", "-n", ns)
    assert served.kubectl("--token", token, "get", "deployments", "-n", ns).returncode == 1
    served.ok("create", "rolebinding", "reader-view", "--clusterrole=view",
              f"--serviceaccount={ns}:reader", "-n", ns)  # fmt: skip
    # view's rules come from the aggregation controller.
    eventually(lambda: served.json("get", "clusterrole", "view")["rules"] or None)
    assert served.ok("--token", token, "get", "deployments", "-n", ns, "-o", "name") == (
        "deployment.apps/web\n"
    )
    assert served.kubectl("--token", token, "get", "secrets", "-n", ns).returncode == 1
    assert served.kubectl("--token", token, "delete", "deployment", "web", "-n", ns).returncode == 1


def test_get_clusterroles_lists_the_bootstrap_roles(served):
    rows = table_rows(served.ok("get", "clusterroles"))
    assert rows[0] == ["NAME", "CREATED", "AT"]  # table_rows splits on whitespace
    names = {row[0] for row in rows[1:]}
    assert {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
            "system:public-info-viewer", "system:monitoring"} <= names  # fmt: skip
    binding = served.json("get", "clusterrolebinding", "cluster-admin")
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}
    ]
    admin = served.json("get", "clusterrole", "cluster-admin")
    assert admin["metadata"]["annotations"] == {
        "rbac.authorization.kubernetes.io/autoupdate": "true"
    }


def test_role_ref_is_immutable_and_escalation_is_refused(served):
    ns = new_namespace(served, "rbac-esc")
    served.ok("create", "role", "a", "--verb=get", "--resource=pods", "-n", ns)
    served.ok("create", "role", "b", "--verb=list", "--resource=pods", "-n", ns)
    served.ok("create", "rolebinding", "x", "--role=a", "--user=carol", "-n", ns)
    binding = served.json("get", "rolebinding", "x", "-n", ns)
    binding["roleRef"]["name"] = "b"
    replaced = served.kubectl("replace", "-f", "-", stdin=yaml.safe_dump(binding))
    assert replaced.stderr == (
        'The RoleBinding "x" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:'
        '"rbac.authorization.k8s.io", Kind:"Role", Name:"b"}: cannot change roleRef\n'
    )
    # carol may create roles and bindings here, but not grant what she lacks.
    served.ok("create", "role", "rbac-writer", "--verb=create", "--resource=roles,rolebindings",
              "-n", ns)  # fmt: skip
    served.ok("create", "rolebinding", "carol-writes", "--role=rbac-writer", "--user=carol",
              "-n", ns)  # fmt: skip
    escalating = served.kubectl(
        "--as=carol", "create", "role", "more", "--verb=delete", "--resource=pods", "-n", ns
    )
    assert escalating.stderr == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "more" is forbidden: '
        'user "carol" (groups=["system:authenticated"]) is attempting to grant RBAC '
        "permissions not currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n'
    )
    held = served.kubectl(
        "--as=carol", "create", "role", "same", "--verb=get", "--resource=pods", "-n", ns
    )
    assert held.returncode == 0, held.stderr


def test_auth_reconcile(served):
    ns = new_namespace(served, "rbac-rec")
    documents = [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "cm-reader", "namespace": ns},
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "cm-readers", "namespace": ns},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "cm-reader"},
         "subjects": [{"kind": "User", "name": "dan"}]},
    ]  # fmt: skip
    text = yaml.safe_dump_all(documents)
    first = served.ok("auth", "reconcile", "-f", "-", stdin=text)
    assert "role.rbac.authorization.k8s.io/cm-reader reconciled" in first
    assert "rolebinding.rbac.authorization.k8s.io/cm-readers reconciled" in first
    assert served.ok("auth", "can-i", "get", "configmaps", "-n", ns, "--as=dan") == "yes\n"
    served.ok("auth", "reconcile", "-f", "-", stdin=text)


def test_the_python_client_rbac_api(served):
    ns = new_namespace(served, "rbac-py")
    with served.client() as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_namespaced_role(
            ns,
            k8s.V1Role(
                metadata=k8s.V1ObjectMeta(name="py"),
                rules=[k8s.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get"])],
            ),
        )
        created = rbac.create_namespaced_role_binding(
            ns,
            k8s.V1RoleBinding(
                metadata=k8s.V1ObjectMeta(name="py"),
                role_ref=k8s.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role",
                                       name="py"),
                subjects=[k8s.RbacV1Subject(kind="User", name="erin")],
            ),
        )  # fmt: skip
        assert created.subjects[0].api_group == "rbac.authorization.k8s.io"
        names = {r.metadata.name for r in rbac.list_cluster_role().items}
        assert {"cluster-admin", "view"} <= names
        assert [b.metadata.name for b in rbac.list_namespaced_role_binding(ns).items] == ["py"]
        crb = rbac.read_cluster_role_binding("system:basic-user")
        assert crb.role_ref.name == "system:basic-user"
