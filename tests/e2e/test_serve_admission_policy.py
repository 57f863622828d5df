"""ValidatingAdmissionPolicy against a live ``kubeprio serve``, with the real kubectl
(v1.32) and the official Python client.

The platform-team use case: pods outside kube-system may not use
``system-cluster-critical``. Rules checked: discovery (``validatingadmissionpolicies``
and ``validatingadmissionpolicybindings`` in ``admissionregistration.k8s.io/v1``,
cluster-scoped), ``printValidatingAdmissionPolicy``/``...Binding`` columns, the status
the type-checking controller writes, ``validateValidatingAdmissionPolicySpec``'s CEL
compile error at the expression's path, and the plugin's denial (``dispatcher.Dispatch``:
reason Invalid, one cause, so kubectl prints ``The pods "x" is invalid: : ...``; reason
Forbidden prints ``Error from server (Forbidden)``) and Warn's ``Warning:`` header. Error
lines are asserted whole, as kubectl prints them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    needs_kubectl,
    new_namespace,
    running,
    table_rows,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: critical-only-in-kube-system}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}
  validations:
  - expression: >-
      object.spec.?priorityClassName.orValue('') != 'system-cluster-critical'
      || request.namespace == 'kube-system'
    messageExpression: >-
      'priority class system-cluster-critical is reserved for kube-system, not ' +
      request.namespace
"""

BINDING = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: critical-only-in-kube-system}
spec:
  policyName: critical-only-in-kube-system
  validationActions: [Deny]
