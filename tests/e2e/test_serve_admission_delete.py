"""Admission on DELETE, and admission of custom resources, against a live ``kubeprio
serve`` with the real kubectl (v1.32), the official Python client and a real HTTPS
webhook (``tests.e2e.webhookserver``).

Upstream rules checked (v1.32):

* ``endpoints/handlers/delete.go`` and ``registry/rest/delete.go``
  (``AdmissionToValidateObjectDeleteFunc``): a delete is admitted with no object, the
  stored object as ``oldObject`` and the request's DeleteOptions as ``options``; a
  ``deletecollection``'s attributes name no object (the refusal says ``"Unknown"``,
  ``admission.NewForbidden``'s ``extractResourceName``); a dry run is admitted too;
* ``policy/validating/dispatcher.go``: a ValidatingAdmissionPolicy whose rules name
  DELETE refuses it (CEL sees ``object == null`` and ``oldObject``), reason Invalid,
  printed by kubectl as ``The configmaps "x" is invalid: : ...``;
* ``webhook/request/admissionreview.go``: a webhook's DELETE review (``operation``,
  ``name``, ``object: null``, ``oldObject``, ``options`` a meta.k8s.io/v1 DeleteOptions
  with a pod's grace period as ``BeforeDelete`` set it), ``webhook/errors`` for its refusal;
* the custom resource handler goes through the same admission: a policy on
  ``example.com`` ``widgets`` refuses a create, and ResourceQuota's generic object count
  evaluator refuses a second Widget under ``count/widgets.example.com: 1``
  (``exceeded quota: ...``), the quota controller counting Widgets and replenishing
  after a delete.

Error lines are asserted whole, as kubectl prints them.
"""

from __future__ import annotations

import json
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
)
from tests.e2e.webhookserver import WebhookServer, namespaced_hook, webhook_configuration

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

PROTECT_POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: protected-configmaps}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [configmaps]}
    objectSelector: {matchLabels: {protected: "true"}}
  validations:
  - expression: "object == null && oldObject.metadata.name.startsWith('temp-')"
    messageExpression: "'configmap ' + oldObject.metadata.name + ' is protected'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: protected-configmaps}
spec:
  policyName: protected-configmaps
  validationActions: [Deny]
"""

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"""

WIDGET_POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: small-widgets}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [example.com], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [widgets]}
  validations:
  - expression: "object.spec.?size.orValue(0) <= 10"
    message: widgets are at most 10 big
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: small-widgets}
spec:
  policyName: small-widgets
  validationActions: [Deny]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-admission-delete", ["--nodes", "1"]) as server:
        server.ok("get", "pods", "-A")
        server.ok("apply", "-f", "-", stdin=PROTECT_POLICY)
        server.ok("apply", "-f", "-", stdin=CRD)
        server.ok("wait", "--for=condition=Established", "crd/widgets.example.com")
        server.ok("apply", "-f", "-", stdin=WIDGET_POLICY)
        yield server


def _config_map(name: str, ns: str, labels: str = "{}") -> str:
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}, "
        f"labels: {labels}}}\ndata: {{a: b}}\n"
    )


def _widget(name: str, ns: str, size: int = 1) -> str:
    return (
        f"apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec: {{size: {size}}}\n"
    )


def test_a_policy_refuses_deleting_a_protected_config_map(served):
    ns = new_namespace(served, "del-vap")
    protected = '{protected: "true"}'
    for name in ("settings", "temp-1"):
        served.ok("apply", "-f", "-", stdin=_config_map(name, ns, protected))
    served.ok("apply", "-f", "-", stdin=_config_map("plain", ns))

    refused = served.kubectl("delete", "configmap", "settings", "-n", ns)
    assert refused.returncode == 1
    assert refused.stderr == (
        'The configmaps "settings" is invalid: : ValidatingAdmissionPolicy '
        "'protected-configmaps' with binding 'protected-configmaps' denied request: "
        "configmap settings is protected\n"
    )
    dry = served.kubectl("delete", "configmap", "settings", "-n", ns, "--dry-run=server")
    assert dry.returncode == 1
    assert "configmap settings is protected" in dry.stderr
    # The policy's selector and expression let the others go.
    assert served.ok("delete", "configmap", "temp-1", "plain", "-n", ns) == (
        'configmap "temp-1" deleted\nconfigmap "plain" deleted\n'
    )
    assert served.ok("get", "configmaps", "settings", "-n", ns, "-o", "name") == (
        "configmap/settings\n"
    )


def test_deletecollection_is_admitted_per_object_without_a_name(served):
    ns = new_namespace(served, "del-coll")
    served.ok("apply", "-f", "-", stdin=_config_map("settings", ns, '{protected: "true"}'))
    core = k8s.CoreV1Api(served.client())
    with pytest.raises(ApiException) as refused:
        core.delete_collection_namespaced_config_map(ns, label_selector="protected=true")
    assert refused.value.status == 422
    body = json.loads(refused.value.body)
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'configmaps "Unknown" is forbidden: ValidatingAdmissionPolicy '
        "'protected-configmaps' with binding 'protected-configmaps' denied request: "
        "configmap settings is protected"
    )
    assert [cm.metadata.name for cm in core.list_namespaced_config_map(ns).items] == [
        "kube-root-ca.crt",
        "settings",
    ]


