"""Which admission webhooks a request calls: rules, matchPolicy, selectors, and an index.

Mirrors v1.32's ``staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook``:

* ``predicates/rules/rules.go`` (``Matcher.Matches``): a rule matches when its scope,
  operation, group, version and resource all do. ``*`` matches anything; a resource entry
  is ``resource[/subresource]`` where either part may be ``*`` (``pods`` alone matches no
  subresource, ``pods/*`` pods and every subresource of them, ``*/*`` everything);
  scope ``Namespaced`` matches namespaced requests but never a Namespace, ``Cluster``
  cluster-scoped requests and Namespaces.
* ``generic/webhook.go`` (``ShouldCallHook``): the namespaceSelector, then the
  objectSelector, then the rules in order; with ``matchPolicy: Equivalent`` (the default)
  a request no rule names exactly is sent as the first equivalent resource a rule does
  name (kubeprio's equivalents: the same group and resource at another version it serves,
  ``api.kinds.ResourceInfo.legacy_versions``).
* ``predicates/namespace/matcher.go``: cluster-scoped requests other than Namespaces always
  match; an empty selector matches; a Namespace's create or update is matched on the
  Namespace object's own labels, anything else on its namespace's labels (a missing
  namespace answers 404 ``namespaces "x" not found``).
* ``predicates/object/matcher.go``: an empty objectSelector matches; otherwise the new
  object's labels or the old object's do.

``WebhookIndex`` holds the webhooks of every configuration (configurations sorted by
name, as upstream's configuration managers sort them; webhooks in their order) and, per
(group, resource), the ones whose rules could match, so a request to a resource no webhook
names costs one dictionary lookup. Pure: no I/O (namespaces come through a lookup function).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from kubeprio.admission.chain import AdmissionRequest, Operation
from kubeprio.api import errors
from kubeprio.api.core import Namespace
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.selectors import SelectorError, label_selector_as_selector
from kubeprio.api.webhookconfiguration import (
    ALL_SCOPES,
    EQUIVALENT,
    AnyWebhook,
    MutatingWebhookConfiguration,
    RuleWithOperations,
    ValidatingWebhookConfiguration,
)

NAMESPACES: Final = "namespaces"
WILDCARD: Final = "*"


@dataclasses.dataclass(frozen=True, slots=True)
class Attributes:
    """What rules are matched against: a request's resource at one version."""

    group: str
    version: str
    resource: str
    subresource: str
    operation: str
    namespace: str


@dataclasses.dataclass(frozen=True, slots=True)
class Invocation:
    """A webhook to call and the resource/kind the request is sent to it as."""

    webhook: AnyWebhook
    configuration: str
    group: str
    version: str
    resource: str
    subresource: str
    kind: tuple[str, str, str]
    """(group, version, kind) of the object as sent."""


# --- rules ---------------------------------------------------------------------------------------


def _exact_or_wildcard(items: Iterable[str] | None, requested: str) -> bool:
    return any(item in (WILDCARD, requested) for item in items or ())


def _scope_matches(rule: RuleWithOperations, attrs: Attributes) -> bool:
    scope = rule.scope
    if scope is None or scope == ALL_SCOPES:
        return True
    is_namespace = attrs.group == "" and attrs.version == "v1" and attrs.resource == NAMESPACES
    if scope == "Namespaced":
        return not is_namespace and attrs.namespace != ""
    if scope == "Cluster":
        return is_namespace or attrs.namespace == ""
    return False


def _resource_matches(rule: RuleWithOperations, attrs: Attributes) -> bool:
    for entry in rule.resources or ():
        resource, _, sub = entry.partition("/")
        if resource in (WILDCARD, attrs.resource) and sub in (WILDCARD, attrs.subresource):
            return True
    return False


def rule_matches(rule: RuleWithOperations, attrs: Attributes) -> bool:
    """``rules.Matcher.Matches``: scope, operation, group, version and resource."""
    return (
        _scope_matches(rule, attrs)
        and _exact_or_wildcard(rule.operations, attrs.operation)
        and _exact_or_wildcard(rule.api_groups, attrs.group)
        and _exact_or_wildcard(rule.api_versions, attrs.version)
        and _resource_matches(rule, attrs)
    )


def request_attributes(request: AdmissionRequest) -> Attributes:
    """The request's own resource: its group, served version, plural and subresource."""
    info = request.resource
    # A request about a Namespace names it as its namespace (upstream's attributes).
    namespace = request.namespace
    if info.group == "" and info.plural == NAMESPACES:
        namespace = request.name
    return Attributes(
        info.group,
        info.version,
        info.plural,
        request.subresource,
        str(request.operation),
        namespace,
    )


def request_kind(info: ResourceInfo, subresource: str) -> tuple[str, str, str]:
    """The (group, version, kind) of what a request writes: a subresource's own kind
    (``Scale``, ``Binding``) or the resource's."""
    for sub in info.subresources:
        if sub.name == subresource:
            return sub.group, sub.version, sub.kind
    return info.group, info.version, info.kind


