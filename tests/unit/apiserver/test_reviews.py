"""Self reviews (``kubectl auth can-i``, ``can-i --list``, ``auth whoami``), impersonation
and the health paths over HTTP (``apiserver.reviews``, ``apiserver.impersonation``).

Upstream rules checked: ``pkg/registry/authorization/selfsubjectaccessreview/rest.go``
(validate, then "no user present on request", then authorize; 201 with the status),
``pkg/apis/authorization/validation/validation.go`` (the two spec errors and "must be
empty"), ``pkg/registry/authorization/selfsubjectrulesreview/rest.go`` ("no namespace on
request"; a new object, spec not echoed), ``pkg/registry/authentication/selfsubjectreview``
and ``staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.api import kinds
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.authn import TokenAuthenticator
from kubeprio.apiserver.authz import Attributes, TenantAuthorizer, path_matches
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    ALICE,
    BOB,
    DEV,
    TENANCY_TOKENS,
    create_tenancy,
    make_client,
    pod_manifest,
)

SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSRR = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


@pytest.fixture
def authorizer(api):
    create_tenancy(api)
    return TenantAuthorizer(api.listers)


@pytest.fixture
def http(api, authorizer):
    return make_client(api, authenticator=TokenAuthenticator(TENANCY_TOKENS), authorizer=authorizer)


def _can_i(http, headers, **attributes: str) -> dict[str, Any]:
    response = http.post(
        SSAR,
        json={
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        },
        headers=headers,
    )
    assert response.status_code == 201, response.text
    status: dict[str, Any] = response.json()["status"]
    return status


@pytest.mark.parametrize(
    ("headers", "attributes", "allowed", "reason"),
    [
        (ADMIN, {"verb": "*", "resource": "*"}, True, 'members of "system:masters"'),
        (ALICE, {"verb": "create", "resource": "pods", "namespace": "team-a"}, True,
         'Tenant "kestrel", which owns namespace "team-a"'),
        (DEV, {"verb": "create", "group": "apps", "resource": "deployments",
               "namespace": "team-b"}, True, 'Tenant "kestrel"'),
        (ALICE, {"verb": "create", "resource": "pods", "namespace": "other"}, False,
         'namespace "other" belongs to no Tenant'),
        (BOB, {"verb": "create", "resource": "pods", "namespace": "team-a"}, False,
         'User "bob" is not a member of Tenant "kestrel"'),
        (ALICE, {"verb": "create", "resource": "events", "namespace": "team-a"}, False,
         'may only read "events"'),
        (ALICE, {"verb": "watch", "resource": "events", "namespace": "team-a"}, True, ""),
        (ALICE, {"verb": "create", "resource": "pods", "subresource": "eviction",
                 "namespace": "team-a"}, True, ""),
        (ALICE, {"verb": "create", "resource": "pods", "subresource": "binding",
                 "namespace": "team-a"}, False, 'may only read "pods/binding"'),
        (ALICE, {"verb": "patch", "resource": "pods", "subresource": "status",
                 "namespace": "team-a"}, False, 'may only read "pods/status"'),
        (ALICE, {"verb": "get", "resource": "pods", "subresource": "status",
                 "namespace": "team-a"}, True, ""),
        (ALICE, {"verb": "patch", "group": "apps", "resource": "deployments",
                 "subresource": "scale", "namespace": "team-a"}, True, ""),
        # RBAC grants a wildcard only through a wildcard rule; the admin role has none.
        (ALICE, {"verb": "*", "resource": "*", "namespace": "team-a"}, False, ""),
        (ALICE, {"verb": "create", "resource": "foos", "namespace": "team-a"}, False,
         'no access to "foos"'),
        (ALICE, {"verb": "impersonate", "resource": "pods", "namespace": "team-a"}, False,
         'does not serve the verb "impersonate"'),
        # Upstream's edit role (aggregated into admin) grants impersonate on serviceaccounts.
        (ALICE, {"verb": "impersonate", "resource": "serviceaccounts", "namespace": "team-a",
                 "name": "builder"}, True, 'Tenant "kestrel", which owns namespace "team-a"'),
        (ALICE, {"verb": "impersonate", "resource": "serviceaccounts", "namespace": "other",
                 "name": "builder"}, False, 'namespace "other" belongs to no Tenant'),
        (BOB, {"verb": "impersonate", "resource": "serviceaccounts", "namespace": "team-a",
               "name": "builder"}, False, 'User "bob" is not a member of Tenant "kestrel"'),
        (ALICE, {"verb": "list", "group": "scheduling.k8s.io", "resource": "priorityclasses"},
         True, "every tenant user may read priorityclasses"),
        # Cluster-scoped: the namespace kubectl sends along does not matter.
        (ALICE, {"verb": "list", "group": "scheduling.k8s.io", "resource": "priorityclasses",
                 "namespace": "team-a"}, True, ""),
        (ALICE, {"verb": "create", "group": "scheduling.k8s.io",
                 "resource": "priorityclasses"}, False, "at the cluster scope"),
        (ALICE, {"verb": "get", "resource": "namespaces", "name": "team-b"}, True, ""),
        (ALICE, {"verb": "get", "resource": "namespaces", "name": "other"}, False, ""),
        (ALICE, {"verb": "list", "resource": "namespaces"}, False, ""),
        (ALICE, {"verb": "get", "group": "kubeprio.io", "resource": "tenants",
                 "name": "kestrel"}, True, ""),
        (BOB, {"verb": "get", "group": "kubeprio.io", "resource": "tenants",
               "name": "kestrel"}, False, ""),
        (ALICE, {"verb": "list", "resource": "pods"}, False, "at the cluster scope"),
        (BOB, {"verb": "create", "group": "authorization.k8s.io",
               "resource": "selfsubjectaccessreviews"}, True, "self reviews"),
        (BOB, {"verb": "create", "group": "authentication.k8s.io",
               "resource": "selfsubjectreviews"}, True, ""),
    ],
)  # fmt: skip
def test_can_i_answers_as_the_authorizer_decides(http, headers, attributes, allowed, reason):
    status = _can_i(http, headers, **attributes)
    assert status["allowed"] is allowed
    assert reason in status.get("reason", "")
    assert "denied" not in status  # kubeprio's authorizer never denies outright


def test_can_i_answers_what_the_request_itself_gets(http, api):
    """The review and the real request agree (same authorizer, same attributes)."""
    for headers, namespace in ((ALICE, "team-a"), (ALICE, "other"), (BOB, "team-a")):
        status = _can_i(http, headers, verb="create", resource="pods", namespace=namespace)
        created = http.post(
            f"/api/v1/namespaces/{namespace}/pods",
            json=pod_manifest(f"p-{namespace}-{headers['Authorization'][-5:]}"),
            headers=headers,
        )
        assert (created.status_code == 201) is status["allowed"]
        assert created.status_code in (201, 403)


@pytest.mark.parametrize(
    ("headers", "path", "verb", "allowed"),
    [
        (ALICE, "/version", "get", True),
        (ALICE, "/apis/apps/v1", "get", True),
        (ALICE, "/readyz", "get", True),
        (ALICE, "/metrics", "get", False),
        (ALICE, "/version", "post", False),
        (ADMIN, "/metrics", "get", True),
    ],
)
def test_can_i_for_non_resource_paths(http, headers, path, verb, allowed):
    response = http.post(
        SSAR,
        json={"spec": {"nonResourceAttributes": {"path": path, "verb": verb}}},
        headers=headers,
    )
    assert response.status_code == 201
    assert response.json()["status"]["allowed"] is allowed


def test_an_access_review_comes_back_whole(http):
    spec = {"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "team-a"}}
    response = http.post(
        SSAR,
        json={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "metadata": {"creationTimestamp": None}, "spec": spec},
        headers=ALICE,
    )  # fmt: skip
    assert response.status_code == 201
    body = response.json()
    assert body == {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": spec,
        "status": {
            "allowed": True,
            "reason": 'kubeprio: allowed to members of Tenant "kestrel", which owns '
            'namespace "team-a"',
        },
    }


@pytest.mark.parametrize(
    ("body", "message", "field"),
    [
        (
            {"spec": {}},
            '.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: '
            "null: exactly one of nonResourceAttributes or resourceAttributes must be "
            "specified",
            "spec.resourceAttributes",
        ),
        (
            {"spec": {"resourceAttributes": {"verb": "get"},
                      "nonResourceAttributes": {"path": "/version", "verb": "get"}}},
            '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: '
            'authorization.NonResourceAttributes{Path:"/version", Verb:"get"}: cannot be '
            'specified in combination with '
            "resourceAttributes",
            "spec.nonResourceAttributes",
        ),
        (
            {"metadata": {"name": "x"}, "spec": {"resourceAttributes": {"verb": "get"}}},
            '.authorization.k8s.io "" is invalid: metadata: Invalid value: {"name":"x"}: '
            "must be empty",
            "metadata",
        ),
    ],
    ids=["neither", "both", "metadata"],
)  # fmt: skip
def test_an_invalid_access_review_is_422_with_upstreams_text(http, body, message, field):
    response = http.post(SSAR, json=body, headers=ALICE)
    assert response.status_code == 422
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["message"] == message
    assert status["details"]["group"] == "authorization.k8s.io"
    assert [cause["field"] for cause in status["details"]["causes"]] == [field]


def test_a_malformed_review_is_400(http):
    response = http.post(SSAR, content=b"{not json", headers=ALICE)
    assert response.status_code == 400
    response = http.post(SSAR, json={"spec": {"resourceAttributes": {"verb": 7}}}, headers=ALICE)
    assert response.status_code == 400
    assert "SelfSubjectAccessReview" in response.json()["message"]


def test_reviews_are_create_only_and_never_stored(http):
    assert http.get(SSAR, headers=ADMIN).status_code == 405
    assert http.get(f"{SSAR}/x", headers=ADMIN).status_code == 404
    assert http.delete(SSRR, headers=ADMIN).status_code == 405
    _can_i(http, ALICE, verb="get", resource="pods", namespace="team-a")
    assert http.get(SSAR, headers=ADMIN).status_code == 405


@pytest.mark.parametrize("path", [SSAR, SSRR, SSR])
def test_a_review_needs_a_user(api, path):
    """Without authentication there is no user to review: upstream's 400."""
    http = make_client(api)
    body = {"spec": {"namespace": "default", "resourceAttributes": {"verb": "get"}}}
    response = http.post(path, json=body)
    assert response.status_code == 400
    assert response.json()["message"] == "no user present on request"


