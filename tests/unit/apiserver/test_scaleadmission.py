"""Admission of writes through ``<kind>/scale``: webhooks and policies see Scales.

Upstream v1.32: ``pkg/registry/apps/deployment/storage/storage.go`` (and the replicaset,
statefulset and replicationcontroller registries) ``ScaleREST.Update`` with
``scaleUpdatedObjectInfo`` (mutating admission on the new Scale against
``scaleFromDeployment`` of the stored object, then ``ValidateScale`` and the UID
precondition) and ``toScaleUpdateValidation`` (validating admission on the Scales of the
new and the stored workload); the attributes are the handler's (``endpoints/handlers/
update.go``, ``patch.go``): resource ``<plural>``, subresource ``scale``, kind
autoscaling/v1 Scale. Webhook rule matching (``webhook/predicates/rules``): ``deployments``
alone matches no subresource, ``deployments/*`` and ``*/scale`` do.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeprio.api import errors, manifest
from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from kubeprio.api.apps import Deployment, ReplicaSet, Scale, ScaleSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.serialization import from_dict
from kubeprio.api.statefulset import StatefulSet
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver.service import ApiService
from tests.manifests import deployment_doc, template_doc
from tests.unit.admission.test_webhookdispatch import (
    InProcessCaller,
    allow,
    api,
    caller,
    hook,
    patching,
    register,
)

__all__ = ["api", "caller"]  # the fixtures this module uses


def _workload_doc(kind: str) -> dict[str, Any]:
    doc = deployment_doc("web")
    doc["kind"] = kind
    if kind == "StatefulSet":
        doc["spec"]["serviceName"] = "web"
    if kind == "ReplicationController":
        doc["apiVersion"] = "v1"
        doc["spec"] = {"selector": {"app": "web"}, "template": template_doc()}
    doc["spec"]["replicas"] = 2
    return doc


# (model, group, plural) of every kind with a scale subresource.
SCALABLE = [
    (Deployment, "apps", "deployments"),
    (ReplicaSet, "apps", "replicasets"),
    (StatefulSet, "apps", "statefulsets"),
    (ReplicationController, "", "replicationcontrollers"),
]


def _rule(group: str, resource: str, operations: tuple[str, ...] = ("UPDATE",)) -> dict[str, Any]:
    return {
        "operations": list(operations),
        "apiGroups": [group],
        "apiVersions": ["v1"],
        "resources": [resource],
    }


def _scale(name: str, replicas: int, **metadata: Any) -> Scale:
    return Scale(
        metadata=ObjectMeta(name=name, namespace="default", **metadata),
        spec=ScaleSpec(replicas=replicas),
    )


def _create(api: ApiService, kind: str) -> Any:
    return api.create_object(manifest.decode_object(copy.deepcopy(_workload_doc(kind)))).obj


@pytest.mark.parametrize(("model", "group", "plural"), SCALABLE, ids=[p for *_, p in SCALABLE])
def test_a_scale_webhook_sees_scales_with_the_subresource(
    api: ApiService, caller: InProcessCaller, model: type[Any], group: str, plural: str
) -> None:
    caller.handlers["/scale"] = allow()
    rule = _rule(group, f"{plural}/scale")
    register(api, ValidatingWebhookConfiguration, "v", hook("scale.x.y", "/scale", rules=[rule]))
    stored = _create(api, model.__name__)
    api.update_scale_object(model, _scale("web", 5))

    [(_, review)] = caller.calls
    request = review["request"]
    assert request["operation"] == "UPDATE"
    assert request["resource"] == {"group": group, "version": "v1", "resource": plural}
    assert request["subResource"] == request["requestSubResource"] == "scale"
    scale_kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert request["kind"] == request["requestKind"] == scale_kind
    assert request["name"] == "web"
    new, old = request["object"], request["oldObject"]
    assert (new["apiVersion"], new["kind"]) == ("autoscaling/v1", "Scale")
    assert (old["apiVersion"], old["kind"]) == ("autoscaling/v1", "Scale")
    # Validation sees the Scales of the workload about to be stored and of the stored one.
    assert new["spec"]["replicas"] == 5
    assert old["spec"]["replicas"] == 2
    assert old["metadata"]["uid"] == stored.metadata.uid
    assert old["status"]["selector"] == "app=web"


@pytest.mark.parametrize(
    ("resources", "called"),
    [(["deployments"], False), (["deployments/scale"], True), (["deployments/*"], True),
     (["*/scale"], True), (["deployments/status"], False), (["*"], False), (["*/*"], True)],
)  # fmt: skip
def test_which_rules_match_a_scale_write(
    api: ApiService, caller: InProcessCaller, resources: list[str], called: bool
) -> None:
    caller.handlers["/scale"] = allow()
    rule = {**_rule("apps", ""), "resources": resources}
    register(api, ValidatingWebhookConfiguration, "v", hook("scale.x.y", "/scale", rules=[rule]))
    _create(api, "Deployment")
    api.update_scale_object(Deployment, _scale("web", 3))
    assert bool(caller.calls) is called


def test_a_mutating_webhooks_replicas_are_stored_and_validated_as_mutated(
    api: ApiService, caller: InProcessCaller
) -> None:
    caller.handlers["/mutate"] = patching({"op": "replace", "path": "/spec/replicas", "value": 7})
    caller.handlers["/validate"] = allow()
    rule = _rule("apps", "deployments/scale")
    register(api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/mutate", rules=[rule]))
    register(api, ValidatingWebhookConfiguration, "v", hook("v.x.y", "/validate", rules=[rule]))
    _create(api, "Deployment")

    result = api.update_scale_object(Deployment, _scale("web", 4))

    assert result.obj.spec.replicas == 7
    assert api.get(Deployment, "web", "default").spec.replicas == 7
    mutated, validated = (review["request"] for _, review in caller.calls)
    assert mutated["object"]["spec"]["replicas"] == 4
    assert validated["object"]["spec"]["replicas"] == 7
    assert validated["oldObject"]["spec"]["replicas"] == 2


def test_a_webhook_for_the_workload_alone_sees_no_scale_write(
    api: ApiService, caller: InProcessCaller
) -> None:
    """Before, a scale write was admitted as an update of the Deployment itself."""
    caller.handlers["/deny"] = lambda request: {"uid": request["uid"], "allowed": False}
    rule = _rule("apps", "deployments")
    register(api, ValidatingWebhookConfiguration, "v", hook("deny.x.y", "/deny", rules=[rule]))
    _create(api, "Deployment")
    assert api.update_scale_object(Deployment, _scale("web", 3)).obj.spec.replicas == 3
    assert caller.calls == []


def _webhook_sets_minus_one(api: ApiService, caller: InProcessCaller) -> None:
    caller.handlers["/mutate"] = patching({"op": "replace", "path": "/spec/replicas", "value": -1})
    rule = _rule("apps", "deployments/scale")
    register(api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/mutate", rules=[rule]))


def policy_allows_at_most_five(api: ApiService, rule: dict[str, Any]) -> None:
    """A Deny policy on the scale writes ``rule`` matches: CEL's ``object`` is the Scale
    and ``request.kind`` is autoscaling/v1 Scale (``cel.CreateAdmissionRequest`` takes the
    attributes' kind)."""
    expression = (
        "request.kind.kind == 'Scale' && request.subResource == 'scale' && "
        "object.spec.replicas <= 5"
    )
    api.create_object(
        from_dict(
            ValidatingAdmissionPolicy,
            {
                "metadata": {"name": "at-most-five"},
                "spec": {
                    "matchConstraints": {"resourceRules": [rule]},
                    "validations": [{"expression": expression, "message": "too many"}],
                },
            },
        )
    )
    api.create_object(
        from_dict(
            ValidatingAdmissionPolicyBinding,
            {
                "metadata": {"name": "at-most-five"},
                "spec": {"policyName": "at-most-five", "validationActions": ["Deny"]},
            },
        )
    )


def _policy_allows_at_most_five(api: ApiService, caller: InProcessCaller) -> None:
    policy_allows_at_most_five(api, _rule("apps", "deployments/scale"))


def _nothing(api: ApiService, caller: InProcessCaller) -> None:
    pass


# (set-up, the Scale written, error, message, whether the write is a PUT: a PUT's Scale
# uid is a storage precondition, a PATCH's is not)
REFUSALS = {
    # ValidateScale on the mutated Scale.
    "a-webhook-sets-a-negative-count": (
        _webhook_sets_minus_one,
        _scale("web", 4),
        errors.InvalidError,
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: '
        "must be greater than or equal to 0",
        True,
    ),
    # A PUT's Scale uid is a storage precondition on the workload, checked before anything
    # else (scaleUpdatedObjectInfo.Preconditions -> GuaranteedUpdate's Preconditions.Check,
    # InterpretUpdateError's NewConflict on the workload's resource).
    "another-uid": (
        _nothing,
        _scale("web", 3, uid="other"),
        errors.ConflictError,
        'Operation cannot be fulfilled on deployments.apps "web": StorageError: invalid '
        "object, Code: 4, Key: /registry/deployments/default/web, ResourceVersion: 0, "
        "AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object "
        "meta: {uid}",
        True,
    ),
    # A PATCH has no storage precondition: scaleUpdatedObjectInfo.UpdatedObject's own
    # check on the patched Scale (NewConflict on deployments/scale).
    "another-uid-patched-in": (
        _nothing,
        _scale("web", 3, uid="other"),
        errors.ConflictError,
        'Operation cannot be fulfilled on deployments/scale.apps "web": Precondition failed: '
        "UID in precondition: other, UID in object meta: {uid}",
        False,
    ),
    # A policy on deployments/scale refusing the Scale.
    "a-policy-denies": (
        _policy_allows_at_most_five,
        _scale("web", 6),
        errors.StatusError,
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'at-most-five' "
        "with binding 'at-most-five' denied request: too many",
        True,
    ),
}


@pytest.mark.parametrize(
    ("set_up", "scale", "error", "message", "put"), list(REFUSALS.values()), ids=list(REFUSALS)
)
def test_a_refused_scale_write_reads_as_upstream_and_changes_nothing(
    api: ApiService,
    caller: InProcessCaller,
    set_up: Any,
    scale: Scale,
    error: type[errors.StatusError],
    message: str,
    put: bool,
) -> None:
    set_up(api, caller)
    uid = _create(api, "Deployment").metadata.uid
    with pytest.raises(error) as raised:
        api.update_scale_object(Deployment, scale, uid_is_precondition=put)
    assert raised.value.message == message.format(uid=uid)
    assert api.get(Deployment, "web", "default").spec.replicas == 2


def test_a_policy_on_the_scale_subresource_admits_the_scales_it_allows(
    api: ApiService, caller: InProcessCaller
) -> None:
    _policy_allows_at_most_five(api, caller)
    _create(api, "Deployment")
    assert api.update_scale_object(Deployment, _scale("web", 5)).obj.spec.replicas == 5
    assert api.get(Deployment, "web", "default").spec.replicas == 5
