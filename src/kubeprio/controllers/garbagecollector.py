"""A small garbage collector: dependents go when their owners go.

Mirrors the parts of ``pkg/controller/garbagecollector`` that workloads rely on:

* background propagation (``attemptToDeleteItem``): a dependent whose every owner
  reference is dangling -- the owner is not found, or has another UID -- is deleted
  (with a UID precondition and background propagation); a dependent with some
  dangling and some live owners loses only the dangling references;
* foreground deletion: an owner being deleted with the ``foregroundDeletion``
  finalizer has its dependents deleted first, then the finalizer removed;
* orphaning: an owner being deleted with the ``orphan`` finalizer has its references
  removed from every dependent, then the finalizer removed.

Owners are looked up live by kind, name and namespace, as upstream does; owner kinds
kubeprio does not serve (StatefulSet, ...) can never be dangling.

Which dangling references count: upstream collects a dependent whose owner simply does
not exist. That is wrong for a snapshot of a live cluster loaded partially (pods of a
ReplicaSet that was not dumped would vanish), so by default only owners this
collector saw deleted count as gone; ``collect_absent_owners=True`` restores
upstream's rule. Driven through ``controllers.base``; sees objects through the
informers it is given.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Final

from kubeprio.api import errors, kinds
from kubeprio.api.core import Pod
from kubeprio.api.gcpolicy import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from kubeprio.api.meta import ApiObject, OwnerReference, Preconditions
from kubeprio.api.patch import PatchType
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client, DeleteRequest
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller

_OWNER_PREFIX: Final = "owner|"


def _item_key(obj: ApiObject) -> str:
    info = kinds.for_object(obj)
    return f"{info.kind}|{obj.metadata.namespace or ''}|{obj.metadata.name or ''}"


class GarbageCollector(Controller):
    """Deletes dependents of deleted owners; honours foreground and orphan deletion."""

    name = "generic-garbage-collector"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        owners: Sequence[Informer[Any]],
        dependents: Sequence[Informer[Any]],
        collect_absent_owners: bool = False,
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.collect_absent_owners = collect_absent_owners
        self._dependents: dict[str, Informer[Any]] = {}
        self._owners: dict[str, Informer[Any]] = {}
        self._children: dict[str, set[str]] = {}
        self._deleted_owners: set[str] = set()
        for informer in dependents:
            kind = kinds.for_model(informer.kind).kind
            self._dependents[kind] = informer
            informer.add_handler(
                FuncHandler(
                    on_add=self._dependent_changed,
                    on_update=lambda _old, new: self._dependent_changed(new),
                    on_delete=self._dependent_deleted,
                )
            )
        for informer in owners:
            kind = kinds.for_model(informer.kind).kind
            self._owners[kind] = informer
            informer.add_handler(
                FuncHandler(
                    on_add=self._owner_changed,
                    on_update=lambda _old, new: self._owner_changed(new),
                    on_delete=self._owner_deleted,
                )
            )

    @property
    def owner_kinds(self) -> frozenset[str]:
        """The owner kinds whose deletion this collector follows."""
        return frozenset(self._owners)

    # --- the owner -> dependents graph -------------------------------------------------------

    def _dependent_changed(self, obj: ApiObject) -> None:
        key = _item_key(obj)
        dangling = False
        for ref in obj.metadata.owner_references or ():
            self._children.setdefault(ref.uid or "", set()).add(key)
            if (ref.uid or "") in self._deleted_owners:
                dangling = True
        if dangling or (self.collect_absent_owners and obj.metadata.owner_references):
            self.queue.add(key)
        if self._in_deletion(obj):
            self.queue.add(_OWNER_PREFIX + key)

    def _dependent_deleted(self, obj: ApiObject) -> None:
        key = _item_key(obj)
        for ref in obj.metadata.owner_references or ():
            children = self._children.get(ref.uid or "")
            if children is not None:
                children.discard(key)
                if not children:
                    del self._children[ref.uid or ""]
                owner = self._cached_owner(ref, obj.metadata.namespace)
                if owner is not None and self._in_deletion(owner):
                    self.queue.add(_OWNER_PREFIX + _item_key(owner))

    def _owner_changed(self, obj: ApiObject) -> None:
        if self._in_deletion(obj):
            self.queue.add(_OWNER_PREFIX + _item_key(obj))

    def _owner_deleted(self, obj: ApiObject) -> None:
        uid = obj.metadata.uid or ""
        children = self._children.get(uid, ())
        # A deleted pod is remembered only when something depended on it: pods own little
        # (a StatefulSet's claims under ``whenScaled: Delete``) and a long simulation
        # deletes hundreds of thousands of them.
        if children or not isinstance(obj, Pod):
            self._deleted_owners.add(uid)
        for child in sorted(children):
            self.queue.add(child)

    @staticmethod
    def _in_deletion(obj: ApiObject) -> bool:
        finalizers = obj.metadata.finalizers or ()
        return bool(obj.metadata.deletion_timestamp) and (
            FOREGROUND_FINALIZER in finalizers or ORPHAN_FINALIZER in finalizers
        )

    def _cached_owner(self, ref: OwnerReference, namespace: str | None) -> ApiObject | None:
        informer = self._owners.get(ref.kind or "")
        if informer is None:
            return None
        found = informer.get(ref.name or "", namespace)
        return found if found is not None and found.metadata.uid == ref.uid else None

    # --- processing ------------------------------------------------------------------------

    def reconcile(self, key: str) -> None:
        """Process an owner in deletion (``owner|...``) or a possibly orphaned dependent."""
        if key.startswith(_OWNER_PREFIX):
            self._process_owner(key[len(_OWNER_PREFIX) :])
        else:
            self._attempt_to_delete(key)

    def _lookup(self, key: str) -> ApiObject | None:
        kind, namespace, name = key.split("|", 2)
        info = kinds.for_name(kind.lower())
        try:
            found: ApiObject = self.client.get(info.model, name, namespace or None)
        except errors.NotFoundError:
            return None
        return found

    def _is_dangling(self, ref: OwnerReference, namespace: str | None) -> bool:
        """``isDangling``: a live GET of the owner finds nothing, or another UID."""
        try:
            info = kinds.for_kind(ref.api_version or "", ref.kind or "")
        except kinds.UnknownKindError:
            return False
        try:
            owner = self.client.get(
                info.model, ref.name or "", namespace if info.namespaced else None
            )
        except errors.NotFoundError:
            owner = None
        gone = owner is None or owner.metadata.uid != ref.uid
        if not gone:
            return False
        return self.collect_absent_owners or (ref.uid or "") in self._deleted_owners

    def _attempt_to_delete(self, key: str) -> None:
        """``attemptToDeleteItem`` with background propagation."""
        item = self._lookup(key)
        if item is None or item.metadata.deletion_timestamp:
            return
        refs = item.metadata.owner_references or ()
        if not refs:
            return
        dangling = [ref for ref in refs if self._is_dangling(ref, item.metadata.namespace)]
        if not dangling:
            return
        if len(dangling) < len(refs):
            self._remove_refs(item, {ref.uid or "" for ref in dangling})
            return
        self._delete(item)

    def _process_owner(self, key: str) -> None:
        """Foreground: delete dependents, then unblock; orphan: cut references, then unblock."""
        owner = self._lookup(key)
        if owner is None or not self._in_deletion(owner):
            return
        uid = owner.metadata.uid or ""
        finalizers = owner.metadata.finalizers or ()
        children = [
            obj
            for child in sorted(self._children.get(uid, ()))
            if (obj := self._lookup(child)) is not None
        ]
        if ORPHAN_FINALIZER in finalizers:
            for obj in children:
                self._remove_refs(obj, {uid})
            self._remove_finalizer(owner, ORPHAN_FINALIZER)
            return
        remaining = 0
        for obj in children:
            if not any(ref.uid == uid for ref in obj.metadata.owner_references or ()):
                continue
            remaining += 1
            if not obj.metadata.deletion_timestamp:
                self._delete(obj)
        if remaining == 0:
            self._remove_finalizer(owner, FOREGROUND_FINALIZER)

    # --- writes --------------------------------------------------------------------------------

    def _delete(self, obj: ApiObject) -> None:
        options = DeleteRequest(
            preconditions=Preconditions(uid=obj.metadata.uid), propagation_policy="Background"
        )
        try:
            self.client.delete(
                type(obj), obj.metadata.name or "", obj.metadata.namespace, options=options
            )
        except (errors.NotFoundError, errors.ConflictError):
            return

    def _remove_refs(self, obj: ApiObject, uids: set[str]) -> None:
        patch = {
            "metadata": {
                "ownerReferences": [{"$patch": "delete", "uid": uid} for uid in sorted(uids)],
                "uid": obj.metadata.uid,
            }
        }
        self._patch_if_present(obj, patch)

    def _remove_finalizer(self, obj: ApiObject, finalizer: str) -> None:
        patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": [finalizer]}}
        self._patch_if_present(obj, patch)

    def _patch_if_present(self, obj: ApiObject, patch: dict[str, Any]) -> None:
        """Strategic-merge ``patch`` into ``obj``; an object already gone needs nothing."""
        try:
            self.client.patch(
                type(obj),
                obj.metadata.name or "",
                patch,
                namespace=obj.metadata.namespace,
                patch_type=PatchType.STRATEGIC_MERGE_PATCH,
            )
        except errors.NotFoundError:
            return