def _rules(http, headers, namespace: str) -> dict[str, Any]:
    response = http.post(SSRR, json={"spec": {"namespace": namespace}}, headers=headers)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    assert body["spec"] == {}
    assert body["status"]["incomplete"] is False
    return body["status"]


def _flatten(status: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    """(group, resource, verb, name) for every rule entry."""
    return {
        (group, resource, verb, name)
        for rule in status["resourceRules"]
        for group in rule.get("apiGroups", [])
        for resource in rule.get("resources", [])
        for verb in rule["verbs"]
        for name in rule.get("resourceNames", [""])
    }


def test_rules_in_an_own_namespace(http):
    status = _rules(http, ALICE, "team-a")
    rules = _flatten(status)
    for verb in kinds.ALL_VERBS:
        assert ("", "pods", verb, "") in rules
        assert ("apps", "deployments", verb, "") in rules
    assert {v for g, r, v, n in rules if r == "events"} == {"get", "list", "watch"}
    assert ("", "pods/eviction", "create", "") in rules
    assert ("", "pods/binding", "create", "") not in rules
    assert ("", "namespaces", "get", "team-a") in rules
    assert ("", "namespaces", "get", "team-b") in rules
    assert ("", "namespaces", "get", "other") not in rules
    assert ("kubeprio.io", "tenants", "get", "kestrel") in rules
    assert ("scheduling.k8s.io", "priorityclasses", "list", "") in rules
    assert ("authorization.k8s.io", "selfsubjectaccessreviews", "create", "") in rules
    assert status["nonResourceRules"][0]["verbs"] == ["get"]
    assert "/apis/*" in status["nonResourceRules"][0]["nonResourceURLs"]
    # The namespaced names come in one rule, as a Role would list them.
    named = [r for r in status["resourceRules"] if r.get("resources") == ["namespaces"]]
    assert named == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"],
         "resourceNames": ["team-a", "team-b"]}
    ]  # fmt: skip


