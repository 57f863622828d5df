"""The RBAC authorizer, its union with the tenant policy, escalation prevention, the
bootstrap policy and the aggregation controller.

Upstream rules: ``plugin/pkg/auth/authorizer/rbac/rbac.go`` and ``pkg/registry/rbac/
validation/rule.go`` (``VisitRulesFor``, ``appliesToUser``: a ServiceAccount subject
without a namespace is the binding's; the describers in an allow's reason), the union
authorizer (first allow wins), ``pkg/registry/rbac/*/policybased`` and
``escalation_check.go`` (``escalate``/``bind`` verbs, ``ConfirmNoEscalation``'s text,
``must have cluster-admin privileges to use the aggregationRule``, GC-only updates),
``bootstrappolicy/policy.go`` with ``ensureRBACPolicy`` (autoupdate), and
``clusterroleaggregation_controller.go``.
"""

from __future__ import annotations

import random

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.api import errors, kinds
from kubeprio.api.meta import LabelSelector, ObjectMeta, OwnerReference
from kubeprio.api.model import evolve
from kubeprio.api.rbac import (
    AUTOUPDATE_ANNOTATION,
    AggregationRule,
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    Role,
    RoleBinding,
    RoleRef,
    Subject,
)
from kubeprio.api.rbacrules import Request, rule_allows
from kubeprio.apiserver import rbacbootstrap
from kubeprio.apiserver.authz import Attributes, TenantAuthorizer, non_resource_attributes
from kubeprio.apiserver.rbac import RbacAuthorizer, RbacIndex, UnionAuthorizer, from_review_rules
from kubeprio.apiserver.rbacescalation import EscalationGuard
from kubeprio.client.informer import Informer
from kubeprio.controllers.clusterroleaggregation import ClusterRoleAggregationController
from tests.driving import Driver
from tests.unit.apiserver.http_helpers import create_tenancy

BOB = UserInfo("bob", ("system:authenticated",))
POD_READER = RoleRef(kind="Role", name="pod-reader")
PODS_READ = PolicyRule(verbs=("get", "list"), api_groups=("",), resources=("pods",))


@pytest.fixture
def union(api):
    create_tenancy(api)
    index = RbacIndex(api.store)
    chain = UnionAuthorizer(TenantAuthorizer(api.listers), RbacAuthorizer(index))
    api.write_guard = EscalationGuard(chain, index)
    return chain


def _role(api, name="pod-reader", namespace="other", rules=(PODS_READ,)):
    api.create_object(Role(metadata=ObjectMeta(name=name, namespace=namespace), rules=rules))


def _bind(api, *subjects, name="b", namespace="other", ref=POD_READER):
    meta = ObjectMeta(name=name, namespace=namespace or None)
    kind = RoleBinding if namespace else ClusterRoleBinding
    return api.create_object(kind(metadata=meta, role_ref=ref, subjects=subjects)).obj


def _allowed(chain, user, verb, resource="pods", namespace="other", **more) -> bool:
    return chain.decide(Attributes(user, verb, more.pop("group", ""), resource, "", namespace,
                                   **more)).allowed  # fmt: skip


@pytest.mark.parametrize(
    ("subject", "user", "allowed"),
    [
        (Subject(kind="User", name="bob"), BOB, True),
        (Subject(kind="User", name="bob"), UserInfo("bobby"), False),
        (Subject(kind="Group", name="devs"), UserInfo("x", ("devs",)), True),
        (Subject(kind="ServiceAccount", name="robot"),
         UserInfo("system:serviceaccount:other:robot"), True),
        (Subject(kind="ServiceAccount", name="robot", namespace="team-b"),
         UserInfo("system:serviceaccount:team-b:robot"), True),
        (Subject(kind="ServiceAccount", name="robot"),
         UserInfo("system:serviceaccount:team-b:robot"), False),
    ],
    ids=["user", "other-user", "group", "sa-binding-namespace", "sa-own-namespace",
         "sa-other-namespace"],
)  # fmt: skip
def test_subjects_match_as_applies_to_user(api, union, subject, user, allowed):
    _role(api)
    _bind(api, subject)
    assert _allowed(union, user, "list") is allowed
    assert not _allowed(union, user, "delete")


def test_a_role_binding_grants_in_its_namespace_only_and_names_itself(api, union):
    _role(api)
    _bind(api, Subject(kind="User", name="bob"))
    decision = union.decide(Attributes(BOB, "get", "", "pods", "", "other", "web"))
    assert decision.allowed
    assert decision.reason == (
        'RBAC: allowed by RoleBinding "b/other" of Role "pod-reader" to User "bob"'
    )
    assert not _allowed(union, BOB, "get", namespace="team-b")
    assert not _allowed(union, BOB, "list", namespace="")


