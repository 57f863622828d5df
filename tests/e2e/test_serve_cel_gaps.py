"""The CEL ``authorizer``, ``format`` and ``string(cidr)`` against a live ``kubeprio
serve``, with the real kubectl (v1.32) and the official Python client.

Rules checked: ``k8s.io/apiserver/pkg/cel/library/authz.go`` in a
ValidatingAdmissionPolicy (the check asks serve's authorization chain, RBAC here, for
the request's user: a user a Role lets create ConfigMaps but not delete Secrets is
denied, with the denial line kubectl prints; an admin is allowed; a ServiceAccount named
by ``authorizer.serviceAccount`` is checked as itself); ``library/format.go`` and
``library/cidr.go``'s ``string(cidr)`` in CRD ``x-kubernetes-validations`` (the rule's
message and ``messageExpression`` as kubectl prints them); and a policy whose
``authorizer`` call has a wrong argument type is refused at write time with cel-go's
error at the expression's path.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from tests.e2e.serving import (
    CLIENT_SOCKET_WARNINGS,
    ServeProcess,
    needs_kubectl,
    new_namespace,
    running_with_policy_and_crd,
)

pytestmark = [pytest.mark.e2e, needs_kubectl, *CLIENT_SOCKET_WARNINGS]

POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: secret-admins-only}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
    namespaceSelector: {matchLabels: {policy: authz}}
  validations:
  - expression: >-
      authorizer.group('').resource('secrets').namespace(request.namespace)
      .check('delete').allowed()
    messageExpression: >-
      'only users who may delete secrets in ' + request.namespace + ' may create configmaps'
  - expression: >-
      !has(object.data) || !('builder' in object.data) ||
      authorizer.serviceAccount(request.namespace, object.data.builder)
      .group('').resource('pods').namespace(request.namespace).check('create').allowed()
    message: the builder service account may not create pods
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: secret-admins-only}
spec:
  policyName: secret-admins-only
  validationActions: [Deny]
"""

CONFIGMAP_WRITER = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: configmap-writer, namespace: NS}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get, list, create, patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: configmap-writer, namespace: NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: configmap-writer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: erin}
"""

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: subnets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: subnets, singular: subnet, kind: Subnet, listKind: SubnetList}
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
            x-kubernetes-validations:
            - rule: "!format.dns1123Label().validate(self.zone).hasValue()"
              messageExpression: >-
                'zone: ' + format.dns1123Label().validate(self.zone).value().join(', ')
            - rule: "string(cidr(self.cidr).masked()) == self.cidr"
              messageExpression: "'cidr must be its network: ' + string(cidr(self.cidr).masked())"
            properties:
              zone: {type: string}
              cidr: {type: string}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running_with_policy_and_crd(
        tmp_path_factory, "serve-cel-gaps", policy=POLICY, crd=CRD, crd_name="subnets.example.com"
    ) as server:
        yield server


def _configmap(name: str, ns: str, data: str = "{a: b}") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}}}\ndata: {data}\n"


def test_a_policy_using_authorizer_denies_a_user_and_allows_an_admin(served):
    ns = new_namespace(served, "cel-authz")
    served.ok("label", "namespace", ns, "policy=authz")
    served.ok("apply", "-f", "-", stdin=CONFIGMAP_WRITER.replace("NS", ns))
    result = served.kubectl("--as=erin", "apply", "-f", "-", stdin=_configmap("settings", ns))
    assert result.returncode == 1
    assert result.stderr == (
        'The configmaps "settings" is invalid: : ValidatingAdmissionPolicy '
        "'secret-admins-only' with binding 'secret-admins-only' denied request: "
        f"only users who may delete secrets in {ns} may create configmaps\n"
    )
    # The admin (system:masters) may delete secrets: the same object is admitted.
    assert served.ok("apply", "-f", "-", stdin=_configmap("settings", ns)) == (
        "configmap/settings created\n"
    )
    # Granting erin the delete through RBAC changes the policy's answer.
    served.ok("create", "role", "secret-deleter", "--verb=delete", "--resource=secrets", "-n", ns)
    served.ok(
        "create", "rolebinding", "secret-deleter", "--role=secret-deleter", "--user=erin", "-n", ns
    )
    assert served.ok("--as=erin", "apply", "-f", "-", stdin=_configmap("mine", ns)) == (
        "configmap/mine created\n"
    )


def test_authorizer_service_account_is_checked_as_itself(served):
    ns = new_namespace(served, "cel-authz-sa")
    served.ok("label", "namespace", ns, "policy=authz")
    served.ok("create", "serviceaccount", "builder", "-n", ns)
    result = served.kubectl("apply", "-f", "-", stdin=_configmap("job", ns, "{builder: builder}"))
    assert result.returncode == 1
    assert result.stderr.endswith(
        "denied request: the builder service account may not create pods\n"
    )
    served.ok("create", "role", "pod-maker", "--verb=create", "--resource=pods", "-n", ns)
    served.ok(
        "create", "rolebinding", "pod-maker", "--role=pod-maker",
        f"--serviceaccount={ns}:builder", "-n", ns,
    )  # fmt: skip
    assert served.ok("apply", "-f", "-", stdin=_configmap("job", ns, "{builder: builder}")) == (
        "configmap/job created\n"
    )


def test_a_wrong_argument_type_is_refused_at_write(served):
    bad = (
        POLICY.split("---")[0]
        .replace("secret-admins-only", "typo")
        .replace("resource('secrets')", "resource(1)")
    )
    result = served.kubectl("apply", "-f", "-", stdin=bad)
    assert result.returncode == 1
    expression = (
        "authorizer.group('').resource(1).namespace(request.namespace) .check('delete').allowed()"
    )
    assert result.stderr == (
        'The ValidatingAdmissionPolicy "typo" is invalid: spec.validations[0].expression: '
        f'Invalid value: "{expression}": compilation failed: ERROR: <input>:1:30: found no '
        "matching overload for 'resource' applied to "
        "'kubernetes.authorization.GroupCheck.(int)'\n"
        f" | {expression}\n | {'.' * 29}^\n"
    )


def _subnet(name: str, ns: str, zone: str, cidr: str) -> str:
    return (
        f"apiVersion: example.com/v1\nkind: Subnet\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec: {{zone: {zone}, cidr: '{cidr}'}}\n"
    )


def test_crd_rules_using_format_and_string_of_cidr(served):
    ns = new_namespace(served, "cel-format")
    result = served.kubectl("apply", "-f", "-", stdin=_subnet("a", ns, "Zone_1", "10.1.2.3/16"))
    assert result.returncode == 1
    assert result.stderr == (
        'The Subnet "a" is invalid: \n'
        '* spec: Invalid value: "object": zone: a lowercase RFC 1123 label must consist of '
        "lower case alphanumeric characters or '-', and must start and end with an "
        "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n"
        '* spec: Invalid value: "object": cidr must be its network: 10.1.0.0/16\n'
    )
    created = _subnet("a", ns, "zone-1", "10.1.0.0/16")
    assert served.ok("apply", "-f", "-", stdin=created) == "subnet.example.com/a created\n"
    with served.client() as api:
        custom = k8s.CustomObjectsApi(api)
        with pytest.raises(ApiException) as refused:
            custom.patch_namespaced_custom_object(
                "example.com", "v1", ns, "subnets", "a", {"spec": {"cidr": "2001:DB8::1/32"}}
            )
    assert refused.value.status == 422
    assert "cidr must be its network: 2001:db8::/32" in refused.value.body
