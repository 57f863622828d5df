"""Validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration.

Mirrors v1.32's ``pkg/apis/admissionregistration/validation/validation.go``
(``ValidateMutatingWebhookConfiguration``, ``ValidateValidatingWebhookConfiguration`` and
their ``...Update`` forms, ``validateMutatingWebhook``/``validateValidatingWebhook``,
``validateAdmissionReviewVersions``, ``validateMatchConditions``), in upstream's order:

* metadata (a DNS subdomain name); per webhook: ``name`` a fully qualified name (three
  dot-separated segments at least), each rule (``api.validation.webhookrules``), failurePolicy,
  matchPolicy, sideEffects (required; ``None`` or ``NoneOnDryRun`` on create),
  timeoutSeconds 1..30, the two selectors, reinvocationPolicy (mutating), the
  clientConfig (``api.validation.webhookurl``), matchConditions (at most 64,
  names qualified and unique, expressions required and compiling to bool with
  ``api.celexpr``); then admissionReviewVersions
  (required, DNS-1035 labels, no duplicates, one of ``v1, v1beta1``) and unique names.
* An update relaxes what the stored object already broke, as upstream's update options
  do: side effects, review versions, unique names and selector label values are only
  held to the create rules when the old object met them, and unchanged matchConditions
  are not checked again.

CEL is ``api.celexpr``'s (no ``authorizer``: a condition using it does not compile).
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.meta import LabelSelector
from kubeprio.api.validation.matchconditions import validate_match_conditions
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    dns1035_label_errors,
    dns1123_subdomain_errors,
    index,
    validate_label_selector,
)
from kubeprio.api.validation.webhookrules import strings_value, validate_rule
from kubeprio.api.validation.webhookurl import validate_client_config
from kubeprio.api.webhookconfiguration import (
    AnyWebhook,
    MutatingWebhook,
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)

ACCEPTED_REVIEW_VERSIONS: Final = ("v1", "v1beta1")
"""``AcceptedAdmissionReviewVersions``: what the API server can send."""
FAILURE_POLICIES: Final = ("Fail", "Ignore")
MATCH_POLICIES: Final = ("Equivalent", "Exact")
REINVOCATION_POLICIES: Final = ("IfNeeded", "Never")
SIDE_EFFECT_CLASSES: Final = ("None", "NoneOnDryRun", "Some", "Unknown")
NO_SIDE_EFFECT_CLASSES: Final = ("None", "NoneOnDryRun")


@dataclasses.dataclass(frozen=True, slots=True)
class _Options:
    """Upstream's ``validationOptions`` (the parts without CEL)."""

    require_no_side_effects: bool = True
    require_recognized_review_version: bool = True
    require_unique_names: bool = True
    allow_invalid_label_value: bool = False
    ignore_match_conditions: bool = False


# --- one webhook ---------------------------------------------------------------------------------


def _fully_qualified_name(name: str, path: str) -> list[FieldError]:
    """``IsFullyQualifiedName``."""
    if not name:
        return [errors.required(path)]
    messages = dns1123_subdomain_errors(name)
    if messages:
        return [errors.invalid(path, name, ",".join(messages))]
    if len(name.split(".")) < 3:
        return [
            errors.invalid(
                path, name, "should be a domain with at least three segments separated by dots"
            )
        ]
    return []


def _validate_selector(
    selector: LabelSelector | None, path: str, options: _Options
) -> list[FieldError]:
    return validate_label_selector(
        selector, path, allow_invalid_label_value=options.allow_invalid_label_value
    )


def _validate_webhook(webhook: AnyWebhook, options: _Options, path: str) -> list[FieldError]:
    """``validateMutatingWebhook`` / ``validateValidatingWebhook``."""
    found = _fully_qualified_name(webhook.name or "", child(path, "name"))
    for position, rule in enumerate(webhook.rules or ()):
        found.extend(validate_rule(rule, index(child(path, "rules"), position)))
    if webhook.failure_policy is not None and webhook.failure_policy not in FAILURE_POLICIES:
        found.append(
            errors.not_supported(
                child(path, "failurePolicy"), webhook.failure_policy, FAILURE_POLICIES
            )
        )
    if webhook.match_policy is not None and webhook.match_policy not in MATCH_POLICIES:
        found.append(
            errors.not_supported(child(path, "matchPolicy"), webhook.match_policy, MATCH_POLICIES)
        )
    allowed = NO_SIDE_EFFECT_CLASSES if options.require_no_side_effects else SIDE_EFFECT_CLASSES
    if webhook.side_effects is None:
        found.append(
            errors.required(child(path, "sideEffects"), f"must specify one of {', '.join(allowed)}")
        )
    elif webhook.side_effects not in allowed:
        found.append(
            errors.not_supported(child(path, "sideEffects"), webhook.side_effects, allowed)
        )
    timeout = webhook.timeout_seconds
    if timeout is not None and not 1 <= timeout <= 30:
        found.append(
            errors.invalid(
                child(path, "timeoutSeconds"),
                timeout,
                "the timeout value must be between 1 and 30 seconds",
            )
        )
    found.extend(
        _validate_selector(webhook.namespace_selector, child(path, "namespaceSelector"), options)
    )
    found.extend(
        _validate_selector(webhook.object_selector, child(path, "objectSelector"), options)
    )
    if isinstance(webhook, MutatingWebhook):
        policy = webhook.reinvocation_policy
        if policy is not None and policy not in REINVOCATION_POLICIES:
            found.append(
                errors.not_supported(
                    child(path, "reinvocationPolicy"), policy, REINVOCATION_POLICIES
                )
            )
    found.extend(validate_client_config(webhook.client_config, path))
    if not options.ignore_match_conditions:
        found.extend(
            validate_match_conditions(
                webhook.match_conditions or (), child(path, "matchConditions"), with_params=False
            )
        )
    return found


