"""Admission webhooks against a live ``kubeprio serve``: a real HTTPS webhook server
(``tests.e2e.webhookserver``, its own CA, started by the module), the real kubectl
(v1.32) and the official Python client.

Each test registers its webhook configurations with a ``namespaceSelector`` on its own
namespace (``kubernetes.io/metadata.name``), so system writes and the other tests are not
sent to them, and deletes them at the end. Upstream rules checked:

* ``pkg/printers/internalversion/printers.go`` ``printValidatingWebhook``: NAME WEBHOOKS AGE;
* ``pkg/apis/admissionregistration/validation``: a webhook without ``sideEffects``;
* ``webhook/errors/statuserror.go`` ``ToStatusErr``: ``admission webhook "NAME" denied the
  request: MESSAGE`` with the webhook's 403 Forbidden, as kubectl prints it;
* ``webhook/validating/dispatcher.go``: warnings of an allowing webhook reach kubectl
  (``Warning: ...``); ``failurePolicy`` Fail on a webhook that is down or too slow is
  ``Internal error occurred: failed calling webhook "NAME": failed to call webhook: Post
  "URL?timeout=Ns": ...``, Ignore lets the write through;
* ``webhook/request/admissionreview.go``: what the review carries (uid, kinds, resources,
  operation, namespace, userInfo, dryRun, options);
* ``webhook/mutating/dispatcher.go``: a JSONPatch answer is applied to the stored pod;
* ``kubectl scale`` is admitted as upstream's ``ScaleREST.Update`` admits it
  (``pkg/registry/apps/deployment/storage/storage.go``: ``scaleUpdatedObjectInfo`` runs
  the mutating webhooks on the new Scale against the stored one's,
  ``toScaleUpdateValidation`` the validating ones on the Scales of the new and the stored
  Deployment): resource ``deployments``, subresource ``scale``, kind autoscaling/v1
  Scale; a mutating webhook's patch of ``/spec/replicas`` is what the Deployment is
  scaled to; a webhook on ``deployments/*`` sees the mutated Scale, one on
  ``deployments`` alone never the scale write (``webhook/predicates/rules``);
* ``kubectl scale`` of a custom resource likewise (``apiextensions-apiserver``'s
  ``pkg/registry/customresource/etcd.go`` ``ScaleREST``): Scales of ``<plural>/scale``,
  the mutating webhook's replicas set at the CRD's ``specReplicasPath``.
"""

from __future__ import annotations

import json
import socket
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
from tests.e2e.webhookserver import (
    ALLOW_WARNING,
    FORBIDDEN_CLASS,
    PRIORITY_CLASSES,
    WebhookServer,
    namespaced_hook,
    namespaced_webhook_configuration,
    requests_in,
    webhook_configuration,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

CAP = 3
"""The most replicas the mutating webhook lets a Scale ask for."""

SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-webhooks", ["--nodes", "1"]) as server:
        server.ok("apply", "-f", "-", stdin=PRIORITY_CLASSES)
        yield server


def _configuration(
    kind: str,
    name: str,
    namespace: str,
    webhook_name: str,
    url: str,
    ca_bundle: str,
    *,
    failure_policy: str = "Fail",
    timeout: int = 10,
) -> str:
    hook = namespaced_hook(
        webhook_name,
        url,
        ca_bundle,
        namespace=namespace,
        failurePolicy=failure_policy,
        timeoutSeconds=timeout,
    )
    return webhook_configuration(kind, name, hook)


def _pod(name: str, ns: str, priority_class: str = "standard") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec:\n  priorityClassName: {priority_class}\n"
        "  containers:\n  - {name: app, image: nginx, resources: {requests: {cpu: 10m}}}\n"
    )


