"""The RBAC authorizer: grants from Roles, ClusterRoles and their bindings.

What it is: upstream's ``plugin/pkg/auth/authorizer/rbac/rbac.go`` over the rule resolver
of ``pkg/registry/rbac/validation/rule.go`` (``VisitRulesFor``: the ClusterRoleBindings
that name the user, then the RoleBindings of the request's namespace; a binding's
``roleRef`` resolved to the rules of its Role or ClusterRole; a rule allows as
``api.rbacrules.rule_allows``), and the union with kubeprio's tenant policy
(``UnionAuthorizer``, upstream's ``authorizerfactory`` union: the first allow wins, a
refusal only when every authorizer has no opinion).

An allow's reason names the binding (``RBAC: allowed by RoleBinding "read/ns" of Role
"pod-reader" to User "bob"``, upstream's describers); RBAC gives no reason for "no", so a
refusal keeps the tenant policy's reason. ``rules_for`` lists the bound rules, converted
to the ``SelfSubjectRulesReview`` form, after the tenant policy's.

Performance: ``RbacIndex`` keeps the four kinds in memory, bindings indexed by subject
(user name, group name, service account ``namespace/name``), so a decision looks up the
caller's own bindings only, never scans them all. It follows the store through watches
it polls before each read (``sync``): a binding written a moment ago is seen by the next
request, as a single-process server can offer. With no bindings for the caller's names
(the common case of an in-process or admin request never reaches here) a decision costs a
few dictionary lookups.

Who drives it: ``serve.server`` builds it over the store; ``apiserver.http`` asks the
union for every request. No writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, Final

from kubeprio.admission.chain import UserInfo, is_admin
from kubeprio.api.rbac import (
    GROUP_KIND,
    SERVICE_ACCOUNT_KIND,
    USER_KIND,
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    Role,
    RoleBinding,
    RoleRef,
    Subject,
    role_ref_of,
)
from kubeprio.api.rbacrules import Request, rule_allows
from kubeprio.api.reviews import NonResourceRule, ResourceRule, SubjectRulesReviewStatus
from kubeprio.apiserver.authz import (
    ADMIN_RULES,
    WILDCARD,
    Attributes,
    Decision,
    ReviewingAuthorizer,
    path_matches,
)
from kubeprio.apiserver.tokenclaims import SERVICE_ACCOUNT_USERNAME_PREFIX
from kubeprio.store.interface import EventType, KeyPrefix, Store, StoreWatch

RESOURCES: Final = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")
SubjectKey = tuple[str, str]
"""``("User", name)``, ``("Group", name)`` or ``("ServiceAccount", "ns/name")``."""
BindingKey = tuple[str, str, str]
"""``(resource, namespace, name)`` of a binding."""


def subject_key(subject: Subject, binding_namespace: str) -> SubjectKey | None:
    """The index key of a binding subject (``appliesToUser``'s view of it): a service
    account without a namespace is in the binding's namespace; other kinds match nothing."""
    name = subject.name or ""
    if subject.kind == USER_KIND:
        return (USER_KIND, name)
    if subject.kind == GROUP_KIND:
        return (GROUP_KIND, name)
    if subject.kind == SERVICE_ACCOUNT_KIND:
        namespace = subject.namespace or binding_namespace
        return (SERVICE_ACCOUNT_KIND, f"{namespace}/{name}") if namespace else None
    return None


def user_keys(user: UserInfo) -> list[SubjectKey]:
    """The subject keys ``user`` answers to: its name, its groups and, for a service
    account's user name (``system:serviceaccount:<ns>:<name>``), the account."""
    keys: list[SubjectKey] = [(USER_KIND, user.name)]
    keys.extend((GROUP_KIND, group) for group in user.groups)
    if user.name.startswith(SERVICE_ACCOUNT_USERNAME_PREFIX):
        namespace, sep, name = user.name[len(SERVICE_ACCOUNT_USERNAME_PREFIX) :].partition(":")
        if sep and namespace and name and ":" not in name:
            keys.append((SERVICE_ACCOUNT_KIND, f"{namespace}/{name}"))
    return keys


def _describe_subject(subject: Subject, binding_namespace: str) -> str:
    """``describeSubject``."""
    if subject.kind == SERVICE_ACCOUNT_KIND:
        namespace = subject.namespace or binding_namespace
        return f'{subject.kind} "{subject.name}/{namespace}"'
    return f'{subject.kind} "{subject.name}"'


@dataclasses.dataclass(frozen=True, slots=True)
class Grant:
    """One binding that applies to the caller, the subject it matched, and its rules."""

    binding: RoleBinding | ClusterRoleBinding
    subject: Subject
    rules: tuple[PolicyRule, ...]

    def describe(self) -> str:
        """``clusterRoleBindingDescriber``/``roleBindingDescriber``."""
        ref = role_ref_of(self.binding)
        meta = self.binding.metadata
        if isinstance(self.binding, ClusterRoleBinding):
            return (
                f'ClusterRoleBinding "{meta.name}" of {ref.kind} "{ref.name}" to '
                f"{_describe_subject(self.subject, '')}"
            )
        namespace = meta.namespace or ""
        return (
            f'RoleBinding "{meta.name}/{namespace}" of {ref.kind} "{ref.name}" to '
            f"{_describe_subject(self.subject, namespace)}"
        )


class RbacIndex:
    """The RBAC objects of a store, bindings indexed by subject, kept current by watches."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.roles: dict[tuple[str, str], Role] = {}
        self.cluster_roles: dict[str, ClusterRole] = {}
        self._bindings: dict[BindingKey, Any] = {}
        self._by_subject: dict[SubjectKey, set[BindingKey]] = {}
        self._watches: list[StoreWatch] = []
        self._relist()

    def _relist(self) -> None:
        for watch in self._watches:
            watch.close()
        self.roles.clear()
        self.cluster_roles.clear()
        self._bindings.clear()
        self._by_subject.clear()
        revision = 0
        for resource in RESOURCES:
            items, revision = self._store.list(KeyPrefix(resource, None))
            for item in items:
                self._put(resource, item)
        self._watches = [self._store.watch(KeyPrefix(r, None), revision) for r in RESOURCES]

    def sync(self) -> None:
        """Apply the changes written since the last call (cheap when there are none)."""
        for position, watch in enumerate(self._watches):
            if watch.closed:
                # The store ended the watch: start over from a fresh list.
                self._relist()
                return
            for event in watch.poll():
                resource = RESOURCES[position]
                if event.type == EventType.DELETED:
                    self._drop(resource, event.object)
                else:
                    self._put(resource, event.object)

    def _put(self, resource: str, obj: Any) -> None:
        namespace = obj.metadata.namespace or ""
        name = obj.metadata.name or ""
        if resource == "roles":
            self.roles[(namespace, name)] = obj
        elif resource == "clusterroles":
            self.cluster_roles[name] = obj
        else:
            key = (resource, namespace, name)
            self._unindex(key)
            self._bindings[key] = obj
            for subject in obj.subjects or ():
                skey = subject_key(subject, namespace)
                if skey is not None:
                    self._by_subject.setdefault(skey, set()).add(key)

    def _drop(self, resource: str, obj: Any) -> None:
        namespace = obj.metadata.namespace or ""
        name = obj.metadata.name or ""
        if resource == "roles":
            self.roles.pop((namespace, name), None)
        elif resource == "clusterroles":
            self.cluster_roles.pop(name, None)
        else:
            self._unindex((resource, namespace, name))

    def _unindex(self, key: BindingKey) -> None:
        old = self._bindings.pop(key, None)
        if old is None:
            return
        for subject in old.subjects or ():
            skey = subject_key(subject, key[1])
            if skey is not None:
                keys = self._by_subject.get(skey)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._by_subject[skey]

    def role_ref_rules(self, ref: RoleRef, namespace: str) -> tuple[PolicyRule, ...] | None:
        """``GetRoleReferenceRules``: the rules of the referenced role, None if missing."""
        if ref.kind == "Role":
            role = self.roles.get((namespace, ref.name or ""))
            return None if role is None else role.rules or ()
        if ref.kind == "ClusterRole":
            cluster_role = self.cluster_roles.get(ref.name or "")
            return None if cluster_role is None else cluster_role.rules or ()
        return None

    def grants(self, user: UserInfo, namespace: str) -> Iterator[Grant]:
        """``VisitRulesFor``: the cluster bindings naming ``user``, then the bindings of
        ``namespace`` naming it, each with the first subject that matched."""
        self.sync()
        keys = user_keys(user)
        found: dict[BindingKey, SubjectKey] = {}
        for skey in keys:
            for bkey in self._by_subject.get(skey, ()):
                if bkey[0] == "clusterrolebindings" or (namespace and bkey[1] == namespace):
                    found.setdefault(bkey, skey)
        # Cluster bindings first, then by name, as upstream's listers return them.
        for bkey in sorted(found, key=lambda k: (k[0] != "clusterrolebindings", k[1], k[2])):
            binding = self._bindings[bkey]
            rules = self.role_ref_rules(role_ref_of(binding), bkey[1])
            if rules is None:
                continue
            subject = next(
                s for s in binding.subjects or () if subject_key(s, bkey[1]) in set(keys)
            )
            yield Grant(binding, subject, rules)

    def rules_for(self, user: UserInfo, namespace: str) -> list[PolicyRule]:
        """``RulesFor``: every rule bound to ``user`` in ``namespace`` (and cluster-wide)."""
        return [rule for grant in self.grants(user, namespace) for rule in grant.rules]


def _request(attrs: Attributes) -> Request:
    return Request(
        verb=attrs.verb,
        group=attrs.group,
        resource=attrs.resource,
        subresource=attrs.subresource,
        name=attrs.name,
        resource_request=attrs.resource_request,
        path=attrs.path,
    )


class RbacAuthorizer:
    """``RBACAuthorizer``: allows what a bound rule allows; no opinion otherwise."""

    def __init__(self, index: RbacIndex) -> None:
        self.index = index

    def authorize(self, attrs: Attributes) -> bool:
        """True when a bound rule allows ``attrs``."""
        return self.decide(attrs).allowed

    def decide(self, attrs: Attributes) -> Decision:
        """The first binding whose rules allow ``attrs`` (upstream's visitor stops there)."""
        request = _request(attrs)
        for grant in self.index.grants(attrs.user, attrs.namespace):
            if any(rule_allows(request, rule) for rule in grant.rules):
                return Decision(True, f"RBAC: allowed by {grant.describe()}")
        return Decision(False)

    def rules_for(self, user: UserInfo, namespace: str) -> SubjectRulesReviewStatus:
        """The bound rules in the review's form (``ConvertToResourceRules``)."""
        return to_review_rules(self.index.rules_for(user, namespace))


def to_review_rules(rules: list[PolicyRule]) -> SubjectRulesReviewStatus:
    """Policy rules as ``ResourceRule``s and ``NonResourceRule``s."""
    resource_rules: list[ResourceRule] = []
    non_resource_rules: list[NonResourceRule] = []
    for rule in rules:
        if rule.resources:
            resource_rules.append(
                ResourceRule(
                    verbs=tuple(rule.verbs or ()),
                    api_groups=rule.api_groups,
                    resources=rule.resources,
                    resource_names=rule.resource_names,
                )
            )
        if rule.non_resource_urls:
            non_resource_rules.append(
                NonResourceRule(
                    verbs=tuple(rule.verbs or ()), non_resource_urls=rule.non_resource_urls
                )
            )
    return SubjectRulesReviewStatus(
        resource_rules=tuple(resource_rules), non_resource_rules=tuple(non_resource_rules)
    )


def from_review_rules(status: SubjectRulesReviewStatus) -> list[PolicyRule]:
    """The review's rules back as policy rules (what the escalation check compares)."""
    rules = [
        PolicyRule(
            verbs=r.verbs,
            api_groups=r.api_groups,
            resources=r.resources,
            resource_names=r.resource_names,
        )
        for r in status.resource_rules
    ]
    rules.extend(
        PolicyRule(verbs=r.verbs, non_resource_urls=r.non_resource_urls)
        for r in status.non_resource_rules
    )
    return rules


class UnionAuthorizer:
    """The tenant policy (with its admin short-cut), then RBAC: the first allow wins."""

    def __init__(self, tenant: ReviewingAuthorizer, rbac: RbacAuthorizer) -> None:
        self.tenant = tenant
        self.rbac = rbac

    def authorize(self, attrs: Attributes) -> bool:
        """True when either allows."""
        return self.decide(attrs).allowed

    def decide(self, attrs: Attributes) -> Decision:
        """The tenant policy's answer if "yes", else RBAC's "yes", else the tenant's "no"
        (RBAC's "no" has no reason to add)."""
        first = self.tenant.decide(attrs)
        if first.allowed:
            return first
        second = self.rbac.decide(attrs)
        return second if second.allowed else first

    def rules_for(self, user: UserInfo, namespace: str) -> SubjectRulesReviewStatus:
        """The tenant policy's rules followed by the bound ones."""
        if is_admin(user):
            return ADMIN_RULES
        first = self.tenant.rules_for(user, namespace)
        second = self.rbac.rules_for(user, namespace)
        # The tenant policy's discovery rule repeats what the bootstrap ``system:discovery``
        # binding lists: left out when RBAC already covers it, so that ``kubectl auth
        # can-i --list`` shows each path as often as on upstream (once per bound role).
        own = tuple(
            rule
            for rule in first.non_resource_rules
            if not _covered(rule, second.non_resource_rules)
        )
        return SubjectRulesReviewStatus(
            resource_rules=first.resource_rules + second.resource_rules,
            non_resource_rules=own + second.non_resource_rules,
        )


def _covered(rule: NonResourceRule, others: tuple[NonResourceRule, ...]) -> bool:
    """Whether every verb on every path of ``rule`` is listed by one of ``others``."""
    return all(
        any(
            (verb in other.verbs or WILDCARD in other.verbs)
            and any(
                pattern == url or path_matches(pattern, url)
                for pattern in other.non_resource_urls or ()
            )
            for other in others
        )
        for verb in rule.verbs
        for url in rule.non_resource_urls or ()
    )
