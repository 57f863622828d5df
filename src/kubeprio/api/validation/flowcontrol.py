"""FlowSchema validation (flowcontrol.apiserver.k8s.io/v1); PriorityLevelConfigurations are
checked in ``validation.prioritylevel``, which shares this module's helpers.

Mirrors v1.32's ``pkg/apis/flowcontrol/validation/validation.go`` as the v1 strategies
calls it:

* ``ValidateFlowSchema`` (create and every update): ``matchingPrecedence`` in 1..10000
  and 1 only for ``exempt``; a ``distinguisherMethod`` type ``ByUser``/``ByNamespace``;
  the priority level named (a DNS subdomain); each rule with subjects (a ``kind`` and
  exactly its member), at least one resource or non-resource rule, verbs from the
  supported list or ``*`` alone, groups/resources/namespaces with ``*`` alone,
  namespaces (unless ``clusterScope``) DNS labels, URLs ``/``-rooted with at most a
  trailing ``/*``; a mandatory schema's spec must equal the bootstrap one;
* status updates: condition types set and each once.

A bad ``spec`` value upstream prints as Go's ``%#v``, whose pointers are addresses;
kubeprio prints its JSON instead (``errors.go_json``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.flowcontrol import (
    ALL,
    BY_NAMESPACE,
    BY_USER,
    EXEMPT,
    MAX_MATCHING_PRECEDENCE,
    SUBJECT_GROUP,
    SUBJECT_SERVICE_ACCOUNT,
    SUBJECT_USER,
    FlowSchema,
    FlowSchemaCondition,
    FlowSchemaSpec,
    FlowSubject,
    NonResourcePolicyRule,
    PolicyRulesWithSubjects,
    PriorityLevelConfigurationCondition,
    ResourcePolicyRule,
)
from kubeprio.api.flowcontrolbootstrap import MANDATORY_SCHEMAS_BY_NAME
from kubeprio.api.gosyntax import GoStruct
from kubeprio.api.serialization import to_dict, to_sparse_dict
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    index,
    name_is_dns_label,
    name_is_dns_subdomain,
)

SUPPORTED_VERBS: Final = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
)
"""``supportedVerbs``, sorted as ``sets.String.List`` prints them."""
DISTINGUISHER_METHODS: Final = (BY_NAMESPACE, BY_USER)
SUBJECT_KINDS: Final = (SUBJECT_GROUP, SUBJECT_SERVICE_ACCOUNT, SUBJECT_USER)
NAMESPACE_INTRO: Final = "each member of this list must be '*' or a DNS-1123 label; "
_PLAIN_INTS: Final = frozenset({"matchingPrecedence", "queues", "handSize", "queueLengthLimit"})
"""Go ``int32`` fields that are not pointers: absent and 0 are the same value."""


def _has_wildcard(items: Sequence[str]) -> bool:
    return ALL in items


def semantic(value: Any) -> Any:
    """A JSON form in which Go's ``Semantic.DeepEqual`` equal values are equal: nil and
    empty slices alike, zero plain fields dropped (pointers keep their 0)."""
    if isinstance(value, dict):
        kept = {}
        for name, item in value.items():
            item = semantic(item)
            if item is None or item == [] or item == "" or item is False:
                continue
            if item == 0 and name in _PLAIN_INTS:
                continue
            if item == {} and name == "limitResponse":
                continue
            kept[name] = item
        return kept
    if isinstance(value, list):
        return [semantic(item) for item in value]
    return value


def spec_value(spec: object) -> GoValue:
    return GoValue(errors.go_json(to_sparse_dict(spec), sort_keys=False))


# --- FlowSchema ---------------------------------------------------------------------------


def validate_flow_schema(schema: FlowSchema) -> list[FieldError]:
    """``ValidateFlowSchema`` beyond metadata."""
    spec = schema.spec or FlowSchemaSpec()
    name = schema.metadata.name or ""
    found = validate_flow_schema_spec(name, spec, "spec")
    mandatory = MANDATORY_SCHEMAS_BY_NAME.get(name)
    if mandatory is not None and semantic(to_dict(spec)) != semantic(to_dict(mandatory.spec)):
        found.append(
            errors.invalid("spec", spec_value(spec), f"spec of '{name}' must equal the fixed value")
        )
    found.extend(validate_conditions((schema.status.conditions if schema.status else None) or ()))
    return found


def validate_flow_schema_spec(name: str, spec: FlowSchemaSpec, path: str) -> list[FieldError]:
    """``ValidateFlowSchemaSpec``."""
    found: list[FieldError] = []
    precedence = spec.matching_precedence or 0
    precedence_path = child(path, "matchingPrecedence")
    if precedence <= 0:
        found.append(errors.invalid(precedence_path, precedence, "must be a positive value"))
    if precedence > MAX_MATCHING_PRECEDENCE:
        found.append(
            errors.invalid(
                precedence_path, precedence, f"must not be greater than {MAX_MATCHING_PRECEDENCE}"
            )
        )
    if precedence == 1 and name != EXEMPT:
        found.append(
            errors.invalid(
                precedence_path,
                precedence,
                "only the schema named 'exempt' may have matchingPrecedence 1",
            )
        )
    method = spec.distinguisher_method
    if method is not None and (method.type or "") not in DISTINGUISHER_METHODS:
        shown = GoStruct("flowcontrol.FlowDistinguisherMethod", (("Type", method.type or ""),))
        found.append(
            errors.not_supported(
                child(child(path, "distinguisherMethod"), "type"), shown, DISTINGUISHER_METHODS
            )
        )
    level = (
        spec.priority_level_configuration.name if spec.priority_level_configuration else ""
    ) or ""
    level_path = child(child(path, "priorityLevelConfiguration"), "name")
    if level:
        found.extend(errors.invalid(level_path, level, m) for m in name_is_dns_subdomain(level))
    else:
        found.append(errors.required(level_path, "must reference a priority level"))
    for position, rule in enumerate(spec.rules or ()):
        found.extend(validate_rule(rule, index(child(path, "rules"), position)))
    return found


def validate_rule(rule: PolicyRulesWithSubjects, path: str) -> list[FieldError]:
    """``ValidateFlowSchemaPolicyRulesWithSubjects``."""
    found: list[FieldError] = []
    if rule.subjects:
        for position, subject in enumerate(rule.subjects):
            found.extend(validate_subject(subject, index(child(path, "subjects"), position)))
    else:
        found.append(
            errors.required(child(path, "subjects"), "subjects must contain at least one value")
        )
    if not rule.resource_rules and not rule.non_resource_rules:
        found.append(
            errors.required(
                path, "at least one of resourceRules and nonResourceRules has to be non-empty"
            )
        )
    for position, resource_rule in enumerate(rule.resource_rules or ()):
        found.extend(
            validate_resource_rule(resource_rule, index(child(path, "resourceRules"), position))
        )
    for position, url_rule in enumerate(rule.non_resource_rules or ()):
        found.extend(
            validate_non_resource_rule(url_rule, index(child(path, "nonResourceRules"), position))
        )
    return found


_FORBIDDEN_MEMBER: Final = {
    "user": "user is forbidden when subject kind is not 'User'",
    "group": "group is forbidden when subject kind is not 'Group'",
    "serviceAccount": "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
}


def validate_subject(subject: FlowSubject, path: str) -> list[FieldError]:
    """``ValidateFlowSchemaSubject``: members in the order serviceAccount, user, group,
    the kind's own member checked and the others forbidden."""
    members = {
        SUBJECT_SERVICE_ACCOUNT: ("serviceAccount", subject.service_account),
        SUBJECT_USER: ("user", subject.user),
        SUBJECT_GROUP: ("group", subject.group),
    }
    if subject.kind not in members:
        return [errors.not_supported(child(path, "kind"), subject.kind or "", SUBJECT_KINDS)]
    found: list[FieldError] = []
    for kind, (field, member) in members.items():
        member_path = child(path, field)
        if kind != subject.kind:
            if member is not None:
                found.append(errors.forbidden(member_path, _FORBIDDEN_MEMBER[field]))
        elif kind == SUBJECT_SERVICE_ACCOUNT:
            found.extend(_validate_service_account(subject, member_path))
        else:
            found.extend(_validate_named(member, member_path, field, kind))
    return found