def _reviews_for(webhook: WebhookServer, path: str, ns: str) -> list[dict[str, Any]]:
    return [
        review["request"]
        for seen_path, review in webhook.reviews
        if seen_path.startswith(path) and review["request"].get("namespace") == ns
    ]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_validating_webhook_refuses_a_forbidden_class_and_warns_on_the_others(served, webhook):
    ns = new_namespace(served, "wh-deny")
    config = _configuration(
        "ValidatingWebhookConfiguration", f"deny-{ns}", ns, "deny.kubeprio.test",
        webhook.url("/deny-priority"), webhook.ca_bundle,
    )  # fmt: skip
    assert served.ok("create", "-f", "-", stdin=config) == (
        f"validatingwebhookconfiguration.admissionregistration.k8s.io/deny-{ns} created\n"
    )
    [header, *rows] = table_rows(served.ok("get", "validatingwebhookconfigurations"))
    assert header == ["NAME", "WEBHOOKS", "AGE"]
    assert [row[:2] for row in rows if row[0] == f"deny-{ns}"] == [[f"deny-{ns}", "1"]]

    refused = served.kubectl("create", "-f", "-", stdin=_pod("vip", ns, FORBIDDEN_CLASS))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": admission webhook '
        '"deny.kubeprio.test" denied the request: priority class "forbidden" is reserved for '
        "the platform team"
    )
    assert served.ok("get", "pods", "-n", ns, "-o", "name") == ""

    allowed = served.kubectl("create", "-f", "-", stdin=_pod("web", ns))
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == "pod/web created\n"
    assert f"Warning: {ALLOW_WARNING}" in allowed.stderr.splitlines()

    dry = served.kubectl("create", "--dry-run=server", "-f", "-", stdin=_pod("dry", ns))
    assert dry.returncode == 0, dry.stderr

    [vip, web, dry_review] = _reviews_for(webhook, "/deny-priority", ns)
    assert vip["object"]["spec"]["priorityClassName"] == FORBIDDEN_CLASS
    assert web["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert web["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert web["requestKind"] == web["kind"]
    assert web["requestResource"] == web["resource"]
    assert (web["operation"], web["namespace"], web["name"]) == ("CREATE", ns, "web")
    assert web["userInfo"]["username"] == "admin"
    assert "system:masters" in web["userInfo"]["groups"]
    assert web["oldObject"] is None
    assert web["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    # The validating webhook sees the pod as it will be stored: priority resolved.
    assert web["object"]["spec"]["priority"] == 100
    assert web["dryRun"] is False
    assert dry_review["dryRun"] is True
    assert len({vip["uid"], web["uid"], dry_review["uid"]}) == 3

    served.ok("delete", "validatingwebhookconfiguration", f"deny-{ns}")
    after = served.kubectl("create", "-f", "-", stdin=_pod("vip", ns, FORBIDDEN_CLASS))
    assert after.returncode == 0, after.stderr


def test_mutating_webhook_patches_the_pod(served, webhook):
    ns = new_namespace(served, "wh-mutate")
    config = _configuration(
        "MutatingWebhookConfiguration", f"label-{ns}", ns, "label.kubeprio.test",
        webhook.url("/add-label"), webhook.ca_bundle,
    )  # fmt: skip
    served.ok("create", "-f", "-", stdin=config)
    assert served.ok("create", "-f", "-", stdin=_pod("web", ns)) == "pod/web created\n"
    pod = served.json("get", "pod", "web", "-n", ns)
    assert pod["metadata"]["labels"] == {"webhook-mutated": "true"}
    # The built-in plugins ran again after the patch (reinvocation) without adding a
    # second service account token volume.
    volumes = [v["name"] for v in pod["spec"]["volumes"]]
    assert len(volumes) == 1
    assert volumes[0].startswith("kube-api-access-")
    [review] = _reviews_for(webhook, "/add-label", ns)
    # The mutating webhook sees the pod before its defaults from later plugins are final
    # but after Priority resolved the class.
    assert review["object"]["spec"]["priority"] == 100
    served.ok("delete", "mutatingwebhookconfiguration", f"label-{ns}")


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_a_webhook_that_is_down_follows_its_failure_policy(served, webhook, policy):
    ns = new_namespace(served, f"wh-down-{policy.lower()}")
    port = _closed_port()
    config = _configuration(
        "ValidatingWebhookConfiguration", f"down-{ns}", ns, "down.kubeprio.test",
        f"https://127.0.0.1:{port}/validate", webhook.ca_bundle, failure_policy=policy,
    )  # fmt: skip
    served.ok("create", "-f", "-", stdin=config)
    result = served.kubectl("create", "-f", "-", stdin=_pod("web", ns))
    if policy == "Ignore":
        assert (result.returncode, result.stdout) == (0, "pod/web created\n"), result.stderr
    else:
        assert result.returncode == 1
        assert result.stderr.strip() == (
            'Error from server (InternalError): error when creating "STDIN": Internal error '
            'occurred: failed calling webhook "down.kubeprio.test": failed to call webhook: '
            f'Post "https://127.0.0.1:{port}/validate?timeout=10s": dial tcp 127.0.0.1:{port}: '
            "connect: connection refused"
        )
    served.ok("delete", "validatingwebhookconfiguration", f"down-{ns}")


def test_a_slow_webhook_times_out(served, webhook):
    ns = new_namespace(served, "wh-slow")
    config = _configuration(
        "ValidatingWebhookConfiguration", f"slow-{ns}", ns, "slow.kubeprio.test",
        webhook.url("/slow"), webhook.ca_bundle, timeout=1,
    )  # fmt: skip
    served.ok("create", "-f", "-", stdin=config)
    result = served.kubectl("create", "-f", "-", stdin=_pod("web", ns))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'Error from server (InternalError): error when creating "STDIN": Internal error '
        'occurred: failed calling webhook "slow.kubeprio.test": failed to call webhook: '
        f'Post "https://127.0.0.1:{webhook.port}/slow?timeout=1s": context deadline exceeded'
    )
    served.ok("delete", "validatingwebhookconfiguration", f"slow-{ns}")


def test_an_unknown_ca_fails_the_tls_handshake(served, webhook):
    ns = new_namespace(served, "wh-ca")
    config = _configuration(
        "ValidatingWebhookConfiguration", f"ca-{ns}", ns, "ca.kubeprio.test",
        webhook.url("/deny-priority"), "",
    )  # fmt: skip
    served.ok("create", "-f", "-", stdin=config)
    result = served.kubectl("create", "-f", "-", stdin=_pod("web", ns))
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        f'Post "https://127.0.0.1:{webhook.port}/deny-priority?timeout=10s": tls: failed to '
        "verify certificate: x509: certificate signed by unknown authority"
    )
    served.ok("delete", "validatingwebhookconfiguration", f"ca-{ns}")


