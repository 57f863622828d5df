"""Authorization over HTTP: 401 without a token, admins do anything, tenant users act
inside their tenant's namespaces (``apiserver.authz``).

Upstream texts: ``responsewriters.forbiddenMessage`` wrapped by ``NewForbidden``
(``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go``), the
verbs of ``endpoints/request/requestinfo.go``.
"""

from __future__ import annotations

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.apiserver.authz import (
    attributes,
    forbidden,
    path_attributes,
    request_verb,
)
from kubeprio.apiserver.routes import RouteTable
from tests.unit.apiserver.http_helpers import (
    ADMIN,
    ALICE,
    BOB,
    DEV,
    pod_manifest,
    tenancy_client,
)


@pytest.fixture
def http(api):
    return tenancy_client(api)


@pytest.mark.parametrize(
    "path",
    [
        "/version",
        "/api",
        "/apis",
        "/apis/apps",
        "/openapi/v3",
        "/api/v1/pods",
        "/apis/apps/v1",
        "/readyz",
        "/nosuch",
    ],
)
def test_requests_without_a_token_are_401(http, path):
    response = http.get(path)
    assert response.status_code == 401
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    assert http.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_an_admin_may_do_anything(http):
    assert http.get("/api/v1/pods", headers=ADMIN).status_code == 200
    assert http.get("/api/v1/nodes", headers=ADMIN).status_code == 200
    created = http.post("/api/v1/namespaces/other/pods", json=pod_manifest("p"), headers=ADMIN)
    assert created.status_code == 201


@pytest.mark.parametrize(
    ("method", "path", "headers", "code"),
    [
        ("GET", "/api/v1/namespaces/team-a/pods", ALICE, 200),
        ("GET", "/api/v1/namespaces/team-b/pods?watch=false", ALICE, 200),
        ("GET", "/api/v1/namespaces/team-a/pods", DEV, 200),
        ("GET", "/api/v1/namespaces/team-a/events", ALICE, 200),
        ("GET", "/apis/scheduling.k8s.io/v1/priorityclasses", ALICE, 200),
        ("GET", "/api/v1/namespaces/team-a", ALICE, 200),
        ("GET", "/apis/kubeprio.io/v1alpha1/tenants/kestrel", ALICE, 200),
        ("GET", "/version", BOB, 200),
        ("GET", "/api/v1", BOB, 200),
        ("GET", "/api/v1/namespaces/other/pods", ALICE, 403),
        ("GET", "/api/v1/pods", ALICE, 403),
        ("GET", "/api/v1/nodes", ALICE, 403),
        ("GET", "/api/v1/namespaces", ALICE, 403),
        ("GET", "/api/v1/namespaces/other", ALICE, 403),
        ("GET", "/apis/kubeprio.io/v1alpha1/tenants", ALICE, 403),
        ("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical", ALICE, 403),
        ("GET", "/api/v1/namespaces/team-a/pods", BOB, 403),
        ("POST", "/api/v1/namespaces/team-a/events", ALICE, 403),
        ("GET", "/api/v1/namespaces/team-a/resourcequotas", ALICE, 200),
        ("POST", "/api/v1/namespaces/team-a/resourcequotas", ALICE, 403),
        # Upstream's admin and edit roles only view LimitRanges, as quotas.
        ("GET", "/api/v1/namespaces/team-a/limitranges", ALICE, 200),
        ("POST", "/api/v1/namespaces/team-a/limitranges", ALICE, 403),
        # Non-resource paths: upstream's system:discovery and system:public-info-viewer
        # grant every authenticated user "get" on exactly these (a trailing * matches a
        # prefix); anything else is the admins'.
        ("GET", "/readyz", ALICE, 200),
        ("GET", "/livez?verbose", ALICE, 200),
        ("GET", "/apis/apps", ALICE, 200),
        ("GET", "/openapi/v3/api/v1", ALICE, 200),
        ("GET", "/readyz/etcd", ALICE, 403),
        ("GET", "/healthz/ping", BOB, 403),
        ("GET", "/nosuch", ALICE, 403),
        ("GET", "/readyz/etcd", ADMIN, 200),
        ("GET", "/nosuch", ADMIN, 404),
        # Resource paths of resources nobody serves: upstream's RequestInfoFactory reads
        # the path and the authorizer answers before the router looks for the resource.
        ("GET", "/api/v1/foos", ALICE, 403),
        ("GET", "/api/v1/namespaces/team-a/foos", ALICE, 403),
        ("GET", "/api/v1/namespaces/team-a/pods/p/nosuch", ALICE, 403),
        ("POST", "/apis/foo.io/v1/namespaces/team-a/bars", ALICE, 403),
        ("GET", "/api/v1/foos", ADMIN, 404),
        ("GET", "/apis/foo.io/v1/namespaces/team-a/bars/x", ADMIN, 404),
    ],
    ids=[
        "own-namespace",
        "second-namespace",
        "by-group",
        "read-events",
        "read-classes",
        "get-own-namespace",
        "get-own-tenant",
        "discovery-for-anyone",
        "legacy-discovery-for-anyone",
        "other-namespace",
        "all-namespaces",
        "nodes",
        "list-namespaces",
        "get-other-namespace",
        "list-tenants",
        "delete-class",
        "not-a-member",
        "write-events",
        "read-quotas",
        "write-quotas",
        "read-limitranges",
        "write-limitranges",
        "readyz",
        "livez-verbose",
        "api-group",
        "openapi-document",
        "single-check",
        "single-check-non-member",
        "unknown-path-forbidden-before-routing",
        "single-check-admin",
        "unknown-path-admin",
        "unknown-resource",
        "unknown-resource-own-namespace",
        "unknown-subresource-own-namespace",
        "unknown-group",
        "unknown-resource-admin",
        "unknown-group-admin",
    ],
)
def test_tenant_policy(http, method, path, headers, code):
    response = http.request(method, path, headers=headers)
    assert response.status_code == code, response.text


