"""REST verbs over HTTP: create, update, patch, delete, subresources, list (kubectl-wire.md).

Upstream: ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers`` (create.go, update.go,
patch.go, delete.go, get.go), ``pkg/registry/core/pod/storage`` (binding, eviction) and
``pkg/registry/apps/deployment/storage`` (scale).
"""

from __future__ import annotations

import json

import pytest

from tests.unit.apiserver.http_helpers import make_client, pod_manifest

PODS = "/api/v1/namespaces/default/pods"
PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"


@pytest.fixture
def client(api):
    return make_client(api)


def pc_manifest(name: str, value: int = 1000) -> dict:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def deployment_manifest(name: str = "web", replicas: int = 2) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def test_create_answers_201_with_the_stored_object(client):
    response = client.post(PODS, json=pod_manifest("a"))
    assert response.status_code == 201
    body = response.json()
    assert body["metadata"]["namespace"] == "default"
    assert body["metadata"]["uid"]
    assert body["spec"]["priority"] == 0  # Priority admission ran


def test_create_dry_run_stores_nothing(client):
    assert client.post(f"{PODS}?dryRun=All", json=pod_manifest("a")).status_code == 201
    assert client.get(f"{PODS}/a").status_code == 404


def test_admission_rejection_is_an_upstream_forbidden_status(client):
    """Priority admission: ``admission.NewForbidden`` (kubectl-wire.md §7)."""
    response = client.post(PODS, json=pod_manifest("bad", priorityClassName="nosuch"))
    assert response.status_code == 403
    assert response.json() == {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "bad" is forbidden: no PriorityClass with name nosuch was found',
        "reason": "Forbidden",
        "details": {"name": "bad", "kind": "pods"},
        "code": 403,
    }


def test_duplicate_create_is_already_exists(client):
    client.post(PCS, json=pc_manifest("high"))
    response = client.post(PCS, json=pc_manifest("high"))
    assert response.status_code == 409
    assert response.json()["reason"] == "AlreadyExists"
    assert response.json()["message"] == ('priorityclasses.scheduling.k8s.io "high" already exists')


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            pod_manifest("a", foo=1),
            'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
            'unknown field "spec.foo"',
        ),
        (
            {**pod_manifest("a"), "spec": {"containers": [{"name": "c", "imagex": "n"}], "bar": 1}},
            'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
            'unknown field "spec.containers[0].imagex", unknown field "spec.bar"',
        ),
        (
            # Fields added after v1.32 (PodSpec.hostnameOverride in v1.34,
            # Container.restartPolicyRules in v1.34) are unknown to a v1.32 server: the
            # field table is cut to k8s.io/api v0.32.9's types (tools/upstream_go.py).
            {
                **pod_manifest("a", hostnameOverride="h"),
                "spec": {
                    "containers": [{"name": "c", "image": "n", "restartPolicyRules": []}],
                    "hostnameOverride": "h",
                },
            },
            'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
            'unknown field "spec.containers[0].restartPolicyRules", '
            'unknown field "spec.hostnameOverride"',
        ),
    ],
    ids=["one", "two-in-document-order", "newer-than-v1.32"],
)
def test_strict_field_validation_rejects_unknown_fields(client, body, message):
    """sigs.k8s.io/json strict decoding, as the create handler reports it."""
    response = client.post(f"{PODS}?fieldValidation=Strict", json=body)
    assert response.status_code == 400
    assert response.json()["reason"] == "BadRequest"
    assert response.json()["message"] == message


def test_tenants_get_strict_field_validation_like_a_structural_crd(client):
    """A CRD with a structural schema prunes unknown fields, and reports them in Strict
    and Warn mode like a built-in kind (a mistyped ``users`` must not vanish silently)."""
    tenants = "/apis/kubeprio.io/v1alpha1/tenants"
    body = {
        "apiVersion": "kubeprio.io/v1alpha1",
        "kind": "Tenant",
        "metadata": {"name": "t"},
        "spec": {"user": ["alice"], "priorityClasses": {"allowed": ["a"], "maxvalue": 5}},
    }
    strict = client.post(f"{tenants}?fieldValidation=Strict", json=body)
    assert strict.status_code == 400
    assert strict.json()["message"] == (
        'Tenant in version "v1alpha1" cannot be handled as a Tenant: strict decoding error: '
        'unknown field "spec.user", unknown field "spec.priorityClasses.maxvalue"'
    )
    assert client.get(f"{tenants}/t").status_code == 404
    warned = client.post(f"{tenants}?fieldValidation=Warn", json=body)
    assert warned.status_code == 201
    assert len(warned.headers.get_list("warning")) == 2
    assert warned.json()["spec"] == {"priorityClasses": {"allowed": ["a"]}}


