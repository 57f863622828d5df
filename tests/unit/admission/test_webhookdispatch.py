"""The webhook plugins through the API service's write path, with webhooks answered in
process (a ``WebhookCaller`` that runs a Python function per URL; the HTTPS transport is
covered by tests/e2e/test_serve_webhooks.py). Upstream v1.32 rules checked:

* ``webhook/mutating/dispatcher.go``: a JSONPatch is applied and the object defaulted again;
  reinvocation of ``IfNeeded`` webhooks after a later webhook changed the object
  (``webhookReinvokeContext``); a patch on no object, an unsupported patch type;
* ``webhook/validating/dispatcher.go``: every matching webhook called, the first refusal
  answered; ``failurePolicy`` Ignore/Fail on call failures;
* ``webhook/request/admissionreview.go`` ``VerifyAdmissionResponse``: uid, kind, patch
  texts; ``errors/statuserror.go`` ``ToStatusErr``: code floor 400, reason, "without
  explanation";
* ``util/webhook`` service resolution texts (``service "x" not found``, ``no endpoints
  available for service "x"``).
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from kubeprio.admission.defaults import WebhookSetup, default_chain
from kubeprio.admission.webhookcall import HttpAnswer, TransportError, WebhookClient, WebhookTarget
from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.api.manifest import decode_object
from kubeprio.api.serialization import from_dict
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class InProcessCaller:
    """Answers POSTs with a handler per URL path; records what it was sent."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}
        self.calls: list[tuple[WebhookTarget, dict[str, Any]]] = []

    def post(self, target: WebhookTarget, body: bytes, timeout: float) -> HttpAnswer:
        review = json.loads(body)
        self.calls.append((target, review))
        path = target.path.partition("?")[0]
        handler = self.handlers.get(path)
        if handler is None:
            raise TransportError(
                f"dial tcp {target.host}:{target.port}: connect: connection refused"
            )
        response = handler(review["request"])
        answer = {
            "apiVersion": review["apiVersion"],
            "kind": "AdmissionReview",
            "response": response,
        }
        return HttpAnswer(200, "application/json", json.dumps(answer).encode())

    def paths(self) -> list[str]:
        return [target.path.partition("?")[0] for target, _ in self.calls]


@pytest.fixture
def caller() -> InProcessCaller:
    return InProcessCaller()


@pytest.fixture
def api(store: MemoryStore, clock: ManualClock, caller: InProcessCaller) -> ApiService:
    listers = StoreListers(store)
    client = WebhookClient(caller, listers.services, listers.endpoints)
    service = ApiService(
        store,
        clock=clock,
        rng=random.Random(1),
        admission=default_chain(listers, webhooks=WebhookSetup(listers, client)),
    )
    return service


def hook(name: str, path: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "clientConfig": {"url": f"https://hooks.example.com{path}"},
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["pods"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **fields,
    }


def register(api: ApiService, kind: type[Any], name: str, *hooks: dict[str, Any]) -> None:
    api.create_object(from_dict(kind, {"metadata": {"name": name}, "webhooks": list(hooks)}))


def pod(name: str = "web", **spec: Any) -> Pod:
    return from_dict(
        Pod,
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec},
        },
    )


def allow(**extra: Any) -> Handler:
    return lambda request: {"uid": request["uid"], "allowed": True, **extra}


def patching(*operations: dict[str, Any]) -> Handler:
    patch = base64.b64encode(json.dumps(list(operations)).encode()).decode()
    return allow(patchType="JSONPatch", patch=patch)


def add_label(key: str) -> Handler:
    def handler(request: dict[str, Any]) -> dict[str, Any]:
        labels = request["object"]["metadata"].get("labels")
        ops: list[dict[str, Any]] = (
            [] if labels else [{"op": "add", "path": "/metadata/labels", "value": {}}]
        )
        if labels and key in labels:
            return {"uid": request["uid"], "allowed": True}
        ops.append({"op": "add", "path": f"/metadata/labels/{key}", "value": "yes"})
        return patching(*ops)(request)

    return handler


