"""API Priority and Fairness classification: which FlowSchema and priority level a request
falls under, for the ``X-Kubernetes-PF-*`` response headers.

Mirrors ``k8s.io/apiserver/pkg/util/flowcontrol``: ``apf_controller.go``'s
``digestFlowSchemasLocked`` (schemas whose priority level is missing are set aside; the
rest sorted by ``matchingPrecedence``, then name; a missing mandatory ``exempt`` schema is
put first and ``catch-all`` last) and ``rule.go``'s matching: a schema matches when one
of its rules has a subject matching the user (``User`` by name or ``*``; ``Group`` by
one of the user's groups or ``*``; ``ServiceAccount`` by
``system:serviceaccount:<ns>:<name>``, or any name in the namespace for ``*``) and,
for a resource request, a resource rule (verb, ``resource/subresource``, API group,
each list either holding the request's value or being exactly ``[*]``; a namespaced
request needs its namespace listed or ``*``, a cluster-scoped one ``clusterScope``), for
any other request a non-resource rule (verb, and a URL that is ``*``, equal, or a
``prefix/*`` the path lies under).

Cost: a :class:`FlowClassifier` is built once per configuration change (the schemas and
levels listed from the store) and then only read; each request walks the sorted schemas
until one matches (an admin's ``system:masters`` matches the first, ``exempt``), and
remembers the answer per (user, groups, request shape) in a bounded cache, so repeated
requests of one client cost a dict lookup. Who drives it: ``apiserver.http`` (per
request), ``apiserver.flowcontrolconfig`` (builds it). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from kubeprio.api.flowcontrol import (
    ALL,
    CATCH_ALL,
    EXEMPT,
    SUBJECT_GROUP,
    SUBJECT_SERVICE_ACCOUNT,
    SUBJECT_USER,
    FlowSchema,
    FlowSubject,
    NonResourcePolicyRule,
    PolicyRulesWithSubjects,
    PriorityLevelConfiguration,
    ResourcePolicyRule,
)
from kubeprio.api.flowcontrolbootstrap import CATCH_ALL_SCHEMA, EXEMPT_SCHEMA
from kubeprio.apiserver.authz import Attributes

SERVICE_ACCOUNT_PREFIX: Final = "system:serviceaccount:"
CACHE_LIMIT: Final = 4096
"""Remembered answers per configuration; the cache starts over when full."""
LONG_RUNNING_SUBRESOURCES: Final = frozenset({"attach", "exec", "proxy", "log", "portforward"})
"""``BasicLongRunningRequestCheck``'s subresources: such requests (and verb ``proxy``)
bypass the filter, so they carry no PF headers; watches are long-running but tracked."""


@dataclass(frozen=True, slots=True)
class Classification:
    """The schema and priority level a request matched, by name and UID."""

    flow_schema: str
    flow_schema_uid: str
    priority_level: str
    priority_level_uid: str


def bypasses_filter(attrs: Attributes) -> bool:
    """Whether upstream's priority-and-fairness filter serves the request without
    classifying it (long-running requests other than watches)."""
    return attrs.resource_request and (
        attrs.verb == "proxy" or attrs.subresource in LONG_RUNNING_SUBRESOURCES
    )


def _listed(value: str, items: Sequence[str] | None, wildcard: str = ALL) -> bool:
    """``containsString``: ``items`` is exactly ``[wildcard]`` or holds ``value``."""
    items = items or ()
    return (len(items) == 1 and items[0] == wildcard) or value in items


def matches_subject(subject: FlowSubject, user: str, groups: Sequence[str]) -> bool:
    """``matchesSubject``."""
    if subject.kind == SUBJECT_USER:
        return subject.user is not None and subject.user.name in (ALL, user)
    if subject.kind == SUBJECT_GROUP:
        if subject.group is None:
            return False
        return subject.group.name == ALL or subject.group.name in groups
    if subject.kind == SUBJECT_SERVICE_ACCOUNT:
        account = subject.service_account
        if account is None:
            return False
        namespace = account.namespace or ""
        if account.name == ALL:
            return user.startswith(f"{SERVICE_ACCOUNT_PREFIX}{namespace}:")
        return user == f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{account.name or ''}"
    return False


def matches_resource_rule(rule: ResourcePolicyRule, attrs: Attributes) -> bool:
    """``matchesResourcePolicyRule``."""
    if not _listed(attrs.verb, rule.verbs):
        return False
    if not _listed(attrs.resource_path, rule.resources):
        return False
    if not _listed(attrs.group, rule.api_groups):
        return False
    if not attrs.namespace:
        return bool(rule.cluster_scope)
    return _listed(attrs.namespace, rule.namespaces)


def matches_url(patterns: Sequence[str] | None, path: str) -> bool:
    """``matchPolicyRuleNonResourceURL``."""
    for pattern in patterns or ():
        if pattern in (ALL, path):
            return True
        prefix = pattern.removesuffix("*")
        if not prefix.endswith("/"):
            prefix += "/"
        if path.startswith(prefix):
            return True
    return False


def matches_non_resource_rule(rule: NonResourcePolicyRule, attrs: Attributes) -> bool:
    """``matchesNonResourcePolicyRule``."""
    return _listed(attrs.verb, rule.verbs) and matches_url(rule.non_resource_urls, attrs.path)


def matches_rule(rule: PolicyRulesWithSubjects, attrs: Attributes) -> bool:
    """``matchesPolicyRule``: a subject, then a rule of the request's kind."""
    user = attrs.user
    if not any(matches_subject(s, user.name, user.groups) for s in rule.subjects or ()):
        return False
    if attrs.resource_request:
        return any(matches_resource_rule(r, attrs) for r in rule.resource_rules or ())
    return any(matches_non_resource_rule(r, attrs) for r in rule.non_resource_rules or ())


