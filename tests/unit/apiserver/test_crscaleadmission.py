"""Admission of writes through a custom resource's ``scale``: webhooks and policies see
autoscaling/v1 Scales, as for the built-in workloads (``test_scaleadmission``).

Upstream v1.32: ``apiextensions-apiserver/pkg/registry/customresource/etcd.go``
``ScaleREST`` (``GroupVersionKind``: autoscaling/v1 Scale; ``Update`` with
``scaleUpdatedObjectInfo.UpdatedObject``: mutating admission on the new Scale against
``scaleFromCustomResource`` of the stored object, whose replicas are ``-2147483648`` when
absent, then the ``cannot be empty`` check and the replicas set at ``specReplicasPath``;
``toScaleUpdateValidation``: validating admission on the Scales of the new and the
stored object); the handlers' attributes (``endpoints/handlers/update.go``,
``patch.go``); the PUT's UID precondition (``rest.defaultUpdatedObjectInfo.
Preconditions``, ``storage.Preconditions.Check``, ``storeerr.InterpretUpdateError``);
rule matching (``webhook/predicates/rules``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver.service import ApiService
from tests.conftest import ManualClock
from tests.unit.admission.test_webhookdispatch import (
    InProcessCaller,
    allow,
    api,
    caller,
    hook,
    patching,
    register,
)
from tests.unit.apiserver.test_scaleadmission import policy_allows_at_most_five
from tests.unit.controllers.crdstack import WIDGETS, CrdStack, widget

__all__ = ["api", "caller"]  # the fixtures this module uses

MERGE = {"Content-Type": "application/merge-patch+json"}
SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
OBJECT_URL = WIDGETS.format(ns="a") + "/w"
SCALE_URL = OBJECT_URL + "/scale"


@pytest.fixture
def stack(api: ApiService, clock: ManualClock) -> CrdStack:
    """The CRD stack over ``api`` with its webhook-calling chain (``make_client`` would
    put the default chain, without webhooks, in its place)."""
    chain = api.admission
    built = CrdStack(api, clock)
    api.admission = chain
    built.create_crd()
    return built


def _rule(resources: list[str]) -> dict[str, Any]:
    return {
        "operations": ["UPDATE"],
        "apiGroups": ["example.com"],
        "apiVersions": ["v1"],
        "resources": resources,
    }


def _create(stack: CrdStack, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    body = widget("w", "a", spec={"replicas": 2, "color": "red"} if spec is None else spec)
    created = stack.http.post(WIDGETS.format(ns="a"), json=body)
    assert created.status_code == 201, created.text
    document: dict[str, Any] = created.json()
    return document


def _stored_replicas(stack: CrdStack) -> Any:
    return stack.http.get(OBJECT_URL).json()["spec"].get("replicas")


def _put_scale(stack: CrdStack, replicas: int, **metadata: Any) -> Any:
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "w", "namespace": "a", **metadata},
        "spec": {"replicas": replicas},
    }
    return stack.http.put(SCALE_URL, json=body)


def _patch_scale(stack: CrdStack, replicas: int) -> Any:
    """What ``kubectl scale`` sends."""
    return stack.http.patch(SCALE_URL, json={"spec": {"replicas": replicas}}, headers=MERGE)


@pytest.mark.parametrize("verb", ["PUT", "PATCH"])
def test_a_scale_webhook_sees_scales_of_the_custom_resource(
    stack: CrdStack, caller: InProcessCaller, verb: str
) -> None:
    caller.handlers["/scale"] = allow()
    register(
        stack.api,
        ValidatingWebhookConfiguration,
        "v",
        hook("scale.x.y", "/scale", rules=[_rule(["widgets/scale"])]),
    )
    uid = _create(stack)["metadata"]["uid"]

    answer = _put_scale(stack, 5) if verb == "PUT" else _patch_scale(stack, 5)

    assert answer.status_code == 200, answer.text
    [(_, review)] = caller.calls
    request = review["request"]
    assert request["operation"] == "UPDATE"
    assert (
        request["resource"]
        == request["requestResource"]
        == {
            "group": "example.com",
            "version": "v1",
            "resource": "widgets",
        }
    )
    assert request["subResource"] == request["requestSubResource"] == "scale"
    # ScaleREST.GroupVersionKind: autoscaling/v1 Scale for every CRD version.
    assert request["kind"] == request["requestKind"] == SCALE_KIND
    assert (request["name"], request["namespace"]) == ("w", "a")
    new, old = request["object"], request["oldObject"]
    assert (new["apiVersion"], new["kind"]) == ("autoscaling/v1", "Scale")
    assert (old["apiVersion"], old["kind"]) == ("autoscaling/v1", "Scale")
    assert new["spec"]["replicas"] == 5
    assert old["spec"]["replicas"] == 2
    assert old["metadata"]["uid"] == uid
    assert "color" not in str(new) + str(old)  # never the custom object itself
    assert _stored_replicas(stack) == 5


@pytest.mark.parametrize(
    ("resources", "called"),
    [(["widgets"], False), (["widgets/scale"], True), (["widgets/*"], True),
     (["*/scale"], True), (["*/*"], True), (["widgets/status"], False), (["*"], False)],
)  # fmt: skip
def test_which_rules_match_a_custom_scale_write(
    stack: CrdStack, caller: InProcessCaller, resources: list[str], called: bool
) -> None:
    caller.handlers["/scale"] = allow()
    register(
        stack.api,
        ValidatingWebhookConfiguration,
        "v",
        hook("scale.x.y", "/scale", rules=[_rule(resources)]),
    )
    _create(stack)
    assert _patch_scale(stack, 3).status_code == 200
    assert bool(caller.calls) is called
    assert _stored_replicas(stack) == 3


def test_a_mutating_webhooks_replicas_land_at_the_spec_replicas_path(
    stack: CrdStack, caller: InProcessCaller
) -> None:
    caller.handlers["/mutate"] = patching({"op": "replace", "path": "/spec/replicas", "value": 7})
    caller.handlers["/validate"] = allow()
    rule = _rule(["widgets/scale"])
    register(stack.api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/mutate", rules=[rule]))
    register(
        stack.api, ValidatingWebhookConfiguration, "v", hook("v.x.y", "/validate", rules=[rule])
    )
    _create(stack)

    answer = _patch_scale(stack, 4)

    assert answer.status_code == 200, answer.text
    assert answer.json()["spec"] == {"replicas": 7}
    assert stack.http.get(OBJECT_URL).json()["spec"] == {"replicas": 7, "color": "red"}
    mutated, validated = (review["request"] for _, review in caller.calls)
    assert mutated["object"]["kind"] == mutated["oldObject"]["kind"] == "Scale"
    assert mutated["object"]["spec"]["replicas"] == 4
    # toScaleUpdateValidation: the Scales of the object about to be stored and the stored one.
    assert validated["object"]["spec"]["replicas"] == 7
    assert validated["oldObject"]["spec"]["replicas"] == 2
    assert validated["kind"] == SCALE_KIND


def test_a_webhook_may_fill_in_replicas_the_object_lacks(
    stack: CrdStack, caller: InProcessCaller
) -> None:
    """The ``cannot be empty`` check runs after the mutating phase, whose old Scale
    carries ``invalidSpecReplicas`` (-2147483648) for the missing value."""
    caller.handlers["/mutate"] = patching({"op": "replace", "path": "/spec/replicas", "value": 1})
    rule = _rule(["widgets/scale"])
    register(stack.api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/mutate", rules=[rule]))
    _create(stack, spec={"color": "red"})

    answer = stack.http.patch(SCALE_URL, json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)

    assert answer.status_code == 200, answer.text
    assert _stored_replicas(stack) == 1
    [(_, review)] = caller.calls
    assert review["request"]["oldObject"]["spec"]["replicas"] == -(2**31)
    assert review["request"]["object"]["spec"]["replicas"] == -(2**31)


def _webhook_sets(replicas: int) -> Any:
    def set_up(stack: CrdStack, caller: InProcessCaller) -> None:
        operation = {"op": "replace", "path": "/spec/replicas", "value": replicas}
        caller.handlers["/mutate"] = patching(operation)
        rule = _rule(["widgets/scale"])
        register(
            stack.api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/mutate", rules=[rule])
        )

    return set_up


def _policy_allows_at_most_five(stack: CrdStack, caller: InProcessCaller) -> None:
    policy_allows_at_most_five(stack.api, _rule(["widgets/scale"]))


def _watching_webhook(stack: CrdStack, caller: InProcessCaller) -> None:
    caller.handlers["/scale"] = allow()
    rule = _rule(["widgets/scale"])
    register(stack.api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/scale", rules=[rule]))


REFUSALS = {
    # A policy on widgets/scale refusing the Scale: NewForbidden's text on the resource,
    # with the validation's reason (none given: Invalid, a 422).
    "a-policy-denies": (
        _policy_allows_at_most_five,
        lambda stack: _patch_scale(stack, 6),
        422,
        "widgets.example.com \"w\" is forbidden: ValidatingAdmissionPolicy 'at-most-five' "
        "with binding 'at-most-five' denied request: too many",
    ),
    # No ValidateScale for custom resources: the object's own scale path check refuses it.
    "a-webhook-sets-a-negative-count": (
        _webhook_sets(-1),
        lambda stack: _patch_scale(stack, 4),
        422,
        'Widget.example.com "w" is invalid: .spec.replicas: Invalid value: -1: '
        "should be a non-negative integer",
    ),
    # ... and the schema's maximum.
    "a-webhook-sets-more-than-the-schema-allows": (
        _webhook_sets(11),
        lambda stack: _patch_scale(stack, 4),
        422,
        'Widget.example.com "w" is invalid: spec.replicas: Invalid value: 11: '
        "spec.replicas in body should be less than or equal to 10",
    ),
    # A PUT's uid is a storage precondition, checked before admission runs.
    "another-uid": (
        _watching_webhook,
        lambda stack: _put_scale(stack, 3, uid="other"),
        409,
        'Operation cannot be fulfilled on widgets.example.com "w": StorageError: invalid '
        "object, Code: 4, Key: /registry/example.com/widgets/a/w, ResourceVersion: 0, "
        "AdditionalErrorMsg: Precondition failed: UID in precondition: other, "
        "UID in object meta: {uid}",
    ),
}


@pytest.mark.parametrize(
    ("set_up", "write", "code", "message"), list(REFUSALS.values()), ids=list(REFUSALS)
)
def test_a_refused_custom_scale_write_reads_as_upstream_and_changes_nothing(
    stack: CrdStack,
    caller: InProcessCaller,
    set_up: Any,
    write: Any,
    code: int,
    message: str,
) -> None:
    set_up(stack, caller)
    uid = _create(stack)["metadata"]["uid"]
    answer = write(stack)
    assert answer.status_code == code, answer.text
    assert answer.json()["message"] == message.format(uid=uid)
    assert _stored_replicas(stack) == 2
    if "/scale" in caller.handlers:
        assert caller.calls == []


def test_a_matching_uid_is_no_precondition_failure(stack: CrdStack) -> None:
    uid = _create(stack)["metadata"]["uid"]
    assert _put_scale(stack, 4, uid=uid).status_code == 200
    assert _stored_replicas(stack) == 4


def test_a_dry_run_scale_write_is_admitted_as_one_and_stores_nothing(
    stack: CrdStack, caller: InProcessCaller
) -> None:
    caller.handlers["/scale"] = allow()
    rule = _rule(["widgets/scale"])
    register(
        stack.api,
        ValidatingWebhookConfiguration,
        "v",
        hook("scale.x.y", "/scale", rules=[rule], sideEffects="None"),
    )
    _create(stack)
    answer = stack.http.patch(
        SCALE_URL + "?dryRun=All", json={"spec": {"replicas": 9}}, headers=MERGE
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["spec"] == {"replicas": 9}
    assert _stored_replicas(stack) == 2
    [(_, review)] = caller.calls
    assert review["request"]["dryRun"] is True