def _validate_named(member: Any, path: str, name: str, kind: str) -> list[FieldError]:
    """``ValidateUserSubject``/``ValidateGroupSubject``."""
    if member is None:
        return [errors.required(path, f"{name} is required when subject kind is '{kind}'")]
    if not member.name:
        return [errors.required(child(path, "name"))]
    return []


def _validate_service_account(subject: FlowSubject, path: str) -> list[FieldError]:
    """``ValidateServiceAccountSubject``."""
    account = subject.service_account
    if account is None:
        return [
            errors.required(
                path, "serviceAccount is required when subject kind is 'ServiceAccount'"
            )
        ]
    found: list[FieldError] = []
    name = account.name or ""
    if not name:
        found.append(errors.required(child(path, "name")))
    elif name != ALL:
        found.extend(
            errors.invalid(child(path, "name"), name, m) for m in name_is_dns_subdomain(name)
        )
    namespace = account.namespace or ""
    if namespace:
        found.extend(
            errors.invalid(child(path, "namespace"), namespace, m)
            for m in name_is_dns_label(namespace)
        )
    else:
        found.append(
            errors.required(child(path, "namespace"), "must specify namespace for service account")
        )
    return found


def _validate_verbs(verbs: Sequence[str], path: str) -> list[FieldError]:
    if not verbs:
        return [errors.required(path, "verbs must contain at least one value")]
    if _has_wildcard(verbs):
        if len(verbs) > 1:
            return [
                errors.invalid(path, list(verbs), "if '*' is present, must not specify other verbs")
            ]
        return []
    if not set(verbs) <= set(SUPPORTED_VERBS):
        return [errors.not_supported(path, list(verbs), SUPPORTED_VERBS)]
    return []


