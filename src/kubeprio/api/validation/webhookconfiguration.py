"""Validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration.

Mirrors v1.32's ``pkg/apis/admissionregistration/validation/validation.go``
(``ValidateMutatingWebhookConfiguration``, ``ValidateValidatingWebhookConfiguration`` and
their ``...Update`` forms, ``validateMutatingWebhook``/``validateValidatingWebhook``,
``validateRuleWithOperations``, ``validateRule``, ``validateResources``,
``validateAdmissionReviewVersions``, ``validateMatchConditions``) and
``staging/src/k8s.io/apiserver/pkg/util/webhook/validation.go`` (``ValidateWebhookURL``,
``ValidateWebhookService``), in upstream's order:

* metadata (a DNS subdomain name); per webhook: ``name`` a fully qualified name (three
  dot-separated segments at least), each rule (operations, apiGroups, apiVersions,
  resources with the ``*``/``x/*``/``*/x`` combination rules, scope), failurePolicy,
  matchPolicy, sideEffects (required; ``None`` or ``NoneOnDryRun`` on create),
  timeoutSeconds 1..30, the two selectors, reinvocationPolicy (mutating), exactly one
  of ``url`` (https, a host, no user, query or fragment) and ``service`` (name,
  namespace, port 1..65535, path segments DNS subdomains), matchConditions (at most 64,
  names qualified and unique, expressions required); then admissionReviewVersions
  (required, DNS-1035 labels, no duplicates, one of ``v1, v1beta1``) and unique names.
* An update relaxes what the stored object already broke, as upstream's update options
  do: side effects, review versions, unique names and selector label values are only
  held to the create rules when the old object met them, and unchanged matchConditions
  are not checked again.

Left out: compiling matchConditions' CEL expressions (kubeprio has no CEL; a syntax error
is accepted). Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from kubeprio.api import errors
from kubeprio.api.errors import ErrorType, FieldError, GoValue
from kubeprio.api.gotext import go_quote
from kubeprio.api.meta import LabelSelector
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    dns1035_label_errors,
    dns1123_subdomain_errors,
    index,
    qualified_name_errors,
    validate_label_selector,
)
from kubeprio.api.webhookconfiguration import (
    AnyWebhook,
    MatchCondition,
    MutatingWebhook,
    MutatingWebhookConfiguration,
    RuleWithOperations,
    ValidatingWebhookConfiguration,
    WebhookClientConfig,
)

ACCEPTED_REVIEW_VERSIONS: Final = ("v1", "v1beta1")
"""``AcceptedAdmissionReviewVersions``: what the API server can send."""
FAILURE_POLICIES: Final = ("Fail", "Ignore")
MATCH_POLICIES: Final = ("Equivalent", "Exact")
REINVOCATION_POLICIES: Final = ("IfNeeded", "Never")
SIDE_EFFECT_CLASSES: Final = ("None", "NoneOnDryRun", "Some", "Unknown")
NO_SIDE_EFFECT_CLASSES: Final = ("None", "NoneOnDryRun")
OPERATIONS: Final = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES: Final = ("*", "Cluster", "Namespaced")
MAX_MATCH_CONDITIONS: Final = 64
_URL_FORM: Final = "; desired format: https://host[/path]"


@dataclasses.dataclass(frozen=True, slots=True)
class _Options:
    """Upstream's ``validationOptions`` (the parts without CEL)."""

    require_no_side_effects: bool = True
    require_recognized_review_version: bool = True
    require_unique_names: bool = True
    allow_invalid_label_value: bool = False
    ignore_match_conditions: bool = False


def _strings(values: Sequence[str], go_type: str = "string") -> GoValue:
    """A slice as ``%#v`` prints it (``[]string{"a", "b"}``)."""
    return GoValue(f"[]{go_type}{{" + ", ".join(go_quote(v) for v in values) + "}")


# --- rules ---------------------------------------------------------------------------------------


def _validate_resources(resources: Sequence[str], path: str) -> list[FieldError]:
    """``validateResources``: resources with subresources and the wildcard rules."""
    found: list[FieldError] = []
    if not resources:
        found.append(errors.required(path))
    with_wildcard_sub: set[str] = set()
    sub_with_wildcard_res: set[str] = set()
    double_wildcard = single_wildcard = plain_resource = False
    for position, resource_sub in enumerate(resources):
        if resource_sub == "":
            found.append(errors.required(index(path, position)))
            continue
        if resource_sub == "*/*":
            double_wildcard = True
        if resource_sub == "*":
            single_wildcard = True
        resource, slash, sub = resource_sub.partition("/")
        if not slash:
            plain_resource = resource_sub != "*"
            continue
        if resource in with_wildcard_sub:
            found.append(
                errors.invalid(
                    index(path, position),
                    resource_sub,
                    f"if '{resource}/*' is present, must not specify {resource_sub}",
                )
            )
        if sub in sub_with_wildcard_res:
            found.append(
                errors.invalid(
                    index(path, position),
                    resource_sub,
                    f"if '*/{sub}' is present, must not specify {resource_sub}",
                )
            )
        if sub == "*":
            with_wildcard_sub.add(resource)
        if resource == "*":
            sub_with_wildcard_res.add(sub)
    if len(resources) > 1 and double_wildcard:
        found.append(
            errors.invalid(
                path,
                _strings(resources),
                "if '*/*' is present, must not specify other resources",
            )
        )
    if single_wildcard and plain_resource:
        found.append(
            errors.invalid(
                path,
                _strings(resources),
                "if '*' is present, must not specify other resources without subresources",
            )
        )
    return found