def _delete_webhook(ns: str, webhook: WebhookServer) -> str:
    hook = namespaced_hook(
        "deletes.kubeprio.test",
        webhook.url("/deny-delete"),
        webhook.ca_bundle,
        namespace=ns,
        resources=("configmaps", "pods"),
        operations=("DELETE",),
    )
    return webhook_configuration("ValidatingWebhookConfiguration", f"deletes-{ns}", hook)


def _reviews(webhook: WebhookServer, ns: str) -> list[dict[str, Any]]:
    return [
        review["request"]
        for path, review in webhook.reviews
        if path.startswith("/deny-delete") and review["request"].get("namespace") == ns
    ]


def test_a_webhook_sees_deletes_with_the_old_object(served, webhook):
    ns = new_namespace(served, "del-wh")
    served.ok("create", "-f", "-", stdin=_delete_webhook(ns, webhook))
    served.ok("apply", "-f", "-", stdin=_config_map("keep-me", ns, '{keep: "true"}'))
    served.ok("apply", "-f", "-", stdin=_config_map("drop-me", ns))
    assert _reviews(webhook, ns) == []  # the rules name DELETE only

    refused = served.kubectl("delete", "configmap", "keep-me", "-n", ns)
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (Forbidden): admission webhook "deletes.kubeprio.test" denied '
        "the request: keep-me is labelled keep=true\n"
    )
    assert served.ok("delete", "configmap", "drop-me", "-n", ns) == 'configmap "drop-me" deleted\n'
    [keep, drop] = _reviews(webhook, ns)
    assert (drop["operation"], drop["name"], drop["namespace"]) == ("DELETE", "drop-me", ns)
    assert drop["object"] is None
    assert drop["oldObject"]["metadata"]["name"] == "drop-me"
    assert drop["oldObject"]["data"] == {"a": "b"}
    assert drop["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert drop["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    # kubectl delete sends propagationPolicy Background in its DeleteOptions body.
    assert drop["options"] == {
        "kind": "DeleteOptions",
        "apiVersion": "meta.k8s.io/v1",
        "propagationPolicy": "Background",
    }
    assert drop["dryRun"] is False
    assert drop["userInfo"]["username"] == "admin"
    assert keep["oldObject"]["metadata"]["labels"] == {"keep": "true"}

    # A bound pod: BeforeDelete gave the options the pod's own grace period.
    served.ok("run", "web", "-n", ns, "--image=nginx")
    served.ok("wait", "--for=condition=Ready", "pod/web", "-n", ns, "--timeout=30s")
    served.ok("delete", "pod", "web", "-n", ns, "--wait=false")
    pod_review = next(r for r in _reviews(webhook, ns) if r["resource"]["resource"] == "pods")
    assert pod_review["options"]["gracePeriodSeconds"] == 30
    assert pod_review["oldObject"]["spec"]["nodeName"]
    served.ok("delete", "validatingwebhookconfiguration", f"deletes-{ns}")


def test_a_policy_refuses_a_custom_resource(served):
    ns = new_namespace(served, "cr-vap")
    refused = served.kubectl("create", "-f", "-", stdin=_widget("big", ns, 20))
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (Forbidden): error when creating "STDIN": widgets.example.com "big" '
        "is forbidden: ValidatingAdmissionPolicy 'small-widgets' with binding 'small-widgets' "
        "denied request: widgets are at most 10 big\n"
    )
    assert served.ok("create", "-f", "-", stdin=_widget("small", ns, 3)) == (
        "widget.example.com/small created\n"
    )
    patched = served.kubectl(
        "patch", "widget", "small", "-n", ns, "--type=merge", "-p", '{"spec":{"size":11}}'
    )
    assert patched.returncode == 1
    assert patched.stderr == (
        'Error from server (Forbidden): widgets.example.com "small" is forbidden: '
        "ValidatingAdmissionPolicy 'small-widgets' with binding 'small-widgets' denied "
        "request: widgets are at most 10 big\n"
    )


def test_a_quota_counts_custom_resources(served):
    ns = new_namespace(served, "cr-quota")
    quota = (
        f"apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: widgets, namespace: {ns}}}\n"
        'spec: {hard: {count/widgets.example.com: "1"}}\n'
    )
    served.ok("apply", "-f", "-", stdin=quota)

    def used() -> str | None:
        status = served.json("get", "resourcequota", "widgets", "-n", ns).get("status") or {}
        return (status.get("used") or {}).get("count/widgets.example.com")

    assert eventually(used) == "0"
    assert served.ok("create", "-f", "-", stdin=_widget("w1", ns)) == (
        "widget.example.com/w1 created\n"
    )
    refused = served.kubectl("create", "-f", "-", stdin=_widget("w2", ns))
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (Forbidden): error when creating "STDIN": widgets.example.com "w2" '
        "is forbidden: exceeded quota: widgets, requested: count/widgets.example.com=1, "
        "used: count/widgets.example.com=1, limited: count/widgets.example.com=1\n"
    )
    served.ok("delete", "widget", "w1", "-n", ns)
    # The deletion wakes the driver: the recount does not wait for another write.
    eventually(lambda: used() == "0" or None, timeout=5)
    assert served.ok("create", "-f", "-", stdin=_widget("w2", ns)) == (
        "widget.example.com/w2 created\n"
    )
