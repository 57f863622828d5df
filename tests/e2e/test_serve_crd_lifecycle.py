"""A CRD's deletion and its resources' ``scale`` subresource against a live ``kubeprio
serve``, with the real kubectl (v1.32).

Rules checked: ``kubectl delete crd`` returns once the CRD is gone, and its custom
resources went first (``apiextensions-apiserver/pkg/controller/finalizer/crd_finalizer.go``;
the CRD created again has none); a CR held by its own finalizer keeps the CRD
Terminating (``InstanceDeletionInProgress``) and new CRs are refused with the handler's
405 (``pkg/apiserver/customresource_handler.go``), until the CR lets go; ``kubectl
scale`` on a CR and ``kubectl get --raw .../scale`` (``pkg/registry/customresource/etcd.go``,
``ScaleREST``).
"""

from __future__ import annotations

import json
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

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]


def _crd(plural: str, kind: str) -> str:
    return f"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {plural}.example.com}}
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: {plural}, singular: {plural[:-1]}, kind: {kind}, listKind: {kind}List}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {{}}
      scale: {{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas,
              labelSelectorPath: .status.selector}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {{type: integer, minimum: 0}}
          status:
            type: object
            properties:
              replicas: {{type: integer}}
              selector: {{type: string}}
"""


def _cr(kind: str, name: str, ns: str, extra: str = "") -> str:
    return (
        f"apiVersion: example.com/v1\nkind: {kind}\n"
        f"metadata: {{name: {name}, namespace: {ns}{extra}}}\nspec: {{replicas: 1}}\n"
    )


def _establish(server: ServeProcess, plural: str, kind: str) -> None:
    server.ok("apply", "-f", "-", stdin=_crd(plural, kind))
    server.ok("wait", "--for=condition=Established", f"crd/{plural}.example.com", "--timeout=20s")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-crd-life", ["--nodes", "1"]) as server:
        yield server


def test_kubectl_scale_and_the_raw_scale_of_a_custom_resource(served):
    _establish(served, "gadgets", "Gadget")
    ns = new_namespace(served, "scale")
    served.ok("apply", "-f", "-", stdin=_cr("Gadget", "g1", ns))
    assert served.ok("scale", "--replicas=3", "gadget/g1", "-n", ns) == (
        "gadget.example.com/g1 scaled\n"
    )
    assert served.ok("get", "gadget", "g1", "-n", ns, "-o", "jsonpath={.spec.replicas}") == "3"
    raw = json.loads(
        served.ok("get", "--raw", f"/apis/example.com/v1/namespaces/{ns}/gadgets/g1/scale")
    )
    assert raw["apiVersion"] == "autoscaling/v1"
    assert raw["kind"] == "Scale"
    assert raw["metadata"]["name"] == "g1"
    assert raw["spec"] == {"replicas": 3}
    assert raw["status"] == {"replicas": 0}
    # kubectl's precondition: the current replicas must match.
    mismatch = served.kubectl(
        "scale", "--current-replicas=1", "--replicas=2", "gadget/g1", "-n", ns
    )
    assert mismatch.returncode != 0
    assert "Expected replicas to be 1, was 3" in mismatch.stderr


def test_kubectl_delete_crd_returns_when_it_and_its_resources_are_gone(served):
    _establish(served, "widgets", "Widget")
    first, second = new_namespace(served, "del-a"), new_namespace(served, "del-b")
    for name, ns in (("w1", first), ("w2", first), ("w3", second)):
        served.ok("apply", "-f", "-", stdin=_cr("Widget", name, ns))
    result = served.kubectl("delete", "crd", "widgets.example.com", timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        'customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted\n'
    )
    gone = served.kubectl("get", "crd", "widgets.example.com")
    assert "NotFound" in gone.stderr
    # Defined again, the kind starts empty: the old objects were deleted, not hidden.
    _establish(served, "widgets", "Widget")
    assert served.ok("get", "widgets", "-A", "-o", "name") == ""


def test_a_held_resource_keeps_its_crd_terminating(served):
    _establish(served, "sprockets", "Sprocket")
    ns = new_namespace(served, "held")
    held = _cr("Sprocket", "s1", ns, ", finalizers: [example.com/hold]")
    served.ok("apply", "-f", "-", stdin=held)
    served.ok("delete", "crd", "sprockets.example.com", "--wait=false")

    def reason() -> str | None:
        found = served.ok(
            "get",
            "crd",
            "sprockets.example.com",
            "-o",
            'jsonpath={.status.conditions[?(@.type=="Terminating")].reason}',
        )
        return found if found == "InstanceDeletionInProgress" else None

    assert eventually(reason)
    marked = served.json("get", "sprocket", "s1", "-n", ns)
    assert marked["metadata"]["deletionTimestamp"]
    refused = served.kubectl("apply", "-f", "-", stdin=_cr("Sprocket", "s2", ns))
    assert refused.returncode != 0
    assert refused.stderr == (
        'Error from server (MethodNotAllowed): error when creating "STDIN": create not allowed '
        "while custom resource definition is terminating\n"
    )
    served.ok(
        "patch",
        "sprocket",
        "s1",
        "-n",
        ns,
        "--type=merge",
        "-p",
        '{"metadata":{"finalizers":null}}',
    )
    served.ok("wait", "--for=delete", "crd/sprockets.example.com", "--timeout=30s")


HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: g2, namespace: {ns}}}
spec:
  scaleTargetRef: {{apiVersion: example.com/v1, kind: Gadget, name: g2}}
  minReplicas: 2
  maxReplicas: 4
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 50}}}}
"""


def test_an_hpa_scales_a_custom_resource_through_its_scale(served):
    """``horizontal.go``'s ``reconcileAutoscaler`` on a custom kind: one replica under
    ``minReplicas`` is brought up to it through the CR's scale subresource."""
    _establish(served, "gadgets", "Gadget")
    ns = new_namespace(served, "hpa-cr")
    served.ok("apply", "-f", "-", stdin=_cr("Gadget", "g2", ns))
    served.ok("apply", "-f", "-", stdin=HPA.format(ns=ns))

    def scaled() -> str | None:
        found = served.ok("get", "gadget", "g2", "-n", ns, "-o", "jsonpath={.spec.replicas}")
        return found if found == "2" else None

    assert eventually(scaled, timeout=60) == "2"
    hpa = served.json("get", "hpa", "g2", "-n", ns)
    able = next(c for c in hpa["status"]["conditions"] if c["type"] == "AbleToScale")
    assert able["reason"] == "SucceededRescale"
    assert able["message"] == "the HPA controller was able to update the target scale to 2"
