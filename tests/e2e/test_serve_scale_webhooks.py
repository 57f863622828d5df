"""``kubectl scale`` through real admission webhooks: they see autoscaling/v1 Scales.

Upstream v1.32 admits a write of ``deployments/scale`` (``pkg/registry/apps/deployment/
storage/storage.go`` ``ScaleREST.Update``: ``scaleUpdatedObjectInfo`` runs the mutating
webhooks on the new Scale against the stored one's, ``toScaleUpdateValidation`` the
validating ones on the Scales of the new and the stored Deployment) with the request's
attributes: resource ``deployments``, subresource ``scale``, kind autoscaling/v1 Scale.
A real HTTPS webhook server (``tests.e2e.webhookserver``) and the real kubectl (v1.32)
against a live ``kubeprio serve``.

Upstream rules checked:

* a mutating webhook on ``deployments/scale`` gets an UPDATE of the Scale (``object`` the
  asked-for replicas, ``oldObject`` the stored ones) and its JSONPatch of
  ``/spec/replicas`` is what the Deployment is scaled to;
* a validating webhook on ``deployments/*`` sees the mutated Scale;
* one on ``deployments`` alone is never sent the scale write (``webhook/predicates/rules``:
  a bare resource matches no subresource).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    eventually,
    needs_kubectl,
    new_namespace,
    running,
)
from tests.e2e.webhookserver import namespaced_webhook_configuration, requests_in

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

CAP = 3
"""The most replicas the mutating webhook lets a Scale ask for."""

SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-scale-webhooks", ["--nodes", "1"]) as server:
        yield server


def test_kubectl_scale_is_admitted_as_a_scale(served, webhook):
    ns = new_namespace(served, "scale-wh")
    paths = {
        "deployments/scale": f"/cap-replicas/{CAP}/{ns}",
        "deployments/*": f"/allow-any-sub-{ns}",
        "deployments": f"/allow-plain-{ns}",
    }
    kinds = {"deployments/scale": "MutatingWebhookConfiguration"}
    for number, (resource, path) in enumerate(paths.items()):
        served.ok(
            "create",
            "-f",
            "-",
            stdin=namespaced_webhook_configuration(
                f"scale-{number}-{ns}",
                f"scale-{number}.kubeprio.test",
                webhook.url(path),
                webhook.ca_bundle,
                namespace=ns,
                resource=resource,
                operations=("UPDATE",),
                group="apps",
                kind=kinds.get(resource, "ValidatingWebhookConfiguration"),
            ),
        )
    served.ok("create", "deployment", "web", "--image=nginx", "-n", ns)

    out = served.ok("scale", "deployment", "web", "--replicas=5", "-n", ns)

    assert out.strip() == "deployment.apps/web scaled"
    spec = served.json("get", "deployment", "web", "-n", ns)["spec"]
    assert spec["replicas"] == CAP
    [mutated] = requests_in(webhook, paths["deployments/scale"], ns)
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