def test_a_cluster_role_binding_grants_everywhere(api, union):
    api.create_object(ClusterRole(metadata=ObjectMeta(name="reader"), rules=(PODS_READ,)))
    _bind(api, Subject(kind="Group", name="devs"), name="readers", namespace="",
          ref=RoleRef(kind="ClusterRole", name="reader"))  # fmt: skip
    dev = UserInfo("dev", ("devs",))
    assert _allowed(union, dev, "list", namespace="other")
    assert _allowed(union, dev, "list", namespace="")
    assert union.decide(Attributes(dev, "list", "", "pods")).reason == (
        'RBAC: allowed by ClusterRoleBinding "readers" of ClusterRole "reader" to Group "devs"'
    )


def test_the_index_follows_writes_and_deletes(api, union):
    _bind(api, Subject(kind="User", name="bob"))
    assert not _allowed(union, BOB, "list")  # the role does not exist yet
    _role(api)
    assert _allowed(union, BOB, "list")
    binding = api.get(RoleBinding, "b", "other")
    api.update_object(evolve(binding, subjects=(Subject(kind="User", name="carol"),)))
    assert not _allowed(union, BOB, "list")
    assert _allowed(union, UserInfo("carol"), "list")
    api.delete(RoleBinding, "b", "other")
    assert not _allowed(union, UserInfo("carol"), "list")


def test_a_refusal_keeps_the_tenant_policys_reason(api, union):
    decision = union.decide(Attributes(BOB, "list", "", "pods", "", "other"))
    assert decision == union.tenant.decide(Attributes(BOB, "list", "", "pods", "", "other"))
    assert not decision.allowed


@pytest.mark.parametrize(
    "user",
    [UserInfo("alice"), BOB, UserInfo("system:serviceaccount:other:robot")],
    ids=["tenant-member", "bound-user", "bound-account"],
)
@pytest.mark.parametrize("namespace", ["team-a", "other"])
def test_the_union_rules_list_exactly_what_decide_allows(api, union, user, namespace):
    """``rules_for`` and ``decide`` agree both ways: a served (sub)resource and verb is
    allowed exactly when a listed rule matches it."""
    _role(api, rules=(PODS_READ, PolicyRule(verbs=("*",), api_groups=("apps",),
                                              resources=("*/scale",))))  # fmt: skip
    _bind(api, Subject(kind="User", name="bob"), Subject(kind="ServiceAccount", name="robot"))
    rules = from_review_rules(union.rules_for(user, namespace))
    for info in kinds.SERVED:
        scope = namespace if info.namespaced else ""
        for sub, verbs in info.verbs_by_subresource.items():
            for verb in verbs:
                attrs = Attributes(user, verb, info.group, info.plural, sub, scope)
                request = Request(verb, info.group, info.plural, sub)
                listed = any(rule_allows(request, rule) for rule in rules)
                assert union.decide(attrs).allowed is listed, attrs


# --- escalation -------------------------------------------------------------------------


ESCALATION = (
    'roles.rbac.authorization.k8s.io "more" is forbidden: user "bob" '
    '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently '
    "held:\n"
)


def test_a_role_granting_more_than_held_is_refused(api, union):
    _role(api)
    _bind(api, Subject(kind="User", name="bob"))
    api.create_object(Role(metadata=ObjectMeta(name="writer", namespace="other"), rules=(
        PolicyRule(verbs=("create",), api_groups=("rbac.authorization.k8s.io",),
                   resources=("roles", "rolebindings")),)))  # fmt: skip
    _bind(api, Subject(kind="User", name="bob"), name="w", ref=RoleRef(kind="Role", name="writer"))
    more = Role(metadata=ObjectMeta(name="more", namespace="other"), rules=(
        PolicyRule(verbs=("get", "delete", "patch"), api_groups=("",), resources=("pods", "secrets")),
    ))  # fmt: skip
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(more, user=BOB)
    assert caught.value.message == ESCALATION + (
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "patch"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete" "patch"]}'
    )
    # What bob holds he may grant; an admin may grant anything; so may the system.
    api.create_object(evolve(more, rules=(PODS_READ,)), user=BOB)
    api.create_object(evolve(more, metadata=ObjectMeta(name="m2", namespace="other")),
                      user=UserInfo("root", ("system:masters",)))  # fmt: skip
    api.create_object(evolve(more, metadata=ObjectMeta(name="m3", namespace="other")))


