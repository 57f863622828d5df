"""``ServiceWrites``: the write path of ``ApiService`` (create, update, patch, delete).

Every write runs, in upstream's order (``staging/src/k8s.io/apiserver/pkg/endpoints/
handlers/create.go``, ``update.go`` and ``registry/generic/registry/store.go``)::

    default -> mutating admission -> RBAC escalation guard [-> resourceVersion check]
            -> prepare (strategy) -> validation -> validating admission
            -> store (compare-and-swap) -> record events

so the mutating phase sees the object as the writer sent it, and what it changes on the
side of the spec/status split the write may not touch is dropped by the strategy.

Nothing reaches the store unless every step passed, so bad input never changes it. Also
here: generated names (retried when taken), the Service registry's allocations around a
write, graceful deletion and finalizers (the plan comes from ``apiserver.deletion``), and
the quota usages and events admission asked to record once the write is stored.

Who drives it: ``ApiService`` (``apiserver.service``) is built on it; its callers (the
REST handlers, in-process components) call these methods on an ``ApiService``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from kubeprio.admission.chain import (
    AdmissionOutcome,
    AdmissionRequest,
    Operation,
    UserInfo,
)
from kubeprio.api import errors, kinds, manifest, validation
from kubeprio.api import patch as patching
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.core import Namespace
from kubeprio.api.defaults import default_object, default_status_body
from kubeprio.api.kinds import EPHEMERAL_CONTAINERS, ResourceInfo
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.serialization import (
    DecodeError,
    decode_changes,
    encode_for_change,
    from_dict,
    to_dict,
)
from kubeprio.api.service import Service
from kubeprio.apiserver import (
    crddeletion,
    deleteadmission,
    deletion,
    storageprecondition,
    strategy,
)
from kubeprio.apiserver.metaomitempty import without_empty_metadata
from kubeprio.apiserver.patchapply import (
    apply_patch_members,
    check_patched_name,
    patch_error,
    top_level_keys,
)
from kubeprio.apiserver.scaleadmission import ViewAdmission
from kubeprio.apiserver.servicecore import (
    MAX_CONFLICT_RETRIES,
    WriteResult,
    stored_revision,
)
from kubeprio.apiserver.servicereads import ServiceReads
from kubeprio.apiserver.serviceregistry import NO_ALLOCATION
from kubeprio.client.protocol import DeleteRequest, PatchType
from kubeprio.store.errors import KeyExistsError, KeyNotFoundError, RevisionConflictError
from kubeprio.store.interface import ObjectKey

T = TypeVar("T")

GENERATE_NAME_ATTEMPTS = 8
"""Names tried for a ``generateName`` object before AlreadyExists (upstream: 1 + 7 retries)."""


class ServiceWrites(ServiceReads):
    """Create, update, patch and delete through the full write path (the ``Client``
    protocol's write verbs over them: ``apiserver.serviceclientwrites``)."""

    # --- create --------------------------------------------------------------------------------

    def create_object(
        self,
        obj: Any,
        *,
        user: UserInfo | None = None,
        dry_run: bool = False,
        restore: bool = False,
        served: ResourceInfo | None = None,
    ) -> WriteResult:
        """Create ``obj`` through the full write path; return it with admission warnings.

        ``served`` is the resource row of the request when it came through a version
        served by conversion (events.k8s.io/v1 Events are validated by their own rules).

        ``restore`` is for loading a snapshot of a cluster (``kubeprio simulate`` on a
        dump): the object keeps its ``uid`` and ``creationTimestamp``, so the owner
        references and ages recorded in the dump stay true, as after an etcd restore.
        Every other step of the write path runs as usual.
        """
        info = kinds.for_object(obj)
        obj = self._normalize_type(obj, info)
        metadata: ObjectMeta = obj.metadata
        namespace = metadata.namespace or ""
        if info.namespaced and not namespace:
            raise errors.bad_request("the namespace of the object must be set")
        obj = default_object(obj)
        create_namespace = self._check_namespace(
            info, namespace, Operation.CREATE, metadata.name or metadata.generate_name or ""
        )
        outcome = AdmissionOutcome()
        # Admission sees the object before its name is generated, as upstream: errors
        # about a generateName pod name its prefix (``pods "web-" is forbidden``).
        request = AdmissionRequest(
            Operation.CREATE,
            info,
            obj,
            None,
            namespace,
            metadata.name or "",
            user=user,
            dry_run=dry_run,
        )
        obj = self.admission.mutate(request, outcome)
        # RBAC's policy-based storage checks inside the registry's Create, on the mutated
        # object before BeforeCreate (``apiserver.rbacescalation``).
        self._guard(obj, None, user)
        generate_from = "" if obj.metadata.name else (obj.metadata.generate_name or "")
        if generate_from:
            generated = self._generate_name(generate_from)
            obj = evolve(obj, metadata=evolve(obj.metadata, name=generated))
        name = obj.metadata.name or ""
        # The Service registry takes cluster IPs and node ports before the strategy and
        # validation run (upstream's BeginCreate); a failed write gives them back.
        obj, allocation = self._begin_allocation(obj, None, dry_run=dry_run)
        with allocation:
            restored = obj.metadata if restore else None
            obj = strategy.prepare_for_create(
                obj,
                uid=(restored.uid if restored is not None else None) or self._new_uid(),
                now=(restored.creation_timestamp if restored is not None else None) or self._now(),
                user=user,
            )
            obj = without_empty_metadata(obj)
            found = validation.validate_create(obj, info, served=served)
            if found:
                raise errors.invalid_error(info.kind, info.group, name, found)
            self.admission.validate(evolve(request, obj=obj, name=name), outcome)
            outcome.warnings.extend(validation.warnings(obj))
            if dry_run:
                return WriteResult(obj, tuple(outcome.warnings))
            if create_namespace:
                self.create_object(Namespace(metadata=ObjectMeta(name=namespace)))
            for attempt in range(GENERATE_NAME_ATTEMPTS):
                try:
                    stored = self.store.create(self._key(info, name, namespace), obj)
                    break
                except KeyExistsError:
                    if not generate_from or attempt == GENERATE_NAME_ATTEMPTS - 1:
                        raise errors.already_exists(info.plural, info.group, name) from None
                    # Upstream retries a generated name that is taken (KEP-4420, GA in 1.32).
                    name = self._generate_name(generate_from)
                    obj = evolve(obj, metadata=evolve(obj.metadata, name=name))
            self._charge_quotas(outcome)
            self._record_events(outcome)
            return WriteResult(stored, tuple(outcome.warnings))

    # --- update --------------------------------------------------------------------------------

    def update_object(
        self,
        obj: Any,
        *,
        subresource: str = "",
        user: UserInfo | None = None,
        dry_run: bool = False,
        served: ResourceInfo | None = None,
        admitted: ViewAdmission | None = None,
        uid_is_precondition: bool = True,
    ) -> WriteResult:
        """Replace ``obj`` (or its status); compare-and-swap on its resourceVersion if set.
        ``served`` as for ``create_object``. ``admitted``: a write through a subresource
        whose body is another kind (``scale``), whose mutating phase already ran on that
        view; its validating phase sees the views too (``apiserver.scaleadmission``).

        In upstream's order (``endpoints/handlers/update.go`` runs the mutating admission
        as a transformer of ``rest.DefaultUpdatedObjectInfo``; the generic store's
        ``Update`` calls it, then checks the resourceVersion, then ``rest.BeforeUpdate``):

        1. the uid a replace carries is a storage precondition, checked first
           (``apiserver.storageprecondition``; ``uid_is_precondition=False`` for a patch's
           result, whose changed uid fails validation instead);
        2. the body is defaulted (the decoder's step, whatever the subresource) and the
           mutating phase sees it as sent: a main-resource write's status, a ``/status`` write's spec, the
           generation the writer sent;
        3. RBAC's escalation check on the mutated object (``write_guard``);
        4. the resourceVersion of the mutated object: a stale one is a conflict;
        5. the Service registry's allocations (``BeginUpdate``);
        6. the strategy (``BeforeUpdate``): the other side of the spec/status split is
           the stored one again, whatever the mutating phase did to it, system metadata
           is carried over and the generation bumped; then validation, then the
           validating phase on that prepared object."""
        info = kinds.for_object(obj)
        obj = self._normalize_type(obj, info)
        name = obj.metadata.name or ""
        namespace = obj.metadata.namespace or ""
        key = self._key(info, name, namespace)
        current = self._get_key(info, key)
        if uid_is_precondition:
            storageprecondition.check(info, current, obj.metadata.uid)
        # Upstream's decoder defaults every body, a /status write's too, before admission
        # and PrepareForUpdate: a replace that leaves out defaulted fields does not bump
        # the generation, and a status write gets its status defaults (a Node's
        # allocatable from its capacity).
        obj = default_object(obj) if subresource != "status" else default_status_body(obj)
        if admitted is None:
            outcome = AdmissionOutcome()
            request = AdmissionRequest(
                Operation.UPDATE, info, obj, current, namespace, name, subresource, user, dry_run
            )
            obj = self.admission.mutate(request, outcome)
        else:
            outcome = admitted.outcome
        self._guard(obj, current, user)
        requested_rv = obj.metadata.resource_version
        if requested_rv and requested_rv != current.metadata.resource_version:
            raise errors.conflict(info.plural, info.group, name)
        allocation = NO_ALLOCATION
        if subresource != "status":
            obj, allocation = self._begin_allocation(obj, current, dry_run=dry_run)
        with allocation:
            new: Any = without_empty_metadata(
                strategy.prepare_for_update(obj, current, subresource=subresource, now=self._now())
            )
            found = validation.validate_update(
                new, current, info, subresource=subresource, served=served
            )
            if found:
                raise errors.invalid_error(info.kind, info.group, name, found)
            if admitted is None:
                self.admission.validate(evolve(request, obj=new), outcome)
            else:
                self.admission.validate(admitted.validation_request(new, current), outcome)
            if subresource not in ("status", EPHEMERAL_CONTAINERS):
                # podEphemeralContainersStrategy.WarningsOnUpdate returns none.
                outcome.warnings.extend(validation.warnings(new, current))
            if new.metadata.resource_version != current.metadata.resource_version:
                # A write without a resourceVersion (no compare-and-swap): compare (and answer
                # a dry run) at the current one. Writers that sent theirs skip this copy.
                new = evolve(
                    new,
                    metadata=evolve(
                        new.metadata, resource_version=current.metadata.resource_version
                    ),
                )
            if new == current or dry_run:
                return WriteResult(current if new == current else new, tuple(outcome.warnings))
            if (
                new.metadata.deletion_timestamp
                and not new.metadata.finalizers
                and current.metadata.finalizers
                and not self._waits_for_grace(new)
            ):
                # The last finalizer went away from an object that is being deleted.
                return WriteResult(self._remove(info, key, current), tuple(outcome.warnings))
            try:
                stored = self.store.update(key, new, expected_revision=stored_revision(current))
            except RevisionConflictError:
                raise errors.conflict(info.plural, info.group, name) from None
            except KeyNotFoundError:
                raise errors.not_found(info.plural, info.group, name) from None
            # A Service that became a NodePort (or a pod that changed scope) was charged
            # its growth by the ResourceQuota plugin.
            self._charge_quotas(outcome)
            self._record_events(outcome)
            return WriteResult(stored, tuple(outcome.warnings))

    def _guard(self, obj: Any, old: Any, user: UserInfo | None) -> None:
        """The write guard (RBAC's escalation check) on a caller's mutated object."""
        if self.write_guard is not None and user is not None:
            self.write_guard.check(obj, old, user)

    @staticmethod
    def _waits_for_grace(obj: Any) -> bool:
        """``ShouldDeleteDuringUpdate`` keeps an object whose grace period is still running."""
        return bool(obj.metadata.deletion_grace_period_seconds)

    # --- patch ---------------------------------------------------------------------------------

    def patch_object(
        self,
        kind: type[Any],
        name: str,
        patch: object,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE_PATCH,
        subresource: str = "",
        user: UserInfo | None = None,
        dry_run: bool = False,
    ) -> WriteResult:
        """Patch an object: read, apply the patch to its JSON, write back (retrying conflicts)."""
        info = kinds.for_model(kind)
        key = self._key(info, name, namespace)
        touched = top_level_keys(patch, patch_type)
        for _attempt in range(MAX_CONFLICT_RETRIES):
            current = self._get_key(info, key)
            document = to_dict(current) if touched is None else encode_for_change(current, touched)
            try:
                patched = apply_patch_members(document, patch, patch_type, info.kind, touched)
            except patching.PatchError as exc:
                raise patch_error(exc, info, name) from exc
            try:
                if touched is None:
                    new = from_dict(info.model, patched)
                else:
                    new = decode_changes(current, patched, touched)
            except DecodeError as exc:
                raise manifest.decode_failure_status(
                    exc, {"kind": info.kind, "apiVersion": info.api_version}
                ) from exc
            new = check_patched_name(new, info, name, key.namespace)
            try:
                return self.update_object(
                    new,
                    subresource=subresource,
                    user=user,
                    dry_run=dry_run,
                    uid_is_precondition=False,
                )
            except errors.ConflictError:
                if new.metadata.resource_version != current.metadata.resource_version:
                    raise
                continue
        raise errors.conflict(info.plural, info.group, name)

    # --- delete --------------------------------------------------------------------------------

    def delete_object(
        self,
        kind: type[Any],
        name: str,
        namespace: str | None = None,
        *,
        options: DeleteRequest | None = None,
        user: UserInfo | None = None,
        warnings: list[str] | None = None,
        collection: bool = False,
        admit: bool = True,
    ) -> Any:
        """Delete an object; return its state after the call (see ``apiserver.deletion``).

        Bound, non-terminal pods are deleted gracefully: they get a deletionTimestamp
        and stay until a delete with grace 0 (the kubelet's, or a force delete). Objects
        with finalizers are marked and stay until the finalizers are removed.

        Admission runs first (``apiserver.deleteadmission``; ``admit=False`` for the
        eviction's own delete); its warnings are added to ``warnings``; ``collection``
        says the delete is one of a ``deletecollection`` (its attributes name no object).
        """
        options = options or DeleteRequest()
        info = kinds.for_model(kind)
        strategy.check_delete(info, name)
        deletion.validate_delete_options(options)
        key = self._key(info, name, namespace)
        current = self._get_key(info, key)
        plan: deletion.DeletePlan | None = None
        if isinstance(current, CustomResourceDefinition):
            # The CRD REST's own Delete: marked for the finalizer controller.
            crddeletion.check_preconditions(current, options)
            plan = crddeletion.plan_first_delete(current, self._now())
        else:
            deletion.check_preconditions(info, current, options)
            if warnings is not None:
                warnings.extend(deletion.delete_warnings(info, options))
            finalized = deletion.with_gc_finalizers(info, current, options)
            if finalized is not current:
                # The new finalizers keep the object (marked) until the collector is done.
                plan = deletion.plan_delete(
                    finalized, options.grace_period_seconds, self.clock.now()
                )
                if plan.updated is None and not plan.remove:
                    plan = dataclasses.replace(plan, updated=finalized)
        if plan is None:
            plan = deletion.plan_delete(current, options.grace_period_seconds, self.clock.now())
        outcome = None
        if admit and not deleteadmission.pending_graceful(plan):
            outcome = deleteadmission.admit(
                self.admission, info, current, options, user=user, collection=collection
            )
            if outcome is not None and warnings is not None:
                warnings.extend(outcome.warnings)
        if options.dry_run:
            return plan.updated if plan.updated is not None else current
        result = current
        if plan.updated is not None:
            try:
                result = self.store.update(
                    key, plan.updated, expected_revision=stored_revision(current)
                )
            except RevisionConflictError:
                raise errors.conflict(info.plural, info.group, key.name) from None
        if plan.remove:
            result = self._remove(info, key, result)
        if outcome is not None:
            self._record_events(outcome)
        return result

    def _remove(self, info: ResourceInfo, key: ObjectKey, current: Any) -> Any:
        try:
            removed = self.store.delete(key, expected_revision=stored_revision(current))
        except KeyNotFoundError:
            raise errors.not_found(info.plural, info.group, key.name) from None
        except RevisionConflictError:
            raise errors.conflict(info.plural, info.group, key.name) from None
        if isinstance(removed, Service):
            # Upstream's afterDelete: the Service's cluster IPs and node ports are free again.
            self.services.release(removed)
        return removed

    # --- after a write ------------------------------------------------------------------------

    def _charge_quotas(self, outcome: AdmissionOutcome) -> None:
        # The ResourceQuota plugin admitted the object against these usages; write them
        # so the next request is charged on top (the quota controller corrects any drift).
        # A quota changed since admission read it is left to the controller.
        for quota in outcome.quota_status:
            try:
                self.update_object(quota, subresource="status")
            except errors.StatusError:
                continue

    def _record_events(self, outcome: AdmissionOutcome) -> None:
        # Plugins have no clock: the service stamps the times of the events they report.
        # Recording is best effort, as upstream's event recorder: the write already happened.
        now = self._now()
        for event in outcome.events:
            if event.first_timestamp is None:
                event = evolve(
                    event, first_timestamp=now, last_timestamp=now, count=event.count or 1
                )
            try:
                self.create_object(event)
            except errors.StatusError:
                continue