def validate_rule(rule: RuleWithOperations, path: str) -> list[FieldError]:
    """``validateRuleWithOperations`` then ``validateRule`` (subresources allowed)."""
    found: list[FieldError] = []
    operations = rule.operations or ()
    operations_path = child(path, "operations")
    if not operations:
        found.append(errors.required(operations_path))
    if len(operations) > 1 and "*" in operations:
        found.append(
            errors.invalid(
                operations_path,
                _strings(operations, "admissionregistration.OperationType"),
                "if '*' is present, must not specify other operations",
            )
        )
    for position, operation in enumerate(operations):
        if operation not in OPERATIONS:
            found.append(
                errors.not_supported(index(operations_path, position), operation, OPERATIONS)
            )
    groups = rule.api_groups or ()
    if not groups:
        found.append(errors.required(child(path, "apiGroups")))
    if len(groups) > 1 and "*" in groups:
        found.append(
            errors.invalid(
                child(path, "apiGroups"),
                _strings(groups),
                "if '*' is present, must not specify other API groups",
            )
        )
    versions = rule.api_versions or ()
    if not versions:
        found.append(errors.required(child(path, "apiVersions")))
    if len(versions) > 1 and "*" in versions:
        found.append(
            errors.invalid(
                child(path, "apiVersions"),
                _strings(versions),
                "if '*' is present, must not specify other API versions",
            )
        )
    for position, version in enumerate(versions):
        if version == "":
            found.append(errors.required(index(child(path, "apiVersions"), position)))
    found.extend(_validate_resources(rule.resources or (), child(path, "resources")))
    if rule.scope is not None and rule.scope not in SCOPES:
        found.append(errors.not_supported(child(path, "scope"), rule.scope, SCOPES))
    return found


# --- client config -------------------------------------------------------------------------------


def validate_webhook_url(url: str, path: str) -> list[FieldError]:
    """``ValidateWebhookURL`` with https forced."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return [errors.required(path, f"url must be a valid URL: {exc}{_URL_FORM}")]
    found: list[FieldError] = []
    if parts.scheme != "https":
        found.append(
            errors.invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _URL_FORM)
        )
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        host = parts.netloc
    if not host:
        found.append(errors.invalid(path, host, "host must be provided" + _URL_FORM))
    if at:
        found.append(errors.invalid(path, userinfo, "user information is not permitted in the URL"))
    if parts.fragment:
        found.append(errors.invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        found.append(
            errors.invalid(path, parts.query, "query parameters are not permitted in the URL")
        )
    return found


def validate_webhook_service(
    name: str, namespace: str, url_path: str | None, port: int, path: str
) -> list[FieldError]:
    """``ValidateWebhookService``: name, namespace, port, then the path's segments."""
    found: list[FieldError] = []
    if not name:
        found.append(errors.required(child(path, "name"), "service name is required"))
    if not namespace:
        found.append(errors.required(child(path, "namespace"), "service namespace is required"))
    if not 1 <= port <= 65535:
        found.append(
            errors.invalid(
                child(path, "port"),
                port,
                "port is not valid: must be between 1 and 65535, inclusive",
            )
        )
    if url_path is None or url_path in ("", "/"):
        return found
    path_field = child(path, "path")
    if url_path == "//":
        found.append(errors.invalid(path_field, url_path, "segment[0] may not be empty"))
        return found
    if not url_path.startswith("/"):
        found.append(errors.invalid(path_field, url_path, "must start with a '/'"))
    to_check = url_path[1:]
    if to_check.endswith("/"):
        to_check = to_check[:-1]
    for position, step in enumerate(to_check.split("/")):
        if not step:
            found.append(
                errors.invalid(path_field, url_path, f"segment[{position}] may not be empty")
            )
            continue
        found.extend(
            errors.invalid(path_field, url_path, f"segment[{position}]: {message}")
            for message in dns1123_subdomain_errors(step)
        )
    return found


def _validate_client_config(config: WebhookClientConfig | None, path: str) -> list[FieldError]:
    config = config or WebhookClientConfig()
    config_path = child(path, "clientConfig")
    if (config.url is None) == (config.service is None):
        return [errors.required(config_path, "exactly one of url or service is required")]
    if config.url is not None:
        return validate_webhook_url(config.url, child(config_path, "url"))
    service = config.service
    assert service is not None
    return validate_webhook_service(
        service.name or "",
        service.namespace or "",
        service.path,
        service.port if service.port is not None else 0,
        child(config_path, "service"),
    )


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


def _validate_match_conditions(conditions: Sequence[MatchCondition], path: str) -> list[FieldError]:
    """``validateMatchConditions`` without the CEL compilation."""
    found: list[FieldError] = []
    if len(conditions) > MAX_MATCH_CONDITIONS:
        found.append(
            FieldError(
                ErrorType.TOO_MANY,
                path,
                len(conditions),
                f"must have at most {MAX_MATCH_CONDITIONS} items",
            )
        )
    names: set[str] = set()
    for position, condition in enumerate(conditions):
        condition_path = index(path, position)
        if not (condition.expression or "").strip():
            found.append(errors.required(child(condition_path, "expression")))
        name = condition.name or ""
        if not name:
            found.append(errors.required(child(condition_path, "name")))
        else:
            found.extend(qualified_name_errors(name, child(condition_path, "name")))
            if name in names:
                found.append(errors.duplicate(child(condition_path, "name"), name))
            names.add(name)
    return found


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
    found.extend(_validate_client_config(webhook.client_config, path))
    if not options.ignore_match_conditions:
        found.extend(
            _validate_match_conditions(
                webhook.match_conditions or (), child(path, "matchConditions")
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
            errors.invalid(path, _strings(versions), f"must include at least one of {accepted}")
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


REVALIDATE_META_ON_UPDATE: Final = frozenset(
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
