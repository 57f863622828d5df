"""``ApiService``: the whole API write path in-process; satisfies ``client.protocol.Client``.

Every write runs, in upstream's order (``staging/src/k8s.io/apiserver/pkg/endpoints/
handlers/create.go`` and ``registry/generic/registry/store.go``)::

    default -> mutating admission -> prepare (strategy) -> validation
            -> validating admission -> store (compare-and-swap) -> record events

Nothing reaches the store unless every step passed, so bad input never changes it.
The simulator, the serve loop and tests hand this object to the scheduler, kubelets and
controllers directly; ``apiserver.http`` exposes it over HTTP. It keeps no clock or
randomness of its own: both are injected (uids and generated names come from ``rng``).

Also here: graceful deletion (pods that are bound and not terminal get a
``deletionTimestamp`` and stay until their grace period is over), ``pods/binding``,
``pods/eviction`` with PodDisruptionBudget checks (429 when no disruption is allowed),
namespace lifecycle, and list/watch with label and field selectors. The rules that
need no store access live beside it: ``deletion`` (graceful-deletion plan),
``binding``, ``eviction``, ``strategy`` (prepare for create/update), ``listing``
(selectors, continue tokens) and ``watch`` (selector filtering of watch events).
"""

from __future__ import annotations

import builtins
import dataclasses
import random
from typing import Any, Protocol, TypeVar, cast

from kubeprio.admission.chain import (
    AdmissionChain,
    AdmissionOutcome,
    AdmissionRequest,
    Operation,
    UserInfo,
)
from kubeprio.api import errors, kinds, manifest, names, selectors, validation
from kubeprio.api import patch as patching
from kubeprio.api.apps import Scale
from kubeprio.api.coordination import NODE_LEASE_NAMESPACE
from kubeprio.api.core import (
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_SUCCEEDED,
    Binding,
    Namespace,
    Pod,
)
from kubeprio.api.defaults import default_object
from kubeprio.api.kinds import EPHEMERAL_CONTAINERS, ResourceInfo
from kubeprio.api.meta import (
    ApiObject,
    ObjectMeta,
    Status,
)
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.policy import Eviction, PodDisruptionBudget
from kubeprio.api.scheduling import SYSTEM_PRIORITY_CLASSES
from kubeprio.api.serialization import (
    DecodeError,
    decode_changes,
    encode_for_change,
    from_dict,
    to_dict,
)
from kubeprio.api.service import Service
from kubeprio.apiserver import binding as binding_rules
from kubeprio.apiserver import deletion, listing, scale, strategy, watch
from kubeprio.apiserver import eviction as eviction_rules
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.serviceranges import NodePortRange, ServiceIPRange
from kubeprio.apiserver.serviceregistry import NO_ALLOCATION, Allocation, ServiceRegistry
from kubeprio.client.protocol import (
    DeleteRequest,
    ObjectList,
    PatchType,
)
from kubeprio.clock import Clock, rfc3339
from kubeprio.store.errors import (
    KeyExistsError,
    KeyNotFoundError,
    RevisionCompactedError,
    RevisionConflictError,
)
from kubeprio.store.interface import KeyPrefix, ObjectKey, Store

T = TypeVar("T")

DEFAULT_NAMESPACES = ("default", NODE_LEASE_NAMESPACE, "kube-public", "kube-system")
MAX_CONFLICT_RETRIES = 8
GENERATE_NAME_ATTEMPTS = 8
"""Names tried for a ``generateName`` object before AlreadyExists (upstream: 1 + 7 retries)."""


@dataclasses.dataclass(frozen=True, slots=True)
class WriteResult:
    """A successful write: the stored object and admission warnings."""

    obj: Any
    warnings: tuple[str, ...] = ()


def _revision(obj: ApiObject) -> int:
    version = obj.metadata.resource_version
    return int(version) if version else 0


class WriteGuard(Protocol):
    """A check of a caller's create or update (``old`` is None on create)."""

    def check(self, obj: Any, old: Any, user: UserInfo | None) -> None:
        """Raise a ``StatusError`` to refuse the write."""
        ...


