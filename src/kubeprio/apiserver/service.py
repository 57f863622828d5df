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
namespace lifecycle, and list/watch with label and field selectors.
"""

from __future__ import annotations

import base64
import builtins
import dataclasses
import json
import random
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from kubeprio.admission.chain import (
    AdmissionChain,
    AdmissionOutcome,
    AdmissionRequest,
    Operation,
    UserInfo,
)
from kubeprio.api import errors, fields, kinds, selectors, validation
from kubeprio.api import patch as patching
from kubeprio.api.core import (
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_SUCCEEDED,
    Binding,
    Namespace,
    Pod,
    PodCondition,
    PodStatus,
)
from kubeprio.api.defaults import default_object
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.meta import ApiObject, ObjectMeta, StatusCause, StatusDetails
from kubeprio.api.policy import Eviction, PodDisruptionBudget, PodDisruptionBudgetStatus
from kubeprio.api.scheduling import SYSTEM_PRIORITY_CLASSES
from kubeprio.api.serialization import DecodeError, from_dict, to_dict
from kubeprio.apiserver import strategy
from kubeprio.apiserver.listers import StoreListers
from kubeprio.client.protocol import (
    DeleteRequest,
    ObjectList,
    PatchType,
    WatchEvent,
    WatchEventType,
)
from kubeprio.clock import Clock, rfc3339
from kubeprio.store.errors import (
    KeyExistsError,
    KeyNotFoundError,
    RevisionCompactedError,
    RevisionConflictError,
)
from kubeprio.store.interface import EventType, KeyPrefix, ObjectKey, Store, StoreWatch

T = TypeVar("T")

DEFAULT_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
GENERATED_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_NAME_LENGTH = 5
MAX_CONFLICT_RETRIES = 8


@dataclasses.dataclass(frozen=True, slots=True)
class WriteResult:
    """A successful write: the stored object and admission warnings."""

    obj: Any
    warnings: tuple[str, ...] = ()


ObjectFilter = Callable[[ApiObject], bool]


class ServiceWatch:
    """A ``client.protocol.Watch`` over a store watch, with selector filtering.

    An object that stops matching the selectors is reported DELETED and one that starts
    matching is reported ADDED, as upstream's watch cache does.
    """

    def __init__(
        self,
        store_watch: StoreWatch,
        initial: Sequence[ApiObject],
        matches: ObjectFilter | None,
    ) -> None:
        self._watch = store_watch
        self._matches = matches
        self._initial: list[WatchEvent[Any]] = [
            WatchEvent(WatchEventType.ADDED, obj, _revision(obj)) for obj in initial
        ]
        self._visible: set[ObjectKey] | None = None
        if matches is not None:
            self._visible = {_object_key(obj) for obj in initial}

    def poll(self) -> list[WatchEvent[Any]]:
        """Drain pending events, filtered and translated."""
        out = self._initial
        self._initial = []
        for event in self._watch.poll():
            out.extend(self._translate(event.type, event.key, event.object, event.revision))
        return out

    def _translate(
        self, kind: EventType, key: ObjectKey, obj: ApiObject, revision: int
    ) -> list[WatchEvent[Any]]:
        if self._matches is None or self._visible is None:
            return [WatchEvent(WatchEventType(kind.value), obj, revision)]
        was_visible = key in self._visible
        if kind is EventType.DELETED:
            if was_visible:
                self._visible.discard(key)
                return [WatchEvent(WatchEventType.DELETED, obj, revision)]
            return []
        now_visible = self._matches(obj)
        if now_visible and not was_visible:
            self._visible.add(key)
            return [WatchEvent(WatchEventType.ADDED, obj, revision)]
        if was_visible and not now_visible:
            self._visible.discard(key)
            return [WatchEvent(WatchEventType.DELETED, obj, revision)]
        if now_visible:
            return [WatchEvent(WatchEventType.MODIFIED, obj, revision)]
        return []

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Wake ``listener`` when events arrive."""
        self._watch.set_listener(listener)
        if listener is not None and self._initial:
            listener()

    def close(self) -> None:
        """Stop the watch."""
        self._watch.close()

    @property
    def closed(self) -> bool:
        """Whether the underlying watch ended."""
        return self._watch.closed