def test_the_escalate_verb_lets_a_role_grant_anything(api, union):
    api.create_object(ClusterRole(metadata=ObjectMeta(name="escalator"), rules=(
        PolicyRule(verbs=("escalate", "create"), api_groups=("rbac.authorization.k8s.io",),
                   resources=("roles",)),)))  # fmt: skip
    _bind(api, Subject(kind="User", name="bob"), ref=RoleRef(kind="ClusterRole", name="escalator"))
    big = Role(metadata=ObjectMeta(name="big", namespace="other"),
               rules=(PolicyRule(verbs=("*",), api_groups=("*",), resources=("*",)),))  # fmt: skip
    api.create_object(big, user=BOB)


def test_binding_needs_bind_or_every_rule_of_the_role(api, union):
    api.create_object(ClusterRole(metadata=ObjectMeta(name="secret-reader"), rules=(
        PolicyRule(verbs=("get",), api_groups=("",), resources=("secrets",)),)))  # fmt: skip
    binding = RoleBinding(metadata=ObjectMeta(name="sr", namespace="other"),
                          role_ref=RoleRef(kind="ClusterRole", name="secret-reader"),
                          subjects=(Subject(kind="User", name="eve"),))  # fmt: skip
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(binding, user=BOB)
    assert caught.value.message == (
        'rolebindings.rbac.authorization.k8s.io "sr" is forbidden: user "bob" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
        'currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}'
    )
    missing = evolve(binding, role_ref=RoleRef(kind="Role", name="nope"))
    with pytest.raises(
        errors.NotFoundError, match=r'roles\.rbac\.authorization\.k8s\.io "nope" not found'
    ):
        api.create_object(missing, user=BOB)
    api.create_object(ClusterRole(metadata=ObjectMeta(name="binder"), rules=(
        PolicyRule(verbs=("bind",), api_groups=("rbac.authorization.k8s.io",),
                   resources=("clusterroles",), resource_names=("secret-reader",)),)))  # fmt: skip
    _bind(api, Subject(kind="User", name="bob"), name="binder",
          ref=RoleRef(kind="ClusterRole", name="binder"))  # fmt: skip
    api.create_object(binding, user=BOB)


def test_a_tenant_member_grants_what_the_tenant_policy_gives_it(api, union):
    alice = UserInfo("alice", ("system:authenticated",))
    api.create_object(Role(metadata=ObjectMeta(name="r", namespace="team-a"), rules=(PODS_READ,)),
                      user=alice)  # fmt: skip
    with pytest.raises(errors.ForbiddenError):
        api.create_object(Role(metadata=ObjectMeta(name="s", namespace="team-a"), rules=(
            PolicyRule(verbs=("create",), api_groups=("",), resources=("pods/binding",)),)),
            user=alice)  # fmt: skip


def test_an_aggregation_rule_needs_cluster_admin(api, union):
    api.create_object(ClusterRole(metadata=ObjectMeta(name="cr-writer"), rules=(
        PolicyRule(verbs=("create", "update"), api_groups=("rbac.authorization.k8s.io",),
                   resources=("clusterroles",)),)))  # fmt: skip
    _bind(api, Subject(kind="User", name="bob"), name="w", namespace="",
          ref=RoleRef(kind="ClusterRole", name="cr-writer"))  # fmt: skip
    aggregated = ClusterRole(metadata=ObjectMeta(name="agg"), aggregation_rule=AggregationRule(
        cluster_role_selectors=(LabelSelector(match_labels={"a": "b"}),)))  # fmt: skip
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create_object(aggregated, user=BOB)
    assert caught.value.message == (
        'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin '
        "privileges to use the aggregationRule"
    )


def test_an_update_of_only_gc_fields_passes(api, union):
    api.create_object(ClusterRole(metadata=ObjectMeta(name="big"), rules=(
        PolicyRule(verbs=("*",), api_groups=("*",), resources=("*",)),)))  # fmt: skip
    current = api.get(ClusterRole, "big")
    owner = OwnerReference(api_version="v1", kind="Namespace", name="x", uid="u")
    changed = evolve(current, metadata=evolve(current.metadata, owner_references=(owner,),
                                              finalizers=("f",)))  # fmt: skip
    union.rbac.index.sync()
    api.write_guard.check(changed, current, BOB)
    with pytest.raises(errors.ForbiddenError):
        api.write_guard.check(evolve(changed, metadata=evolve(changed.metadata, labels={"a": "b"})),
                              current, BOB)  # fmt: skip


# --- bootstrap and aggregation ------------------------------------------------------------