def test_strict_field_validation_reports_duplicate_fields(client):
    raw = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"c"}]}}'
    response = client.post(
        f"{PODS}?fieldValidation=Strict",
        content=raw,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["message"].endswith(
        'strict decoding error: duplicate field "metadata.name"'
    )


def test_warn_field_validation_answers_warning_headers_and_drops_the_field(client):
    response = client.post(f"{PODS}?fieldValidation=Warn", json=pod_manifest("a", foo=1))
    assert response.status_code == 201
    assert response.headers.get_list("warning") == ['299 - "unknown field \\"spec.foo\\""']
    assert "foo" not in response.json()["spec"]


def test_strict_errors_stop_at_upstreams_limit_of_100(client):
    """sigs.k8s.io/json saves at most 100 strict errors; the rest of the body is still
    pruned, so nothing unknown is stored."""
    extra = {f"x{index:03d}": index for index in range(150)}
    strict = client.post(f"{PODS}?fieldValidation=Strict", json=pod_manifest("a", **extra))
    problems = strict.json()["message"].split("strict decoding error: ", 1)[1].split(", ")
    assert len(problems) == 100
    assert problems[0] == 'unknown field "spec.x000"'
    assert problems[-1] == 'unknown field "spec.x099"'
    warned = client.post(f"{PODS}?fieldValidation=Warn", json=pod_manifest("b", **extra))
    assert warned.status_code == 201
    assert len(warned.headers.get_list("warning")) == 100
    assert not set(extra) & set(warned.json()["spec"])


def test_ignore_field_validation_drops_silently_and_keeps_upstream_fields(client):
    body = pod_manifest("a", foo=1, volumes=[{"name": "v", "emptyDir": {}}])
    response = client.post(f"{PODS}?fieldValidation=Ignore", json=body)
    assert response.status_code == 201
    assert "warning" not in response.headers
    assert response.json()["spec"]["volumes"] == [{"name": "v", "emptyDir": {}}]


def test_decode_errors_read_cannot_be_handled(client):
    response = client.post(PCS, json={**pc_manifest("x"), "value": "high"})
    assert response.status_code == 400
    assert response.json()["message"].startswith(
        'PriorityClass in version "v1" cannot be handled as a PriorityClass: json: cannot unmarshal string'
    )


def test_namespace_mismatch_is_a_bad_request(client):
    body = pod_manifest("a")
    body["metadata"]["namespace"] = "other"
    response = client.post(PODS, json=body)
    assert response.status_code == 400
    assert response.json()["message"] == (
        "the namespace of the provided object does not match the namespace sent on the request"
    )


def test_put_replaces_and_checks_the_name(client):
    created = client.post(PCS, json=pc_manifest("p")).json()
    created["description"] = "changed"
    response = client.put(f"{PCS}/p", json=created)
    assert response.status_code == 200
    assert response.json()["description"] == "changed"
    response = client.put(f"{PCS}/q", json=created)
    assert response.status_code == 400
    assert response.json()["message"] == (
        "the name of the object (p) does not match the name on the URL (q)"
    )


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        ("application/merge-patch+json", {"description": "m"}),
        ("application/strategic-merge-patch+json", {"description": "m"}),
        ("application/json-patch+json", [{"op": "add", "path": "/description", "value": "m"}]),
        ("application/apply-patch+yaml", {**pc_manifest("p"), "description": "m"}),
    ],
    ids=["merge", "strategic", "json", "apply"],
)
def test_patch_takes_the_four_content_types(client, content_type, patch):
    client.post(PCS, json=pc_manifest("p"))
    response = client.patch(
        f"{PCS}/p", content=json.dumps(patch), headers={"Content-Type": content_type}
    )
    assert response.status_code == 200
    assert response.json()["description"] == "m"