def validate_resource_rule(rule: ResourcePolicyRule, path: str) -> list[FieldError]:
    """``ValidateFlowSchemaResourcePolicyRule``."""
    found = _validate_verbs(rule.verbs or (), child(path, "verbs"))
    for items, field, what, plural in (
        (rule.api_groups or (), "apiGroups", "api group", "api groups"),
        (rule.resources or (), "resources", "resource", "resources"),
    ):
        if not items:
            found.append(
                errors.required(
                    child(path, field), f"resource rules must supply at least one {what}"
                )
            )
        elif len(items) > 1 and _has_wildcard(items):
            found.append(
                errors.invalid(
                    child(path, field),
                    list(items),
                    f"if '*' is present, must not specify other {plural}",
                )
            )
    namespaces = rule.namespaces or ()
    namespaces_path = child(path, "namespaces")
    if not namespaces and not rule.cluster_scope:
        found.append(
            errors.required(
                namespaces_path,
                "resource rules that are not cluster scoped must supply at least one namespace",
            )
        )
    elif _has_wildcard(namespaces):
        if len(namespaces) > 1:
            found.append(
                errors.invalid(
                    namespaces_path,
                    list(namespaces),
                    "if '*' is present, must not specify other namespaces",
                )
            )
    else:
        for position, namespace in enumerate(namespaces):
            found.extend(
                errors.invalid(index(namespaces_path, position), namespace, NAMESPACE_INTRO + m)
                for m in name_is_dns_label(namespace)
            )
    return found


def validate_url_path(url: str, path: str) -> FieldError | None:
    """``ValidateNonResourceURLPath``."""
    if not url:
        return errors.invalid(path, url, "must not be empty")
    if url == "/":
        return None
    if not url.startswith("/"):
        return errors.invalid(path, url, "must start with slash")
    if " " in url:
        return errors.invalid(path, url, "must not contain white-space")
    if "//" in url:
        return errors.invalid(path, url, "must not contain double slash")
    wildcards = url.count("*")
    if wildcards > 1 or (wildcards == 1 and url[-2:] != "/*"):
        return errors.invalid(path, url, "wildcard can only do suffix glob matching")
    return None


def validate_non_resource_rule(rule: NonResourcePolicyRule, path: str) -> list[FieldError]:
    """``ValidateFlowSchemaNonResourcePolicyRule``."""
    found = _validate_verbs(rule.verbs or (), child(path, "verbs"))
    urls = rule.non_resource_urls or ()
    urls_path = child(path, "nonResourceURLs")
    if not urls:
        found.append(errors.required(urls_path, "nonResourceURLs must contain at least one value"))
    elif _has_wildcard(urls):
        if len(urls) > 1:
            found.append(
                errors.invalid(
                    urls_path,
                    list(urls),
                    "if '*' is present, must not specify other non-resource URLs",
                )
            )
    else:
        for position, url in enumerate(urls):
            error = validate_url_path(url, index(urls_path, position))
            if error is not None:
                found.append(error)
    return found


def validate_conditions(
    conditions: Sequence[FlowSchemaCondition | PriorityLevelConfigurationCondition],
) -> list[FieldError]:
    """``ValidateFlowSchemaStatus``/``ValidatePriorityLevelConfigurationStatus``."""
    found: list[FieldError] = []
    seen: set[str] = set()
    for position, condition in enumerate(conditions):
        path = index("status.conditions", position)
        kind = condition.type or ""
        if kind in seen:
            found.append(errors.duplicate(child(path, "type"), kind))
        seen.add(kind)
        if not kind:
            found.append(errors.required(child(path, "type"), "must not be empty"))
    return found


def validate_flow_schema_status(new: FlowSchema, _old: FlowSchema) -> list[FieldError]:
    """``ValidateFlowSchemaStatusUpdate``."""
    return validate_conditions((new.status.conditions if new.status else None) or ())


CREATE: Final[dict[type[Any], KindValidator]] = {FlowSchema: validate_flow_schema}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    FlowSchema: lambda new, _old: validate_flow_schema(new),
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    FlowSchema: validate_flow_schema_status,
}