"""

WARN_POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: images-from-registry}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
    namespaceSelector: {matchLabels: {policy: warn}}
  validations:
  - expression: "object.spec.containers.all(c, c.image.startsWith('registry.local/'))"
    message: images should come from registry.local
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: images-warn}
spec:
  policyName: images-from-registry
  validationActions: [Warn]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-admission-policy", ["--nodes", "1"]) as server:
        assert server.ok("apply", "-f", "-", stdin=POLICY) == (
            "validatingadmissionpolicy.admissionregistration.k8s.io/"
            "critical-only-in-kube-system created\n"
        )
        assert server.ok("apply", "-f", "-", stdin=BINDING) == (
            "validatingadmissionpolicybinding.admissionregistration.k8s.io/"
            "critical-only-in-kube-system created\n"
        )
        yield server


def _pod(name: str, ns: str, priority_class: str = "") -> str:
    spec = f"  priorityClassName: {priority_class}\n" if priority_class else ""
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec:\n{spec}  containers:\n  - {{name: app, image: nginx}}\n"
    )


def test_kubectl_apply_of_a_violating_pod_prints_upstreams_invalid_line(served):
    ns = new_namespace(served, "vap")
    result = served.kubectl(
        "apply", "-f", "-", stdin=_pod("critical", ns, "system-cluster-critical")
    )
    assert result.returncode == 1
    assert result.stderr == (
        'The pods "critical" is invalid: : ValidatingAdmissionPolicy '
        "'critical-only-in-kube-system' with binding 'critical-only-in-kube-system' denied "
        f"request: priority class system-cluster-critical is reserved for kube-system, not {ns}\n"
    )
    assert served.ok("apply", "-f", "-", stdin=_pod("plain", ns)) == "pod/plain created\n"
    allowed = _pod("allowed", "kube-system", "system-cluster-critical")
    assert served.ok("apply", "-f", "-", stdin=allowed) == "pod/allowed created\n"


def test_get_lists_policies_and_bindings_and_discovery_serves_them(served):
    [header, row] = table_rows(served.ok("get", "validatingadmissionpolicies"))
    assert header == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert row[:3] == ["critical-only-in-kube-system", "1", "<unset>"]
    [header, row] = table_rows(served.ok("get", "validatingadmissionpolicybindings"))
    assert header == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert row[:3] == ["critical-only-in-kube-system", "critical-only-in-kube-system", "<unset>"]
    resources = served.ok("api-resources", "--api-group=admissionregistration.k8s.io")
    rows = {cells[0]: cells for cells in table_rows(resources)[1:]}
    assert rows["validatingadmissionpolicies"][1:] == [
        "admissionregistration.k8s.io/v1", "false", "ValidatingAdmissionPolicy"
    ]  # fmt: skip
    stored = served.json("get", "validatingadmissionpolicy", "critical-only-in-kube-system")
    assert stored["spec"]["failurePolicy"] == "Fail"
    assert stored["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert stored["status"] == {"observedGeneration": 1, "typeChecking": {}}


def test_a_cel_syntax_error_is_reported_at_the_expression(served):
    bad = POLICY.replace("name: critical-only-in-kube-system", "name: broken").replace(
        "|| request.namespace == 'kube-system'", "||"
    )
    result = served.kubectl("apply", "-f", "-", stdin=bad)
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(
        'The ValidatingAdmissionPolicy "broken" is invalid: spec.validations[0].expression: '
        "Invalid value: \"object.spec.?priorityClassName.orValue('') != "
        "'system-cluster-critical' ||\": compilation failed: ERROR: <input>:1:"
    )
    assert "Syntax error: mismatched input '<EOF>'" in first


def test_a_warn_binding_prints_a_warning_and_a_forbidden_reason_prints_forbidden(served):
    ns = new_namespace(served, "vap-warn")
    served.ok("label", "namespace", ns, "policy=warn")
    served.ok("apply", "-f", "-", stdin=WARN_POLICY)
    result = served.kubectl("apply", "-f", "-", stdin=_pod("web", ns))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "pod/web created\n"
    assert result.stderr == (
        "Warning: Validation failed for ValidatingAdmissionPolicy 'images-from-registry' with "
        "binding 'images-warn': images should come from registry.local\n"
    )
    served.ok("patch", "validatingadmissionpolicybinding", "images-warn", "--type=merge",
              "-p", json.dumps({"spec": {"validationActions": ["Deny"]}}))  # fmt: skip
    result = served.kubectl("apply", "-f", "-", stdin=_pod("web2", ns))
    assert result.returncode == 1
    assert result.stderr == (
        'Error from server (Forbidden): error when creating "STDIN": pods "web2" is forbidden: '
        "ValidatingAdmissionPolicy 'images-from-registry' with binding 'images-warn' denied "
        "request: images should come from registry.local\n"
    )


def test_the_python_client_creates_policies_and_sees_the_denial(served):
    ns = new_namespace(served, "vap-py")
    with served.client() as api:
        admission = k8s.AdmissionregistrationV1Api(api)
        rule = k8s.V1NamedRuleWithOperations(
            api_groups=["apps"],
            api_versions=["v1"],
            operations=["CREATE"],
            resources=["deployments"],
        )
        made = admission.create_validating_admission_policy(
            k8s.V1ValidatingAdmissionPolicy(
                metadata=k8s.V1ObjectMeta(name="max-replicas"),
                spec=k8s.V1ValidatingAdmissionPolicySpec(
                    param_kind=k8s.V1ParamKind(api_version="v1", kind="ConfigMap"),
                    match_constraints=k8s.V1MatchResources(resource_rules=[rule]),
                    validations=[
                        k8s.V1Validation(
                            expression="object.spec.replicas <= int(params.data.maxReplicas)",
                            message_expression="'at most ' + params.data.maxReplicas + ' replicas'",
                        )
                    ],
                ),
            )
        )
        assert made.spec.failure_policy == "Fail"
        k8s.CoreV1Api(api).create_namespaced_config_map(
            ns, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="limits"), data={"maxReplicas": "3"})
        )
        admission.create_validating_admission_policy_binding(
            k8s.V1ValidatingAdmissionPolicyBinding(
                metadata=k8s.V1ObjectMeta(name="max-replicas"),
                spec=k8s.V1ValidatingAdmissionPolicyBindingSpec(
                    policy_name="max-replicas",
                    param_ref=k8s.V1ParamRef(name="limits", parameter_not_found_action="Allow"),
                    validation_actions=["Deny"],
                ),
            )
        )
        template = k8s.V1PodTemplateSpec(
            metadata=k8s.V1ObjectMeta(labels={"app": "web"}),
            spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="app", image="nginx")]),
        )
        deployment = k8s.V1Deployment(
            metadata=k8s.V1ObjectMeta(name="web"),
            spec=k8s.V1DeploymentSpec(
                replicas=5,
                selector=k8s.V1LabelSelector(match_labels={"app": "web"}),
                template=template,
            ),
        )
        with pytest.raises(ApiException) as raised:
            k8s.AppsV1Api(api).create_namespaced_deployment(ns, deployment)
        assert raised.value.status == 422
        body = json.loads(raised.value.body)
        assert body["message"] == (
            "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' "
            "with binding 'max-replicas' denied request: at most 3 replicas"
        )
        deployment.spec.replicas = 2
        assert k8s.AppsV1Api(api).create_namespaced_deployment(ns, deployment).spec.replicas == 2