def test_requests_no_webhook_names_call_nothing(api: ApiService, caller: InProcessCaller) -> None:
    register(api, ValidatingWebhookConfiguration, "svc-only", hook("svc.x.y", "/svc", rules=[
        {"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["services"]}
    ]))  # fmt: skip
    api.create_object(pod())
    assert caller.calls == []


def test_a_patch_is_applied_and_the_pod_defaulted_again(
    api: ApiService, caller: InProcessCaller
) -> None:
    caller.handlers["/mutate"] = patching(
        {
            "op": "add",
            "path": "/spec/initContainers",
            "value": [{"name": "init", "image": "busybox"}],
        }
    )
    register(api, MutatingWebhookConfiguration, "m", hook("mutate.x.y", "/mutate"))
    stored = api.create_object(pod()).obj
    [init] = stored.spec.init_containers
    # Container defaults (SetDefaults_Container) apply to the container the patch added.
    assert init.extra["imagePullPolicy"] == "Always"
    assert init.extra["terminationMessagePath"] == "/dev/termination-log"


def test_if_needed_webhooks_are_called_again_after_a_later_change(
    api: ApiService, caller: InProcessCaller
) -> None:
    caller.handlers["/first"] = add_label("first")
    caller.handlers["/second"] = add_label("second")
    register(
        api,
        MutatingWebhookConfiguration,
        "m",
        hook("first.x.y", "/first", reinvocationPolicy="IfNeeded"),
        hook("second.x.y", "/second"),
    )
    stored = api.create_object(pod()).obj
    assert stored.metadata.labels == {"first": "yes", "second": "yes"}
    # first, second, then first again (it is IfNeeded and second changed the object);
    # second (Never) is not called again.
    assert caller.paths() == ["/first", "/second", "/first"]


def test_never_webhooks_are_called_once(api: ApiService, caller: InProcessCaller) -> None:
    caller.handlers["/first"] = add_label("first")
    caller.handlers["/second"] = add_label("second")
    register(
        api,
        MutatingWebhookConfiguration,
        "m",
        hook("first.x.y", "/first"),
        hook("second.x.y", "/second"),
    )
    api.create_object(pod())
    assert caller.paths() == ["/first", "/second"]


@pytest.mark.parametrize(
    ("result", "code", "reason", "message"),
    [
        ({"code": 403, "reason": "Forbidden", "message": "no"}, 403, "Forbidden", 'admission webhook "deny.x.y" denied the request: no'),
        ({"code": 200, "message": "no"}, 400, None, 'admission webhook "deny.x.y" denied the request: no'),
        ({"reason": "Unauthorized"}, 400, "Unauthorized", 'admission webhook "deny.x.y" denied the request: Unauthorized'),
        (None, 400, None, 'admission webhook "deny.x.y" denied the request without explanation'),
    ],
)  # fmt: skip
def test_a_refusal_reads_as_upstream(
    api: ApiService,
    caller: InProcessCaller,
    result: Any,
    code: int,
    reason: str | None,
    message: str,
) -> None:
    caller.handlers["/deny"] = lambda request: {
        "uid": request["uid"],
        "allowed": False,
        **({"status": result} if result else {}),
    }
    register(api, ValidatingWebhookConfiguration, "v", hook("deny.x.y", "/deny"))
    with pytest.raises(errors.StatusError) as refused:
        api.create_object(pod())
    assert (refused.value.status.code, refused.value.status.reason) == (code, reason)
    assert refused.value.message == message
    assert api.list(Pod, "default").items == []


def test_every_validating_webhook_is_called_and_the_first_refusal_wins(
    api: ApiService, caller: InProcessCaller
) -> None:
    caller.handlers["/a"] = lambda r: {
        "uid": r["uid"],
        "allowed": False,
        "status": {"message": "a says no"},
    }
    caller.handlers["/b"] = lambda r: {
        "uid": r["uid"],
        "allowed": False,
        "status": {"message": "b says no"},
        "warnings": ["b warns"],
    }
    register(api, ValidatingWebhookConfiguration, "v", hook("a.x.y", "/a"), hook("b.x.y", "/b"))
    with pytest.raises(errors.StatusError) as refused:
        api.create_object(pod())
    assert refused.value.message.endswith("a says no")
    assert caller.paths() == ["/a", "/b"]
    assert refused.value.warnings == ("b warns",)


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_call_failures_follow_the_failure_policy(api: ApiService, policy: str) -> None:
    register(
        api, ValidatingWebhookConfiguration, "v", hook("down.x.y", "/nobody", failurePolicy=policy)
    )
    if policy == "Ignore":
        assert api.create_object(pod()).obj.metadata.name == "web"
        return
    with pytest.raises(errors.InternalError) as failed:
        api.create_object(pod())
    assert failed.value.message == (
        'Internal error occurred: failed calling webhook "down.x.y": failed to call webhook: '
        'Post "https://hooks.example.com/nobody?timeout=10s": dial tcp hooks.example.com:443: '
        "connect: connection refused"
    )


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (lambda r: {"uid": "other", "allowed": True}, 'expected response.uid="UID", got "other"'),
        (lambda r: {"uid": r["uid"], "allowed": True, "patchType": "JSONPatch"}, "validating webhook may not return response.patchType"),
    ],
)  # fmt: skip
def test_invalid_responses_are_call_failures(
    api: ApiService, caller: InProcessCaller, response: Handler, reason: str
) -> None:
    caller.handlers["/odd"] = response
    register(api, ValidatingWebhookConfiguration, "v", hook("odd.x.y", "/odd"))
    with pytest.raises(errors.InternalError) as failed:
        api.create_object(pod())
    uid = caller.calls[0][1]["request"]["uid"]
    assert failed.value.message == (
        'Internal error occurred: failed calling webhook "odd.x.y": received invalid webhook '
        f"response: {reason.replace('UID', uid)}"
    )