def test_rules_elsewhere_hold_only_the_cluster_wide_ones(http):
    rules = _flatten(_rules(http, ALICE, "other"))
    assert not any(r == "pods" for g, r, v, n in rules)
    assert ("scheduling.k8s.io", "priorityclasses", "get", "") in rules
    outsider = _flatten(_rules(http, BOB, "team-a"))
    assert {r for g, r, v, n in outsider} == {
        "priorityclasses",
        "selfsubjectreviews",
        "selfsubjectaccessreviews",
        "selfsubjectrulesreviews",
    }


def test_an_admin_may_do_anything_by_the_rules(http):
    status = _rules(http, ADMIN, "team-a")
    assert status["resourceRules"] == [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
    assert status["nonResourceRules"] == [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def test_a_rules_review_needs_a_namespace(http):
    response = http.post(SSRR, json={"spec": {}}, headers=ALICE)
    assert response.status_code == 400
    assert response.json()["message"] == "no namespace on request"


@pytest.mark.parametrize(
    "user",
    [UserInfo("alice"), UserInfo("bob"), UserInfo("dave", ("kestrel-devs",))],
    ids=["member", "outsider", "group-member"],
)
@pytest.mark.parametrize("namespace", ["team-a", "team-b", "other"])
def test_the_rules_list_exactly_what_decide_allows(authorizer, user, namespace):
    """``rules_for`` and ``decide`` cannot disagree: every listed (resource, verb, name)
    is allowed, and every served resource and verb that is allowed is listed."""
    rules = authorizer.rules_for(user, namespace)
    listed = _flatten(to_dict(rules))
    for group, path, verb, name in listed:
        resource, _, sub = path.partition("/")
        info = next(i for i in kinds.SERVED if (i.group, i.plural) == (group, resource))
        attrs = Attributes(user, verb, group, resource, sub, namespace if info.namespaced else "",
                           name)  # fmt: skip
        assert authorizer.decide(attrs).allowed, attrs
    for info in kinds.SERVED:
        for sub, verbs in info.verbs_by_subresource.items():
            for verb in verbs:
                attrs = Attributes(user, verb, info.group, info.plural, sub,
                                   namespace if info.namespaced else "")  # fmt: skip
                listed_here = (info.group, attrs.resource_path, verb, "") in listed
                assert authorizer.decide(attrs).allowed is listed_here, attrs


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [("/api", "/api", True), ("/api", "/api/v1", False), ("/api/*", "/api/v1", True),
     ("/api/*", "/apis", False), ("*", "/anything", True)],
)  # fmt: skip
def test_non_resource_url_matching_is_rbacs(pattern, path, matches):
    assert path_matches(pattern, path) is matches


def test_whoami(http):
    response = http.post(SSR, json={"apiVersion": "authentication.k8s.io/v1",
                                    "kind": "SelfSubjectReview"}, headers=DEV)  # fmt: skip
    assert response.status_code == 201
    body = response.json()
    assert body["kind"] == "SelfSubjectReview"
    assert body["apiVersion"] == "authentication.k8s.io/v1"
    assert body["metadata"]["creationTimestamp"].endswith("Z")
    assert body["status"] == {
        "userInfo": {
            "username": "dave",
            "uid": "dave-uid",
            "groups": ["kestrel-devs", "system:authenticated"],
        }
    }


def test_an_admin_may_impersonate(http):
    headers = {
        **ADMIN,
        "Impersonate-User": "alice",
        "Impersonate-Uid": "u-9",
        "Impersonate-Extra-Reason": "audit",
    }
    who = http.post(SSR, json={}, headers=headers).json()["status"]["userInfo"]
    assert who == {
        "username": "alice",
        "uid": "u-9",
        "groups": ["system:authenticated"],
        "extra": {"reason": ["audit"]},
    }
    # The impersonated user's own permissions apply.
    response = http.get("/api/v1/namespaces/other/pods", headers=headers)
    assert response.status_code == 403
    assert response.json()["message"] == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the '
        'namespace "other"'
    )
    assert http.get("/api/v1/namespaces/team-a/pods", headers=headers).status_code == 200


