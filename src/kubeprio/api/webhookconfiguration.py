"""admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and
ValidatingWebhookConfiguration: where the API server sends admission requests.

Mirrors ``k8s.io/api/admissionregistration/v1/types.go`` (``MutatingWebhook``,
``ValidatingWebhook``, ``RuleWithOperations`` with its embedded ``Rule`` flattened,
``WebhookClientConfig``, ``ServiceReference``, ``MatchCondition``) and the v1 defaults of
``pkg/apis/admissionregistration/v1/defaults.go`` (``SetDefaults_ValidatingWebhook``,
``SetDefaults_MutatingWebhook``, ``SetDefaults_Rule``, ``SetDefaults_ServiceReference``):
failurePolicy ``Fail``, matchPolicy ``Equivalent``, namespaceSelector and objectSelector
``{}``, timeoutSeconds 10, reinvocationPolicy ``Never`` (mutating only), a rule's scope
``*``, a service reference's port 443. ``sideEffects`` and ``admissionReviewVersions``
have no default in v1: validation requires them. Both kinds are cluster-scoped.

Who uses it: the API server stores and validates them (``api.validation.webhookconfiguration``);
the MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins
(``admission.webhookdispatch``) call the webhooks they list. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.admissionpolicy import MatchCondition
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, evolve, extra_field, fast_init

GROUP: Final = "admissionregistration.k8s.io"
API_VERSION: Final = f"{GROUP}/v1"

FAIL: Final = "Fail"
IGNORE: Final = "Ignore"
EQUIVALENT: Final = "Equivalent"
EXACT: Final = "Exact"
NEVER: Final = "Never"
IF_NEEDED: Final = "IfNeeded"
ALL_SCOPES: Final = "*"
DEFAULT_TIMEOUT_SECONDS: Final = 10
DEFAULT_SERVICE_PORT: Final = 443


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RuleWithOperations:
    """Which requests a webhook sees: operations on resources of API groups/versions
    (upstream's ``RuleWithOperations`` with ``Rule`` inlined), within a scope."""

    operations: tuple[str, ...] | None = None
    api_groups: tuple[str, ...] | None = None
    api_versions: tuple[str, ...] | None = None
    resources: tuple[str, ...] | None = None
    scope: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceReference:
    """The in-cluster Service a webhook listens behind."""

    namespace: str | None = None
    name: str | None = None
    path: str | None = None
    port: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class WebhookClientConfig:
    """How to reach a webhook: a ``url`` or a ``service``, and the CA to trust."""

    url: str | None = None
    service: ServiceReference | None = None
    ca_bundle: bytes | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatingWebhook:
    """One validating webhook: who to call, for which requests, and what a failure means."""

    name: str | None = None
    client_config: WebhookClientConfig | None = None
    rules: tuple[RuleWithOperations, ...] | None = None
    failure_policy: str | None = None
    match_policy: str | None = None
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    side_effects: str | None = None
    timeout_seconds: Int32 | None = None
    admission_review_versions: tuple[str, ...] | None = None
    match_conditions: tuple[MatchCondition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MutatingWebhook:
    """One mutating webhook: a validating one's fields plus ``reinvocationPolicy``."""

    name: str | None = None
    client_config: WebhookClientConfig | None = None
    rules: tuple[RuleWithOperations, ...] | None = None
    failure_policy: str | None = None
    match_policy: str | None = None
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    side_effects: str | None = None
    timeout_seconds: Int32 | None = None
    admission_review_versions: tuple[str, ...] | None = None
    reinvocation_policy: str | None = None
    match_conditions: tuple[MatchCondition, ...] | None = None
    extra: JsonDict = extra_field()


AnyWebhook = ValidatingWebhook | MutatingWebhook


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatingWebhookConfiguration:
    """An admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration (cluster-scoped)."""

    api_version: str | None = API_VERSION
    kind: str | None = "ValidatingWebhookConfiguration"
    metadata: ObjectMeta = ObjectMeta()
    webhooks: tuple[ValidatingWebhook, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MutatingWebhookConfiguration:
    """An admissionregistration.k8s.io/v1 MutatingWebhookConfiguration (cluster-scoped)."""

    api_version: str | None = API_VERSION
    kind: str | None = "MutatingWebhookConfiguration"
    metadata: ObjectMeta = ObjectMeta()
    webhooks: tuple[MutatingWebhook, ...] | None = None
    extra: JsonDict = extra_field()


# --- v1 defaults ---------------------------------------------------------------------------------


def _default_rule(rule: RuleWithOperations) -> RuleWithOperations:
    """``SetDefaults_Rule``: no scope is every scope."""
    return rule if rule.scope is not None else evolve(rule, scope=ALL_SCOPES)


def _default_client_config(config: WebhookClientConfig | None) -> WebhookClientConfig | None:
    """``SetDefaults_ServiceReference``: a service reference without a port uses 443."""
    service = config.service if config is not None else None
    if config is None or service is None or service.port is not None:
        return config
    return evolve(config, service=evolve(service, port=DEFAULT_SERVICE_PORT))


def _default_webhook(webhook: AnyWebhook) -> AnyWebhook:
    """The fields both kinds of webhook default alike."""
    return evolve(
        webhook,
        failure_policy=webhook.failure_policy if webhook.failure_policy is not None else FAIL,
        match_policy=webhook.match_policy if webhook.match_policy is not None else EQUIVALENT,
        namespace_selector=(
            webhook.namespace_selector
            if webhook.namespace_selector is not None
            else LabelSelector()
        ),
        object_selector=(
            webhook.object_selector if webhook.object_selector is not None else LabelSelector()
        ),
        timeout_seconds=(
            webhook.timeout_seconds
            if webhook.timeout_seconds is not None
            else DEFAULT_TIMEOUT_SECONDS
        ),
        rules=(None if webhook.rules is None else tuple(_default_rule(r) for r in webhook.rules)),
        client_config=_default_client_config(webhook.client_config),
    )


def default_validating_webhook_configuration(
    config: ValidatingWebhookConfiguration,
) -> ValidatingWebhookConfiguration:
    """``SetObjectDefaults_ValidatingWebhookConfiguration``."""
    if not config.webhooks:
        return config
    return evolve(config, webhooks=tuple(_default_webhook(w) for w in config.webhooks))


def default_mutating_webhook_configuration(
    config: MutatingWebhookConfiguration,
) -> MutatingWebhookConfiguration:
    """``SetObjectDefaults_MutatingWebhookConfiguration`` (adds ``reinvocationPolicy``)."""
    if not config.webhooks:
        return config
    webhooks: list[MutatingWebhook] = []
    for webhook in config.webhooks:
        defaulted = _default_webhook(webhook)
        assert isinstance(defaulted, MutatingWebhook)
        if defaulted.reinvocation_policy is None:
            defaulted = evolve(defaulted, reinvocation_policy=NEVER)
        webhooks.append(defaulted)
    return evolve(config, webhooks=tuple(webhooks))
