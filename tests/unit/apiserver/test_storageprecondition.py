"""A replace's uid is a storage precondition, checked before admission; a stale
resourceVersion is a conflict after the mutating phase.

Upstream v1.32: ``endpoints/handlers/update.go`` wraps a PUT's body in
``rest.DefaultUpdatedObjectInfo``, whose ``Preconditions`` carry the body's uid; the generic
store's ``Update`` (``registry/generic/registry/store.go``) passes it to
``GuaranteedUpdate``, which runs ``Preconditions.Check`` on the stored object before
``UpdatedObject`` (where the mutating admission runs), and ``InterpretUpdateError`` turns
the storage error into a 409 on the resource. The resourceVersion comparison
(``OptimisticLockErrorMsg``) is in the store's update function after ``UpdatedObject`` and
before ``BeforeUpdate`` and the validating admission. A patch has no precondition
(``patch.go`` builds its ``DefaultUpdatedObjectInfo`` without an object): a patched uid
fails ``ValidateObjectMetaUpdate`` (immutable). Keys: ``SpecialDefaultResourcePrefixes``
(``pkg/kubeapiserver/default_storage_factory_builder.go``), custom resources under
``<group>/<plural>``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeprio.api import errors, kinds, manifest
from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.apps import Deployment
from kubeprio.api.core import Node
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.model import evolve
from kubeprio.api.patch import PatchType
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.storageprecondition import storage_key
from tests.manifests import deployment_doc, node_doc, template_doc
from tests.unit.admission.test_webhookdispatch import (
    InProcessCaller,
    allow,
    api,
    caller,
    hook,
    register,
)

__all__ = ["api", "caller"]  # the fixtures this module uses


def _custom(plural: str, namespaced: bool) -> ResourceInfo:
    return ResourceInfo("example.com", "v1", "Widget", plural, "widget", namespaced, CustomObject)


KEYS = [
    (kinds.for_model(Deployment), "default", "web", "/registry/deployments/default/web"),
    (kinds.for_model(Node), None, "n1", "/registry/minions/n1"),
    (kinds.for_name("services"), "default", "db", "/registry/services/specs/default/db"),
    (kinds.for_name("endpoints"), "default", "db", "/registry/services/endpoints/default/db"),
    (kinds.for_model(ReplicationController), "a", "rc", "/registry/controllers/a/rc"),
    (kinds.for_name("ingresses"), "default", "in", "/registry/ingress/default/in"),
    (kinds.for_name("priorityclasses"), None, "high", "/registry/priorityclasses/high"),
    (_custom("widgets", True), "a", "w", "/registry/example.com/widgets/a/w"),
    (_custom("gadgets", False), None, "g", "/registry/example.com/gadgets/g"),
]


@pytest.mark.parametrize(("info", "namespace", "name", "key"), KEYS, ids=[k for *_, k in KEYS])
def test_the_storage_key_is_upstreams_etcd_key(
    info: ResourceInfo, namespace: str | None, name: str, key: str
) -> None:
    assert storage_key(info, namespace, name) == key


def _every_update_webhook(api: ApiService) -> None:
    rule = {
        "operations": ["UPDATE"],
        "apiGroups": ["*"],
        "apiVersions": ["*"],
        "resources": ["*/*"],
    }
    register(api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/mutate", rules=[rule]))
    register(api, ValidatingWebhookConfiguration, "v", hook("v.x.y", "/validate", rules=[rule]))


def _deployment(api: ApiService) -> Deployment:
    doc = deployment_doc("web")
    obj = api.create_object(manifest.decode_object(doc)).obj
    assert isinstance(obj, Deployment)
    return obj


def _rc(api: ApiService) -> ReplicationController:
    doc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "rc", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "template": template_doc()},
    }
    obj = api.create_object(manifest.decode_object(doc)).obj
    assert isinstance(obj, ReplicationController)
    return obj


def _node(api: ApiService) -> Node:
    obj = api.create_object(manifest.decode_object(copy.deepcopy(node_doc("n1")))).obj
    assert isinstance(obj, Node)
    return obj


# (what is stored, the subresource written, its resource in the text, its key)
REPLACES = {
    "deployment": (_deployment, "", "deployments.apps", "/registry/deployments/default/web"),
    "deployment-status": (
        _deployment,
        "status",
        "deployments.apps",
        "/registry/deployments/default/web",
    ),
    "replicationcontroller": (
        _rc,
        "",
        "replicationcontrollers",
        "/registry/controllers/default/rc",
    ),
    "node-status": (_node, "status", "nodes", "/registry/minions/n1"),
}


@pytest.mark.parametrize(
    ("create", "subresource", "resource", "key"), list(REPLACES.values()), ids=list(REPLACES)
)
def test_a_replace_with_another_uid_is_a_storage_conflict_before_admission(
    api: ApiService,
    caller: InProcessCaller,
    create: Any,
    subresource: str,
    resource: str,
    key: str,
) -> None:
    stored = create(api)
    _every_update_webhook(api)
    caller.handlers["/mutate"] = caller.handlers["/validate"] = allow()
    sent = evolve(stored, metadata=evolve(stored.metadata, uid="other"))
    with pytest.raises(errors.ConflictError) as raised:
        api.update_object(sent, subresource=subresource)
    name = stored.metadata.name
    assert raised.value.message == (
        f'Operation cannot be fulfilled on {resource} "{name}": StorageError: invalid object, '
        f"Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
        f"UID in precondition: other, UID in object meta: {stored.metadata.uid}"
    )
    assert raised.value.code == 409
    assert caller.calls == []  # no admission ran
    assert api.get(type(stored), name, stored.metadata.namespace) == stored


def test_a_replace_with_its_own_uid_or_none_is_written(api: ApiService) -> None:
    stored = _deployment(api)
    labelled = evolve(stored, metadata=evolve(stored.metadata, labels={"tier": "a"}))
    assert api.update_object(labelled).obj.metadata.labels == {"tier": "a"}
    current = api.get(Deployment, "web", "default")
    anonymous = evolve(current, metadata=evolve(current.metadata, uid=None, labels={"tier": "b"}))
    written = api.update_object(anonymous).obj
    assert (written.metadata.labels, written.metadata.uid) == ({"tier": "b"}, stored.metadata.uid)


def test_a_patch_that_changes_the_uid_fails_validation_instead(api: ApiService) -> None:
    stored = _deployment(api)
    with pytest.raises(errors.InvalidError) as raised:
        api.patch_object(
            Deployment,
            "web",
            {"metadata": {"uid": "other"}},
            namespace="default",
            patch_type=PatchType.MERGE_PATCH,
        )
    assert raised.value.message == (
        'Deployment.apps "web" is invalid: metadata.uid: Invalid value: "other": field is immutable'
    )
    assert api.get(Deployment, "web", "default") == stored


def test_a_stale_replace_is_mutated_then_refused_before_validation(
    api: ApiService, caller: InProcessCaller
) -> None:
    stored = _deployment(api)
    _every_update_webhook(api)
    caller.handlers["/mutate"] = caller.handlers["/validate"] = allow()
    api.update_object(evolve(stored, metadata=evolve(stored.metadata, labels={"tier": "a"})))
    caller.calls.clear()
    stale = evolve(stored, metadata=evolve(stored.metadata, labels={"tier": "b"}))
    with pytest.raises(errors.ConflictError) as raised:
        api.update_object(stale)
    assert raised.value.message == (
        'Operation cannot be fulfilled on deployments.apps "web": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    assert [target.path for target, _ in caller.calls] == ["/mutate?timeout=10s"]
    assert api.get(Deployment, "web", "default").metadata.labels == {"tier": "a"}