def test_impersonated_groups_and_service_accounts(http):
    who = http.post(
        SSR,
        json={},
        headers=[
            ("Authorization", "Bearer admin-token"),
            ("Impersonate-User", "erin"),
            ("Impersonate-Group", "kestrel-devs"),
            ("Impersonate-Group", "auditors"),
        ],
    ).json()["status"]["userInfo"]
    assert who["groups"] == ["kestrel-devs", "auditors", "system:authenticated"]
    account = {**ADMIN, "Impersonate-User": "system:serviceaccount:team-a:builder"}
    who = http.post(SSR, json={}, headers=account).json()["status"]["userInfo"]
    assert who == {
        "username": "system:serviceaccount:team-a:builder",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:team-a",
                   "system:authenticated"],
    }  # fmt: skip
    anonymous = {**ADMIN, "Impersonate-User": "system:anonymous"}
    who = http.post(SSR, json={}, headers=anonymous).json()["status"]["userInfo"]
    assert who["groups"] == ["system:unauthenticated"]


@pytest.mark.parametrize(
    ("extra_headers", "message"),
    [
        ({"Impersonate-User": "bob"},
         'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API '
         'group "" at the cluster scope'),
        ({"Impersonate-User": "system:serviceaccount:other:builder"},
         'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource '
         '"serviceaccounts" in API group "" in the namespace "other"'),
        ({"Impersonate-User": "system:serviceaccount:team-a:builder",
          "Impersonate-Group": "system:masters"},
         'groups "system:masters" is forbidden: User "alice" cannot impersonate resource '
         '"groups" in API group "" at the cluster scope'),
    ],
)  # fmt: skip
def test_a_tenant_user_may_not_impersonate_users_groups_or_foreign_accounts(
    http, extra_headers, message
):
    response = http.get("/api/v1/namespaces/team-a/pods", headers={**ALICE, **extra_headers})
    assert response.status_code == 403
    assert response.json()["message"] == message