def test_an_invalid_configuration_is_refused_with_upstreams_text(served):
    text = _configuration(
        "ValidatingWebhookConfiguration", "bad", "default", "bad.kubeprio.test",
        "https://127.0.0.1:1/x", "",
    )  # fmt: skip
    bad = json.loads(text)
    del bad["webhooks"][0]["sideEffects"]
    result = served.kubectl("create", "-f", "-", stdin=json.dumps(bad))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'The ValidatingWebhookConfiguration "bad" is invalid: webhooks[0].sideEffects: '
        "Required value: must specify one of None, NoneOnDryRun"
    )


def test_the_python_client_sees_the_refusal_and_reads_configurations(served, webhook):
    ns = new_namespace(served, "wh-py")
    config = _configuration(
        "ValidatingWebhookConfiguration", f"deny-{ns}", ns, "deny.kubeprio.test",
        webhook.url("/deny-priority"), webhook.ca_bundle,
    )  # fmt: skip
    served.ok("create", "-f", "-", stdin=config)
    with served.client() as api:
        registration = k8s.AdmissionregistrationV1Api(api)
        read = registration.read_validating_webhook_configuration(f"deny-{ns}")
        [hook] = read.webhooks
        assert (hook.failure_policy, hook.match_policy, hook.timeout_seconds) == (
            "Fail", "Equivalent", 10,
        )  # fmt: skip
        assert hook.object_selector == k8s.V1LabelSelector()
        assert hook.rules[0].scope == "*"
        pod = k8s.V1Pod(
            metadata=k8s.V1ObjectMeta(name="vip"),
            spec=k8s.V1PodSpec(
                priority_class_name=FORBIDDEN_CLASS,
                containers=[k8s.V1Container(name="app", image="nginx")],
            ),
        )
        with pytest.raises(k8s.ApiException) as refused:
            k8s.CoreV1Api(api).create_namespaced_pod(ns, pod)
    assert refused.value.status == 403
    body = json.loads(refused.value.body)
    assert (body["reason"], body["code"]) == ("Forbidden", 403)
    assert body["message"] == (
        'admission webhook "deny.kubeprio.test" denied the request: priority class '
        '"forbidden" is reserved for the platform team'
    )
    served.ok("delete", "validatingwebhookconfiguration", f"deny-{ns}")