def test_a_refusal_is_upstreams_forbidden_status(http):
    response = http.post("/api/v1/namespaces/other/pods", json=pod_manifest("p"), headers=ALICE)
    assert response.status_code == 403
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "other"',
        "reason": "Forbidden",
        "details": {"kind": "pods"},
        "code": 403,
    }


def test_a_non_resource_refusal_is_upstreams_forbidden_status(http):
    # responsewriters.Forbidden: 'User %q cannot %s path %q' (the lower-case HTTP
    # method is the verb), wrapped by NewForbidden with an empty group resource.
    response = http.get("/readyz/etcd", headers=ALICE)
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'forbidden: User "alice" cannot get path "/readyz/etcd"',
        "reason": "Forbidden",
        "details": {},
        "code": 403,
    }


def test_an_unknown_resource_refusal_is_upstreams_forbidden_status(http):
    # The qualified resource comes from the path (bars.foo.io), the name too.
    response = http.get("/apis/foo.io/v1/namespaces/team-a/bars/x", headers=ALICE)
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'bars.foo.io "x" is forbidden: User "alice" cannot get resource "bars" in API group "foo.io" in the namespace "team-a"',
        "reason": "Forbidden",
        "details": {"name": "x", "group": "foo.io", "kind": "bars"},
        "code": 403,
    }


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "foos", ("list", "", "foos", "", "", "")),
        ("GET", "foos?watch=1", ("watch", "", "foos", "", "", "")),
        ("GET", "watch/namespaces/a/foos", ("watch", "", "foos", "", "a", "")),
        ("GET", "namespaces/a/foos/x", ("get", "", "foos", "", "a", "x")),
        ("PUT", "namespaces/a/foos/x/status", ("update", "", "foos", "status", "a", "x")),
        ("DELETE", "namespaces/a/foos", ("deletecollection", "", "foos", "", "a", "")),
        ("DELETE", "foos/x", ("delete", "", "foos", "", "", "x")),
        ("POST", "namespaces/a/foos", ("create", "", "foos", "", "a", "")),
        ("PATCH", "namespaces/a/status", ("patch", "", "namespaces", "status", "a", "a")),
        ("GET", "namespaces/a", ("get", "", "namespaces", "", "a", "a")),
    ],
)
def test_path_attributes_read_the_path_as_upstreams_request_info(method, path, expected):
    rest, _, query = path.partition("?")
    attrs = path_attributes(
        UserInfo("alice"), method, "v1", rest.split("/"), {"watch": "1"} if query else {}
    )
    found = (attrs.verb, attrs.group, attrs.resource, attrs.subresource, attrs.namespace)
    assert (*found, attrs.name) == expected
    grouped = path_attributes(UserInfo("alice"), method, "foo.io/v1", rest.split("/"), {})
    assert grouped.group == "foo.io"


def test_a_named_subresource_refusal_names_the_object(http, api):
    http.post("/api/v1/namespaces/team-a/pods", json=pod_manifest("p"), headers=ALICE)
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"},
    }
    response = http.post("/api/v1/namespaces/team-a/pods/p/binding", json=binding, headers=ALICE)
    assert response.status_code == 403
    assert response.json()["message"] == (
        'pods "p" is forbidden: User "alice" cannot create resource "pods/binding" in API group "" in the namespace "team-a"'
    )


def test_a_tenant_user_may_evict_but_not_write_status(http):
    http.post("/api/v1/namespaces/team-a/pods", json=pod_manifest("p"), headers=ALICE)
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}
    status = http.patch(
        "/api/v1/namespaces/team-a/pods/p/status",
        content=b'{"status":{"phase":"Running"}}',
        headers={**ALICE, "Content-Type": "application/merge-patch+json"},
    )
    assert status.status_code == 403
    assert http.get("/api/v1/namespaces/team-a/pods/p/status", headers=ALICE).status_code == 200
    evicted = http.post("/api/v1/namespaces/team-a/pods/p/eviction", json=eviction, headers=ALICE)
    assert evicted.status_code == 201


@pytest.mark.parametrize(
    ("method", "path", "query", "verb"),
    [
        ("GET", ["pods"], {}, "list"),
        ("GET", ["pods"], {"watch": "true"}, "watch"),
        ("GET", ["pods"], {"watch": "1"}, "watch"),
        ("GET", ["pods", "x"], {}, "get"),
        ("POST", ["pods"], {}, "create"),
        ("PUT", ["pods", "x"], {}, "update"),
        ("PATCH", ["pods", "x"], {}, "patch"),
        ("DELETE", ["pods", "x"], {}, "delete"),
        ("DELETE", ["pods"], {}, "deletecollection"),
        ("POST", ["pods", "x", "eviction"], {}, "create"),
    ],
    ids=[
        "list",
        "watch",
        "watch-1",
        "get",
        "create",
        "update",
        "patch",
        "delete",
        "deletecollection",
        "subresource",
    ],
)
def test_request_verbs(method, path, query, verb):
    target = RouteTable().resolve("v1", ["namespaces", "ns", *path])
    assert target is not None
    assert request_verb(method, target, query) == verb


def test_forbidden_at_the_cluster_scope():
    target = RouteTable().resolve("v1", ["nodes", "n1"])
    assert target is not None
    attrs = attributes(UserInfo("bob"), "GET", target, {})
    assert forbidden(attrs).message == (
        'nodes "n1" is forbidden: User "bob" cannot get resource "nodes" in API group "" at the cluster scope'
    )
