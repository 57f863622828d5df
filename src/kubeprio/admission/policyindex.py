"""Which ValidatingAdmissionPolicies could match a request: an index by operation, group
and resource.

What it is: a pre-filter for ``admission.validatingpolicy``. A policy's
``matchConstraints.resourceRules`` name operations, API groups and ``resource[/sub]``
entries (each may be ``*``); the index maps every (operation, group, resource) a rule
names to the policies that name it, so a request its rules do not name (a pod's DELETE
when the policies are about ConfigMaps, say) is answered with a few dictionary lookups
before any binding, namespace or selector is read. What the index lets through is still
matched in full (``admission.policymatching``): it never decides a match, it only rules
out the requests no rule names. A policy without resource rules is a candidate for
every request (rule matching then decides, as without the index).

It is rebuilt when the policies change (their names and resourceVersions, as the
webhook index). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy
from kubeprio.api.versionsignature import VersionSignature, version_signature

WILDCARD: Final = "*"


def _keys(policy: ValidatingAdmissionPolicy) -> set[tuple[str, str, str]] | None:
    """The (operation, group, resource) keys the policy's rules name; ``None`` for any."""
    spec = policy.spec
    match = spec.match_constraints if spec is not None else None
    rules = match.resource_rules if match is not None else None
    if not rules:
        return None
    keys: set[tuple[str, str, str]] = set()
    for rule in rules:
        for operation in rule.operations or ():
            for group in rule.api_groups or ():
                for entry in rule.resources or ():
                    keys.add((operation, group, entry.partition("/")[0]))
    return keys


class PolicyIndex:
    """The names of the policies whose rules could match an (operation, group, resource)."""

    def __init__(self, policies: Sequence[ValidatingAdmissionPolicy]) -> None:
        self._any: set[str] = set()
        self._by_key: dict[tuple[str, str, str], set[str]] = {}
        for policy in policies:
            name = policy.metadata.name or ""
            keys = _keys(policy)
            if keys is None:
                self._any.add(name)
                continue
            for key in keys:
                self._by_key.setdefault(key, set()).add(name)
        self._cache: dict[tuple[str, str, str], frozenset[str]] = {}

    def candidates(self, operation: str, group: str, resource: str) -> frozenset[str]:
        """The policies that may match; the empty set rules the request out."""
        key = (operation, group, resource)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        found = set(self._any)
        for wanted_operation in (operation, WILDCARD):
            for wanted_group in (group, WILDCARD):
                for wanted_resource in (resource, WILDCARD):
                    found |= self._by_key.get(
                        (wanted_operation, wanted_group, wanted_resource), set()
                    )
        result = frozenset(found)
        self._cache[key] = result
        return result


class PolicyIndexSource:
    """The index of the current policies, rebuilt only when they change."""

    def __init__(self) -> None:
        self._signature: VersionSignature | None = None
        self._index = PolicyIndex(())

    def index(self, policies: Sequence[ValidatingAdmissionPolicy]) -> PolicyIndex:
        """The index of ``policies`` (the cached one when they did not change)."""
        signature = version_signature(policies)
        if signature != self._signature:
            self._index = PolicyIndex(policies)
            self._signature = signature
        return self._index
