"""CEL beyond the standard library against a live ``kubeprio serve``: a
ValidatingAdmissionPolicy using Kubernetes' quantity library, and a CRD with
``x-kubernetes-validations`` rules, driven with the real kubectl (v1.32) and the
official Python client.

Rules checked: ``k8s.io/apiserver/pkg/cel/library/quantity.go`` in a policy (the denial
line as kubectl prints it); ``apiextensions-apiserver/pkg/apis/apiextensions/validation``
(a rule that does not compile refused on CRD write, at the hoisted
``spec.validation.openAPIV3Schema`` path, with the ``ValidationRule`` value and cel-go's
issues); ``pkg/apiserver/schema/cel/validation.go`` (a false rule on create:
``Invalid value: "object": <message>`` at the node's path; ``fieldPath`` and ``reason``;
a transition rule with ``oldSelf`` and a ``messageExpression`` on update; a rule on the
root at ``<nil>``).
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
metadata: {name: memory-limit}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: >-
      object.spec.containers.all(c, !has(c.resources) || !has(c.resources.limits) ||
      !('memory' in c.resources.limits) ||
      !quantity(c.resources.limits.memory).isGreaterThan(quantity('1Gi')))
    message: memory limits may not exceed 1Gi
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: memory-limit}
spec:
  policyName: memory-limit
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {policy: memory}}
"""

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: pools.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: pools, singular: pool, kind: Pool, listKind: PoolList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: "self.metadata.name.startsWith('pool-')"
          message: "name must start with pool-"
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= self.maxReplicas"
              message: "replicas must not exceed maxReplicas"
            - rule: "self.replicas >= oldSelf.replicas"
              messageExpression: "'may not scale down from ' + string(oldSelf.replicas)"
            - rule: "!has(self.cidr) || isCIDR(self.cidr)"
              fieldPath: ".cidr"
              reason: FieldValueForbidden
              message: "cidr must be a CIDR"
            properties:
              replicas: {type: integer}
              maxReplicas: {type: integer}
              cidr: {type: string}
"""


def _pool(name: str, ns: str, spec: str) -> str:
    return (
        f"apiVersion: example.com/v1\nkind: Pool\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        f"spec: {spec}\n"
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running_with_policy_and_crd(
        tmp_path_factory, "serve-cel-rules", policy=POLICY, crd=CRD, crd_name="pools.example.com"
    ) as server:
        yield server


def _pod(name: str, ns: str, memory: str) -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\n"
        "spec:\n  containers:\n  - name: app\n    image: nginx\n"
        f"    resources: {{limits: {{memory: {memory}}}}}\n"
    )


def test_a_policy_using_the_quantity_library_denies_with_kubectl_line(served):
    ns = new_namespace(served, "cel-quantity")
    served.ok("label", "namespace", ns, "policy=memory")
    result = served.kubectl("apply", "-f", "-", stdin=_pod("big", ns, "2Gi"))
    assert result.returncode == 1
    assert result.stderr == (
        "The pods \"big\" is invalid: : ValidatingAdmissionPolicy 'memory-limit' with binding "
        "'memory-limit' denied request: memory limits may not exceed 1Gi\n"
    )
    # 1024Mi is 1Gi: not greater, so allowed (quantities compare by value).
    assert served.ok("apply", "-f", "-", stdin=_pod("ok", ns, "1024Mi")) == "pod/ok created\n"


def test_a_crd_rule_that_does_not_compile_is_refused(served):
    bad = CRD.replace("pools", "tanks").replace("Pool", "Tank").replace("pool", "tank")
    bad = bad.replace('"self.replicas <= self.maxReplicas"', '"self.replicas <="')
    result = served.kubectl("apply", "-f", "-", stdin=bad)
    assert result.returncode == 1
    assert result.stderr == (
        'The CustomResourceDefinition "tanks.example.com" is invalid: '
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: "
        'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas <=", '
        'Message:"replicas must not exceed maxReplicas", MessageExpression:"", '
        'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
        "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:17: Syntax error: "
        "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', "
        "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
        " | self.replicas <=\n"
        " | ................^\n"
    )


def test_a_false_rule_refuses_the_custom_resource_with_kubectl_message(served):
    ns = new_namespace(served, "cel-crd")
    result = served.kubectl(
        "apply", "-f", "-", stdin=_pool("pool-a", ns, "{replicas: 5, maxReplicas: 3}")
    )
    assert result.returncode == 1
    assert result.stderr == (
        'The Pool "pool-a" is invalid: spec: Invalid value: "object": '
        "replicas must not exceed maxReplicas\n"
    )
    result = served.kubectl(
        "apply", "-f", "-", stdin=_pool("a", ns, "{replicas: 1, maxReplicas: 3, cidr: x}")
    )
    assert result.returncode == 1
    assert result.stderr == (
        'The Pool "a" is invalid: \n'
        '* <nil>: Invalid value: "object": name must start with pool-\n'
        "* spec.cidr: Forbidden: cidr must be a CIDR\n"
    )


def test_a_transition_rule_runs_on_update_only(served):
    ns = new_namespace(served, "cel-transition")
    created = _pool("pool-t", ns, "{replicas: 3, maxReplicas: 5, cidr: 10.0.0.0/8}")
    assert served.ok("apply", "-f", "-", stdin=created) == "pool.example.com/pool-t created\n"
    result = served.kubectl(
        "apply", "-f", "-", stdin=_pool("pool-t", ns, "{replicas: 2, maxReplicas: 5}")
    )
    assert result.returncode == 1
    assert result.stderr == (
        'The Pool "pool-t" is invalid: spec: Invalid value: "object": may not scale down from 3\n'
    )
    with served.client() as api:
        custom = k8s.CustomObjectsApi(api)
        with pytest.raises(ApiException) as refused:
            custom.patch_namespaced_custom_object(
                "example.com", "v1", ns, "pools", "pool-t", {"spec": {"replicas": 9}}
            )
        assert refused.value.status == 422
        assert "replicas must not exceed maxReplicas" in refused.value.body
        custom.patch_namespaced_custom_object(
            "example.com", "v1", ns, "pools", "pool-t", {"spec": {"replicas": 4}}
        )
        stored = custom.get_namespaced_custom_object("example.com", "v1", ns, "pools", "pool-t")
    assert stored["spec"]["replicas"] == 4
