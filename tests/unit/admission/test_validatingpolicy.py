"""The ValidatingAdmissionPolicy plugin through the API service with the default chain.

Upstream v1.32 ``k8s.io/apiserver/pkg/admission/plugin/policy/validating``:
``dispatcher.Dispatch`` (denial text ``ValidatingAdmissionPolicy '<p>' with binding '<b>'
denied request: <message>``, reason Invalid/422 unless the validation names one; Warn's
``Validation failed for ValidatingAdmissionPolicy ...``; Audit's
``validation.policy.admission.k8s.io/validation_failure``), ``validator.Validate``
(failurePolicy, ``expression '<e>' resulted in error: <err>``, messageExpression, then
message, then ``failed expression: <e>``), ``generic.CollectParams`` (paramRef name or
selector, ``no params found for policy binding with `Deny` parameterNotFoundAction``) and
``policy/matching`` (resource rules, exclusions, namespace and object selectors).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.admission.validatingpolicy import VALIDATION_FAILURE_ANNOTATION
from kubeprio.api import serialization
from kubeprio.api.admissionpolicy import (
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
)
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.errors import StatusError
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock

POD_RULE = {
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "operations": ["CREATE", "UPDATE"],
    "resources": ["pods"],
}
CRITICAL_ONLY_IN_KUBE_SYSTEM = (
    "object.spec.?priorityClassName.orValue('') != 'system-cluster-critical' "
    "|| request.namespace == 'kube-system'"
)


@pytest.fixture
def api(store: MemoryStore, clock: ManualClock) -> ApiService:
    service = ApiService(
        store, clock=clock, rng=random.Random(1), admission=default_chain(StoreListers(store))
    )
    for name, labels in (("team-a", {"tier": "batch"}),):
        service.create(
            serialization.from_dict(Namespace, {"metadata": {"name": name, "labels": labels}})
        )
    return service


def policy(name: str = "p", **spec: Any) -> ValidatingAdmissionPolicy:
    body = {"matchConstraints": {"resourceRules": [POD_RULE]}, **spec}
    body.setdefault("validations", [{"expression": CRITICAL_ONLY_IN_KUBE_SYSTEM}])
    return serialization.from_dict(
        ValidatingAdmissionPolicy, {"metadata": {"name": name}, "spec": body}
    )


def binding(
    name: str = "b", policy_name: str = "p", actions: tuple[str, ...] = ("Deny",), **spec: Any
) -> ValidatingAdmissionPolicyBinding:
    body = {"policyName": policy_name, "validationActions": list(actions), **spec}
    return serialization.from_dict(
        ValidatingAdmissionPolicyBinding, {"metadata": {"name": name}, "spec": body}
    )


def pod(
    name: str = "web", namespace: str = "default", labels: dict[str, str] | None = None, **spec: Any
) -> Pod:
    return serialization.from_dict(
        Pod,
        {
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
        },
    )


def refusal(api: ApiService, obj: Any) -> StatusError:
    with pytest.raises(StatusError) as raised:
        api.create(obj)
    return raised.value


def test_a_deny_binding_refuses_with_upstreams_status(api: ApiService) -> None:
    api.create(policy(validations=[{"expression": CRITICAL_ONLY_IN_KUBE_SYSTEM,
                                    "message": "system-cluster-critical is for kube-system"}]))  # fmt: skip
    api.create(binding())
    error = refusal(api, pod(priorityClassName="system-cluster-critical"))
    text = (
        "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: "
        "system-cluster-critical is for kube-system"
    )
    status = serialization.to_dict(error.status)
    assert status["message"] == f'pods "web" is forbidden: {text}'
    assert (status["reason"], status["code"]) == ("Invalid", 422)
    assert status["details"] == {"name": "web", "kind": "pods", "causes": [{"message": text}]}
    # Where the class is allowed, or without it, the pod is admitted.
    api.create(pod(namespace="kube-system", priorityClassName="system-cluster-critical"))
    api.create(pod(name="plain"))


@pytest.mark.parametrize(
    ("validation", "message"),
    [
        ({"expression": "false"}, "failed expression: false"),
        ({"expression": " false ", "message": " no "}, "no"),
        ({"expression": "false", "message": "static",
          "messageExpression": "'pod ' + object.metadata.name + ' refused'"}, "pod web refused"),
        ({"expression": "false", "message": "static", "messageExpression": "'  '"}, "static"),
        ({"expression": "false", "message": "static", "messageExpression": "'a\\nb'"}, "static"),
        ({"expression": "false", "messageExpression": "'x' + object.missing"}, "failed expression: false"),
        ({"expression": "object.spec.containers.all(c, c.image.startsWith('registry.local/'))"},
         "failed expression: object.spec.containers.all(c, c.image.startsWith('registry.local/'))"),
    ],
    ids=["expression", "trimmed-message", "message-expression", "blank-falls-back",
         "multi-line-falls-back", "erroring-falls-back", "macro"],
)  # fmt: skip
def test_the_message_is_the_message_expression_then_message_then_the_expression(
    api: ApiService, validation: dict[str, str], message: str
) -> None:
    """validator.Validate's fallbacks (messageExpression must give a non-blank one-line
    string; its errors are only logged)."""
    api.create(policy(validations=[validation]))
    api.create(binding())
    error = refusal(api, pod())
    assert error.message.endswith(f"denied request: {message}")


def test_a_reason_sets_the_status_reason_and_code(api: ApiService) -> None:
    api.create(policy(validations=[{"expression": "false", "reason": "Forbidden"}]))
    api.create(binding())
    status = refusal(api, pod()).status
    assert (status.reason, status.code) == ("Forbidden", 403)


@pytest.mark.parametrize(
    ("failure_policy", "expected"),
    [("Fail", "expression 'object.spec.nodeName == \"x\"' resulted in error: no such key: nodeName"),
     ("Ignore", None)],
)  # fmt: skip
def test_a_runtime_error_denies_under_fail_and_is_ignored_under_ignore(
    api: ApiService, failure_policy: str, expected: str | None
) -> None:
    api.create(
        policy(
            failurePolicy=failure_policy,
            validations=[{"expression": 'object.spec.nodeName == "x"'}],
        )
    )
    api.create(binding())
    if expected is None:
        api.create(pod())
        return
    error = refusal(api, pod())
    assert (
        error.message
        == f"pods \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: {expected}"
    )


def test_warn_returns_a_warning_and_admits(api: ApiService) -> None:
    api.create(policy(validations=[{"expression": "false", "message": "not recommended"}]))
    api.create(binding(actions=("Warn",)))
    result = api.create_object(pod())
    assert result.warnings == (
        "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': not recommended",
    )


def test_audit_publishes_the_validation_failure_annotation() -> None:
    from kubeprio.admission.chain import AdmissionOutcome
    from kubeprio.admission.validatingpolicy import ValidatingAdmissionPolicyPlugin
    from kubeprio.api.defaults import default_object
    from tests.builders import admission_request, stored_listers

    _store, listers = stored_listers(
        default_object(policy(validations=[{"expression": "true"}, {"expression": "false"}])),
        binding(actions=("Audit", "Warn")),
    )
    outcome = AdmissionOutcome()
    ValidatingAdmissionPolicyPlugin(listers).validate(admission_request(pod()), outcome)
    assert json.loads(outcome.annotations[VALIDATION_FAILURE_ANNOTATION]) == [
        {"message": "failed expression: false", "policy": "p", "binding": "b",
         "expressionIndex": 1, "validationActions": ["Audit", "Warn"]}
    ]  # fmt: skip
    assert len(outcome.warnings) == 1


@pytest.mark.parametrize(
    ("match", "target", "denied"),
    [
        ({}, pod(), True),
        ({"namespaceSelector": {"matchLabels": {"tier": "batch"}}}, pod(), False),
        ({"namespaceSelector": {"matchLabels": {"tier": "batch"}}}, pod(namespace="team-a"), True),
        ({"objectSelector": {"matchLabels": {"app": "web"}}}, pod(), False),
        ({"objectSelector": {"matchLabels": {"app": "web"}}}, pod(labels={"app": "web"}), True),
        ({"excludeResourceRules": [{**POD_RULE, "resourceNames": ["web"]}]}, pod(), False),
        ({"excludeResourceRules": [{**POD_RULE, "resourceNames": ["web"]}]}, pod(name="db"), True),
        ({"resourceRules": [{**POD_RULE, "operations": ["UPDATE"]}]}, pod(), False),
        ({"resourceRules": [{**POD_RULE, "resources": ["pods/status"]}]}, pod(), False),
        ({"resourceRules": [{**POD_RULE, "resources": ["*"], "scope": "Namespaced"}]}, pod(), True),
        ({"resourceRules": [{**POD_RULE, "resources": ["*"], "scope": "Cluster"}]}, pod(), False),
        ({"resourceRules": [{**POD_RULE, "apiGroups": ["apps"]}]}, pod(), False),
    ],
    ids=["rules", "namespace-selector-miss", "namespace-selector-hit", "object-selector-miss",
         "object-selector-hit", "excluded-by-name", "other-name-not-excluded", "operation",
         "subresource-only", "namespaced-scope", "cluster-scope", "group"],
)  # fmt: skip
def test_match_constraints_select_the_writes(
    api: ApiService, match: dict[str, Any], target: Pod, denied: bool
) -> None:
    api.create(
        policy(
            matchConstraints={"resourceRules": [POD_RULE], **match},
            validations=[{"expression": "false"}],
        )
    )
    api.create(binding())
    if denied:
        refusal(api, target)
    else:
        api.create(target)


def test_a_binding_narrows_its_policy_and_other_kinds_are_untouched(api: ApiService) -> None:
    api.create(policy(validations=[{"expression": "false"}]))
    api.create(binding(matchResources={"namespaceSelector": {"matchLabels": {"tier": "batch"}}}))
    api.create(pod())  # default has no tier label
    refusal(api, pod(namespace="team-a"))
    api.create(
        serialization.from_dict(ConfigMap, {"metadata": {"name": "c", "namespace": "team-a"}})
    )


LIMITS = {"apiVersion": "v1", "kind": "ConfigMap"}
WITHIN_LIMIT = "object.spec.?priorityClassName.orValue('') in params.data.allowed.split(',')"


def limits(
    name: str, namespace: str, allowed: str, labels: dict[str, str] | None = None
) -> ConfigMap:
    return serialization.from_dict(
        ConfigMap,
        {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
         "data": {"allowed": allowed}},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("param_ref", "configs", "outcome"),
    [
        ({"name": "limits", "parameterNotFoundAction": "Deny"}, [("limits", "default", "high")], "failed expression"),
        ({"name": "limits", "parameterNotFoundAction": "Deny"}, [("limits", "default", "high,")], None),
        ({"name": "limits", "namespace": "kube-system", "parameterNotFoundAction": "Deny"},
         [("limits", "kube-system", ",")], None),
        ({"name": "limits", "parameterNotFoundAction": "Deny"}, [],
         "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"),
        ({"name": "limits", "parameterNotFoundAction": "Allow"}, [], None),
        ({"selector": {"matchLabels": {"use": "yes"}}, "parameterNotFoundAction": "Deny"},
         [("a", "default", ""), ("b", "default", "high")], "failed expression"),
    ],
    ids=["param-denies", "param-admits", "param-namespace", "not-found-deny", "not-found-allow",
         "selector-each-param"],
)  # fmt: skip
def test_params_come_from_the_binding_param_ref(
    api: ApiService,
    param_ref: dict[str, Any],
    configs: list[tuple[str, str, str]],
    outcome: str | None,
) -> None:
    for name, namespace, allowed in configs:
        api.create(limits(name, namespace, allowed, {"use": "yes"}))
    api.create(policy(paramKind=LIMITS, validations=[{"expression": WITHIN_LIMIT}]))
    api.create(binding(paramRef=param_ref))
    if outcome is None:
        api.create(pod())
    else:
        assert outcome in refusal(api, pod()).message


def test_a_binding_without_param_ref_runs_with_null_params(api: ApiService) -> None:
    api.create(policy(paramKind=LIMITS, validations=[{"expression": "params == null"}]))
    api.create(binding())
    api.create(pod())


@pytest.mark.parametrize(
    ("conditions", "denied"),
    [
        ([{"name": "in-team-a", "expression": "request.namespace == 'team-a'"}], False),
        ([{"name": "in-default", "expression": "request.namespace == 'default'"}], True),
        ([{"name": "broken", "expression": "object.nope"}], "resulted in error: no such key: nope"),
        ([{"name": "broken", "expression": "object.nope"},
          {"name": "never", "expression": "false"}], False),
    ],
    ids=["false-skips", "true-applies", "error-denies", "false-beats-error"],
)  # fmt: skip
def test_match_conditions_gate_the_policy(
    api: ApiService, conditions: list[dict[str, str]], denied: bool | str
) -> None:
    for condition in conditions:
        condition["expression"] = condition["expression"].replace("object.nope", "object.nope == 1")
    api.create(policy(matchConditions=conditions, validations=[{"expression": "false"}]))
    api.create(binding())
    if denied is False:
        api.create(pod())
    elif isinstance(denied, str):
        assert denied in refusal(api, pod()).message
    else:
        refusal(api, pod())


def test_variables_feed_later_expressions(api: ApiService) -> None:
    api.create(
        policy(
            variables=[
                {"name": "images", "expression": "object.spec.containers.map(c, c.image)"},
                {"name": "untrusted", "expression": "variables.images.filter(i, !i.startsWith('registry.local/'))"},
            ],
            validations=[{"expression": "size(variables.untrusted) == 0",
                          "messageExpression": "'untrusted images: ' + variables.untrusted.join(', ')"}],
        )
    )  # fmt: skip
    api.create(binding())
    assert refusal(api, pod()).message.endswith("denied request: untrusted images: nginx")


def test_policies_do_not_apply_to_their_own_kinds(api: ApiService) -> None:
    api.create(
        policy(
            matchConstraints={
                "resourceRules": [{**POD_RULE, "apiGroups": ["*"], "resources": ["*"]}]
            },
            validations=[{"expression": "false"}],
        )
    )
    api.create(binding())
    api.create(binding(name="second"))  # IsExemptAdmissionConfigurationResource
