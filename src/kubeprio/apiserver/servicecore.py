"""``ServiceCore``: the state and store helpers every part of ``ApiService`` shares.

What it is: the base class of ``ApiService`` (``apiserver.service``). It holds the store,
the injected clock and random generator (uids and generated names come from them), the
admission chain, the Service registry (cluster IPs and node ports) and the caller's write
guard, and the small helpers the write path (``apiserver.servicewrites``), the reads
(``apiserver.servicereads``) and the subresources (``apiserver.servicesubresources``)
all use: object keys, ``404`` on a missing key, the ``NamespaceLifecycle`` check.

Who drives it: nothing directly; ``ApiService`` is built on it.
"""

from __future__ import annotations

import builtins
import dataclasses
import random
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

from kubeprio.admission.chain import AdmissionChain, Operation, UserInfo
from kubeprio.api import errors, kinds, names
from kubeprio.api.core import Namespace
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.api.service import Service
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.serviceranges import NodePortRange, ServiceIPRange
from kubeprio.apiserver.serviceregistry import NO_ALLOCATION, Allocation, ServiceRegistry
from kubeprio.clock import Clock, rfc3339
from kubeprio.store.errors import KeyNotFoundError
from kubeprio.store.interface import KeyPrefix, ObjectKey, Store

_R = TypeVar("_R")

MAX_CONFLICT_RETRIES = 8
"""Read-modify-write attempts (patch, binding) before a conflict is answered."""


@dataclasses.dataclass(frozen=True, slots=True)
class WriteResult:
    """A successful write: the stored object and admission warnings."""

    obj: Any
    warnings: tuple[str, ...] = ()


def stored_revision(obj: ApiObject) -> int:
    """The object's resourceVersion as the store's revision (0 when unset)."""
    version = obj.metadata.resource_version
    return int(version) if version else 0


class DeferredWrites(Protocol):
    """Runs the in-process controllers' writes so that webhook calls wait off the event
    loop (``apiserver.controllerwebhooks.ControllerWebhookWrites``)."""

    def applies(self) -> bool:
        """Whether the write running now is one to run through ``run``."""
        ...

    def run(self, identity: str, attempt: Callable[[], _R]) -> _R:
        """Run one attempt of the write ``identity`` names (or raise that it waits)."""
        ...


class WriteGuard(Protocol):
    """A check of a caller's create or update (``old`` is None on create)."""

    def check(self, obj: Any, old: Any, user: UserInfo | None) -> None:
        """Raise a ``StatusError`` to refuse the write."""
        ...


class ServiceCore:
    """The API server's shared state and helpers (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        rng: random.Random,
        admission: AdmissionChain | None = None,
        auto_create_namespaces: bool = False,
    ) -> None:
        self.store = store
        self.clock = clock
        self._rng = rng
        self.listers = StoreListers(store)
        self.admission = admission or AdmissionChain()
        self.auto_create_namespaces = auto_create_namespaces
        self.services = self._service_registry(ServiceIPRange(), NodePortRange())
        self.write_guard: WriteGuard | None = None
        """Checks a caller's writes after the mutating phase and before the strategy, as
        upstream's policy-based storage wraps the registry (``serve`` sets RBAC's
        escalation guard, ``apiserver.rbacescalation``)."""
        self.controller_writes: DeferredWrites | None = None
        """Set by ``serve``: the in-process controllers' writes wait on admission webhooks
        off the event loop (``apiserver.controllerwebhooks``); None: they call in place."""

    @property
    def rng(self) -> random.Random:
        """The generator uids, generated names and Service allocations come from
        (``apiserver.webhookwaits`` replays a write's draws from it)."""
        return self._rng

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

    @staticmethod
    def _normalize_type(obj: Any, info: ResourceInfo) -> Any:
        if obj.api_version != info.api_version or obj.kind != info.kind:
            return evolve(obj, api_version=info.api_version, kind=info.kind)
        return obj