def _install_scale_hooks(
    served, webhook, ns: str, group: str, plural: str, prefix: str
) -> dict[str, str]:
    """Three UPDATE webhooks on ``ns``: a mutating one on ``<plural>/scale`` that caps
    replicas at CAP, and validating ones on ``<plural>/*`` and on ``<plural>`` alone.
    Returns the rule's resource -> the webhook's path."""
    paths = {
        f"{plural}/scale": f"/cap-replicas/{CAP}/{ns}",
        f"{plural}/*": f"/allow-any-sub-{ns}",
        plural: f"/allow-plain-{ns}",
    }
    for number, (resource, path) in enumerate(paths.items()):
        served.ok(
            "create",
            "-f",
            "-",
            stdin=namespaced_webhook_configuration(
                f"{prefix}-{number}-{ns}",
                f"{prefix}-{number}.kubeprio.test",
                webhook.url(path),
                webhook.ca_bundle,
                namespace=ns,
                resource=resource,
                operations=("UPDATE",),
                group=group,
                kind=_scale_hook_kind(resource),
            ),
        )
    return paths


def _scale_hook_kind(resource: str) -> str:
    return (
        "MutatingWebhookConfiguration"
        if resource.endswith("/scale")
        else "ValidatingWebhookConfiguration"
    )


def _remove_scale_hooks(served, ns: str, paths: dict[str, str], prefix: str) -> None:
    for number, resource in enumerate(paths):
        served.ok("delete", _scale_hook_kind(resource).lower(), f"{prefix}-{number}-{ns}")


