"""SubjectAccessReview and LocalSubjectAccessReview over HTTP (``apiserver.subjectaccessreview``).

Upstream rules checked: ``pkg/registry/authorization/subjectaccessreview/rest.go`` and
``.../localsubjectaccessreview/rest.go`` (validate; for the local kind "namespace is
required on this type" / "spec.resourceAttributes.namespace must match namespace: <ns>";
then authorize the spec's subject; 201 with the status),
``pkg/apis/authorization/validation/validation.go`` (``ValidateSubjectAccessReviewSpec``,
``ValidateLocalSubjectAccessReview``, ``validateResourceAttributes``),
``pkg/registry/authorization/util/helpers.go`` (``AuthorizationAttributesFrom``: the
subject exactly as given) and ``bootstrappolicy/policy.go`` (who may create them).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.apiserver.authn import TokenAuthenticator
from kubeprio.apiserver.authz import TenantAuthorizer
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    ALICE,
    BOB,
    TENANCY_TOKENS,
    create_tenancy,
    make_client,
)

SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
GROUP = "authorization.k8s.io"


def lsar_path(namespace: str) -> str:
    return f"/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews"


@pytest.fixture
def http(api):
    create_tenancy(api)
    return make_client(
        api,
        authenticator=TokenAuthenticator(TENANCY_TOKENS),
        authorizer=TenantAuthorizer(api.listers),
    )


def _review(kind: str, spec: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": f"{GROUP}/v1", "kind": kind, "spec": spec}
    if metadata:
        body["metadata"] = metadata
    return body


def _sar(http, spec: dict[str, Any], headers=ADMIN) -> dict[str, Any]:
    response = http.post(SAR, json=_review("SubjectAccessReview", spec), headers=headers)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize(
    ("spec", "allowed", "reason"),
    [
        ({"user": "alice", "resourceAttributes": {"verb": "create", "resource": "pods",
                                                   "namespace": "team-a"}},
         True, 'Tenant "kestrel", which owns namespace "team-a"'),
        ({"user": "alice", "resourceAttributes": {"verb": "create", "resource": "pods",
                                                   "namespace": "other"}},
         False, 'namespace "other" belongs to no Tenant'),
        ({"user": "bob", "resourceAttributes": {"verb": "create", "resource": "pods",
                                                 "namespace": "team-a"}},
         False, 'User "bob" is not a member of Tenant "kestrel"'),
        # By group alone: the tenant's group, and system:masters.
        ({"groups": ["kestrel-devs"], "resourceAttributes": {"verb": "get", "resource": "pods",
                                                              "namespace": "team-b"}},
         True, 'Tenant "kestrel"'),
        ({"user": "root", "groups": ["system:masters"],
          "resourceAttributes": {"verb": "delete", "resource": "nodes"}},
         True, 'members of "system:masters"'),
        ({"user": "alice", "nonResourceAttributes": {"path": "/metrics", "verb": "get"}},
         False, "only cluster admins"),
        ({"user": "alice", "nonResourceAttributes": {"path": "/version", "verb": "get"}},
         True, "discovery"),
        # The subject's own kind: a tenant user may not ask about others cluster-wide.
        ({"user": "alice", "resourceAttributes": {"verb": "create", "group": GROUP,
                                                   "resource": "subjectaccessreviews"}},
         False, "at the cluster scope"),
        ({"user": "alice", "resourceAttributes": {"verb": "create", "group": GROUP,
                                                   "resource": "localsubjectaccessreviews",
                                                   "namespace": "team-a"}},
         True, 'Tenant "kestrel"'),
    ],
)  # fmt: skip
def test_the_subject_in_the_spec_is_authorized(http, spec, allowed, reason):
    body = _sar(http, spec)
    assert body["status"]["allowed"] is allowed
    assert reason in body["status"].get("reason", "")
    assert "denied" not in body["status"]  # no authorizer here denies outright


def test_a_review_comes_back_whole_and_is_not_stored(http, api):
    spec = {
        "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "team-a"},
        "user": "alice",
        "groups": ["g1"],
        "extra": {"scopes": ["a", "b"]},
        "uid": "alice-uid",
    }
    body = _sar(http, spec)
    assert body == {
        "kind": "SubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": spec,
        "status": {
            "allowed": True,
            "reason": 'kubeprio: allowed to members of Tenant "kestrel", which owns '
            'namespace "team-a"',
        },
    }
    assert http.get(SAR, headers=ADMIN).status_code == 405


def test_the_answer_matches_the_real_request(http):
    """The review and the subject's own request agree (same authorizer, same attributes)."""
    for headers, user, namespace in (
        (ALICE, "alice", "team-a"),
        (ALICE, "alice", "other"),
        (BOB, "bob", "team-a"),
    ):
        spec = {"user": user, "resourceAttributes": {"verb": "list", "resource": "configmaps",
                                                     "namespace": namespace}}  # fmt: skip
        allowed = _sar(http, spec)["status"]["allowed"]
        listed = http.get(f"/api/v1/namespaces/{namespace}/configmaps", headers=headers)
        assert (listed.status_code == 200) is allowed


