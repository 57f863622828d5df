"""Which webhooks a request calls: v1.32 ``staging/src/k8s.io/apiserver/pkg/admission/
plugin/webhook/predicates/rules/rules.go`` (``Matcher.Matches``: scope, operation, group,
version, resource with subresource wildcards; the cases follow ``rules_test.go``),
``generic/webhook.go`` (``ShouldCallHook``: matchPolicy Equivalent),
``predicates/namespace/matcher.go`` (``MatchNamespaceSelector``, the namespace's own labels
on its create) and ``predicates/object/matcher.go`` (``MatchObjectSelector``: new or old
labels); and kubeprio's index by (group, resource)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.admission.webhookmatching import (
    Attributes,
    WebhookIndex,
    match_rules,
    rule_matches,
    should_call,
)
from kubeprio.api import errors
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.api.serialization import from_dict
from kubeprio.api.webhookconfiguration import (
    RuleWithOperations,
    ValidatingWebhook,
    ValidatingWebhookConfiguration,
    default_validating_webhook_configuration,
)
from tests.builders import admission_request


def rule(**fields: Any) -> RuleWithOperations:
    base: dict[str, Any] = {
        "operations": ["*"],
        "apiGroups": ["*"],
        "apiVersions": ["*"],
        "resources": ["*/*"],
    }
    return from_dict(RuleWithOperations, {**base, **fields})


POD_CREATE = Attributes("", "v1", "pods", "", "CREATE", "default")
POD_STATUS = Attributes("", "v1", "pods", "status", "UPDATE", "default")
DEPLOYMENT = Attributes("apps", "v1", "deployments", "", "CREATE", "default")
NAMESPACE = Attributes("", "v1", "namespaces", "", "CREATE", "team-a")
NODE = Attributes("", "v1", "nodes", "", "UPDATE", "")


@pytest.mark.parametrize(
    ("fields", "attrs", "matches"),
    [
        # resources: exact, wildcard, subresources (rules_test.go TestResource).
        ({"resources": ["pods"]}, POD_CREATE, True),
        ({"resources": ["pods"]}, POD_STATUS, False),
        ({"resources": ["pods/status"]}, POD_STATUS, True),
        ({"resources": ["pods/*"]}, POD_STATUS, True),
        # ``sub == "*"`` also matches no subresource.
        ({"resources": ["pods/*"]}, POD_CREATE, True),
        ({"resources": ["*"]}, POD_CREATE, True),
        ({"resources": ["*"]}, POD_STATUS, False),
        ({"resources": ["*/status"]}, POD_STATUS, True),
        ({"resources": ["*/*"]}, POD_STATUS, True),
        ({"resources": ["services"]}, POD_CREATE, False),
        # operations.
        ({"operations": ["CREATE"]}, POD_CREATE, True),
        ({"operations": ["UPDATE", "DELETE"]}, POD_CREATE, False),
        # groups and versions.
        ({"apiGroups": [""]}, POD_CREATE, True),
        ({"apiGroups": ["apps"]}, POD_CREATE, False),
        ({"apiGroups": ["apps"]}, DEPLOYMENT, True),
        ({"apiVersions": ["v1beta1"]}, POD_CREATE, False),
        # scope (rules_test.go TestScope): a Namespace is cluster-scoped.
        ({"scope": "Namespaced"}, POD_CREATE, True),
        ({"scope": "Namespaced"}, NAMESPACE, False),
        ({"scope": "Namespaced"}, NODE, False),
        ({"scope": "Cluster"}, NAMESPACE, True),
        ({"scope": "Cluster"}, NODE, True),
        ({"scope": "Cluster"}, POD_CREATE, False),
        ({"scope": "*"}, POD_CREATE, True),
    ],
)
def test_rule_matching(fields: dict[str, Any], attrs: Attributes, matches: bool) -> None:
    assert rule_matches(rule(**fields), attrs) is matches


def webhook(**fields: Any) -> ValidatingWebhook:
    body = {
        "name": "check.kubeprio.test",
        "clientConfig": {"url": "https://example.com/"},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **fields,
    }
    config = from_dict(
        ValidatingWebhookConfiguration, {"metadata": {"name": "c"}, "webhooks": [body]}
    )
    defaulted = default_validating_webhook_configuration(config)
    assert defaulted.webhooks is not None
    return defaulted.webhooks[0]


def pod(labels: dict[str, str] | None = None, namespace: str = "team-a") -> Pod:
    return from_dict(Pod, {"metadata": {"name": "p", "namespace": namespace, "labels": labels}})


def runtime_class() -> RuntimeClass:
    return RuntimeClass(metadata=ObjectMeta(name="gvisor"), handler="runsc")


def namespaces(**labels: dict[str, str]) -> Any:
    found = {
        name: Namespace(metadata=ObjectMeta(name=name, labels=value))
        for name, value in labels.items()
    }
    return lambda name: found.get(name)


def test_equivalent_match_policy_sends_another_version() -> None:
    """A rule naming only node.k8s.io/v1beta1 matches a v1 RuntimeClass request when the
    policy is Equivalent (the default), and the webhook is told v1beta1."""
    rules = [
        {
            "operations": ["CREATE"],
            "apiGroups": ["node.k8s.io"],
            "apiVersions": ["v1beta1"],
            "resources": ["runtimeclasses"],
        }
    ]
    request = admission_request(runtime_class())
    invocation = match_rules(webhook(rules=rules), "c", request)
    assert invocation is not None
    assert (invocation.group, invocation.version, invocation.resource) == (
        "node.k8s.io", "v1beta1", "runtimeclasses",
    )  # fmt: skip
    assert invocation.kind == ("node.k8s.io", "v1beta1", "RuntimeClass")
    assert match_rules(webhook(rules=rules, matchPolicy="Exact"), "c", request) is None


@pytest.mark.parametrize(
    ("selector", "labels", "called"),
    [
        ({}, {}, True),
        ({"matchLabels": {"team": "a"}}, {"team": "a"}, True),
        ({"matchLabels": {"team": "a"}}, {"team": "b"}, False),
        ({"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}, {}, True),
        ({"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}, {"skip": "1"}, False),
    ],
)
def test_namespace_selector_reads_the_namespace_labels(
    selector: dict[str, Any], labels: dict[str, str], called: bool
) -> None:
    hook = webhook(
        rules=[
            {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["pods"]}
        ],
        namespaceSelector=selector,
    )
    found = should_call(hook, "c", admission_request(pod()), namespaces(**{"team-a": labels}))
    assert (found is not None) is called


def test_a_namespace_create_is_matched_on_its_own_labels() -> None:
    hook = webhook(
        rules=[
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["namespaces"],
            }
        ],
        namespaceSelector={"matchLabels": {"env": "prod"}},
    )
    prod = Namespace(metadata=ObjectMeta(name="new", labels={"env": "prod"}))
    dev = Namespace(metadata=ObjectMeta(name="new", labels={"env": "dev"}))
    assert should_call(hook, "c", admission_request(prod), namespaces()) is not None
    assert should_call(hook, "c", admission_request(dev), namespaces()) is None


def test_a_missing_namespace_is_a_404_when_the_rules_match() -> None:
    hook = webhook(
        rules=[
            {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["pods"]}
        ],
        namespaceSelector={"matchLabels": {"team": "a"}},
    )
    with pytest.raises(errors.NotFoundError) as missing:
        should_call(hook, "c", admission_request(pod()), namespaces())
    assert missing.value.message == 'namespaces "team-a" not found'
    # Rules that do not match: no error (ShouldCallHook reports selector errors last).
    other = webhook(
        rules=[
            {
                "operations": ["*"],
                "apiGroups": ["*"],
                "apiVersions": ["*"],
                "resources": ["services"],
            }
        ],
        namespaceSelector={"matchLabels": {"team": "a"}},
    )
    assert should_call(other, "c", admission_request(pod()), namespaces()) is None


@pytest.mark.parametrize(
    ("new", "old", "called"),
    [
        ({"app": "web"}, None, True),
        ({"app": "db"}, None, False),
        ({"app": "db"}, {"app": "web"}, True),
    ],
)
def test_object_selector_matches_the_new_or_the_old_object(
    new: dict[str, str], old: dict[str, str] | None, called: bool
) -> None:
    hook = webhook(
        rules=[
            {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["pods"]}
        ],
        objectSelector={"matchLabels": {"app": "web"}},
    )
    request = admission_request(
        pod(new), operation="UPDATE" if old else "CREATE", old=pod(old) if old else None
    )
    assert (should_call(hook, "c", request, namespaces(**{"team-a": {}})) is not None) is called


def test_cluster_scoped_requests_ignore_the_namespace_selector() -> None:
    hook = webhook(
        rules=[{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}],
        namespaceSelector={"matchLabels": {"team": "a"}},
    )
    assert should_call(hook, "c", admission_request(runtime_class()), namespaces()) is not None


def test_the_index_finds_webhooks_by_group_and_resource_in_call_order() -> None:
    def config(
        name: str, *hooks: tuple[str, list[str], list[str]]
    ) -> ValidatingWebhookConfiguration:
        return from_dict(
            ValidatingWebhookConfiguration,
            {
                "metadata": {"name": name},
                "webhooks": [
                    {
                        "name": hook,
                        "rules": [
                            {
                                "operations": ["*"],
                                "apiGroups": groups,
                                "apiVersions": ["*"],
                                "resources": resources,
                            }
                        ],
                    }
                    for hook, groups, resources in hooks
                ],
            },
        )

    index = WebhookIndex(
        [
            config("b", ("b-pods.x.y", [""], ["pods/status"]), ("b-all.x.y", ["*"], ["*"])),
            config("a", ("a-apps.x.y", ["apps"], ["deployments"]), ("a-core.x.y", [""], ["*"])),
        ]
    )
    names = lambda group, resource: [e.webhook.name for e in index.candidates(group, resource)]  # noqa: E731
    # Configurations sorted by name, webhooks in their order.
    assert names("", "pods") == ["a-core.x.y", "b-pods.x.y", "b-all.x.y"]
    assert names("apps", "deployments") == ["a-apps.x.y", "b-all.x.y"]
    assert names("batch", "jobs") == ["b-all.x.y"]
    assert WebhookIndex([]).candidates("", "pods") == ()
