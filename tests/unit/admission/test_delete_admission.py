"""Admission of deletes through the API service: the attributes upstream builds for
DELETE and which plugins see them.

Upstream v1.32 rules checked:

* ``endpoints/handlers/delete.go``: the static attributes of a delete (no object, the
  request's name and namespace, the DeleteOptions as ``meta.k8s.io/v1``, ``dryRun``,
  the user); a ``deletecollection`` names no object;
* ``registry/rest/delete.go`` ``AdmissionToValidateObjectDeleteFunc``: mutating then
  validating plugins that ``Handles(Delete)``, the stored object as ``oldObject``;
  ``BeforeDelete``: a negative grace period counts as 1, a pod's grace period is the one
  ``CheckGracefulDelete`` chose, a pending graceful deletion is not admitted again;
* ``pkg/registry/core/pod/storage/eviction.go``: the eviction's own pod delete is not
  admitted (``rest.ValidateAllObjectFunc``); the eviction itself is, as a CREATE of
  ``pods/eviction`` (``createValidation``, after the create handler's mutating admission);
* ``webhook/request/admissionreview.go`` (the review's ``options``),
  ``webhook/mutating/dispatcher.go`` (a patch on a DELETE is an internal error);
* ``policy/validating``: CEL sees ``object`` null, ``oldObject`` and ``request.options``;
  the denial names ``Unknown`` when the attributes name no object (``extractResourceName``).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission import plugins
from kubeprio.admission.defaults import WebhookSetup, default_chain
from kubeprio.admission.webhookcall import WebhookClient
from kubeprio.api import errors, kinds
from kubeprio.api.admissionpolicy import (
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
)
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.core import Pod
from kubeprio.api.meta import ObjectMeta, Preconditions
from kubeprio.api.policy import Eviction
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver import deleteadmission
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import DeleteRequest
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.unit.admission.test_webhookdispatch import (
    InProcessCaller,
    allow,
    hook,
    patching,
    register,
)

DELETE_RULE = {
    "operations": ["DELETE"],
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "resources": ["configmaps", "pods"],
}


@pytest.fixture
def caller() -> InProcessCaller:
    return InProcessCaller()


@pytest.fixture
def api(store: MemoryStore, clock: ManualClock, caller: InProcessCaller) -> ApiService:
    listers = StoreListers(store)
    client = WebhookClient(caller, listers.services, listers.endpoints)
    return ApiService(
        store,
        clock=clock,
        rng=random.Random(1),
        admission=default_chain(listers, webhooks=WebhookSetup(listers, client)),
    )


def config_map(name: str = "settings", **labels: str) -> ConfigMap:
    return ConfigMap(
        metadata=ObjectMeta(name=name, namespace="default", labels=labels or None),
        data={"a": "b"},
    )


def pod(name: str = "web", **spec: Any) -> Pod:
    return from_dict(
        Pod,
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec},
        },
    )


def watch_deletes(api: ApiService, caller: InProcessCaller, answer: Any = None) -> None:
    caller.handlers["/deletes"] = answer or allow()
    register(
        api,
        ValidatingWebhookConfiguration,
        "deletes",
        hook("deletes.example.com", "/deletes", rules=[DELETE_RULE]),
    )


def reviews(caller: InProcessCaller) -> list[dict[str, Any]]:
    return [review["request"] for _target, review in caller.calls]


def test_the_default_chain_runs_only_the_plugins_that_handle_delete(
    store: MemoryStore, caller: InProcessCaller
) -> None:
    listers = StoreListers(store)
    webhooks = WebhookSetup(listers, WebhookClient(caller, listers.services, listers.endpoints))
    chain = default_chain(listers, webhooks=webhooks)
    assert [p.name for p in chain.deleting] == ["MutatingAdmissionWebhook"]
    assert [p.name for p in chain.delete_validating] == [
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook",
    ]
    # Without them, a delete builds nothing at all.
    off = plugins.resolve(disable=sorted(plugins.HANDLES_DELETE))
    bare = default_chain(listers, webhooks=webhooks, enabled=off)
    assert (bare.deleting, bare.delete_validating) == ((), ())
    outcome = deleteadmission.admit(
        bare, kinds.for_model(ConfigMap), config_map(), DeleteRequest(), user=None
    )
    assert outcome is None


def test_a_webhook_gets_the_stored_object_and_the_delete_options(
    api: ApiService, caller: InProcessCaller
) -> None:
    stored = api.create(config_map())
    watch_deletes(api, caller)
    options = DeleteRequest(
        preconditions=Preconditions(uid=stored.metadata.uid),
        propagation_policy="Foreground",
        grace_period_seconds=-5,
    )
    api.delete(ConfigMap, "settings", "default", options=options)
    [review] = reviews(caller)
    assert (review["operation"], review["name"], review["namespace"]) == (
        "DELETE", "settings", "default",
    )  # fmt: skip
    assert review["object"] is None
    assert review["oldObject"] == {**to_dict(stored), "apiVersion": "v1"}
    assert review["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    # Go's DeleteOptions field order; a negative grace period as BeforeDelete left it.
    assert list(review["options"].items()) == [
        ("kind", "DeleteOptions"),
        ("apiVersion", "meta.k8s.io/v1"),
        ("gracePeriodSeconds", 1),
        ("preconditions", {"uid": stored.metadata.uid}),
        ("propagationPolicy", "Foreground"),
    ]
    assert review["dryRun"] is False
    # In-process deletes are admitted as the system's components.
    assert review["userInfo"]["username"] == "system:kube-controller-manager"


def test_a_refused_delete_changes_nothing_and_dry_runs_are_admitted(
    api: ApiService, caller: InProcessCaller
) -> None:
    api.create(config_map(keep="true"))

    def refuse(request: dict[str, Any]) -> dict[str, Any]:
        labels = request["oldObject"]["metadata"].get("labels") or {}
        allowed = labels.get("keep") != "true"
        return {"uid": request["uid"], "allowed": allowed, "status": {"message": "kept"}}

    watch_deletes(api, caller, refuse)
    for dry_run in (True, False):
        with pytest.raises(errors.StatusError) as raised:
            api.delete(ConfigMap, "settings", "default", options=DeleteRequest(dry_run=dry_run))
        assert raised.value.message == (
            'admission webhook "deletes.example.com" denied the request: kept'
        )
    [dry, real] = reviews(caller)
    assert (dry["dryRun"], dry["options"]["dryRun"]) == (True, ["All"])
    assert real["dryRun"] is False
    assert "dryRun" not in real["options"]
    assert api.get(ConfigMap, "settings", "default").metadata.labels == {"keep": "true"}


def test_a_collection_delete_names_no_object(api: ApiService, caller: InProcessCaller) -> None:
    api.create(config_map())
    watch_deletes(api, caller)
    api.delete_object(ConfigMap, "settings", "default", collection=True)
    [review] = reviews(caller)
    assert "name" not in review
    assert review["oldObject"]["metadata"]["name"] == "settings"


def test_a_mutating_webhook_cannot_patch_a_delete(api: ApiService, caller: InProcessCaller) -> None:
    api.create(config_map())
    caller.handlers["/mutate"] = patching({"op": "add", "path": "/data/x", "value": "y"})
    register(
        api,
        MutatingWebhookConfiguration,
        "mutate",
        hook("mutate.example.com", "/mutate", rules=[DELETE_RULE]),
    )
    with pytest.raises(errors.StatusError) as raised:
        api.delete(ConfigMap, "settings", "default")
    assert raised.value.status.code == 500
    assert raised.value.message == (
        'Internal error occurred: admission webhook "mutate.example.com" attempted to modify '
        "the object, which is not supported for this operation"
    )
    assert reviews(caller)[0]["operation"] == "DELETE"


@pytest.mark.parametrize(
    ("spec", "requested", "grace"),
    [
        ({"nodeName": "n1"}, None, 30),  # the pod's terminationGracePeriodSeconds default
        ({"nodeName": "n1", "terminationGracePeriodSeconds": 7}, None, 7),
        ({"nodeName": "n1"}, 3, 3),
        ({"nodeName": "n1"}, -2, 1),
        ({}, 20, 0),  # unscheduled: deleted at once
    ],
)
def test_a_pods_options_carry_the_grace_period_before_delete_chose(
    api: ApiService,
    caller: InProcessCaller,
    spec: dict[str, Any],
    requested: int | None,
    grace: int,
) -> None:
    api.create(pod(**spec))
    watch_deletes(api, caller)
    api.delete(Pod, "web", "default", options=DeleteRequest(grace_period_seconds=requested))
    [review] = reviews(caller)
    assert review["options"]["gracePeriodSeconds"] == grace


def test_a_pending_graceful_delete_and_an_eviction_are_not_admitted(
    api: ApiService, caller: InProcessCaller
) -> None:
    api.create(pod(nodeName="n1"))
    watch_deletes(api, caller)
    api.delete(Pod, "web", "default")
    api.delete(Pod, "web", "default")  # pendingGraceful: nothing written, nothing admitted
    assert len(reviews(caller)) == 1
    api.delete(Pod, "web", "default", options=DeleteRequest(grace_period_seconds=0))
    assert len(reviews(caller)) == 2  # a shorter grace period is a new delete
    api.create(pod("pending"))
    api.evict(Eviction(metadata=ObjectMeta(name="pending", namespace="default")))
    assert len(reviews(caller)) == 2
    with pytest.raises(errors.NotFoundError):
        api.get(Pod, "pending", "default")


def protect_policy(expression: str) -> list[Any]:
    rule = {**DELETE_RULE, "apiVersions": ["v1"], "resources": ["configmaps"]}
    policy = from_dict(
        ValidatingAdmissionPolicy,
        {
            "metadata": {"name": "p"},
            "spec": {
                "matchConstraints": {"resourceRules": [rule]},
                "validations": [
                    {
                        "expression": expression,
                        "messageExpression": "'keep ' + oldObject.metadata.name",
                    }
                ],
            },
        },
    )
    binding = from_dict(
        ValidatingAdmissionPolicyBinding,
        {"metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": ["Deny"]}},
    )
    return [policy, binding]


def test_a_policy_sees_a_null_object_the_old_one_and_the_options(api: ApiService) -> None:
    for obj in protect_policy(
        "object == null && request.operation == 'DELETE' "
        "&& request.options.propagationPolicy == 'Orphan' "
        "&& !(oldObject.metadata.name in ['settings'])"
    ):
        api.create(obj)
    api.create(config_map())
    api.create(config_map("other"))
    orphan = DeleteRequest(propagation_policy="Orphan")
    api.delete(ConfigMap, "other", "default", options=orphan)
    with pytest.raises(errors.StatusError) as raised:
        api.delete(ConfigMap, "settings", "default", options=orphan)
    text = "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: keep settings"
    assert raised.value.message == f'configmaps "settings" is forbidden: {text}'
    assert (raised.value.status.reason, raised.value.status.code) == ("Invalid", 422)
    # A collection delete names no object: upstream's extractResourceName says Unknown.
    with pytest.raises(errors.StatusError) as raised:
        api.delete_object(ConfigMap, "settings", "default", options=orphan, collection=True)
    assert raised.value.message == f'configmaps "Unknown" is forbidden: {text}'
    api.get(ConfigMap, "settings", "default")


def test_cel_request_names_what_the_delete_attributes_name(api: ApiService) -> None:
    for obj in protect_policy("request.name == oldObject.metadata.name"):
        api.create(obj)
    api.create(config_map())
    api.create(config_map("other"))
    api.delete(ConfigMap, "other", "default")
    # deletecollection: the attributes' name is "" (CreateAdmissionRequest takes it as is).
    with pytest.raises(errors.StatusError) as raised:
        api.delete_object(ConfigMap, "settings", "default", collection=True)
    assert raised.value.message.endswith("denied request: keep settings")


def test_a_delete_no_configuration_names_is_not_admitted_until_one_does(
    api: ApiService, caller: InProcessCaller
) -> None:
    """``AdmissionChain.delete_interest``: the DELETE plugins' indexes rule a delete out
    before its attributes are built; a configuration that names the resource (a webhook
    or a policy, created or changed later) brings admission back on the next delete."""
    chain = api.admission
    assert chain.delete_interest is not None
    pods, config_maps = kinds.for_model(Pod), kinds.for_model(ConfigMap)
    options = DeleteRequest()
    assert not chain.delete_interest(pods)
    assert deleteadmission.admit(chain, pods, pod(), options, user=None) is None

    for obj in protect_policy("true"):  # a policy on configmaps only
        api.create(obj)
    assert chain.delete_interest(config_maps)
    assert not chain.delete_interest(pods)
    assert deleteadmission.admit(chain, config_maps, config_map(), options, user=None) is not None

    watch_deletes(api, caller)  # a webhook on configmaps and pods
    assert chain.delete_interest(pods)
    api.create(pod("gone"))
    api.delete(Pod, "gone", "default", options=DeleteRequest(grace_period_seconds=0))
    assert [request["name"] for request in reviews(caller)] == ["gone"]

    api.delete(ValidatingWebhookConfiguration, "deletes")
    assert not chain.delete_interest(pods)
    # Webhooks never see the objects that configure admission: nothing to admit there.
    assert not chain.delete_interest(kinds.for_model(ValidatingWebhookConfiguration))


EVICTION_RULE = {
    "operations": ["CREATE"],
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "resources": ["pods/eviction"],
}


def test_an_eviction_is_admitted_as_a_create_of_pods_eviction(
    api: ApiService, caller: InProcessCaller
) -> None:
    """``EvictionREST.Create``: the create handler admits the Eviction (mutating admission,
    then ``createValidation``) before the pod is read, so a webhook naming
    ``pods/eviction`` may refuse it and the pod stays; the pod's own delete is not
    admitted (a DELETE rule on pods sees nothing)."""
    api.create(pod(nodeName="n1"))

    def refuse(request: dict[str, Any]) -> dict[str, Any]:
        return {"uid": request["uid"], "allowed": False, "status": {"message": "not now"}}

    caller.handlers["/evictions"] = refuse
    register(
        api,
        ValidatingWebhookConfiguration,
        "evictions",
        hook("evictions.example.com", "/evictions", rules=[EVICTION_RULE]),
    )
    watch_deletes(api, caller)
    eviction = Eviction(metadata=ObjectMeta(name="web", namespace="default"))
    with pytest.raises(errors.StatusError) as refused:
        api.evict(eviction)
    assert refused.value.message == (
        'admission webhook "evictions.example.com" denied the request: not now'
    )
    [review] = reviews(caller)
    assert (review["operation"], review["name"], review["namespace"]) == (
        "CREATE", "web", "default",
    )  # fmt: skip
    assert review["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert review["subResource"] == "eviction"
    assert review["kind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert review["object"]["metadata"]["name"] == "web"
    assert api.get(Pod, "web", "default").metadata.deletion_timestamp is None
    caller.handlers["/evictions"] = allow()
    api.evict(eviction)
    assert [r["operation"] for r in reviews(caller)] == ["CREATE", "CREATE"]
    # A bound pod is deleted gracefully.
    assert api.get(Pod, "web", "default").metadata.deletion_timestamp is not None