def test_kubectl_scale_is_admitted_as_a_scale(served, webhook):
    ns = new_namespace(served, "scale-wh")
    paths = _install_scale_hooks(served, webhook, ns, "apps", "deployments", "scale")
    served.ok("create", "deployment", "web", "--image=nginx", "-n", ns)

    out = served.ok("scale", "deployment", "web", "--replicas=5", "-n", ns)

    assert out.strip() == "deployment.apps/web scaled"
    spec = served.json("get", "deployment", "web", "-n", ns)["spec"]
    assert spec["replicas"] == CAP
    # If the controller writes the Deployment while the scale write waits on the webhook,
    # the write runs again on the fresh Scale, its mutating phase too (upstream's
    # GuaranteedUpdate retries the same way); the validating phase runs for the write
    # that lands.
    mutations = requests_in(webhook, paths["deployments/scale"], ns)
    assert mutations
    for mutated in mutations:
        assert mutated["operation"] == "UPDATE"
        assert mutated["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
        assert mutated["subResource"] == "scale"
        assert mutated["kind"] == mutated["requestKind"] == SCALE_KIND
        assert mutated["object"]["kind"] == mutated["oldObject"]["kind"] == "Scale"
        assert mutated["object"]["spec"]["replicas"] == 5
        assert mutated["oldObject"]["spec"]["replicas"] == 1
    [validated] = [
        review
        for review in requests_in(webhook, paths["deployments/*"], ns)
        if review.get("subResource") == "scale"
    ]
    assert validated["kind"] == SCALE_KIND
    assert validated["object"]["spec"]["replicas"] == CAP
    assert validated["oldObject"]["spec"]["replicas"] == 1
    # The webhook on the bare resource sees the controller's Deployment updates (if any),
    # never the scale write: no review of it changes spec.replicas.
    eventually(
        lambda: served.json("get", "deployment", "web", "-n", ns)["status"].get("replicas") == CAP,
        timeout=30,
    )
    plain = requests_in(webhook, paths["deployments"], ns)
    assert all(review["kind"]["kind"] == "Deployment" for review in plain)
    assert not [
        review
        for review in plain
        if review["object"]["spec"].get("replicas") != review["oldObject"]["spec"].get("replicas")
    ]
    _remove_scale_hooks(served, ns, paths, "scale")


# --- a custom resource's scale -------------------------------------------------------------------

SPROCKET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: sprockets.webhooks.kubeprio.test}
spec:
  group: webhooks.kubeprio.test
  scope: Namespaced
  names: {plural: sprockets, singular: sprocket, kind: Sprocket, listKind: SprocketList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}, color: {type: string}}}
          status: {type: object, properties: {size: {type: integer}}}
"""


def test_kubectl_scale_of_a_custom_resource_is_admitted_as_a_scale(served, webhook):
    """``apiextensions-apiserver``'s ``ScaleREST`` (``pkg/registry/customresource/etcd.go``):
    the webhooks see autoscaling/v1 Scales of ``sprockets/scale``; the mutating one's
    ``/spec/replicas`` lands at the CRD's ``specReplicasPath`` (``.spec.size``)."""
    group = "webhooks.kubeprio.test"
    served.ok("apply", "-f", "-", stdin=SPROCKET_CRD)
    served.ok("wait", "--for=condition=Established", f"crd/sprockets.{group}", "--timeout=20s")
    ns = new_namespace(served, "crscale-wh")
    paths = _install_scale_hooks(served, webhook, ns, group, "sprockets", "crscale")
    served.ok(
        "create",
        "-f",
        "-",
        stdin=f"apiVersion: {group}/v1\nkind: Sprocket\n"
        f"metadata: {{name: s1, namespace: {ns}}}\nspec: {{size: 1, color: red}}\n",
    )

    out = served.ok("scale", "sprocket/s1", "--replicas=5", "-n", ns)

    assert out.strip() == f"sprocket.{group}/s1 scaled"
    assert served.json("get", "sprocket", "s1", "-n", ns)["spec"] == {"size": CAP, "color": "red"}
    [mutated] = requests_in(webhook, paths["sprockets/scale"], ns)
    assert mutated["operation"] == "UPDATE"
    assert mutated["resource"] == {"group": group, "version": "v1", "resource": "sprockets"}
    assert mutated["subResource"] == "scale"
    assert mutated["kind"] == mutated["requestKind"] == SCALE_KIND
    assert mutated["object"]["kind"] == mutated["oldObject"]["kind"] == "Scale"
    assert mutated["object"]["spec"]["replicas"] == 5
    assert mutated["oldObject"]["spec"]["replicas"] == 1
    [validated] = requests_in(webhook, paths["sprockets/*"], ns)
    assert validated["kind"] == SCALE_KIND
    assert validated["object"]["spec"]["replicas"] == CAP
    assert validated["oldObject"]["spec"]["replicas"] == 1
    # A webhook on the bare resource never sees the scale write.
    assert requests_in(webhook, paths["sprockets"], ns) == []
    _remove_scale_hooks(served, ns, paths, "crscale")
    served.ok("delete", "crd", f"sprockets.{group}")