def _validate_review_versions(
    versions: Sequence[str], require_recognized: bool, path: str
) -> list[FieldError]:
    """``validateAdmissionReviewVersions``."""
    accepted = ", ".join(ACCEPTED_REVIEW_VERSIONS)
    if not versions:
        return [errors.required(path, f"must specify one of {accepted}")]
    found: list[FieldError] = []
    seen: set[str] = set()
    for position, version in enumerate(versions):
        if version in seen:
            found.append(errors.invalid(index(path, position), version, "duplicate version"))
            continue
        seen.add(version)
        found.extend(
            errors.invalid(index(path, position), version, message)
            for message in dns1035_label_errors(version)
        )
    if require_recognized and not seen & set(ACCEPTED_REVIEW_VERSIONS):
        found.append(
            errors.invalid(
                path, strings_value(versions), f"must include at least one of {accepted}"
            )
        )
    return found


def _validate_configuration(webhooks: Sequence[AnyWebhook], options: _Options) -> list[FieldError]:
    """The per-webhook part of ``validate...WebhookConfiguration`` (metadata is checked by
    the caller, ``api.validation.validate_create``)."""
    found: list[FieldError] = []
    names: set[str] = set()
    for position, webhook in enumerate(webhooks):
        path = index("webhooks", position)
        found.extend(_validate_webhook(webhook, options, path))
        found.extend(
            _validate_review_versions(
                webhook.admission_review_versions or (),
                options.require_recognized_review_version,
                child(path, "admissionReviewVersions"),
            )
        )
        name = webhook.name or ""
        if options.require_unique_names and name:
            if name in names:
                found.append(errors.duplicate(child(path, "name"), name))
            names.add(name)
    return found


# --- update options ------------------------------------------------------------------------------


def _selector_has_invalid_value(selector: LabelSelector | None) -> bool:
    return bool(validate_label_selector(selector, "")) if selector is not None else False


def _update_options(new: Sequence[AnyWebhook], old: Sequence[AnyWebhook]) -> _Options:
    """The options ``Validate...WebhookConfigurationUpdate`` derives from the old object."""
    old_names = [w.name or "" for w in old]
    return _Options(
        require_no_side_effects=all(w.side_effects in NO_SIDE_EFFECT_CLASSES for w in old),
        require_recognized_review_version=all(
            not w.admission_review_versions
            or any(v in ACCEPTED_REVIEW_VERSIONS for v in w.admission_review_versions)
            for w in old
        ),
        require_unique_names=len(set(old_names)) == len(old_names),
        allow_invalid_label_value=any(
            _selector_has_invalid_value(w.namespace_selector)
            or _selector_has_invalid_value(w.object_selector)
            for w in old
        ),
        ignore_match_conditions=len(new) == len(old)
        and all(n.match_conditions == o.match_conditions for n, o in zip(new, old, strict=True)),
    )


def validate_mutating(config: MutatingWebhookConfiguration) -> list[FieldError]:
    """``ValidateMutatingWebhookConfiguration`` beyond metadata."""
    return _validate_configuration(config.webhooks or (), _Options())


def validate_validating(config: ValidatingWebhookConfiguration) -> list[FieldError]:
    """``ValidateValidatingWebhookConfiguration`` beyond metadata."""
    return _validate_configuration(config.webhooks or (), _Options())


def validate_mutating_update(
    new: MutatingWebhookConfiguration, old: MutatingWebhookConfiguration
) -> list[FieldError]:
    """``ValidateMutatingWebhookConfigurationUpdate`` beyond metadata."""
    webhooks, old_webhooks = new.webhooks or (), old.webhooks or ()
    return _validate_configuration(webhooks, _update_options(webhooks, old_webhooks))


def validate_validating_update(
    new: ValidatingWebhookConfiguration, old: ValidatingWebhookConfiguration
) -> list[FieldError]:
    """``ValidateValidatingWebhookConfigurationUpdate`` beyond metadata."""
    webhooks, old_webhooks = new.webhooks or (), old.webhooks or ()
    return _validate_configuration(webhooks, _update_options(webhooks, old_webhooks))


REVALIDATE_META_ON_UPDATE: Final[frozenset[type[Any]]] = frozenset(
    {MutatingWebhookConfiguration, ValidatingWebhookConfiguration}
)
"""An update runs the whole create-time validation again, metadata included (the
``...Update`` functions call ``validate...WebhookConfiguration``)."""

CREATE: Final[dict[type[Any], KindValidator]] = {
    MutatingWebhookConfiguration: validate_mutating,
    ValidatingWebhookConfiguration: validate_validating,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    MutatingWebhookConfiguration: validate_mutating_update,
    ValidatingWebhookConfiguration: validate_validating_update,
}