def matches_schema(schema: FlowSchema, attrs: Attributes) -> bool:
    """``matchesFlowSchema``."""
    return any(
        matches_rule(rule, attrs) for rule in (schema.spec.rules if schema.spec else None) or ()
    )


def _precedence(schema: FlowSchema) -> tuple[int, str]:
    spec = schema.spec
    return ((spec.matching_precedence if spec else None) or 0, schema.metadata.name or "")


def level_name(schema: FlowSchema) -> str:
    """The priority level a schema names."""
    reference = schema.spec.priority_level_configuration if schema.spec else None
    return (reference.name if reference else None) or ""


class FlowClassifier:
    """The digested configuration: schemas in matching order and level UIDs by name."""

    def __init__(
        self, schemas: Iterable[FlowSchema], levels: Iterable[PriorityLevelConfiguration]
    ) -> None:
        self.level_uids = {level.metadata.name or "": level.metadata.uid or "" for level in levels}
        usable = [s for s in schemas if level_name(s) in self.level_uids]
        usable.sort(key=_precedence)
        names = {s.metadata.name for s in usable}
        # apf_controller.go supplies the mandatory schemas it does not have (no UID then).
        if EXEMPT not in names:
            usable.insert(0, EXEMPT_SCHEMA)
        if CATCH_ALL not in names:
            usable.append(CATCH_ALL_SCHEMA)
        self.schemas: tuple[FlowSchema, ...] = tuple(usable)
        self._cache: dict[tuple[object, ...], Classification] = {}

    def classify(self, attrs: Attributes) -> Classification:
        """The first schema matching ``attrs`` (``catch-all`` matches everyone)."""
        user = attrs.user
        key = (
            user.name,
            tuple(user.groups),
            attrs.verb,
            attrs.resource_request,
            attrs.group,
            attrs.resource,
            attrs.subresource,
            attrs.namespace,
            attrs.path if not attrs.resource_request else "",
        )
        found = self._cache.get(key)
        if found is not None:
            return found
        schema = next((s for s in self.schemas if matches_schema(s, attrs)), self.schemas[-1])
        level = level_name(schema)
        found = Classification(
            schema.metadata.name or "",
            schema.metadata.uid or "",
            level,
            self.level_uids.get(level, ""),
        )
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = found
        return found
