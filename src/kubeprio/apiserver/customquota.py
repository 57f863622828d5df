"""Object counts of custom resources for the resource quota controller.

What it is: the ``controllers.quotacustom.CustomObjectCounts`` of ``kubeprio serve``:
``count/<plural>.<group>`` is the number of stored objects of the served custom
resource of that group and plural in a namespace (upstream's generic object count
evaluator over the resource the quota controller discovered), ``None`` for a name no
Established CRD serves (the quota leaves it out of ``status.used``, as upstream leaves
names no evaluator tracks). ``apiserver.crwrites`` reports each deletion, which the
controller subscribes to (its replenishment).

Who uses it: ``apiserver.http`` builds one over its custom resource registry; serve's
composition root hands it to the quota controller. Runs on the server's loop thread.
"""

from __future__ import annotations

from collections.abc import Callable

from kubeprio.api import quotausage
from kubeprio.api.kinds import ResourceInfo
from kubeprio.apiserver.customresources import CustomResourceRegistry
from kubeprio.store.interface import KeyPrefix, Store

DeletedListener = Callable[[str, str], None]
"""(namespace, quota resource name): ``controllers.quotacustom``'s listener, structurally."""


class CustomResourceCounts:
    """Counts of stored custom objects, and who to tell when one goes."""

    def __init__(self, registry: CustomResourceRegistry, store: Store) -> None:
        self._registry = registry
        self._store = store
        self._listeners: list[DeletedListener] = []

    def count(self, namespace: str, name: str) -> int | None:
        """Objects of the custom resource ``count/<plural>.<group>`` names in ``namespace``."""
        plural, _, group = name.removeprefix(quotausage.COUNT_PREFIX).partition(".")
        if not group:
            return None
        versions = self._registry.versions_of(group, plural)
        if not versions:
            return None
        objects, _ = self._store.list(KeyPrefix(versions[0].store_resource, namespace))
        return len(objects)

    def subscribe(self, listener: DeletedListener) -> None:
        """Call ``listener(namespace, count name)`` after each deletion."""
        self._listeners.append(listener)

    def deleted(self, info: ResourceInfo, namespace: str) -> None:
        """A custom object of ``info`` left ``namespace``."""
        self.deleted_resource(quotausage.count_name(info), namespace)

    def deleted_resource(self, name: str, namespace: str) -> None:
        """A custom object counted as ``name`` (``count/<plural>.<group>``) left
        ``namespace`` (the CRD finalizer deletes them by storage resource)."""
        for listener in self._listeners:
            listener(namespace, name)