def test_bootstrap_creates_then_reconciles_without_removing(api):
    rbacbootstrap.ensure(api)
    names = {r.metadata.name for r in api.list(ClusterRole).items}
    assert {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
            "system:public-info-viewer", "system:monitoring"} <= names  # fmt: skip
    basic = api.get(ClusterRole, "system:basic-user")
    extra = PolicyRule(verbs=("get",), api_groups=("",), resources=("nodes",))
    api.update_object(evolve(basic, rules=(extra,)))
    public = api.get(ClusterRole, "system:public-info-viewer")
    frozen = evolve(public, rules=(), metadata=evolve(
        public.metadata, annotations={AUTOUPDATE_ANNOTATION: "false"}))  # fmt: skip
    api.update_object(frozen)
    rbacbootstrap.ensure(api)
    reconciled = api.get(ClusterRole, "system:basic-user")
    assert reconciled.rules[0] == extra
    assert list(reconciled.rules[1:]) == list(basic.rules or ())
    assert api.get(ClusterRole, "system:public-info-viewer").rules == ()
    masters = api.get(ClusterRoleBinding, "cluster-admin")
    assert [(s.kind, s.name) for s in masters.subjects] == [("Group", "system:masters")]
    version = api.get(ClusterRole, "cluster-admin").metadata.resource_version
    rbacbootstrap.ensure(api)
    assert api.get(ClusterRole, "cluster-admin").metadata.resource_version == version


@pytest.mark.parametrize(
    "path",
    ["/.well-known/openid-configuration", "/.well-known/openid-configuration/",
     "/openid/v1/jwks", "/openid/v1/jwks/"],
)  # fmt: skip
def test_issuer_discovery_is_for_service_accounts(api, union, path):
    """``system:service-account-issuer-discovery`` (get on the four paths) bound to the
    group ``system:serviceaccounts``, as upstream's bootstrap policy binds it."""
    rbacbootstrap.ensure(api)
    union.rbac.index.sync()
    binding = api.get(ClusterRoleBinding, "system:service-account-issuer-discovery")
    assert [(s.kind, s.name) for s in binding.subjects] == [("Group", "system:serviceaccounts")]
    robot = UserInfo("system:serviceaccount:other:robot",
                     ("system:serviceaccounts", "system:serviceaccounts:other",
                      "system:authenticated"))  # fmt: skip
    assert union.authorize(non_resource_attributes(robot, "GET", path))
    assert not union.authorize(non_resource_attributes(robot, "POST", path))
    assert not union.authorize(non_resource_attributes(BOB, "GET", path))


def test_the_aggregation_controller_gathers_the_pieces(api, clock):
    rbacbootstrap.ensure(api)
    roles: Informer[ClusterRole] = Informer(api, ClusterRole)
    controller = ClusterRoleAggregationController(
        api, clock=clock, rng=random.Random(0), cluster_roles=roles
    )
    driver = Driver(clock, [roles], [controller])
    driver.settle()
    view = api.get(ClusterRole, "view").rules
    edit = api.get(ClusterRole, "edit").rules
    admin = api.get(ClusterRole, "admin").rules
    assert view == rbacbootstrap.VIEW_RULES
    # By name: edit's own piece (system:aggregate-to-edit) after view's rules ("view").
    assert edit == rbacbootstrap.EDIT_RULES + rbacbootstrap.VIEW_RULES
    assert admin == rbacbootstrap.EDIT_RULES + rbacbootstrap.VIEW_RULES + rbacbootstrap.ADMIN_RULES
    piece = PolicyRule(verbs=("get",), api_groups=("example.com",), resources=("widgets",))
    api.create_object(ClusterRole(metadata=ObjectMeta(
        name="widgets-view", labels={"rbac.authorization.k8s.io/aggregate-to-view": "true"}),
        rules=(piece,)))  # fmt: skip
    driver.settle()
    assert piece in api.get(ClusterRole, "view").rules
    assert piece in api.get(ClusterRole, "admin").rules
    api.delete(ClusterRole, "widgets-view")
    driver.settle()
    assert piece not in api.get(ClusterRole, "admin").rules


def _discovery_listings(union, user) -> int:
    rules = union.rules_for(user, "other").non_resource_rules
    return sum(1 for rule in rules if "/api" in (rule.non_resource_urls or ()))


def test_the_tenant_discovery_rule_is_not_listed_twice_beside_system_discovery(api, union):
    """Upstream lists ``/api`` once for an authenticated user: from the
    ``system:discovery`` binding (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``);
    kubeprio's own discovery rule is left out of the union's rules when RBAC covers it."""
    assert _discovery_listings(union, BOB) == 1  # the tenant policy's, without bindings
    rbacbootstrap.ensure(api)
    assert _discovery_listings(union, BOB) == 1  # system:discovery's, only
    rules = union.rules_for(BOB, "other").non_resource_rules
    healthz = sum(1 for rule in rules if "/healthz" in (rule.non_resource_urls or ()))
    assert healthz == 2  # system:discovery and system:public-info-viewer, as upstream
