"""RBAC models: defaulting, validation texts, rule matching, coverage.

Upstream rules: ``pkg/apis/rbac/v1/defaults.go`` (``SetDefaults_Subject``,
``SetDefaults_RoleBinding``), ``pkg/apis/rbac/validation/validation.go`` (texts and
paths word for word; cases after ``validation_test.go``), ``pkg/apis/rbac/v1/
evaluation_helpers.go`` with the cases of ``plugin/pkg/auth/authorizer/rbac/rbac_test.go``
(``TestRuleMatches``) and ``evaluation_helpers_test.go``, and
``component-helpers/auth/rbac/validation/policy_comparator.go`` (``Covers``).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api import kinds, validation
from kubeprio.api.defaults import default_object
from kubeprio.api.errors import invalid_error
from kubeprio.api.meta import LabelSelector, LabelSelectorRequirement, ObjectMeta
from kubeprio.api.rbac import (
    GROUP,
    AggregationRule,
    ClusterRole,
    ClusterRoleBinding,
    PolicyRule,
    Role,
    RoleBinding,
    RoleRef,
    Subject,
)
from kubeprio.api.rbacrules import (
    Request,
    compact_rules,
    compact_string,
    covers,
    rule_allows,
)


def _message(obj) -> str:
    info = kinds.for_object(obj)
    found = validation.validate_create(default_object(obj), info)
    return str(invalid_error(info.kind, info.group, obj.metadata.name or "", found).message)


def _binding(**changes) -> RoleBinding:
    fields = {
        "metadata": ObjectMeta(name="b", namespace="ns"),
        "role_ref": RoleRef(kind="Role", name="r"),
        "subjects": (Subject(kind="User", name="bob"),),
    }
    return RoleBinding(**{**fields, **changes})


def test_defaults_fill_the_rbac_group_for_users_groups_and_role_refs():
    binding = default_object(
        _binding(subjects=(Subject(kind="User", name="u"), Subject(kind="Group", name="g"),
                           Subject(kind="ServiceAccount", name="s")))
    )  # fmt: skip
    assert binding.role_ref.api_group == GROUP
    assert [s.api_group for s in binding.subjects] == [GROUP, GROUP, None]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (Role(metadata=ObjectMeta(name="r", namespace="ns"), rules=(PolicyRule(),)),
         'Role.rbac.authorization.k8s.io "r" is invalid: [rules[0].verbs: Required value: '
         "verbs must contain at least one value, rules[0].apiGroups: Required value: resource "
         "rules must supply at least one api group, rules[0].resources: Required value: "
         "resource rules must supply at least one resource]"),
        (Role(metadata=ObjectMeta(name="r", namespace="ns"),
              rules=(PolicyRule(verbs=("get",), non_resource_urls=("/x",)),)),
         'Role.rbac.authorization.k8s.io "r" is invalid: rules[0].nonResourceURLs: Invalid '
         'value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs'),
        (ClusterRole(metadata=ObjectMeta(name="c"),
                     rules=(PolicyRule(verbs=("get",), api_groups=("",),
                                       non_resource_urls=("/x",)),)),
         'ClusterRole.rbac.authorization.k8s.io "c" is invalid: rules[0].nonResourceURLs: '
         'Invalid value: []string{"/x"}: rules cannot apply to both regular resources and '
         "non-resource URLs"),
        (ClusterRole(metadata=ObjectMeta(name="c"), aggregation_rule=AggregationRule()),
         'ClusterRole.rbac.authorization.k8s.io "c" is invalid: '
         "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector "
         "required if aggregationRule is non-nil"),
        (ClusterRole(metadata=ObjectMeta(name="c"), aggregation_rule=AggregationRule(
            cluster_role_selectors=(LabelSelector(match_expressions=(
                LabelSelectorRequirement(key="a", operator="Bad"),)),))),
         'ClusterRole.rbac.authorization.k8s.io "c" is invalid: [aggregationRule.'
         'clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "Bad": not a '
         "valid selector operator, aggregationRule.clusterRoleSelectors[0]: Invalid value: "
         "null: invalid label selector.]"),
        (ClusterRole(metadata=ObjectMeta(name="a/b")),
         'ClusterRole.rbac.authorization.k8s.io "a/b" is invalid: metadata.name: Invalid value: '
         "\"a/b\": may not contain '/'"),
        (_binding(role_ref=RoleRef(api_group="x", kind="Pod", name="..")),
         'RoleBinding.rbac.authorization.k8s.io "b" is invalid: [roleRef.apiGroup: Unsupported '
         'value: "x": supported values: "rbac.authorization.k8s.io", roleRef.kind: Unsupported '
         'value: "Pod": supported values: "Role", "ClusterRole", roleRef.name: Invalid value: '
         "\"..\": may not be '..']"),
        (_binding(subjects=(Subject(kind="ServiceAccount", api_group="x", name="Bad_Name"),
                            Subject(kind="Robot", name="r"), Subject(kind="User"))),
         'RoleBinding.rbac.authorization.k8s.io "b" is invalid: [subjects[0].name: Invalid '
         'value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
         "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
         "character (e.g. 'example.com', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), "
         'subjects[0].apiGroup: Unsupported value: "x": supported values: "", subjects[1].kind: '
         'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group", '
         "subjects[2].name: Required value]"),
        (ClusterRoleBinding(metadata=ObjectMeta(name="c"),
                            role_ref=RoleRef(kind="Role", name="r"),
                            subjects=(Subject(kind="ServiceAccount", name="s"),)),
         'ClusterRoleBinding.rbac.authorization.k8s.io "c" is invalid: [roleRef.kind: '
         'Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: '
         "Required value]"),
    ],
    ids=["empty-rule", "namespaced-urls", "urls-and-resources", "no-selectors", "bad-selector",
         "path-segment-name", "role-ref", "subjects", "cluster-binding"],
)  # fmt: skip
def test_validation_texts(obj, message):
    assert _message(obj) == message


def test_a_binding_role_ref_cannot_change():
    old = default_object(_binding())
    new = default_object(_binding(role_ref=RoleRef(kind="ClusterRole", name="view")))
    found = validation.validate_update(new, old, kinds.for_model(RoleBinding))
    assert [str(e) for e in found] == [
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", '
        'Kind:"ClusterRole", Name:"view"}: cannot change roleRef'
    ]
    changed_subjects = default_object(_binding(subjects=(Subject(kind="Group", name="g"),)))
    assert validation.validate_update(changed_subjects, old, kinds.for_model(RoleBinding)) == []


def _rule(**fields) -> PolicyRule:
    return PolicyRule(**{key: tuple(value) for key, value in fields.items()})


@pytest.mark.parametrize(
    ("rule", "request_", "allowed"),
    [
        # rbac_test.go TestRuleMatches
        (_rule(verbs=["get"], api_groups=[""], resources=["pods"]), Request("get", "", "pods"), True),
        (_rule(verbs=["get"], api_groups=[""], resources=["pods"]), Request("list", "", "pods"), False),
        (_rule(verbs=["*"], api_groups=["*"], resources=["*"]), Request("delete", "apps", "deployments"), True),
        (_rule(verbs=["get"], api_groups=["apps"], resources=["pods"]), Request("get", "", "pods"), False),
        (_rule(verbs=["get"], api_groups=[""], resources=["pods"]),
         Request("get", "", "pods", "log"), False),
        (_rule(verbs=["get"], api_groups=[""], resources=["pods/log"]),
         Request("get", "", "pods", "log"), True),
        (_rule(verbs=["get"], api_groups=[""], resources=["*/log"]),
         Request("get", "", "pods", "log"), True),
        (_rule(verbs=["get"], api_groups=[""], resources=["*/log"]), Request("get", "", "pods"), False),
        (_rule(verbs=["get"], api_groups=[""], resources=["pods"], resource_names=["a"]),
         Request("get", "", "pods", name="a"), True),
        (_rule(verbs=["get"], api_groups=[""], resources=["pods"], resource_names=["a"]),
         Request("get", "", "pods", name="b"), False),
        # A named rule never matches a list (no name on the request).
        (_rule(verbs=["list"], api_groups=[""], resources=["pods"], resource_names=["a"]),
         Request("list", "", "pods"), False),
        # evaluation_helpers_test.go: non-resource URLs, exact, * and prefix*
        (_rule(verbs=["get"], non_resource_urls=["/metrics"]),
         Request("get", resource_request=False, path="/metrics"), True),
        (_rule(verbs=["get"], non_resource_urls=["/api/*"]),
         Request("get", resource_request=False, path="/api/v1"), True),
        (_rule(verbs=["get"], non_resource_urls=["/api/*"]),
         Request("get", resource_request=False, path="/apis"), False),
        (_rule(verbs=["get"], non_resource_urls=["*"]),
         Request("get", resource_request=False, path="/anything"), True),
        (_rule(verbs=["get"], non_resource_urls=["/metrics"]),
         Request("post", resource_request=False, path="/metrics"), False),
        # A resource rule never matches a non-resource request.
        (_rule(verbs=["*"], api_groups=["*"], resources=["*"]),
         Request("get", resource_request=False, path="/metrics"), False),
    ],
    ids=["exact", "other-verb", "all", "other-group", "subresource-needs-own-rule",
         "subresource", "star-subresource", "star-subresource-not-main", "name", "other-name",
         "named-list", "url", "url-prefix", "url-prefix-miss", "url-star", "url-verb",
         "resource-rule-no-url"],
)  # fmt: skip
def test_rule_allows(rule, request_, allowed):
    assert rule_allows(request_, rule) is allowed


@pytest.mark.parametrize(
    ("owner", "requested", "missing"),
    [
        ([_rule(verbs=["*"], api_groups=["*"], resources=["*"])],
         [_rule(verbs=["get", "delete"], api_groups=[""], resources=["pods"])], []),
        ([_rule(verbs=["get"], api_groups=[""], resources=["pods"])],
         [_rule(verbs=["get", "delete"], api_groups=[""], resources=["pods"])],
         [_rule(verbs=["delete"], api_groups=[""], resources=["pods"])]),
        ([_rule(verbs=["get"], api_groups=[""], resources=["*/log"])],
         [_rule(verbs=["get"], api_groups=[""], resources=["pods/log"])], []),
        ([_rule(verbs=["get"], api_groups=[""], resources=["pods"], resource_names=["a"])],
         [_rule(verbs=["get"], api_groups=[""], resources=["pods"])],
         [_rule(verbs=["get"], api_groups=[""], resources=["pods"])]),
        ([_rule(verbs=["get"], non_resource_urls=["/api/*"])],
         [_rule(verbs=["get"], non_resource_urls=["/api/v1", "/metrics"])],
         [_rule(verbs=["get"], non_resource_urls=["/metrics"])]),
    ],
    ids=["star", "missing-verb", "star-subresource", "names-do-not-cover-all", "url-prefix"],
)  # fmt: skip
def test_covers(owner, requested, missing):
    assert covers(owner, requested) == missing


def test_missing_rules_print_compacted_as_upstream():
    missing = [_rule(verbs=["get"], api_groups=[""], resources=["pods"]),
               _rule(verbs=["list"], api_groups=[""], resources=["pods"])]  # fmt: skip
    assert [compact_string(r) for r in compact_rules(missing)] == [
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}'
    ]
    assert compact_string(_rule(verbs=["get"], non_resource_urls=["/x"])) == (
        '{NonResourceURLs:["/x"], Verbs:["get"]}'
    )


_names = st.sampled_from(["get", "list", "delete", "*"])
_resources = st.sampled_from(["pods", "pods/log", "*/log", "*", "deployments"])


@given(
    verbs=st.lists(_names, min_size=1, max_size=3),
    resources=st.lists(_resources, min_size=1, max_size=3),
    verb=st.sampled_from(["get", "list", "delete"]),
    resource=st.sampled_from(["pods", "deployments"]),
    sub=st.sampled_from(["", "log"]),
)
def test_a_rule_that_is_covered_allows_no_more_than_its_owner(
    verbs, resources, verb, resource, sub
):
    """Property: if ``owner`` covers ``rule``, every request ``rule`` allows ``owner`` allows."""
    owner = _rule(verbs=verbs, api_groups=[""], resources=resources)
    rule = _rule(
        verbs=[verb], api_groups=[""], resources=[f"{resource}/{sub}" if sub else resource]
    )
    request = Request(verb, "", resource, sub)
    if not covers([owner], [rule]) and rule_allows(request, rule):
        assert rule_allows(request, owner)