def test_a_patch_that_does_not_apply_is_an_internal_error_even_when_ignored(
    api: ApiService, caller: InProcessCaller
) -> None:
    caller.handlers["/bad"] = patching({"op": "remove", "path": "/spec/nothing"})
    register(
        api, MutatingWebhookConfiguration, "m", hook("bad.x.y", "/bad", failurePolicy="Ignore")
    )
    with pytest.raises(errors.InternalError) as failed:
        api.create_object(pod())
    assert failed.value.message.startswith("Internal error occurred: ")


@pytest.mark.parametrize(
    ("objects", "reason"),
    [
        ([], 'service "hook" not found'),
        (
            [{"kind": "Service", "spec": {"ports": [{"port": 443}]}}],
            'endpoints "hook" not found',
        ),
        (
            [
                {"kind": "Service", "spec": {"ports": [{"port": 443}]}},
                {"kind": "Endpoints", "subsets": []},
            ],
            'no endpoints available for service "hook"',
        ),
        (
            [{"kind": "Service", "spec": {"ports": [{"port": 8443}]}}],
            'no service port 443 found for service "hook"',
        ),
    ],
)
def test_service_references_resolve_through_endpoints(
    api: ApiService, caller: InProcessCaller, objects: list[dict[str, Any]], reason: str
) -> None:
    for body in objects:
        api.create_object(
            decode_object(
                {"apiVersion": "v1", "metadata": {"name": "hook", "namespace": "default"}, **body}
            )
        )
    service_hook = hook(
        "svc.x.y",
        "/",
        clientConfig={"service": {"namespace": "default", "name": "hook", "path": "/check"}},
    )
    register(api, ValidatingWebhookConfiguration, "v", service_hook)
    with pytest.raises(errors.InternalError) as failed:
        api.create_object(pod())
    assert failed.value.message == (
        'Internal error occurred: failed calling webhook "svc.x.y": failed to call webhook: '
        f'Post "https://hook.default.svc:443/check?timeout=10s": {reason}'
    )