def test_apply_patch_creates_an_absent_object_with_201(client):
    response = client.patch(
        f"{DEPLOYS}/web?fieldManager=kubectl&force=false",
        content=json.dumps(deployment_manifest()),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert response.status_code == 201
    again = client.patch(
        f"{DEPLOYS}/web?fieldManager=kubectl",
        content=json.dumps(deployment_manifest(replicas=3)),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert again.status_code == 200
    assert again.json()["spec"]["replicas"] == 3


def test_unknown_patch_content_type_is_415(client):
    client.post(PCS, json=pc_manifest("p"))
    response = client.patch(f"{PCS}/p", content=b"{}", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415
    assert response.json()["reason"] == "UnsupportedMediaType"


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-yaml", "application/merge-patch+json", "application/cbor"],
)
def test_an_object_body_of_an_unknown_type_is_415_and_nothing_is_stored(client, content_type):
    # Upstream NegotiateInputSerializer: NewUnsupportedMediaTypeError over the serializers
    # a 1.32 server decodes objects from (JSON, YAML, protobuf; CBOR is gated off).
    response = client.post(
        PCS, content=json.dumps(pc_manifest("q")), headers={"Content-Type": content_type}
    )
    assert response.status_code == 415
    assert response.json()["reason"] == "UnsupportedMediaType"
    assert response.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    assert client.get(f"{PCS}/q").status_code == 404


@pytest.mark.parametrize("content_type", ["", "application/json; charset=utf-8"])
def test_an_object_body_without_a_type_or_with_parameters_is_json(client, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    response = client.post(PCS, content=json.dumps(pc_manifest("r")), headers=headers)
    assert response.status_code == 201


def test_delete_reads_a_body_without_content_type_and_returns_the_pod(client):
    client.post(PODS, json=pod_manifest("a"))
    response = client.request("DELETE", f"{PODS}/a", content=b'{"gracePeriodSeconds":0}')
    assert response.status_code == 200
    assert response.json()["kind"] == "Pod"
    assert client.get(f"{PODS}/a").status_code == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"gracePeriodSeconds":', "unexpected end of JSON input"),
        (b"{grace}", "invalid character 'g' looking for beginning of object key string"),
        (
            b'{"gracePeriodSeconds":"0"}',
            "json: cannot unmarshal string into Go struct field "
            "DeleteOptions.gracePeriodSeconds of type int64",
        ),
        (b"[0]", "json: cannot unmarshal array into Go value of type v1.DeleteOptions"),
    ],
)
def test_a_delete_body_that_does_not_decode_is_a_plain_500_and_deletes_nothing(
    client, body, message
):
    """Upstream's DeleteResource passes the decoder's error to scope.err unwrapped, and
    ErrorToAPIStatus makes a non-Status error a 500 with no reason and Go's text."""
    client.post(PODS, json=pod_manifest("a"))
    response = client.request("DELETE", f"{PODS}/a", content=body)
    assert response.status_code == 500
    assert response.json()["message"] == message
    assert "reason" not in response.json()
    assert client.get(f"{PODS}/a").status_code == 200


def test_delete_of_other_kinds_answers_a_success_status_with_the_uid(client):
    uid = client.post(PCS, json=pc_manifest("p")).json()["metadata"]["uid"]
    response = client.request("DELETE", f"{PCS}/p", json={"propagationPolicy": "Background"})
    assert response.status_code == 200
    assert response.json()["status"] == "Success"
    assert response.json()["details"] == {
        "name": "p",
        "group": "scheduling.k8s.io",
        "kind": "priorityclasses",
        "uid": uid,
    }


def test_delete_of_a_bound_pod_is_graceful(client, api):
    client.post(PODS, json=pod_manifest("a", nodeName="n1", terminationGracePeriodSeconds=30))
    response = client.delete(f"{PODS}/a")
    assert response.status_code == 200
    assert response.json()["metadata"]["deletionTimestamp"]
    assert response.json()["metadata"]["deletionGracePeriodSeconds"] == 30


def test_binding_answers_201_success_and_conflicts_when_bound(client):
    client.post(PODS, json=pod_manifest("a"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "a"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }
    response = client.post(f"{PODS}/a/binding", json=binding)
    assert response.status_code == 201
    assert response.json() == {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    assert client.get(f"{PODS}/a").json()["spec"]["nodeName"] == "n1"
    again = client.post(f"{PODS}/a/binding", json=binding)
    assert again.status_code == 409
    assert again.json()["message"] == (
        'Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n1"'
    )


def test_legacy_bindings_collection_binds_the_pod_named_by_the_body(client):
    """Upstream ``LegacyBindingREST.Create`` (pkg/registry/core/pod/storage/storage.go):
    ``POST namespaces/<ns>/bindings`` is ``pods/binding`` for the body's
    ``metadata.name``; it is create-only."""
    client.post(PODS, json=pod_manifest("a"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "a"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }
    response = client.post("/api/v1/namespaces/default/bindings", json=binding)
    assert response.status_code == 201
    assert response.json()["status"] == "Success"
    assert client.get(f"{PODS}/a").json()["spec"]["nodeName"] == "n1"
    again = client.post("/api/v1/namespaces/default/bindings", json=binding)
    assert again.status_code == 409
    assert again.json()["message"] == (
        'Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n1"'
    )
    unnamed = {**binding, "metadata": {}}
    refused = client.post("/api/v1/namespaces/default/bindings", json=unnamed)
    assert (refused.status_code, refused.json()["message"]) == (400, "Name parameter required.")
    assert client.get("/api/v1/namespaces/default/bindings").status_code == 405
    assert client.post("/api/v1/bindings", json=binding).status_code == 404
    listed = client.get("/api/v1").json()["resources"]
    row = next(r for r in listed if r["name"] == "bindings")
    assert (row["kind"], row["namespaced"], row["verbs"]) == ("Binding", True, ["create"])


def test_eviction_blocked_by_a_budget_is_429_with_the_disruption_budget_cause(client, api):
    labels = {"app": "web"}
    pod = pod_manifest("a", nodeName="n1")
    pod["metadata"]["labels"] = labels
    client.post(PODS, json=pod)
    # A Ready pod: upstream lets an unready pod bypass a budget that is already healthy.
    client.patch(
        f"{PODS}/a/status",
        json={"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web-pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
    }
    client.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", json=pdb)
    client.patch(
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web-pdb/status",
        json={
            "status": {
                "observedGeneration": 1,
                "disruptionsAllowed": 0,
                "desiredHealthy": 1,
                "currentHealthy": 1,
            }
        },
        headers={"Content-Type": "application/merge-patch+json"},
    )
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "a", "namespace": "default"},
        "deleteOptions": {},
    }
    response = client.post(f"{PODS}/a/eviction", json=eviction)
    assert response.status_code == 429
    assert response.json() == {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget web-pdb needs 1 healthy pods and has 1 currently",
                }
            ]
        },
        "code": 429,
    }


