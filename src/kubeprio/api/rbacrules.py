"""RBAC rule matching, coverage and the escalation message's rule text.

Mirrors ``pkg/apis/rbac/v1/evaluation_helpers.go`` (``VerbMatches``, ``APIGroupMatches``,
``ResourceMatches`` with ``*`` and ``*/subresource``, ``ResourceNameMatches``,
``NonResourceURLMatches`` with a trailing ``*``, ``CompactString``), the rule checks of
``plugin/pkg/auth/authorizer/rbac/rbac.go`` (``RuleAllows``) and
``k8s.io/component-helpers/auth/rbac/validation`` (``Covers``: whether one set of rules
grants everything another does, by breaking the asked-for rules into single-verb,
single-resource pieces). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kubeprio.api.gotext import go_quote
from kubeprio.api.rbac import ALL, PolicyRule


@dataclass(frozen=True, slots=True)
class Request:
    """What a rule is matched against (the authorizer's attributes, reduced)."""

    verb: str
    group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    resource_request: bool = True
    path: str = ""


def verb_matches(rule: PolicyRule, verb: str) -> bool:
    """``VerbMatches``."""
    return any(v in (ALL, verb) for v in rule.verbs or ())


def api_group_matches(rule: PolicyRule, group: str) -> bool:
    """``APIGroupMatches``."""
    return any(g in (ALL, group) for g in rule.api_groups or ())


def resource_matches(rule: PolicyRule, combined: str, subresource: str) -> bool:
    """``ResourceMatches``: ``*``, the exact ``resource[/subresource]``, or
    ``*/subresource`` when a subresource is asked for."""
    for resource in rule.resources or ():
        if resource in (ALL, combined):
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def resource_name_matches(rule: PolicyRule, name: str) -> bool:
    """``ResourceNameMatches``: a rule without names matches every name."""
    names = rule.resource_names
    return not names or name in names


def non_resource_url_matches(rule: PolicyRule, path: str) -> bool:
    """``NonResourceURLMatches``: ``*``, exact, or a prefix before a trailing ``*``."""
    for url in rule.non_resource_urls or ():
        if url in (ALL, path):
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(request: Request, rule: PolicyRule) -> bool:
    """``RuleAllows`` of ``rbac.go``."""
    if request.resource_request:
        combined = (
            f"{request.resource}/{request.subresource}" if request.subresource else request.resource
        )
        return (
            verb_matches(rule, request.verb)
            and api_group_matches(rule, request.group)
            and resource_matches(rule, combined, request.subresource)
            and resource_name_matches(rule, request.name)
        )
    return verb_matches(rule, request.verb) and non_resource_url_matches(rule, request.path)


def rules_allow(request: Request, rules: Iterable[PolicyRule]) -> bool:
    """Whether any of ``rules`` allows ``request``."""
    return any(rule_allows(request, rule) for rule in rules)


# --- coverage (component-helpers/auth/rbac/validation/policy_comparator.go) ----------------


def _has(values: Sequence[str] | None, item: str) -> bool:
    return bool(values) and (ALL in values or item in values)  # type: ignore[operator]


def _resource_covers(owner: PolicyRule, requested: str) -> bool:
    """``resourceCoversAll`` for one resource: ``*``, exact, or ``*/sub`` for ``res/sub``."""
    resources = owner.resources or ()
    if ALL in resources or requested in resources:
        return True
    _, slash, sub = requested.partition("/")
    return bool(slash) and f"*/{sub}" in resources


def _non_resource_covers(owner_url: str, requested: str) -> bool:
    if owner_url == requested:
        return True
    return owner_url.endswith("*") and requested.startswith(owner_url.rstrip("*"))


def rule_covers(owner: PolicyRule, sub: PolicyRule) -> bool:
    """``ruleCovers``: whether ``owner`` grants everything ``sub`` (a broken-down rule) does."""
    verbs = all(_has(owner.verbs, v) for v in sub.verbs or ())
    groups = all(_has(owner.api_groups, g) for g in sub.api_groups or ())
    resources = all(_resource_covers(owner, r) for r in sub.resources or ())
    urls = all(
        any(_non_resource_covers(o, u) for o in owner.non_resource_urls or ())
        for u in sub.non_resource_urls or ()
    )
    names = True
    if sub.resource_names:
        names = not owner.resource_names or all(
            n in (owner.resource_names or ()) for n in sub.resource_names
        )
    elif owner.resource_names:
        names = False
    return verbs and groups and resources and urls and names


def breakdown(rule: PolicyRule) -> list[PolicyRule]:
    """``BreakdownRule``: one rule per group, resource, name and verb (or per URL and verb)."""
    pieces: list[PolicyRule] = []
    for group in rule.api_groups or ():
        for resource in rule.resources or ():
            for verb in rule.verbs or ():
                if rule.resource_names:
                    pieces.extend(
                        PolicyRule(
                            api_groups=(group,),
                            resources=(resource,),
                            verbs=(verb,),
                            resource_names=(name,),
                        )
                        for name in rule.resource_names
                    )
                else:
                    pieces.append(
                        PolicyRule(api_groups=(group,), resources=(resource,), verbs=(verb,))
                    )
    for url in rule.non_resource_urls or ():
        for verb in rule.verbs or ():
            pieces.append(PolicyRule(non_resource_urls=(url,), verbs=(verb,)))
    return pieces


def covers(owner: Sequence[PolicyRule], requested: Iterable[PolicyRule]) -> list[PolicyRule]:
    """``Covers``: the broken-down pieces of ``requested`` no ``owner`` rule covers (empty
    when ``owner`` grants everything)."""
    missing: list[PolicyRule] = []
    for rule in requested:
        for piece in breakdown(rule):
            if not any(rule_covers(o, piece) for o in owner):
                missing.append(piece)
    return missing


def _go_strings(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def compact_string(rule: PolicyRule) -> str:
    """``CompactString``: ``{APIGroups:[""], Resources:["pods"], Verbs:["get"]}``."""
    parts: list[str] = []
    for label, values in (
        ("APIGroups", rule.api_groups),
        ("Resources", rule.resources),
        ("NonResourceURLs", rule.non_resource_urls),
        ("ResourceNames", rule.resource_names),
        ("Verbs", rule.verbs),
    ):
        if values:
            parts.append(f"{label}:{_go_strings(values)}")
    return "{" + ", ".join(parts) + "}"


def compact_rules(rules: Sequence[PolicyRule]) -> list[PolicyRule]:
    """``CompactRules``: simple resource rules (one group, one resource, no names) that
    differ only in verbs are merged; others are kept."""
    merged: dict[tuple[str, str], list[str]] = {}
    out: list[PolicyRule | tuple[str, str]] = []
    for rule in rules:
        simple = (
            len(rule.api_groups or ()) == 1
            and len(rule.resources or ()) == 1
            and not rule.resource_names
            and not rule.non_resource_urls
        )
        if not simple:
            out.append(rule)
            continue
        key = ((rule.api_groups or ("",))[0], (rule.resources or ("",))[0])
        if key not in merged:
            merged[key] = []
            out.append(key)
        merged[key].extend(rule.verbs or ())
    return [
        PolicyRule(api_groups=(item[0],), resources=(item[1],), verbs=tuple(merged[item]))
        if isinstance(item, tuple)
        else item
        for item in out
    ]
