"""CustomResourceDefinitions and custom resources against a live ``kubeprio serve``, with
the real kubectl (v1.32) and the official Python client.

Rules checked: the CRD's table (the CRD REST's default NAME, CREATED AT), the naming
controller's ``NamesAccepted``/``Established`` conditions
(``apiextensions-apiserver/pkg/controller/status/naming_controller.go``), kubectl's
cached discovery finding a CRD created after its first call (``kubectl wait`` and
``get`` re-fetch discovery on a miss), CRs applied with ``kubectl apply`` (OpenAPI v3
with ``fieldValidation``, so kubectl validates server-side), the version's printer
columns (``tableconvertor``), schema errors as kubectl prints them
(``kubeOpenAPIResultToFieldErrors``), strict field validation of an unknown field, the
415 of a strategic merge patch, the status subresource, and a deleted CRD taking its
resources with it. The Python client drives ``ApiextensionsV1Api`` and
``CustomObjectsApi``.
"""

from __future__ import annotations

from collections.abc import Iterator

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

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [color]
            properties:
              replicas: {type: integer, minimum: 0, maximum: 10, default: 1}
              color: {type: string, enum: [red, green, blue]}
          status:
            type: object
            properties:
              ready: {type: integer}
"""


def _widget(name: str, ns: str, spec: str) -> str:
    return (
        f"apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec: {spec}\n"
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-crd", ["--nodes", "1"]) as server:
        # Fill kubectl's discovery cache before the CRD exists.
        server.ok("get", "pods", "-A")
        assert server.ok("apply", "-f", "-", stdin=CRD) == (
            "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n"
        )
        assert (
            server.ok(
                "wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s"
            )
            == "customresourcedefinition.apiextensions.k8s.io/widgets.example.com condition met\n"
        )
        yield server


def test_crd_table_and_conditions(served):
    [header, row] = table_rows(served.ok("get", "crd"))
    assert header == ["NAME", "CREATED", "AT"]
    assert row[0] == "widgets.example.com"
    status = served.json("get", "crd", "widgets.example.com")["status"]
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    assert status["acceptedNames"]["kind"] == "Widget"
    assert status["storedVersions"] == ["v1"]


def test_an_invalid_crd_is_refused_with_upstream_texts(served):
    bad = CRD.replace("name: widgets.example.com", "name: gadgets.example.com", 1)
    result = served.kubectl("apply", "-f", "-", stdin=bad)
    assert result.returncode == 1
    assert (
        'metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+'
        "spec.group" in result.stderr
    )


def test_apply_and_get_custom_resources_with_printer_columns(served):
    ns = new_namespace(served, "crd-get")
    assert served.ok("apply", "-f", "-", stdin=_widget("w1", ns, "{color: red, replicas: 3}")) == (
        "widget.example.com/w1 created\n"
    )
    served.ok("apply", "-f", "-", stdin=_widget("w2", ns, "{color: blue}"))
    rows = table_rows(served.ok("get", "widgets", "-n", ns))
    assert rows == [["NAME", "REPLICAS", "COLOR"], ["w1", "3", "red"], ["w2", "1", "blue"]]
    assert table_rows(served.ok("get", "wd", "w1", "-n", ns, "--no-headers")) == [
        ["w1", "3", "red"]
    ]
    stored = served.json("get", "widget", "w2", "-n", ns)
    assert stored["spec"] == {"color": "blue", "replicas": 1}
    assert stored["metadata"]["generation"] == 1
    served.ok("apply", "-f", "-", stdin=_widget("w2", ns, "{color: green}"))
    again = served.json("get", "widget", "w2", "-n", ns)
    assert again["spec"]["color"] == "green"
    assert again["metadata"]["generation"] == 2


def test_an_invalid_custom_resource_shows_the_field_error(served):
    ns = new_namespace(served, "crd-bad")
    result = served.kubectl(
        "apply", "-f", "-", stdin=_widget("x", ns, "{color: red, replicas: 20}")
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'The Widget "x" is invalid: spec.replicas: Invalid value: 20: spec.replicas in body '
        "should be less than or equal to 10"
    )
    result = served.kubectl("apply", "-f", "-", stdin=_widget("wrong", ns, "{replicas: x}"))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        'The Widget "wrong" is invalid: \n* spec.replicas: Invalid value: "string": spec.replicas in '
        'body must be of type integer: "string"\n* spec.color: Required value'
    )


def test_unknown_fields_are_refused_and_strategic_merge_is_415(served):
    ns = new_namespace(served, "crd-strict")
    result = served.kubectl("apply", "-f", "-", stdin=_widget("z", ns, "{color: red, sizee: 1}"))
    assert result.returncode == 1
    assert 'strict decoding error: unknown field "spec.sizee"' in result.stderr
    served.ok("apply", "-f", "-", stdin=_widget("p", ns, "{color: red}"))
    patched = served.kubectl(
        "patch", "widget", "p", "-n", ns, "--type=strategic", "-p", '{"spec":{"replicas":2}}'
    )
    assert patched.returncode == 1
    assert "the body of the request was in an unknown format - accepted media types include: " in (
        patched.stderr
    )
    assert served.ok(
        "patch", "widget", "p", "-n", ns, "--type=merge", "-p", '{"spec":{"replicas":2}}'
    ) == ("widget.example.com/p patched\n")


def test_python_client_custom_objects_and_status(served):
    ns = new_namespace(served, "crd-py")
    with served.client() as api:
        extensions = k8s.ApiextensionsV1Api(api)
        names = [crd.metadata.name for crd in extensions.list_custom_resource_definition().items]
        assert "widgets.example.com" in names
        custom = k8s.CustomObjectsApi(api)
        body = {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "c1", "labels": {"team": "a"}},
            "spec": {"color": "red"},
            "status": {"ready": 9},
        }
        made = custom.create_namespaced_custom_object("example.com", "v1", ns, "widgets", body)
        assert "status" not in made  # the status subresource drops it on create
        listed = custom.list_namespaced_custom_object(
            "example.com", "v1", ns, "widgets", label_selector="team=a"
        )
        assert [item["metadata"]["name"] for item in listed["items"]] == ["c1"]
        assert listed["kind"] == "WidgetList"
        made["status"] = {"ready": 1}
        updated = custom.replace_namespaced_custom_object_status(
            "example.com", "v1", ns, "widgets", "c1", made
        )
        assert updated["status"] == {"ready": 1}
        assert updated["metadata"]["generation"] == 1
        custom.delete_namespaced_custom_object("example.com", "v1", ns, "widgets", "c1")
        with pytest.raises(k8s.ApiException) as missing:
            custom.get_namespaced_custom_object("example.com", "v1", ns, "widgets", "c1")
        assert missing.value.status == 404


def test_deleting_the_crd_deletes_its_resources(served):
    other = CRD.replace("widgets", "gizmos").replace("widget", "gizmo").replace("Widget", "Gizmo")
    other = other.replace("shortNames: [wd]", "shortNames: [gz]")
    served.ok("apply", "-f", "-", stdin=other)
    served.ok("wait", "--for=condition=Established", "crd/gizmos.example.com", "--timeout=20s")
    ns = new_namespace(served, "crd-del")
    gizmo = _widget("g1", ns, "{color: red}").replace("Widget", "Gizmo")
    assert served.ok("apply", "-f", "-", stdin=gizmo) == "gizmo.example.com/g1 created\n"
    served.ok("delete", "crd", "gizmos.example.com")

    def gone() -> bool:
        result = served.kubectl("get", "--raw", f"/apis/example.com/v1/namespaces/{ns}/gizmos")
        return result.returncode != 0

    assert eventually(gone)
