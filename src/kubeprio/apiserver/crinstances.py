"""The custom resources of one CRD, straight from storage: what the CRD finalizer deletes.

What it is: ``StoredCustomResources`` satisfies ``controllers.crdfinalizer``'s
``CustomResourceInstances`` over the store, as upstream's finalizer reaches the CRD's
storage directly (``crdHandler.GetCustomResourceListerCollectionDeleter`` in
``apiextensions-apiserver/pkg/apiserver/customresource_handler.go``) rather than its
REST API. Every version of a CRD shares one storage, ``<plural>.<group>`` (see
``apiserver.customresources``). A delete collection deletes each object of the
namespace as ``Store.Delete`` would (``apiserver.deletion``'s plan): removed at once, or
only marked (``deletionTimestamp`` = now) while it has finalizers of its own; each removal
is reported to the quota counts (``apiserver.customquota``) so quotas are replenished.

Who drives it: the CRD finalizer controller, wired by ``serve.server``.
"""

from __future__ import annotations

from kubeprio.api.apiextensions import CustomObject, CustomResourceDefinition
from kubeprio.api.quotausage import COUNT_PREFIX
from kubeprio.apiserver import deletion
from kubeprio.apiserver.customquota import CustomResourceCounts
from kubeprio.clock import Clock
from kubeprio.store.errors import KeyNotFoundError, RevisionConflictError
from kubeprio.store.interface import KeyPrefix, ObjectKey, Store, object_revision


def storage_resource(crd: CustomResourceDefinition) -> str:
    """Where the CRD's objects are stored: ``<plural>.<group>``."""
    spec = crd.spec
    names = spec.names if spec is not None else None
    plural = (names.plural if names is not None else None) or ""
    return f"{plural}.{(spec.group if spec is not None else None) or ''}"


class StoredCustomResources:
    """Lists and deletes a CRD's custom resources in the store."""

    def __init__(
        self, store: Store, *, clock: Clock, counts: CustomResourceCounts | None = None
    ) -> None:
        self.store = store
        self.clock = clock
        self.counts = counts

    def list_instances(self, crd: CustomResourceDefinition) -> list[CustomObject]:
        """Every stored object of the CRD, in all namespaces."""
        objects, _ = self.store.list(KeyPrefix(storage_resource(crd)))
        return [obj for obj in objects if isinstance(obj, CustomObject)]

    def delete_collection(self, crd: CustomResourceDefinition, namespace: str) -> None:
        """Delete (or mark, when it has finalizers) every object in ``namespace``."""
        resource = storage_resource(crd)
        objects, _ = self.store.list(KeyPrefix(resource, namespace))
        for obj in objects:
            key = ObjectKey(resource, namespace, obj.metadata.name or "")
            plan = deletion.plan_delete(obj, None, self.clock.now())
            try:
                if plan.updated is not None:
                    self.store.update(key, plan.updated, expected_revision=object_revision(obj))
                elif plan.remove:
                    self.store.delete(key, expected_revision=object_revision(obj))
                    if self.counts is not None:
                        self.counts.deleted_resource(f"{COUNT_PREFIX}{resource}", namespace)
            except (KeyNotFoundError, RevisionConflictError):
                # Changed or gone meanwhile: the finalizer's next list sees what remains.
                continue