def match_rules(
    webhook: AnyWebhook, configuration: str, request: AdmissionRequest
) -> Invocation | None:
    """The rule half of ``ShouldCallHook``: an exact match first, then (matchPolicy
    Equivalent) the request as another version of the same resource."""
    attrs = request_attributes(request)
    rules = webhook.rules or ()
    info = request.resource
    kind = request_kind(info, request.subresource)
    if any(rule_matches(rule, attrs) for rule in rules):
        return Invocation(
            webhook, configuration, attrs.group, attrs.version, attrs.resource,
            attrs.subresource, kind,
        )  # fmt: skip
    if webhook.match_policy != EQUIVALENT:
        return None
    for rule in rules:
        for other in info.legacy_versions:
            equivalent = dataclasses.replace(attrs, version=other)
            if rule_matches(rule, equivalent):
                # The object is sent as that version of its kind (a subresource of
                # another group, such as an Eviction, keeps its own).
                if kind[0] == info.group and kind[1] == info.version:
                    kind = (kind[0], other, kind[2])
                return Invocation(
                    webhook, configuration, attrs.group, other, attrs.resource,
                    attrs.subresource, kind,
                )  # fmt: skip
    return None


# --- selectors -----------------------------------------------------------------------------------


def _labels_of(obj: object) -> Mapping[str, str] | None:
    metadata = getattr(obj, "metadata", None)
    return getattr(metadata, "labels", None) if metadata is not None else None


def namespace_matches(
    webhook: AnyWebhook,
    request: AdmissionRequest,
    namespace_of: Callable[[str], Namespace | None],
) -> bool:
    """``MatchNamespaceSelector``; raises the 404 of a missing namespace, or an
    InternalError for a selector that does not parse."""
    info = request.resource
    is_namespace = info.group == "" and info.plural == NAMESPACES
    if not request.namespace and not is_namespace:
        return True
    try:
        selector = label_selector_as_selector(webhook.namespace_selector)
    except SelectorError as exc:
        raise errors.internal_error(str(exc)) from None
    if selector.is_empty():
        return True
    if (
        is_namespace
        and not request.subresource
        and request.operation
        in (
            Operation.CREATE,
            Operation.UPDATE,
        )
    ):
        return selector.matches(_labels_of(request.obj) or {})
    name = request.name if is_namespace else request.namespace
    namespace = namespace_of(name)
    if namespace is None:
        raise errors.not_found(NAMESPACES, "", name)
    return selector.matches(namespace.metadata.labels or {})


def object_matches(webhook: AnyWebhook, request: AdmissionRequest) -> bool:
    """``MatchObjectSelector``: the new object's labels or the old one's."""
    try:
        selector = label_selector_as_selector(webhook.object_selector)
    except SelectorError as exc:
        raise errors.internal_error(str(exc)) from None
    if selector.is_empty():
        return True
    return any(
        obj is not None and selector.matches(_labels_of(obj) or {})
        for obj in (request.obj, request.old_obj)
    )


def should_call(
    webhook: AnyWebhook,
    configuration: str,
    request: AdmissionRequest,
    namespace_of: Callable[[str], Namespace | None],
) -> Invocation | None:
    """``ShouldCallHook``: selectors, then rules. A selector error only counts when the
    rules match (upstream checks them first but reports them after)."""
    try:
        in_namespace = namespace_matches(webhook, request, namespace_of)
        namespace_error = None
    except errors.StatusError as exc:
        in_namespace, namespace_error = True, exc
    if not in_namespace:
        return None
    try:
        selected = object_matches(webhook, request)
        object_error = None
    except errors.StatusError as exc:
        selected, object_error = True, exc
    if not selected:
        return None
    invocation = match_rules(webhook, configuration, request)
    if invocation is None:
        return None
    if namespace_error is not None:
        raise namespace_error
    if object_error is not None:
        raise object_error
    return invocation


# --- the index -----------------------------------------------------------------------------------

Configuration = MutatingWebhookConfiguration | ValidatingWebhookConfiguration


@dataclasses.dataclass(frozen=True, slots=True)
class IndexedWebhook:
    """A webhook with its configuration's name and its position in call order."""

    position: int
    configuration: str
    webhook: AnyWebhook


def _rule_keys(webhook: AnyWebhook) -> set[tuple[str, str]]:
    """The (group, resource) pairs a webhook's rules can match, ``*`` for any."""
    keys: set[tuple[str, str]] = set()
    for rule in webhook.rules or ():
        for group in rule.api_groups or ():
            for entry in rule.resources or ():
                keys.add((group, entry.partition("/")[0]))
    return keys


class WebhookIndex:
    """The webhooks of a set of configurations, found by (group, resource)."""

    def __init__(self, configurations: Sequence[Configuration]) -> None:
        ordered = sorted(configurations, key=lambda c: c.metadata.name or "")
        self._by_key: dict[tuple[str, str], list[IndexedWebhook]] = {}
        position = 0
        for config in ordered:
            for webhook in config.webhooks or ():
                entry = IndexedWebhook(position, config.metadata.name or "", webhook)
                position += 1
                for key in _rule_keys(webhook):
                    self._by_key.setdefault(key, []).append(entry)
        self._cache: dict[tuple[str, str], tuple[IndexedWebhook, ...]] = {}

    def candidates(self, group: str, resource: str) -> tuple[IndexedWebhook, ...]:
        """The webhooks whose rules name this group and resource (or ``*``), in call order."""
        cached = self._cache.get((group, resource))
        if cached is not None:
            return cached
        found: dict[int, IndexedWebhook] = {}
        for key in (
            (group, resource),
            (group, WILDCARD),
            (WILDCARD, resource),
            (WILDCARD, WILDCARD),
        ):
            for entry in self._by_key.get(key, ()):
                found[entry.position] = entry
        result = tuple(found[position] for position in sorted(found))
        self._cache[(group, resource)] = result
        return result
