"""The CRD finalizer controller: a deleted CRD takes its custom resources with it.

Mirrors v1.32's ``apiextensions-apiserver/pkg/controller/finalizer/crd_finalizer.go``.
A CRD that is being deleted (``deletionTimestamp`` set by the CRD REST's Delete, see
``apiserver.crddeletion``) and still carries the ``customresourcecleanup.apiextensions.k8s.io``
finalizer is finalized in steps, each a status write:

1. ``Terminating=True`` (``InstanceDeletionInProgress``, ``CustomResource deletion is in
   progress``);
2. if the CRD was ever Established, its custom resources (every version shares one
   storage) are deleted, one namespace at a time, as a delete collection (objects with
   finalizers of their own are only marked); a failure is ``InstanceDeletionFailed``
   (``could not issue all deletes: ...``) and retried with backoff. Then the controller
   polls every 5 s until none remain; after a minute it gives up for this round with
   ``InstanceDeletionCheck`` (``could not confirm zero CustomResources remaining: timed
   out waiting for the condition``) and retries with backoff (a CR whose own finalizer
   is never removed keeps the CRD Terminating). Otherwise ``Terminating=False``
   (``InstanceDeletionCompleted``, ``removed all instances``); a CRD never Established
   gets ``NeverEstablished`` (``resource was never established``) without listing;
3. the finalizer is removed in the same status write, and the API server deletes the CRD.

Upstream blocks its worker during the one-minute poll; here the key is requeued every
5 s instead, with the start of the wait remembered per CRD. A write conflict is retried
with backoff (upstream waits for its informer's resync, which kubeprio's lacks). Custom resources are
untyped and not reachable through ``Client``; as upstream's ``CRClientGetter``, the
controller is given a ``CustomResourceInstances`` that reaches their storage.
Serve wires it (``serve.server``). Must not import ``apiserver``, ``store``, ``admission``.
"""

from __future__ import annotations

import contextlib
import random
from typing import Final, Protocol

from kubeprio.api import errors
from kubeprio.api.apiextensions import (
    CUSTOM_RESOURCE_CLEANUP_FINALIZER,
    TERMINATING,
    CustomObject,
    CustomResourceDefinition,
    CustomResourceDefinitionStatus,
    is_established,
    with_condition,
)
from kubeprio.api.meta import ApiObject, Condition
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, rfc3339
from kubeprio.controllers.base import Controller
from kubeprio.errors import ControllerError, TemporaryError

POLL_INTERVAL: Final = 5.0
"""``wait.PollImmediate``'s interval while waiting for the instances to go."""
POLL_TIMEOUT: Final = 60.0
"""How long one round waits for them before reporting ``InstanceDeletionCheck``."""
WAIT_TIMEOUT_TEXT: Final = "timed out waiting for the condition"
"""``wait.ErrWaitTimeout``'s text."""


def _terminating(status: str, reason: str, message: str) -> Condition:
    return Condition(type=TERMINATING, status=status, reason=reason, message=message)


IN_PROGRESS: Final = _terminating(
    "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress"
)
COMPLETED: Final = _terminating("False", "InstanceDeletionCompleted", "removed all instances")
NEVER_ESTABLISHED: Final = _terminating(
    "False", "NeverEstablished", "resource was never established"
)


class CustomResourceInstances(Protocol):
    """What the finalizer needs of a CRD's custom resources (upstream's
    ``ListerCollectionDeleter``): list them, delete a namespace's worth."""

    def list_instances(self, crd: CustomResourceDefinition) -> list[CustomObject]:
        """Every stored custom resource of ``crd``, in all namespaces."""
        ...

    def delete_collection(self, crd: CustomResourceDefinition, namespace: str) -> None:
        """Delete every custom resource of ``crd`` in ``namespace`` (``""``: the
        cluster-scoped ones); those with finalizers are only marked."""
        ...


class InstanceCleanupError(ControllerError):
    """The instances could not all be deleted (or confirmed gone): retry with backoff."""


def needs_finalizing(crd: CustomResourceDefinition) -> bool:
    """Deleted and still carrying the cleanup finalizer (upstream's ``sync`` guard)."""
    meta = crd.metadata
    return bool(meta.deletion_timestamp) and CUSTOM_RESOURCE_CLEANUP_FINALIZER in (
        meta.finalizers or ()
    )


def _without_terminating(crd: CustomResourceDefinition) -> CustomResourceDefinition:
    status = crd.status or CustomResourceDefinitionStatus()
    kept = tuple(c for c in status.conditions or () if c.type != TERMINATING)
    meta = evolve(crd.metadata, resource_version=None)
    return evolve(crd, metadata=meta, status=evolve(status, conditions=kept))


