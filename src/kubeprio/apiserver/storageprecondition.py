"""Storage preconditions: a replace's uid, checked against the stored object first.

Upstream's PUT handler (``endpoints/handlers/update.go``) wraps the body in
``rest.DefaultUpdatedObjectInfo``, whose ``Preconditions`` make the body's
``metadata.uid``, when it has one, a storage precondition. The generic store
(``registry/generic/registry/store.go`` ``Update``) hands it to ``GuaranteedUpdate``,
which checks it against the stored object before anything else runs (no admission, no
strategy, no validation) and fails with the storage layer's ``invalid object`` error;
``storeerr.InterpretUpdateError`` makes that a 409 on the resource::

    Operation cannot be fulfilled on deployments.apps "web": StorageError: invalid object,
    Code: 4, Key: /registry/deployments/default/web, ResourceVersion: 0,
    AdditionalErrorMsg: Precondition failed: UID in precondition: <sent>, UID in object
    meta: <stored>

A patch carries no precondition: a patch that changes ``metadata.uid`` fails validation
instead (``field is immutable``). ``pods/binding`` (its uid and resourceVersion) and a
``scale`` PUT (the Scale's uid, keyed as the workload) are checked the same way.

The key is etcd's: ``/registry/<prefix>[/<namespace>]/<name>``, where the prefix is the
resource's plural, except for the few kinds upstream keeps under historical names
(``SpecialDefaultResourcePrefixes``, ``pkg/kubeapiserver/default_storage_factory_builder.go``),
and ``<group>/<plural>`` for a custom resource (apiextensions' REST options getter).

Who drives it: ``ServiceWrites.update_object`` (every replace, HTTP or in-process),
``ApiService.update_scale_object`` and ``ApiService.bind_object``, and
``CustomResourceWrites`` (a custom object's PUT and its scale PUT).
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.apiextensions import CustomObject
from kubeprio.api.kinds import ResourceInfo

STORAGE_PREFIX: Final = "/registry"
"""The etcd prefix under which upstream keys objects (``--etcd-prefix``'s default)."""

INVALID_OBJECT_CODE: Final = 4
"""``storage.ErrCodeInvalidObj``."""

_HISTORICAL_PREFIXES: Final[dict[tuple[str, str], str]] = {
    ("", "replicationcontrollers"): "controllers",
    ("", "endpoints"): "services/endpoints",
    ("", "nodes"): "minions",
    ("", "services"): "services/specs",
    ("extensions", "ingresses"): "ingress",
    ("networking.k8s.io", "ingresses"): "ingress",
}


def storage_key(info: ResourceInfo, namespace: str | None, name: str) -> str:
    """The etcd key upstream stores an object of ``info``'s resource under."""
    if info.model is CustomObject:
        prefix = f"{info.group}/{info.plural}"
    else:
        prefix = _HISTORICAL_PREFIXES.get((info.group, info.plural), info.plural)
    scope = f"/{namespace}" if info.namespaced else ""
    return f"{STORAGE_PREFIX}/{prefix}{scope}/{name}"


def invalid_object(key: str, detail: str) -> str:
    """``storage.NewInvalidObjError``'s text (what a failed precondition reports)."""
    return (
        f"StorageError: invalid object, Code: {INVALID_OBJECT_CODE}, Key: {key}, "
        f"ResourceVersion: 0, AdditionalErrorMsg: {detail}"
    )


def check(
    info: ResourceInfo, current: Any, uid: str | None, resource_version: str | None = None
) -> None:
    """``Preconditions.Check``: refuse a write whose ``uid`` or ``resource_version``
    precondition (each when given; the uid first) is not the stored object's."""
    metadata = current.metadata
    if uid and uid != metadata.uid:
        detail = errors.uid_precondition_failed(uid, metadata.uid)
    elif resource_version and resource_version != metadata.resource_version:
        detail = errors.resource_version_precondition_failed(
            resource_version, metadata.resource_version
        )
    else:
        return
    name = metadata.name or ""
    key = storage_key(info, metadata.namespace, name)
    raise errors.conflict(info.plural, info.group, name, invalid_object(key, detail))
