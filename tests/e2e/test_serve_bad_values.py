"""``kubeprio serve`` end to end: bad values in validation errors, as v1.32 prints them.

v1.32's ``field.Error.ErrorBody`` (apimachinery v0.32 ``pkg/util/validation/field/
errors.go``) prints a bad value that is not a string, number, bool or Stringer with Go's
``%#v``: a Deployment's template labels as ``map[string]string{...}``, its selector as the
``v1.LabelSelector`` struct, a rolling-update bound as ``intstr.IntOrString{...}``. The
real kubectl and the official Python client show those lines unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    needs_kubectl,
    new_namespace,
    running,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve", ["--nodes", "1"]) as server:
        yield server


def _deployment(ns: str, selector: str, labels: str, **strategy: object) -> str:
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": selector}},
            "template": {
                "metadata": {"labels": {"app": labels}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }
    if strategy:
        doc["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": strategy}  # type: ignore[index]
    return json.dumps(doc)


def test_kubectl_apply_shows_the_template_labels_and_selector_as_go_values(served):
    ns = new_namespace(served, "badvalues")
    # ValidatePodTemplateSpecForReplicaSet passes template.Labels (a map[string]string).
    mismatched = served.kubectl("apply", "-f", "-", stdin=_deployment(ns, "web2", "web"))
    assert mismatched.returncode == 1
    assert mismatched.stderr.strip() == (
        'The Deployment "web" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"web"}: `selector` does not match template `labels`'
    )
    served.ok("apply", "-f", "-", stdin=_deployment(ns, "web", "web"))
    # The apps/v1 strategy's ValidateImmutableField passes spec.Selector (*metav1.LabelSelector).
    moved = served.kubectl("apply", "-f", "-", stdin=_deployment(ns, "web2", "web2"))
    assert moved.returncode == 1
    assert moved.stderr.strip() == (
        'The Deployment "web" is invalid: spec.selector: Invalid value: '
        'v1.LabelSelector{MatchLabels:map[string]string{"app":"web2"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
    )


def test_the_python_client_sees_an_int_or_string_bound_as_its_go_struct(served):
    ns = new_namespace(served, "badvalues")
    body = json.loads(_deployment(ns, "web", "web", maxUnavailable=0, maxSurge=0))
    with served.client() as api, pytest.raises(k8s.ApiException) as raised:
        k8s.AppsV1Api(api).create_namespaced_deployment(ns, body)
    assert raised.value.status == 422
    # ValidateRollingUpdateDeployment passes rollingUpdate.MaxUnavailable (intstr.IntOrString).
    assert json.loads(raised.value.body)["message"] == (
        'Deployment.apps "web" is invalid: spec.strategy.rollingUpdate.maxUnavailable: '
        'Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: '
        "may not be 0 when `maxSurge` is 0"
    )