def test_a_service_with_a_real_endpoint_is_called_with_its_tls_name(
    api: ApiService, caller: InProcessCaller
) -> None:
    meta = {"name": "hook", "namespace": "default"}
    api.create_object(
        decode_object(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": meta,
                "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]},
            }
        )
    )
    api.create_object(
        decode_object(
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": meta,
                "subsets": [
                    {"addresses": [{"ip": "10.1.2.3"}], "ports": [{"name": "https", "port": 9443}]}
                ],
            }
        )
    )
    caller.handlers["/check"] = allow()
    register(
        api,
        ValidatingWebhookConfiguration,
        "v",
        hook(
            "svc.x.y",
            "/",
            clientConfig={"service": {"namespace": "default", "name": "hook", "path": "/check"}},
        ),
    )
    api.create_object(pod())
    [(target, review)] = caller.calls
    assert (target.host, target.port, target.server_name) == ("10.1.2.3", 9443, "hook.default.svc")
    assert review["apiVersion"] == "admission.k8s.io/v1"
    assert review["request"]["operation"] == "CREATE"


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_an_unsupported_patch_type_is_a_call_failure(
    api: ApiService, caller: InProcessCaller, policy: str
) -> None:
    """``callAttrMutatingHook``: a patch type other than JSONPatch is ``ErrCallingWebhook``,
    so the failure policy decides."""
    patch = base64.b64encode(b'{"metadata": {"labels": {"a": "b"}}}').decode()
    caller.handlers["/merge"] = allow(patchType="MergePatch", patch=patch)
    register(
        api, MutatingWebhookConfiguration, "m", hook("merge.x.y", "/merge", failurePolicy=policy)
    )
    if policy == "Ignore":
        assert api.create_object(pod()).obj.metadata.labels is None
        return
    with pytest.raises(errors.InternalError) as failed:
        api.create_object(pod())
    assert failed.value.message == (
        'Internal error occurred: failed calling webhook "merge.x.y": unsupported patch type '
        '"MergePatch"'
    )


MATCH_ALL = [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}]


@pytest.mark.parametrize(
    ("expression", "called"),
    [
        ("object.metadata.name == 'web'", True),
        ("object.metadata.name == 'db'", False),
        ("request.operation == 'CREATE' && oldObject == null", True),
    ],
)
def test_match_conditions_decide_whether_the_webhook_is_called(
    api: ApiService, caller: InProcessCaller, expression: str, called: bool
) -> None:
    """``matchconditions.matcher.Match``: every condition true calls the webhook; the first
    false skips it."""
    caller.handlers["/cond"] = allow()
    conditions = [
        {"name": "first", "expression": "true"},
        {"name": "second", "expression": expression},
    ]
    register(
        api,
        ValidatingWebhookConfiguration,
        "v",
        hook("cond.x.y", "/cond", matchConditions=conditions),
    )
    api.create_object(pod())
    assert (caller.paths() == ["/cond"]) is called


def test_a_failing_match_condition_refuses_the_request(
    api: ApiService, caller: InProcessCaller
) -> None:
    """``ShouldCallHook``: an evaluation error fails closed with Forbidden, even with
    failurePolicy Ignore."""
    conditions = [{"name": "label", "expression": "object.metadata.labels.team == 'a'"}]
    register(
        api, ValidatingWebhookConfiguration, "v",
        hook("cond.x.y", "/cond", matchConditions=conditions, failurePolicy="Ignore"),
    )  # fmt: skip
    with pytest.raises(errors.ForbiddenError) as refused:
        api.create_object(pod())
    assert refused.value.message == (
        "pods \"web\" is forbidden: expression 'object.metadata.labels.team == 'a'' resulted "
        "in error: no such key: labels"
    )
    assert caller.calls == []


def test_admission_configuration_objects_are_never_sent_to_webhooks(
    api: ApiService, caller: InProcessCaller
) -> None:
    """``IsExemptAdmissionConfigurationResource``: a webhook matching everything is not
    called for webhook configurations, so it cannot block its own removal."""
    caller.handlers["/all"] = lambda r: {"uid": r["uid"], "allowed": False}
    register(api, ValidatingWebhookConfiguration, "v", hook("all.x.y", "/all", rules=MATCH_ALL))
    register(api, MutatingWebhookConfiguration, "m", hook("other.x.y", "/other"))
    assert caller.calls == []
    with pytest.raises(errors.StatusError):
        api.create_object(pod())