def changed_beyond_terminating(
    old: CustomResourceDefinition, new: CustomResourceDefinition
) -> bool:
    """``updateCustomResourceDefinition``'s requeue rule: a resync (same
    resourceVersion) or a change other than the ``Terminating`` condition (which this
    controller writes itself: requeueing on it would loop)."""
    if old.metadata.resource_version == new.metadata.resource_version:
        return True
    return _without_terminating(old) != _without_terminating(new)


class CrdFinalizerController(Controller):
    """Deletes a deleted CRD's custom resources, then removes its cleanup finalizer."""

    name = "crd-finalizer"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        crds: Informer[CustomResourceDefinition],
        instances: CustomResourceInstances,
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.crds = crds
        self.instances = instances
        self._waiting_since: dict[str, float] = {}
        """CRD name -> when its deletes were issued and the wait for them began."""
        crds.add_handler(FuncHandler(on_add=self._on_add, on_update=self._on_update))

    def _on_add(self, crd: CustomResourceDefinition) -> None:
        if needs_finalizing(crd):
            self.queue.add(crd.metadata.name or "")

    def _on_update(self, old: CustomResourceDefinition, new: CustomResourceDefinition) -> None:
        if needs_finalizing(new) and changed_beyond_terminating(old, new):
            self.queue.add(new.metadata.name or "")

    def event_target(self, key: str) -> ApiObject | None:
        """The CRD."""
        return self.crds.get(key)

    def reconcile(self, key: str) -> None:
        """``sync``: mark the deletion in progress, delete the instances, let the CRD go."""
        cached = self.crds.get(key)
        if cached is None or not needs_finalizing(cached):
            self._waiting_since.pop(key, None)
            return
        # A conflict (the cache behind a write) is retried with backoff: upstream drops the
        # key and counts on its informer's periodic resync, which this one does not have.
        try:
            crd = self._write_status(self._set(cached, IN_PROGRESS))
        except errors.NotFoundError:
            return
        outcome = self._delete_instances(key, crd) if is_established(crd) else NEVER_ESTABLISHED
        done = self._set(crd, outcome)
        finalizers = tuple(
            f for f in done.metadata.finalizers or () if f != CUSTOM_RESOURCE_CLEANUP_FINALIZER
        )
        done = evolve(done, metadata=evolve(done.metadata, finalizers=finalizers))
        with contextlib.suppress(errors.NotFoundError):
            self._write_status(done)

    def _delete_instances(self, key: str, crd: CustomResourceDefinition) -> Condition:
        """``deleteInstances``: the outcome condition once none remain; raises to retry."""
        started = self._waiting_since.get(key)
        if started is None:
            failures: list[str] = []
            done_namespaces: set[str] = set()
            for item in self.instances.list_instances(crd):
                namespace = item.metadata.namespace or ""
                if namespace in done_namespaces:
                    continue
                done_namespaces.add(namespace)
                try:
                    self.instances.delete_collection(crd, namespace)
                except errors.StatusError as exc:
                    failures.append(exc.message)
            if failures:
                raise self._fail(
                    crd, "InstanceDeletionFailed", "could not issue all deletes", failures
                )
            started = self.clock.now()
            self._waiting_since[key] = started
        if not self.instances.list_instances(crd):
            self._waiting_since.pop(key, None)
            return COMPLETED
        if self.clock.now() - started < POLL_TIMEOUT:
            raise TemporaryError(f"{key}: waiting for its custom resources", delay=POLL_INTERVAL)
        self._waiting_since.pop(key, None)
        raise self._fail(
            crd,
            "InstanceDeletionCheck",
            "could not confirm zero CustomResources remaining",
            [WAIT_TIMEOUT_TEXT],
        )

    def _fail(
        self, crd: CustomResourceDefinition, reason: str, what: str, causes: list[str]
    ) -> InstanceCleanupError:
        """Record the failure on the CRD (best effort); the error to raise (a retry with
        backoff)."""
        # utilerrors.NewAggregate: one error as is, several as "[a, b]".
        detail = causes[0] if len(causes) == 1 else "[" + ", ".join(causes) + "]"
        failed = self._set(crd, _terminating("True", reason, f"{what}: {detail}"))
        with contextlib.suppress(errors.StatusError):
            # Upstream only logs a failure here: the retry sets the condition again.
            self._write_status(failed)
        return InstanceCleanupError(f"{crd.metadata.name}: {what}: {detail}")

    def _set(self, crd: CustomResourceDefinition, new: Condition) -> CustomResourceDefinition:
        return with_condition(crd, new, rfc3339(self.clock.now()))

    def _write_status(self, crd: CustomResourceDefinition) -> CustomResourceDefinition:
        return self.client.update_status(crd)
