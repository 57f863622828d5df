"""``ServiceClientWrites``: the ``Client`` protocol's write verbs of ``ApiService``.

What it is: ``create``, ``update``, ``update_status``, ``patch`` and ``delete`` as the
in-process components call them, over the full write path of ``ServiceWrites``. In
``kubeprio serve`` a controller's write (``client.writepending.RETRYABLE_WRITES``) runs
through ``ServiceCore.controller_writes`` (``apiserver.controllerwebhooks``), so that
waiting on an admission webhook does not hold the event loop; the verb names the
*logical write* its retries are recognised by: a create by its input, the other verbs
by their target object. Everywhere else (the simulation, the scheduler, kubelets, HTTP
requests, which wait in ``apiserver.webhookwaits``) a verb is one plain call.

Who drives it: ``ApiService`` (``apiserver.service``) is built on it; in-process
components call these methods on an ``ApiService``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from kubeprio.apiserver.servicewrites import ServiceWrites
from kubeprio.client.protocol import DeleteRequest, PatchType

T = TypeVar("T")


def _named(kind_name: str, namespace: str | None, name: str | None) -> str:
    """The object a controller's update, patch or delete names
    (``apiserver.controllerwebhooks``' identity)."""
    return f"{kind_name}\0{namespace}\0{name}"


def _target(obj: Any) -> str:
    return _named(type(obj).__name__, obj.metadata.namespace, obj.metadata.name)


class ServiceClientWrites(ServiceWrites):
    """The ``Client`` protocol's write verbs."""

    def _written(self, identity: Callable[[], str], attempt: Callable[[], T]) -> T:
        """``attempt`` as a controller's retryable write when one is running (its identity
        is only worked out then), else as one plain call."""
        deferred = self.controller_writes
        if deferred is not None and deferred.applies():
            return deferred.run(identity(), attempt)
        return attempt()

    def deferrable(self, identity: str, attempt: Callable[[], T]) -> T:
        """Run another in-process write (a custom kind's ``scale``, written through its
        REST) as the ``Client`` verbs run theirs: a controller's retryable write there."""
        return self._written(lambda: identity, attempt)

    def create(self, obj: T, *, dry_run: bool = False) -> T:
        """Create an object."""
        return self._written(
            lambda: f"create\0{obj!r}\0{dry_run}",
            lambda: cast(T, self.create_object(obj, dry_run=dry_run).obj),
        )

    def update(self, obj: T, *, dry_run: bool = False) -> T:
        """Replace an object."""
        return self._written(
            lambda: f"update\0{_target(obj)}\0{dry_run}",
            lambda: cast(T, self.update_object(obj, dry_run=dry_run).obj),
        )

    def update_status(self, obj: T) -> T:
        """Replace an object's status."""
        return self._written(
            lambda: f"status\0{_target(obj)}",
            lambda: cast(T, self.update_object(obj, subresource="status").obj),
        )

    def patch(
        self,
        kind: type[T],
        name: str,
        patch: object,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE_PATCH,
        subresource: str | None = None,
    ) -> T:
        """Patch an object or its status."""

        def attempt() -> T:
            result = self.patch_object(
                kind,
                name,
                patch,
                namespace=namespace,
                patch_type=patch_type,
                subresource=subresource or "",
            )
            return cast(T, result.obj)

        return self._written(
            lambda: f"patch\0{_named(kind.__name__, namespace, name)}\0{subresource}", attempt
        )

    def delete(
        self,
        kind: type[T],
        name: str,
        namespace: str | None = None,
        *,
        options: DeleteRequest | None = None,
    ) -> T:
        """Delete an object."""
        return self._written(
            lambda: f"delete\0{_named(kind.__name__, namespace, name)}",
            lambda: cast(T, self.delete_object(kind, name, namespace, options=options)),
        )