def _revision(obj: ApiObject) -> int:
    version = obj.metadata.resource_version
    return int(version) if version else 0


def _object_key(obj: ApiObject) -> ObjectKey:
    info = kinds.for_object(obj)
    return ObjectKey(info.plural, obj.metadata.namespace or "", obj.metadata.name or "")


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
        if bootstrap:
            self.bootstrap()

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
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def _generate_name(self, prefix: str) -> str:
        suffix = "".join(
            self._rng.choice(GENERATED_NAME_ALPHABET) for _ in range(GENERATED_NAME_LENGTH)
        )
        return f"{prefix}{suffix}"

    def _now(self) -> str:
        return rfc3339(self.clock.now())

    def _get_key(self, info: ResourceInfo, key: ObjectKey) -> Any:
        try:
            return self.store.get(key)
        except KeyNotFoundError:
            raise errors.not_found(info.plural, info.group, key.name) from None

    def _check_namespace(self, info: ResourceInfo, namespace: str, operation: Operation) -> bool:
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
                "",
                f"unable to create new content in namespace {namespace} because it is being terminated",
            )
        return False

    def _record_events(self, outcome: AdmissionOutcome) -> None:
        # Plugins have no clock: the service stamps the times of the events they report.
        # Recording is best effort, as upstream's event recorder: the write already happened.
        now = self._now()
        for event in outcome.events:
            if event.first_timestamp is None:
                event = dataclasses.replace(
                    event, first_timestamp=now, last_timestamp=now, count=event.count or 1
                )
            try:
                self.create_object(event)
            except errors.StatusError:
                continue

    @staticmethod
    def _normalize_type(obj: Any, info: ResourceInfo) -> Any:
        if obj.api_version != info.api_version or obj.kind != info.kind:
            return dataclasses.replace(obj, api_version=info.api_version, kind=info.kind)
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
        create_namespace = self._check_namespace(info, namespace, Operation.CREATE)
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
        if not obj.metadata.name and obj.metadata.generate_name:
            generated = self._generate_name(obj.metadata.generate_name)
            obj = dataclasses.replace(
                obj, metadata=dataclasses.replace(obj.metadata, name=generated)
            )
        name = obj.metadata.name or ""
        restored = obj.metadata if restore else None
        obj = strategy.prepare_for_create(
            obj,
            uid=(restored.uid if restored is not None else None) or self._new_uid(),
            now=(restored.creation_timestamp if restored is not None else None) or self._now(),
        )
        found = validation.validate_create(obj, info)
        if found:
            raise errors.invalid_error(info.kind, info.group, name, found)
        self.admission.validate(dataclasses.replace(request, obj=obj, name=name), outcome)
        if dry_run:
            return WriteResult(obj, tuple(outcome.warnings))
        if create_namespace:
            self.create_object(Namespace(metadata=ObjectMeta(name=namespace)))
        try:
            stored = self.store.create(self._key(info, name, namespace), obj)
        except KeyExistsError:
            raise errors.already_exists(info.plural, info.group, name) from None
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
        new: Any = strategy.prepare_for_update(obj, current, subresource=subresource)
        if subresource != "status":
            new = default_object(new)
        outcome = AdmissionOutcome()
        request = AdmissionRequest(
            Operation.UPDATE, info, new, current, namespace, name, subresource, user, dry_run
        )
        new = self.admission.mutate(request, outcome)
        found = validation.validate_update(new, current, info)
        if found:
            raise errors.invalid_error(info.kind, info.group, name, found)
        self.admission.validate(dataclasses.replace(request, obj=new), outcome)
        new = dataclasses.replace(
            new,
            metadata=dataclasses.replace(
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
        self._record_events(outcome)
        return WriteResult(stored, tuple(outcome.warnings))

    def _waits_for_grace(self, obj: Any) -> bool:
        return isinstance(obj, Pod) and bool(obj.metadata.deletion_grace_period_seconds)

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
        for _attempt in range(MAX_CONFLICT_RETRIES):
            current = self._get_key(info, key)
            document = to_dict(current)
            try:
                patched = patching.apply_patch(
                    document, patch, patch_type=patch_type, kind=info.kind
                )
            except patching.PatchError as exc:
                raise _patch_error(exc, info, name) from exc
            try:
                new = from_dict(info.model, patched)
            except DecodeError as exc:
                raise errors.bad_request(
                    f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {exc.message}',
                    [StatusCause(reason="FieldValueInvalid", message=exc.message, field=exc.path)],
                ) from exc
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
        """Delete an object; bound, non-terminal pods are deleted gracefully."""
        options = options or DeleteRequest()
        info = kinds.for_model(kind)
        strategy.check_delete(info, name)
        key = self._key(info, name, namespace)
        current = self._get_key(info, key)
        self._check_preconditions(info, current, options)
        grace = self._grace_period(current, options)
        if options.dry_run:
            return current
        if grace > 0 or current.metadata.finalizers:
            return self._mark_deleting(info, key, current, grace)
        return self._remove(info, key, current)

    def _check_preconditions(
        self, info: ResourceInfo, current: Any, options: DeleteRequest
    ) -> None:
        pre = options.preconditions
        if pre is None:
            return
        name = current.metadata.name or ""
        if pre.uid and pre.uid != current.metadata.uid:
            raise errors.conflict(
                info.plural,
                info.group,
                name,
                f"Precondition failed: UID in precondition: {pre.uid}, UID in object meta: {current.metadata.uid}",
            )
        if pre.resource_version and pre.resource_version != current.metadata.resource_version:
            raise errors.conflict(
                info.plural,
                info.group,
                name,
                "Precondition failed: ResourceVersion in precondition: "
                f"{pre.resource_version}, ResourceVersion in object meta: {current.metadata.resource_version}",
            )

    @staticmethod
    def _grace_period(current: Any, options: DeleteRequest) -> int:
        """Upstream ``CheckGracefulDelete`` for pods; other kinds are deleted at once."""
        if not isinstance(current, Pod):
            return 0
        spec = current.spec
        if options.grace_period_seconds is not None:
            grace = max(options.grace_period_seconds, 0)
        elif current.metadata.deletion_grace_period_seconds is not None:
            grace = current.metadata.deletion_grace_period_seconds
        else:
            grace = (spec.termination_grace_period_seconds if spec else None) or 0
        phase = current.status.phase if current.status else None
        if not (spec and spec.node_name) or phase in (PHASE_FAILED, PHASE_SUCCEEDED):
            # An unscheduled or finished pod has nothing to stop: delete it now.
            return 0
        return grace

    def _mark_deleting(self, info: ResourceInfo, key: ObjectKey, current: Any, grace: int) -> Any:
        existing = current.metadata.deletion_grace_period_seconds
        if current.metadata.deletion_timestamp and existing is not None and existing <= grace:
            return current
        if grace == 0 and not current.metadata.finalizers:
            return self._remove(info, key, current)
        metadata = dataclasses.replace(
            current.metadata,
            deletion_timestamp=rfc3339(self.clock.now() + grace),
            deletion_grace_period_seconds=grace,
        )
        try:
            return self.store.update(
                key,
                dataclasses.replace(current, metadata=metadata),
                expected_revision=_revision(current),
            )
        except RevisionConflictError:
            raise errors.conflict(info.plural, info.group, key.name) from None

    def _remove(self, info: ResourceInfo, key: ObjectKey, current: Any) -> Any:
        try:
            return self.store.delete(key, expected_revision=_revision(current))
        except KeyNotFoundError:
            raise errors.not_found(info.plural, info.group, key.name) from None
        except RevisionConflictError:
            raise errors.conflict(info.plural, info.group, key.name) from None

    # --- read ----------------------------------------------------------------------------------

    def _filter(
        self, info: ResourceInfo, label_selector: str | None, field_selector: str | None
    ) -> ObjectFilter | None:
        label_match: Callable[[ApiObject], bool] | None = None
        field_match: Callable[[ApiObject], bool] | None = None
        if label_selector:
            try:
                parsed = selectors.parse_label_selector(label_selector)
            except selectors.SelectorError as exc:
                raise errors.bad_request(str(exc)) from exc
            if not parsed.is_empty():
                label_match = lambda obj: parsed.matches(obj.metadata.labels or {})  # noqa: E731
        if field_selector:
            try:
                parsed_fields = selectors.parse_field_selector(field_selector)
            except selectors.SelectorError as exc:
                raise errors.bad_request(str(exc)) from exc
            supported = fields.supported_fields(info.model)
            for requirement in parsed_fields.requirements:
                if requirement.field not in supported:
                    raise errors.bad_request(f"field label not supported: {requirement.field}")
            if parsed_fields.requirements:
                field_match = lambda obj: parsed_fields.matches(fields.object_fields(obj))  # noqa: E731
        if label_match and field_match:
            return lambda obj: label_match(obj) and field_match(obj)
        return label_match or field_match

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
        matches = self._filter(info, label_selector, field_selector)
        items, revision = self.store.list(
            KeyPrefix(info.plural, namespace if info.namespaced else None)
        )
        if matches is not None:
            items = [obj for obj in items if matches(obj)]
        start_after: tuple[str, str] | None = None
        if continue_token:
            start_after, revision = _decode_continue(continue_token)
            items = [
                obj
                for obj in items
                if ((obj.metadata.namespace or ""), (obj.metadata.name or "")) > start_after
            ]
        next_token: str | None = None
        remaining: int | None = None
        if limit and limit > 0 and len(items) > limit:
            last = items[limit - 1]
            next_token = _encode_continue(
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
    ) -> ServiceWatch:
        """Watch changes; with no (or ``"0"``) resourceVersion, current objects come first as ADDED."""
        info = kinds.for_model(kind)
        matches = self._filter(info, label_selector, field_selector)
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
        return ServiceWatch(store_watch, initial, matches)

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

    def bind(self, binding: Binding) -> None:
        """``pods/binding``: set ``spec.nodeName`` and the PodScheduled condition."""
        name = binding.metadata.name or ""
        namespace = binding.metadata.namespace or ""
        target = binding.target
        if target is None or not target.name:
            raise errors.invalid_error("Binding", "", name, [errors.required("target.name")])
        info = kinds.for_model(Pod)
        key = self._key(info, name, namespace)
        for _attempt in range(MAX_CONFLICT_RETRIES):
            pod: Pod = self._get_key(info, key)
            if binding.metadata.uid and binding.metadata.uid != pod.metadata.uid:
                raise errors.conflict(
                    "pods/binding", "", name, "the UID in the binding does not match the pod"
                )
            if pod.metadata.deletion_timestamp:
                raise errors.conflict(
                    "pods/binding",
                    "",
                    name,
                    f"pod {name} is being deleted, cannot be assigned to a host",
                )
            spec = pod.spec
            if spec is not None and spec.node_name:
                raise errors.conflict(
                    "pods/binding",
                    "",
                    name,
                    f'pod {name} is already assigned to node "{spec.node_name}"',
                )
            bound = _bind_pod(pod, target.name, self._now())
            try:
                self.store.update(key, bound, expected_revision=_revision(pod))
                return
            except RevisionConflictError:
                continue
        raise errors.conflict("pods/binding", "", name)

    def evict(self, eviction: Eviction) -> None:
        """``pods/eviction``: delete the pod unless its PodDisruptionBudget forbids it.

        Mirrors ``pkg/registry/core/pod/storage/eviction.go``: terminal and pending pods
        ignore budgets; more than one matching budget is an error; a budget with
        ``disruptionsAllowed == 0`` answers 429 TooManyRequests; otherwise the budget's
        ``disruptionsAllowed`` is decremented and the pod recorded in ``disruptedPods``
        before the pod is deleted.
        """
        name = eviction.metadata.name or ""
        namespace = eviction.metadata.namespace or ""
        info = kinds.for_model(Pod)
        pod: Pod = self._get_key(info, self._key(info, name, namespace))
        options = _delete_request(eviction)
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
            raise errors.internal_error(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
            )
        if budgets:
            self._consume_budget(budgets[0], pod)
        self.delete_object(Pod, name, namespace, options=options)

    def _matching_budgets(self, pod: Pod) -> builtins.list[PodDisruptionBudget]:
        pdb_info = kinds.for_model(PodDisruptionBudget)
        items, _ = self.store.list(KeyPrefix(pdb_info.plural, pod.metadata.namespace or ""))
        labels = pod.metadata.labels or {}
        matching: builtins.list[PodDisruptionBudget] = []
        for item in items:
            pdb = cast(PodDisruptionBudget, item)
            selector = pdb.spec.selector if pdb.spec else None
            if selector is None or not labels:
                continue
            try:
                parsed = selectors.label_selector_from_match(
                    selector.match_labels,
                    [
                        (r.key or "", r.operator or "", r.values)
                        for r in selector.match_expressions or ()
                    ],
                )
            except selectors.SelectorError:
                continue
            if parsed.matches(labels) and not parsed.is_empty():
                matching.append(pdb)
        return matching

    def _consume_budget(self, pdb: PodDisruptionBudget, pod: Pod) -> None:
        status = pdb.status or PodDisruptionBudgetStatus()
        pdb_name = pdb.metadata.name or ""
        if (status.observed_generation or 0) < (pdb.metadata.generation or 0):
            raise _budget_error(
                f"The disruption budget {pdb_name} is still being processed by the server."
            )
        allowed = status.disruptions_allowed or 0
        if allowed < 0:
            raise errors.forbidden_error(
                "pods", "", pod.metadata.name or "", "pdb disruptions allowed is negative"
            )
        if allowed == 0:
            raise _budget_error(
                f"The disruption budget {pdb_name} needs {status.desired_healthy or 0} healthy pods "
                f"and has {status.current_healthy or 0} currently"
            )
        disrupted = dict(status.disrupted_pods or {})
        disrupted[pod.metadata.name or ""] = self._now()
        new_status = dataclasses.replace(
            status, disruptions_allowed=allowed - 1, disrupted_pods=disrupted
        )
        pdb_info = kinds.for_model(PodDisruptionBudget)
        key = self._key(pdb_info, pdb_name, pdb.metadata.namespace)
        try:
            self.store.update(
                key, dataclasses.replace(pdb, status=new_status), expected_revision=_revision(pdb)
            )
        except RevisionConflictError:
            raise errors.conflict(pdb_info.plural, pdb_info.group, pdb_name) from None


def _patch_error(exc: patching.PatchError, info: ResourceInfo, name: str) -> errors.StatusError:
    """Map a patch failure to the Status upstream answers with (400, 415 or 422)."""
    if exc.code == errors.UnsupportedMediaTypeError.code:
        return errors.UnsupportedMediaTypeError.build(str(exc))
    if exc.code == errors.InvalidError.code:
        return errors.InvalidError.build(
            str(exc), details=StatusDetails(name=name, group=info.group, kind=info.kind)
        )
    return errors.bad_request(str(exc))


def _bind_pod(pod: Pod, node_name: str, now: str) -> Pod:
    spec = dataclasses.replace(pod.spec, node_name=node_name) if pod.spec else None
    status = pod.status or PodStatus()
    conditions = [c for c in status.conditions or () if c.type != "PodScheduled"]
    conditions.append(PodCondition(type="PodScheduled", status="True", last_transition_time=now))
    return dataclasses.replace(
        pod, spec=spec, status=dataclasses.replace(status, conditions=tuple(conditions))
    )


def _delete_request(eviction: Eviction) -> DeleteRequest:
    options = eviction.delete_options
    if options is None:
        return DeleteRequest()
    return DeleteRequest(
        grace_period_seconds=options.grace_period_seconds,
        preconditions=options.preconditions,
        propagation_policy=options.propagation_policy,
        dry_run=bool(options.dry_run),
    )


def _budget_error(cause: str) -> errors.TooManyRequestsError:
    error = errors.TooManyRequestsError.build(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        details=StatusDetails(causes=(StatusCause(reason="DisruptionBudget", message=cause),)),
    )
    assert isinstance(error, errors.TooManyRequestsError)
    return error


def _encode_continue(last: tuple[str, str], revision: int) -> str:
    raw = json.dumps({"v": 1, "rv": revision, "start": list(last)}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_continue(token: str) -> tuple[tuple[str, str], int]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        start = data["start"]
        return (str(start[0]), str(start[1])), int(data["rv"])
    except (ValueError, KeyError, IndexError, TypeError):
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion"
        ) from None