class ApiService:
    """The API server's logic without HTTP; a ``Client`` for in-process components."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        rng: random.Random,
        admission: AdmissionChain | None = None,
        auto_create_namespaces: bool = False,
        bootstrap: bool = True,
    ) -> None:
        self.store = store
        self.clock = clock
        self._rng = rng
        self.listers = StoreListers(store)
        self.admission = admission or AdmissionChain()
        self.auto_create_namespaces = auto_create_namespaces
        self.services = self._service_registry(ServiceIPRange(), NodePortRange())
        self.write_guard: WriteGuard | None = None
        """Checks a caller's writes before admission (``serve`` sets RBAC's escalation
        guard, ``apiserver.rbacescalation``)."""
        if bootstrap:
            self.bootstrap()

    # --- services -----------------------------------------------------------------------

    def _service_registry(self, ips: ServiceIPRange, node_ports: NodePortRange) -> ServiceRegistry:
        """A registry holding the cluster IPs and node ports of the stored Services."""
        registry = ServiceRegistry(rng=self._rng, ips=ips, node_ports=node_ports)
        items, _ = self.store.list(KeyPrefix(kinds.for_model(Service).plural, None))
        registry.rebuild(cast(builtins.list[Service], items))
        return registry

    def use_service_ranges(self, cidr: str, node_ports: str) -> None:
        """Allocate cluster IPs from ``cidr`` and node ports from ``node_ports`` (``a-b``).

        kube-apiserver's ``--service-cluster-ip-range`` and ``--service-node-port-range``;
        stored Services keep their values (those outside the new ranges are not tracked).
        """
        self.services = self._service_registry(ServiceIPRange(cidr), NodePortRange(node_ports))

    def _begin_allocation(self, obj: Any, old: Any, *, dry_run: bool) -> tuple[Any, Allocation]:
        """The Service registry's ``beginCreate``/``beginUpdate``; nothing for other kinds."""
        if not isinstance(obj, Service):
            return obj, NO_ALLOCATION
        if old is None:
            return self.services.begin_create(obj, dry_run=dry_run)
        return self.services.begin_update(obj, old, dry_run=dry_run)

    # --- bootstrap -------------------------------------------------------------------------

    def bootstrap(self) -> None:
        """Create the default namespaces and the system PriorityClasses if missing.

        Upstream: the ``scheduling/bootstrap-system-priority-classes`` post-start hook and
        the system namespaces controller.
        """
        for name in DEFAULT_NAMESPACES:
            self._ensure(Namespace(metadata=ObjectMeta(name=name)))
        for pc in SYSTEM_PRIORITY_CLASSES:
            self._ensure(pc)

    def _ensure(self, obj: Any) -> None:
        info = kinds.for_object(obj)
        key = ObjectKey(info.plural, obj.metadata.namespace or "", obj.metadata.name or "")
        try:
            self.store.get(key)
        except KeyNotFoundError:
            self.create_object(obj)

    # --- helpers ------------------------------------------------------------------------------

    def _key(self, info: ResourceInfo, name: str, namespace: str | None) -> ObjectKey:
        return ObjectKey(info.plural, (namespace or "") if info.namespaced else "", name)

    def _new_uid(self) -> str:
        # A random (version 4, RFC 4122 variant) UUID from the injected generator,
        # formatted directly: uuid.UUID's constructor is the slow part.
        value = (self._rng.getrandbits(128) & ~(0xF000 << 64) | (0x4000 << 64)) & ~(
            0xC000 << 48
        ) | (0x8000 << 48)
        text = f"{value:032x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"

    def _generate_name(self, prefix: str) -> str:
        return names.generate_name(prefix, self._rng)

    def _now(self) -> str:
        return rfc3339(self.clock.now())

    def _get_key(self, info: ResourceInfo, key: ObjectKey) -> Any:
        try:
            return self.store.get(key)
        except KeyNotFoundError:
            raise errors.not_found(info.plural, info.group, key.name) from None

    def _check_namespace(
        self, info: ResourceInfo, namespace: str, operation: Operation, name: str = ""
    ) -> bool:
        """``NamespaceLifecycle`` admission: the namespace must exist and not be terminating.

        Returns True when the namespace is missing and will be auto-created, which happens
        only once the write has passed every check (a refused write changes nothing).
        """
        if not info.namespaced:
            return False
        ns_info = kinds.for_model(Namespace)
        key = ObjectKey(ns_info.plural, "", namespace)
        try:
            ns = self.store.get(key)
        except KeyNotFoundError:
            if self.auto_create_namespaces:
                return True
            raise errors.not_found(ns_info.plural, "", namespace) from None
        if operation is Operation.CREATE and ns.metadata.deletion_timestamp:
            raise errors.forbidden_error(
                info.plural,
                info.group,
                name,
                f"unable to create new content in namespace {namespace} because it is being terminated",
            )
        return False

    def check_namespace_for_create(self, kind: type[Any], namespace: str, name: str) -> None:
        """``NamespaceLifecycle`` for a create that stores nothing of ``kind`` itself (the
        ``serviceaccounts/token`` subresource): 404 without the namespace, 403 while it
        terminates; upstream's mutating admission runs it before the subresource's REST."""
        self._check_namespace(kinds.for_model(kind), namespace, Operation.CREATE, name)

    def _charge_quotas(self, outcome: AdmissionOutcome) -> None:
        # The ResourceQuota plugin admitted the object against these usages; write them
        # so the next request is charged on top (the quota controller corrects any drift).
        # A quota changed since admission read it is left to the controller.
        for quota in outcome.quota_status:
            try:
                self.update_status(quota)
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

    @staticmethod
    def _normalize_type(obj: Any, info: ResourceInfo) -> Any:
        if obj.api_version != info.api_version or obj.kind != info.kind:
            return evolve(obj, api_version=info.api_version, kind=info.kind)
        return obj

    # --- create --------------------------------------------------------------------------------

    def create_object(
        self,
        obj: Any,
        *,
        user: UserInfo | None = None,
        dry_run: bool = False,
        restore: bool = False,
    ) -> WriteResult:
        """Create ``obj`` through the full write path; return it with admission warnings.

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
        if self.write_guard is not None and user is not None:
            self.write_guard.check(obj, None, user)
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
            )
            found = validation.validate_create(obj, info)
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
    ) -> WriteResult:
        """Replace ``obj`` (or its status); compare-and-swap on its resourceVersion if set."""
        info = kinds.for_object(obj)
        obj = self._normalize_type(obj, info)
        name = obj.metadata.name or ""
        namespace = obj.metadata.namespace or ""
        key = self._key(info, name, namespace)
        current = self._get_key(info, key)
        requested_rv = obj.metadata.resource_version
        if requested_rv and requested_rv != current.metadata.resource_version:
            raise errors.conflict(info.plural, info.group, name)
        if subresource != "status":
            # Upstream's decoder defaults the body before PrepareForUpdate compares specs,
            # so a replace that leaves out defaulted fields does not bump the generation.
            obj = default_object(obj)
        new: Any = strategy.prepare_for_update(
            obj, current, subresource=subresource, now=self._now()
        )
        if self.write_guard is not None and user is not None:
            self.write_guard.check(new, current, user)
        outcome = AdmissionOutcome()
        request = AdmissionRequest(
            Operation.UPDATE, info, new, current, namespace, name, subresource, user, dry_run
        )
        new = self.admission.mutate(request, outcome)
        allocation = NO_ALLOCATION
        if subresource != "status":
            new, allocation = self._begin_allocation(new, current, dry_run=dry_run)
        with allocation:
            found = validation.validate_update(new, current, info, subresource=subresource)
            if found:
                raise errors.invalid_error(info.kind, info.group, name, found)
            self.admission.validate(evolve(request, obj=new), outcome)
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
                stored = self.store.update(key, new, expected_revision=_revision(current))
            except RevisionConflictError:
                raise errors.conflict(info.plural, info.group, name) from None
            except KeyNotFoundError:
                raise errors.not_found(info.plural, info.group, name) from None
            # A Service that became a NodePort (or a pod that changed scope) was charged
            # its growth by the ResourceQuota plugin.
            self._charge_quotas(outcome)
            self._record_events(outcome)
            return WriteResult(stored, tuple(outcome.warnings))

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
        touched = _top_level_keys(patch, patch_type)
        for _attempt in range(MAX_CONFLICT_RETRIES):
            current = self._get_key(info, key)
            document = to_dict(current) if touched is None else encode_for_change(current, touched)
            try:
                patched = _apply_patch(document, patch, patch_type, info.kind, touched)
            except patching.PatchError as exc:
                raise _patch_error(exc, info, name) from exc
            try:
                if touched is None:
                    new = from_dict(info.model, patched)
                else:
                    new = decode_changes(current, patched, touched)
            except DecodeError as exc:
                raise manifest.decode_failure_status(
                    exc, {"kind": info.kind, "apiVersion": info.api_version}
                ) from exc
            new = _check_name(new, info, name, key.namespace)
            try:
                return self.update_object(new, subresource=subresource, user=user, dry_run=dry_run)
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
    ) -> Any:
        """Delete an object; return its state after the call (see ``apiserver.deletion``).

        Bound, non-terminal pods are deleted gracefully: they get a deletionTimestamp
        and stay until a delete with grace 0 (the kubelet's, or a force delete). Objects
        with finalizers are marked and stay until the finalizers are removed.
        """
        options = options or DeleteRequest()
        info = kinds.for_model(kind)
        strategy.check_delete(info, name)
        _validate_delete_options(options)
        key = self._key(info, name, namespace)
        current = self._get_key(info, key)
        self._check_preconditions(info, current, options)
        plan = deletion.plan_delete(current, options.grace_period_seconds, self.clock.now())
        if options.dry_run:
            return plan.updated if plan.updated is not None else current
        result = current
        if plan.updated is not None:
            try:
                result = self.store.update(key, plan.updated, expected_revision=_revision(current))
            except RevisionConflictError:
                raise errors.conflict(info.plural, info.group, key.name) from None
        if plan.remove:
            return self._remove(info, key, result)
        return result

    def _check_preconditions(
        self, info: ResourceInfo, current: Any, options: DeleteRequest
    ) -> None:
        """``BeforeDelete``'s early precondition check (the conflict names the kind)."""
        pre = options.preconditions
        if pre is None:
            return
        name = current.metadata.name or ""
        if pre.uid is not None and pre.uid != current.metadata.uid:
            raise errors.conflict(
                info.kind,
                info.group,
                name,
                f"the UID in the precondition ({pre.uid}) does not match the UID in record "
                f"({current.metadata.uid or ''}). The object might have been deleted and then recreated",
            )
        if (
            pre.resource_version is not None
            and pre.resource_version != current.metadata.resource_version
        ):
            raise errors.conflict(
                info.kind,
                info.group,
                name,
                f"the ResourceVersion in the precondition ({pre.resource_version}) does not match "
                f"the ResourceVersion in record ({current.metadata.resource_version or ''}). "
                "The object might have been modified",
            )

    def _remove(self, info: ResourceInfo, key: ObjectKey, current: Any) -> Any:
        try:
            removed = self.store.delete(key, expected_revision=_revision(current))
        except KeyNotFoundError:
            raise errors.not_found(info.plural, info.group, key.name) from None
        except RevisionConflictError:
            raise errors.conflict(info.plural, info.group, key.name) from None
        if isinstance(removed, Service):
            # Upstream's afterDelete: the Service's cluster IPs and node ports are free again.
            self.services.release(removed)
        return removed

    # --- read ----------------------------------------------------------------------------------

    def get(self, kind: type[T], name: str, namespace: str | None = None) -> T:
        """Return one object."""
        info = kinds.for_model(kind)
        return cast(T, self._get_key(info, self._key(info, name, namespace)))

    def list(
        self,
        kind: type[T],
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList[T]:
        """List objects, filtered, optionally a page at a time (``limit``/``continue``)."""
        info = kinds.for_model(kind)
        matches = listing.object_filter(info, label_selector, field_selector)
        items, revision = self.store.list(
            KeyPrefix(info.plural, namespace if info.namespaced else None)
        )
        if matches is not None:
            items = [obj for obj in items if matches(obj)]
        start_after: tuple[str, str] | None = None
        if continue_token:
            start_after, revision = listing.decode_continue(continue_token)
            items = [
                obj
                for obj in items
                if ((obj.metadata.namespace or ""), (obj.metadata.name or "")) > start_after
            ]
        next_token: str | None = None
        remaining: int | None = None
        if limit and limit > 0 and len(items) > limit:
            last = items[limit - 1]
            next_token = listing.encode_continue(
                (last.metadata.namespace or "", last.metadata.name or ""), revision
            )
            remaining = len(items) - limit
            items = items[:limit]
        return ObjectList(cast(list[T], items), str(revision), next_token, remaining)

    def watch(
        self,
        kind: type[T],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> watch.ServiceWatch:
        """Watch changes; with no (or ``"0"``) resourceVersion, current objects come first as ADDED."""
        info = kinds.for_model(kind)
        matches = listing.object_filter(info, label_selector, field_selector)
        prefix = KeyPrefix(info.plural, namespace if info.namespaced else None)
        initial: list[ApiObject] = []
        if resource_version in (None, "", "0"):
            items, since = self.store.list(prefix)
            initial = [obj for obj in items if matches is None or matches(obj)]
        else:
            try:
                since = int(resource_version)
            except ValueError:
                raise errors.bad_request(
                    f"invalid resource version: {resource_version!r}"
                ) from None
        try:
            store_watch = self.store.watch(prefix, since)
        except RevisionCompactedError as exc:
            raise errors.gone(str(exc)) from exc
        return watch.ServiceWatch(store_watch, initial, matches)

    # --- Client protocol writes -------------------------------------------------------------

    def create(self, obj: T, *, dry_run: bool = False) -> T:
        """Create an object."""
        return cast(T, self.create_object(obj, dry_run=dry_run).obj)

    def update(self, obj: T, *, dry_run: bool = False) -> T:
        """Replace an object."""
        return cast(T, self.update_object(obj, dry_run=dry_run).obj)

    def update_status(self, obj: T) -> T:
        """Replace an object's status."""
        return cast(T, self.update_object(obj, subresource="status").obj)

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
        result = self.patch_object(
            kind,
            name,
            patch,
            namespace=namespace,
            patch_type=patch_type,
            subresource=subresource or "",
        )
        return cast(T, result.obj)

    def delete(
        self,
        kind: type[T],
        name: str,
        namespace: str | None = None,
        *,
        options: DeleteRequest | None = None,
    ) -> T:
        """Delete an object."""
        return cast(T, self.delete_object(kind, name, namespace, options=options))

    # --- subresources ---------------------------------------------------------------------------

    def get_scale(self, kind: type[Any], name: str, namespace: str | None = None) -> Scale:
        """``<kind>/scale``: the workload's autoscaling/v1 ``Scale`` (``apiserver.scale``)."""
        info = kinds.for_model(kind)
        scale.check_scalable(info)
        return scale.scale_of(self.get(kind, name, namespace))

    def update_scale(self, kind: type[Any], new_scale: Scale) -> Scale:
        """PUT ``<kind>/scale`` (the ``Client`` protocol's verb)."""
        return cast(Scale, self.update_scale_object(kind, new_scale).obj)

    def update_scale_object(
        self,
        kind: type[Any],
        new_scale: Scale,
        *,
        user: UserInfo | None = None,
        dry_run: bool = False,
    ) -> WriteResult:
        """PUT ``<kind>/scale``: ``spec.replicas`` through the workload's update path; the
        result's object is the new ``Scale``."""
        info = kinds.for_model(kind)
        scale.check_scalable(info)
        name = new_scale.metadata.name or ""
        current = self.get(kind, name, new_scale.metadata.namespace)
        result = self.update_object(
            scale.scaled(current, new_scale, name), user=user, dry_run=dry_run
        )
        return WriteResult(scale.scale_of(result.obj), result.warnings)

    def bind(self, binding: Binding) -> None:
        """``pods/binding``: set ``spec.nodeName`` and the PodScheduled condition.

        Mirrors ``BindingREST.Create``/``setPodNodeAndMetadata``
        (``pkg/registry/core/pod/storage/storage.go``): the binding's uid and
        resourceVersion are preconditions; a pod being deleted, already bound, or
        still gated cannot be bound (409 on ``pods/binding``); the binding's
        annotations are copied onto the pod.
        """
        name = binding.metadata.name or ""
        namespace = binding.metadata.namespace or ""
        found = validation.core.validate_binding(binding)
        if found:
            # Upstream returns the bare aggregate, which the handler turns into a 500.
            raise errors.StatusError(
                Status(
                    status="Failure",
                    message=errors.aggregate_message(found),
                    reason="Unknown",
                    code=500,
                )
            )
        node_name = binding.target.name if binding.target else ""
        info = kinds.for_model(Pod)
        key = self._key(info, name, namespace)
        for _attempt in range(MAX_CONFLICT_RETRIES):
            pod: Pod = self._get_key(info, key)
            failure = binding_rules.precondition_failure(binding, pod)
            if failure:
                raise errors.conflict("pods", "", key.name, failure)
            refusal = binding_rules.binding_refusal(pod)
            if refusal:
                raise errors.conflict("pods/binding", "", name, refusal)
            bound = binding_rules.bind_pod(
                pod, node_name or "", self._now(), binding.metadata.annotations
            )
            try:
                self.store.update(key, bound, expected_revision=_revision(pod))
                return
            except RevisionConflictError:
                continue
        raise errors.conflict("pods/binding", "", name)

    def evict(self, eviction: Eviction) -> None:
        """``pods/eviction``: delete the pod unless its PodDisruptionBudget forbids it.

        Mirrors ``EvictionREST.Create`` (``pkg/registry/core/pod/storage/eviction.go``):

        * pending, terminal and terminating pods ignore budgets and are deleted;
        * more than one matching budget answers 500 (unsupported);
        * a pod that is not Ready is deleted without touching its budget when the
          budget's ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow``, or when the budget
          is already healthy (``currentHealthy >= desiredHealthy > 0``);
        * otherwise ``checkAndDecrement``: a budget not yet observed answers 429 with
          retryAfterSeconds 10; ``disruptionsAllowed == 0`` answers 429; else
          ``disruptionsAllowed`` is decremented and the pod recorded in
          ``disruptedPods`` before the pod is deleted (gracefully, per its options).
        """
        name = eviction.metadata.name or ""
        namespace = eviction.metadata.namespace or ""
        info = kinds.for_model(Pod)
        pod: Pod = self._get_key(info, self._key(info, name, namespace))
        options = eviction_rules.delete_request(eviction)
        phase = pod.status.phase if pod.status else None
        if pod.metadata.deletion_timestamp or phase in (
            PHASE_SUCCEEDED,
            PHASE_FAILED,
            PHASE_PENDING,
        ):
            self.delete_object(Pod, name, namespace, options=options)
            return
        budgets = self._matching_budgets(pod)
        if len(budgets) > 1:
            raise errors.StatusError(
                Status(
                    status="Failure",
                    message="This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                    code=500,
                )
            )
        if budgets and not eviction_rules.can_skip_budget(budgets[0], pod):
            self._consume_budget(budgets[0], pod, dry_run=options.dry_run)
        self.delete_object(Pod, name, namespace, options=options)

    def _matching_budgets(self, pod: Pod) -> builtins.list[PodDisruptionBudget]:
        """``getPodDisruptionBudgets``: budgets in the pod's namespace that select it.

        A nil, empty or invalid selector matches nothing.
        """
        pdb_info = kinds.for_model(PodDisruptionBudget)
        items, _ = self.store.list(KeyPrefix(pdb_info.plural, pod.metadata.namespace or ""))
        labels = pod.metadata.labels or {}
        matching: builtins.list[PodDisruptionBudget] = []
        for item in items:
            pdb = cast(PodDisruptionBudget, item)
            try:
                parsed = selectors.label_selector_as_selector(
                    pdb.spec.selector if pdb.spec else None
                )
            except selectors.SelectorError:
                continue
            if not parsed.is_empty() and parsed.matches(labels):
                matching.append(pdb)
        return matching

    def _consume_budget(self, pdb: PodDisruptionBudget, pod: Pod, *, dry_run: bool) -> None:
        """``checkAndDecrement``: take one disruption from the budget or refuse (429)."""
        new_status = eviction_rules.check_and_decrement(
            pdb, pod.metadata.name or "", self._now(), dry_run=dry_run
        )
        if new_status is None:
            return
        pdb_info = kinds.for_model(PodDisruptionBudget)
        pdb_name = pdb.metadata.name or ""
        key = self._key(pdb_info, pdb_name, pdb.metadata.namespace)
        try:
            self.store.update(key, evolve(pdb, status=new_status), expected_revision=_revision(pdb))
        except RevisionConflictError:
            raise errors.conflict(pdb_info.plural, pdb_info.group, pdb_name) from None


def _check_name(obj: Any, info: ResourceInfo, name: str, namespace: str) -> Any:
    """``checkName`` + ``EnsureObjectNamespaceMatchesRequestNamespace`` for a patched object.

    The object must keep the name on the URL (400 otherwise); an emptied namespace is
    filled in from the request, a different one is a 400.
    """
    meta: ObjectMeta = obj.metadata
    if (meta.name or "") != name:
        raise errors.bad_request(
            f"the name of the object ({meta.name or ''}) does not match the name on the URL ({name})"
        )
    if info.namespaced:
        if not meta.namespace:
            return evolve(obj, metadata=evolve(meta, namespace=namespace))
        if meta.namespace != namespace:
            raise errors.bad_request(
                f"the namespace of the object ({meta.namespace}) does not match the namespace on "
                f"the request ({namespace})"
            )
    return obj


PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")


def _validate_delete_options(options: DeleteRequest) -> None:
    """``ValidateDeleteOptions`` for the options kubeprio supports (propagationPolicy)."""
    policy = options.propagation_policy
    if policy is not None and policy not in PROPAGATION_POLICIES:
        found = [errors.not_supported("propagationPolicy", policy, (*PROPAGATION_POLICIES, "nil"))]
        raise errors.invalid_error("DeleteOptions", "meta.k8s.io", "", found)


def _top_level_keys(patch: object, patch_type: PatchType | str) -> frozenset[str] | None:
    """The top-level keys a merge or strategic merge patch can change, or None when it may
    change anything (a JSON patch, or a top-level ``$`` directive such as ``$retainKeys``)."""
    if patch_type not in (
        PatchType.MERGE_PATCH,
        PatchType.STRATEGIC_MERGE_PATCH,
        PatchType.APPLY_PATCH,
    ) or not isinstance(patch, dict):
        return None
    if any(key.startswith("$") for key in patch):
        return None
    return frozenset(patch)


def _apply_patch(
    document: JsonDict,
    patch: object,
    patch_type: PatchType | str,
    kind: str,
    touched: frozenset[str] | None,
) -> JsonDict:
    """``patching.apply_patch`` on ``document``; with ``touched`` known, only those top-level
    members are copied and patched (both patch kinds merge each top-level key on its own),
    the others are passed through untouched, in the same key order."""
    if touched is None:
        return patching.apply_patch(document, patch, patch_type=patch_type, kind=kind)
    part = {key: value for key, value in document.items() if key in touched}
    patched_part = patching.apply_patch(part, patch, patch_type=patch_type, kind=kind)
    result: JsonDict = {}
    for key, value in document.items():
        if key not in touched:
            result[key] = value
        elif key in patched_part:
            result[key] = patched_part[key]
    for key, value in patched_part.items():
        if key not in result:
            result[key] = value
    return result


def _patch_error(exc: patching.PatchError, info: ResourceInfo, name: str) -> errors.StatusError:
    """Map a patch failure to the Status upstream answers with (400, 415 or 422)."""
    if exc.code == errors.UnsupportedMediaTypeError.code:
        return errors.UnsupportedMediaTypeError.build(str(exc))
    if exc.code == errors.InvalidError.code:
        return errors.InvalidError.build(
            str(exc), details=errors.status_details(name=name, group=info.group, kind=info.kind)
        )
    return errors.bad_request(str(exc))
