"""Webhook configurations: v1 defaults (``pkg/apis/admissionregistration/v1/defaults.go``)
and validation texts (``pkg/apis/admissionregistration/validation/validation.go``,
``staging/src/k8s.io/apiserver/pkg/util/webhook/validation.go``), v1.32."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeprio.api import kinds, validation
from kubeprio.api.defaults import default_object
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)

HOOK: dict[str, Any] = {
    "name": "check.kubeprio.test",
    "clientConfig": {"url": "https://webhook.example.com/check"},
    "rules": [
        {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}
    ],
    "sideEffects": "None",
    "admissionReviewVersions": ["v1"],
}


def configuration(kind: type[Any], *hooks: dict[str, Any]) -> Any:
    return default_object(from_dict(kind, {"metadata": {"name": "cfg"}, "webhooks": list(hooks)}))


def errors_of(obj: Any) -> list[str]:
    return [str(e) for e in validation.validate_create(obj, kinds.for_object(obj))]


def test_v1_defaults() -> None:
    """``SetDefaults_MutatingWebhook``, ``SetDefaults_Rule``, ``SetDefaults_ServiceReference``."""
    hook = {**HOOK, "clientConfig": {"service": {"namespace": "ns", "name": "svc"}}}
    [defaulted] = to_dict(configuration(MutatingWebhookConfiguration, hook))["webhooks"]
    assert defaulted["failurePolicy"] == "Fail"
    assert defaulted["matchPolicy"] == "Equivalent"
    assert defaulted["namespaceSelector"] == {}
    assert defaulted["objectSelector"] == {}
    assert defaulted["timeoutSeconds"] == 10
    assert defaulted["reinvocationPolicy"] == "Never"
    assert defaulted["rules"][0]["scope"] == "*"
    assert defaulted["clientConfig"]["service"]["port"] == 443
    # No default for sideEffects or admissionReviewVersions in v1.
    [validating] = to_dict(configuration(ValidatingWebhookConfiguration, HOOK))["webhooks"]
    assert "reinvocationPolicy" not in validating


def test_a_valid_configuration_passes() -> None:
    assert errors_of(configuration(ValidatingWebhookConfiguration, HOOK)) == []
    assert errors_of(configuration(MutatingWebhookConfiguration, HOOK)) == []


def changed(path: str, value: Any) -> dict[str, Any]:
    """HOOK with one field set (``a.b``); ``None`` deletes it."""
    hook = copy.deepcopy(HOOK)
    *parents, last = path.split(".")
    target = hook
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is None:
        del target[last]
    else:
        target[last] = value
    return hook


RESOURCES_PATH = "webhooks[0].rules[0].resources"


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("name", "check", 'webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by dots'),
        ("sideEffects", None, "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"),
        ("sideEffects", "Some", 'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'),
        ("failurePolicy", "Maybe", 'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"'),
        ("timeoutSeconds", 31, "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"),
        ("admissionReviewVersions", None, "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"),
        ("admissionReviewVersions", ["v2"], 'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1'),
        ("clientConfig", {}, "webhooks[0].clientConfig: Required value: exactly one of url or service is required"),
        ("clientConfig.url", "http://webhook.example.com/", "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"),
        ("clientConfig.url", "https://webhook.example.com/?a=b", 'webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL'),
        ("clientConfig.url", "https://webhook.example.com/#top", 'webhooks[0].clientConfig.url: Invalid value: "top": fragments are not permitted in the URL'),
        ("clientConfig.url", "https://me@webhook.example.com/", 'webhooks[0].clientConfig.url: Invalid value: "me": user information is not permitted in the URL'),
        ("clientConfig", {"service": {"namespace": "ns", "name": "svc", "path": "validate"}}, 'webhooks[0].clientConfig.service.path: Invalid value: "validate": must start with a \'/\''),
        ("clientConfig", {"service": {"namespace": "ns", "name": "svc", "port": 0}}, "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"),
        ("clientConfig", {"service": {"name": "svc"}}, "webhooks[0].clientConfig.service.namespace: Required value: service namespace is required"),
        ("rules.0.operations", ["*", "CREATE"], 'webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if \'*\' is present, must not specify other operations'),
        ("rules.0.operations", ["PATCH"], 'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'),
        ("rules.0.resources", ["*", "pods"], f'{RESOURCES_PATH}: Invalid value: []string{{"*", "pods"}}: if \'*\' is present, must not specify other resources without subresources'),
        ("rules.0.resources", ["*/*", "pods/status"], f'{RESOURCES_PATH}: Invalid value: []string{{"*/*", "pods/status"}}: if \'*/*\' is present, must not specify other resources'),
        ("rules.0.resources", ["pods/*", "pods/status"], f"{RESOURCES_PATH}[1]: Invalid value: \"pods/status\": if 'pods/*' is present, must not specify pods/status"),
        ("rules.0.scope", "Everywhere", 'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"'),
        ("rules.0.apiVersions", None, "webhooks[0].rules[0].apiVersions: Required value"),
        ("matchConditions", [{"name": "x"}], "webhooks[0].matchConditions[0].expression: Required value"),
        ("matchConditions", [{"name": "x", "expression": "'a'"}], "webhooks[0].matchConditions[0].expression: Invalid value: \"'a'\": must evaluate to bool"),
    ],
)  # fmt: skip
def test_validation_texts(path: str, value: Any, message: str) -> None:
    found = errors_of(configuration(ValidatingWebhookConfiguration, changed(path, value)))
    assert found == [message]


def test_webhook_names_are_unique_and_reinvocation_is_checked() -> None:
    found = errors_of(
        configuration(MutatingWebhookConfiguration, HOOK, {**HOOK, "reinvocationPolicy": "Always"})
    )
    assert found == [
        'webhooks[1].reinvocationPolicy: Unsupported value: "Always": supported values: '
        '"IfNeeded", "Never"',
        'webhooks[1].name: Duplicate value: "check.kubeprio.test"',
    ]


def test_an_update_keeps_what_the_old_object_already_had() -> None:
    """``ValidateValidatingWebhookConfigurationUpdate``: side effects ``Some`` stored under
    an older release may stay; a new object may not have them."""
    some = {**HOOK, "sideEffects": "Some"}
    old = configuration(ValidatingWebhookConfiguration, some)
    new = configuration(ValidatingWebhookConfiguration, {**some, "timeoutSeconds": 5})
    assert validation.validate_update(new, old, kinds.for_object(new)) == []
    clean = configuration(ValidatingWebhookConfiguration, HOOK)
    assert [str(e) for e in validation.validate_update(new, clean, kinds.for_object(new))] == [
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
        '"NoneOnDryRun"'
    ]