@pytest.mark.parametrize(
    ("spec", "metadata", "message", "fields"),
    [
        ({"user": "alice"}, {},
         '.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: '
         "exactly one of nonResourceAttributes or resourceAttributes must be specified",
         ["spec.resourceAttributes"]),
        ({"resourceAttributes": {"verb": "get"}}, {},
         '.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of '
         "user or group must be specified",
         ["spec.user"]),
        ({"user": "a", "resourceAttributes": {"verb": "get"},
          "nonResourceAttributes": {"path": "/x", "verb": "get"}}, {},
         None, ["spec.nonResourceAttributes"]),
        ({"user": "a", "resourceAttributes": {"verb": "get"}}, {"name": "x"},
         None, ["metadata"]),
        ({"user": "a", "resourceAttributes": {
            "verb": "list", "resource": "pods",
            "fieldSelector": {"rawSelector": "a=b", "requirements": [
                {"key": "a", "operator": "In", "values": ["b"]}]}}}, {},
         '.authorization.k8s.io "" is invalid: spec.resourceAttributes.fieldSelector.rawSelector:'
         ' Invalid value: "a=b": may not specified at the same time as requirements',
         ["spec.resourceAttributes.fieldSelector.rawSelector"]),
        ({"user": "a", "resourceAttributes": {"verb": "list", "resource": "pods",
                                               "labelSelector": {}}}, {},
         '.authorization.k8s.io "" is invalid: spec.resourceAttributes.labelSelector.'
         "requirements: Required value: when spec.resourceAttributes.labelSelector is "
         "specified, requirements or rawSelector is required",
         ["spec.resourceAttributes.labelSelector.requirements"]),
        # Both spec errors at once, in upstream's order.
        ({}, {}, None, ["spec.resourceAttributes", "spec.user"]),
    ],
)  # fmt: skip
def test_invalid_reviews_are_refused_with_upstreams_texts(http, spec, metadata, message, fields):
    body = _review("SubjectAccessReview", spec, **metadata)
    response = http.post(SAR, json=body, headers=ADMIN)
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    if message is not None:
        assert status["message"] == message
    assert [cause["field"] for cause in status["details"]["causes"]] == fields


def test_who_may_ask(http, api):
    """A tenant user may not ask about others cluster-wide (``system:auth-delegator``'s
    right), but may in its namespaces (``admin``'s ``localsubjectaccessreviews``)."""
    spec = {"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods",
                                                   "namespace": "team-a"}}  # fmt: skip
    refused = http.post(SAR, json=_review("SubjectAccessReview", spec), headers=ALICE)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create '
        'resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope'
    )
    local = http.post(
        lsar_path("team-a"), json=_review("LocalSubjectAccessReview", spec), headers=ALICE
    )
    assert local.status_code == 201, local.text
    assert local.json()["status"]["allowed"] is False
    outside = http.post(
        lsar_path("team-a"), json=_review("LocalSubjectAccessReview", spec), headers=BOB
    )
    assert outside.status_code == 403


def test_a_local_review_carries_its_namespace(http):
    spec = {"user": "alice", "resourceAttributes": {"verb": "create", "resource": "pods",
                                                     "namespace": "team-a"}}  # fmt: skip
    response = http.post(
        lsar_path("team-a"), json=_review("LocalSubjectAccessReview", spec), headers=ADMIN
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["kind"] == "LocalSubjectAccessReview"
    assert body["metadata"] == {"namespace": "team-a", "creationTimestamp": None}
    assert body["spec"] == spec
    assert body["status"]["allowed"] is True


@pytest.mark.parametrize(
    ("path_namespace", "body_namespace", "spec", "code", "message"),
    [
        # The resource attributes name another namespace than the review's.
        ("team-a", None, {"user": "alice", "resourceAttributes": {"verb": "get",
                                                                  "namespace": "team-b"}},
         422, '.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: '
              'Invalid value: "team-b": must match metadata.namespace'),
        ("team-a", None, {"user": "alice", "resourceAttributes": {"verb": "get"}},
         422, '.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: '
              'Invalid value: "": must match metadata.namespace'),
        ("team-a", None, {"user": "alice",
                          "nonResourceAttributes": {"path": "/version", "verb": "get"}},
         422, '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: '
              '{"path":"/version","verb":"get"}: disallowed on this kind of request'),
        # The body's namespace must be the URL's (the generic create handler's rule).
        ("team-a", "team-b", {"user": "alice", "resourceAttributes": {"verb": "get",
                                                                      "namespace": "team-b"}},
         400, "the namespace of the provided object does not match the namespace sent on the "
              "request"),
    ],
)  # fmt: skip
def test_invalid_local_reviews(http, path_namespace, body_namespace, spec, code, message):
    metadata = {"namespace": body_namespace} if body_namespace else {}
    response = http.post(
        lsar_path(path_namespace),
        json=_review("LocalSubjectAccessReview", spec, **metadata),
        headers=ADMIN,
    )
    assert response.status_code == code, response.text
    assert response.json()["message"] == message


def test_a_local_review_is_served_only_in_a_namespace(http):
    spec = {"user": "alice", "resourceAttributes": {"verb": "get", "namespace": "team-a"}}
    response = http.post(
        "/apis/authorization.k8s.io/v1/localsubjectaccessreviews",
        json=_review("LocalSubjectAccessReview", spec),
        headers=ADMIN,
    )
    assert response.status_code == 404


def test_discovery_lists_both_create_only(http):
    resources = http.get("/apis/authorization.k8s.io/v1", headers=ADMIN).json()["resources"]
    by_name = {r["name"]: r for r in resources}
    assert by_name["subjectaccessreviews"]["namespaced"] is False
    assert by_name["subjectaccessreviews"]["verbs"] == ["create"]
    assert by_name["localsubjectaccessreviews"]["namespaced"] is True
    assert by_name["localsubjectaccessreviews"]["verbs"] == ["create"]
    assert by_name["localsubjectaccessreviews"]["kind"] == "LocalSubjectAccessReview"