def test_eviction_without_budget_answers_201(client):
    client.post(PODS, json=pod_manifest("a"))
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "a"}}
    response = client.post(f"{PODS}/a/eviction", json=eviction)
    assert response.status_code == 201
    assert response.json()["status"] == "Success"


def test_scale_subresource_reads_and_writes_an_autoscaling_v1_scale(client):
    client.post(DEPLOYS, json=deployment_manifest())
    scale = client.get(f"{DEPLOYS}/web/scale").json()
    assert scale["kind"] == "Scale"
    assert scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 0, "selector": "app=web"}
    response = client.patch(
        f"{DEPLOYS}/web/scale",
        json={"spec": {"replicas": 3}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200
    assert response.json()["kind"] == "Scale"
    assert client.get(f"{DEPLOYS}/web").json()["spec"]["replicas"] == 3
    scale = response.json()
    scale["spec"]["replicas"] = 4
    assert client.put(f"{DEPLOYS}/web/scale", json=scale).json()["spec"]["replicas"] == 4


def test_a_scale_of_zero_replicas_leaves_out_the_omitempty_fields(client):
    """autoscaling/v1 types.go: ScaleSpec.Replicas is ``omitempty`` (0 is left out),
    ScaleStatus.Replicas is not; ScaleStatus.Selector is ``omitempty``."""
    client.post(DEPLOYS, json=deployment_manifest())
    response = client.patch(
        f"{DEPLOYS}/web/scale",
        json={"spec": {"replicas": 0}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200
    assert response.json()["spec"] == {}
    assert client.get(f"{DEPLOYS}/web").json()["spec"]["replicas"] == 0
    assert client.get(f"{DEPLOYS}/web/scale").json()["status"] == {
        "replicas": 0,
        "selector": "app=web",
    }


def test_status_subresource_changes_only_status(client):
    client.post(PODS, json=pod_manifest("a"))
    response = client.patch(
        f"{PODS}/a/status",
        json={"status": {"phase": "Running"}, "spec": {"nodeName": "x"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200
    assert response.json()["status"]["phase"] == "Running"
    assert "nodeName" not in response.json()["spec"]


def test_list_filters_by_selectors_and_pages(client):
    for name, app in (("a", "web"), ("b", "web"), ("c", "db")):
        pod = pod_manifest(name)
        pod["metadata"]["labels"] = {"app": app}
        client.post(PODS, json=pod)
    body = client.get(f"{PODS}?labelSelector=app%3Dweb").json()
    assert body["kind"] == "PodList"
    assert [p["metadata"]["name"] for p in body["items"]] == ["a", "b"]
    body = client.get(f"{PODS}?fieldSelector=metadata.name%3Dc").json()
    assert [p["metadata"]["name"] for p in body["items"]] == ["c"]
    page = client.get(f"{PODS}?limit=2").json()
    assert len(page["items"]) == 2
    assert page["metadata"]["remainingItemCount"] == 1
    rest = client.get(f"{PODS}?limit=2&continue={page['metadata']['continue']}").json()
    assert [p["metadata"]["name"] for p in rest["items"]] == ["c"]
    everywhere = client.get("/api/v1/pods").json()
    assert len(everywhere["items"]) == 3


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/api/v1/pods"), ("PUT", PODS), ("POST", f"{PODS}/a/log")],
)
def test_a_method_the_routes_lack_is_the_routers_405(client, method, path):
    """go-restful finds no route for the method; the API server's service error handler
    answers NewGenericServerResponse(405) with no resource, so nothing follows the text."""
    response = client.request(method, path, json=pod_manifest("a"))
    assert response.status_code == 405
    assert response.json()["reason"] == "MethodNotAllowed"
    assert response.json()["message"] == (
        "the server does not allow this method on the requested resource"
    )
    assert response.json()["details"] == {}