def test_a_tenant_user_may_impersonate_the_service_accounts_of_its_namespaces(http):
    """Upstream's edit role grants impersonate on serviceaccounts; the request then runs as
    the account, which the tenant policy authorizes on its own (here: named by no Tenant)."""
    account = {**ALICE, "Impersonate-User": "system:serviceaccount:team-a:builder"}
    who = http.post(SSR, json={}, headers=account).json()["status"]["userInfo"]
    assert who["username"] == "system:serviceaccount:team-a:builder"
    response = http.get("/api/v1/namespaces/team-a/pods", headers=account)
    assert response.status_code == 403
    assert response.json()["message"] == (
        'pods is forbidden: User "system:serviceaccount:team-a:builder" cannot list resource '
        '"pods" in API group "" in the namespace "team-a"'
    )


def test_impersonating_groups_without_a_user_is_400(http):
    response = http.get(
        "/api/v1/pods", headers={**ADMIN, "Impersonate-Group": "devs", "Impersonate-Uid": "7"}
    )
    assert response.status_code == 400
    assert response.json()["message"] == (
        "requested [{Group  devs    } {UID  7  authentication.k8s.io/v1  }] without "
        "impersonating a user"
    )


def test_discovery_lists_the_review_groups(http):
    groups = {g["name"] for g in http.get("/apis", headers=BOB).json()["groups"]}
    assert {"authorization.k8s.io", "authentication.k8s.io"} <= groups
    resources = http.get("/apis/authorization.k8s.io/v1", headers=BOB).json()["resources"]
    by_name = {r["name"]: r for r in resources}
    assert by_name["selfsubjectaccessreviews"]["verbs"] == ["create"]
    assert by_name["selfsubjectaccessreviews"]["namespaced"] is False
    assert by_name["selfsubjectrulesreviews"]["kind"] == "SelfSubjectRulesReview"


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz"])
def test_health_paths(http, path):
    response = http.get(path, headers=BOB)
    assert response.status_code == 200
    assert response.text == "ok"
    assert http.get(path).status_code == 401
