"""The Service registry's allocation hooks: cluster IPs and node ports, taken and given back.

Mirrors ``pkg/registry/core/service/storage`` (``storage.go``'s ``beginCreate``,
``beginUpdate``, ``afterDelete``; ``alloc.go``'s ``allocateCreate``/``allocateUpdate``,
``initIPFamilyFields``, ``initNodePorts``, ``updateNodePorts``) and the strategy's
``NormalizeClusterIPs``, ``patchAllocatedValues`` and ``dropTypeDependentFields``, for a
single-stack cluster (one service range). The API service calls, per Service write::

    create:  begin_create  -> (prepare, validate, admit, store) -> commit | revert
    update:  begin_update  -> (validate, admit, store)          -> commit | revert
    delete:  (store)       -> release

``begin_*`` normalises ``clusterIP``/``clusterIPs``, fills ``ipFamilies`` (the range's
family) and ``ipFamilyPolicy`` (SingleStack; RequireDualStack for a headless Service
without selector), then takes the IPs and node ports the Service needs: the ones it asks
for (refused with upstream's 422: ``spec.clusterIPs: Invalid value: [...]: failed to
allocate IP ...: provided IP is already allocated``, ``spec.ports[0].nodePort: Invalid
value: 30080: provided port is already allocated``) or random free ones. An update that
drops a value releases it on commit; a failed write gives back what was taken (the
returned ``Allocation``). A dry run takes nothing for good. Headless and ExternalName
Services get no IP.

The allocations live in memory; ``rebuild`` re-takes those of the stored Services when
the server starts (upstream's repair controllers), so they survive a restart.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.model import evolve
from kubeprio.api.service import (
    CLUSTER_IP_NONE,
    IPV4,
    IPV6,
    REQUIRE_DUAL_STACK,
    SERVICE_TYPE_EXTERNAL_NAME,
    SERVICE_TYPE_LOAD_BALANCER,
    SINGLE_STACK,
    Service,
    ServiceSpec,
    externally_accessible,
    needs_health_check,
    wants_node_ports,
)
from kubeprio.api.validation.ip import parse_ip
from kubeprio.api.validation.service import cluster_ips_related_errors
from kubeprio.apiserver.serviceranges import (
    AllocationError,
    NodePortRange,
    RangeFullError,
    ServiceIPRange,
)

KIND: Final = "Service"


class Allocation:
    """What one write took and will give back: commit or revert it, exactly once.

    Used as a context manager by the API service: leaving the block normally commits
    (releases what the new object no longer holds), an exception reverts (releases
    what the write took). A dry run's allocation always reverts.
    """

    def __init__(self, registry: ServiceRegistry | None = None, *, dry_run: bool = False) -> None:
        self._registry = registry
        self._dry_run = dry_run
        self.taken_ips: list[str] = []
        self.taken_ports: list[int] = []
        self.freed_ips: list[str] = []
        self.freed_ports: list[int] = []

    def commit(self) -> None:
        """The write is stored: give back what the new object dropped."""
        if self._dry_run:
            self.revert()
            return
        if self._registry is not None:
            self._registry.give_back(self.freed_ips, self.freed_ports)

    def revert(self) -> None:
        """The write failed: give back what it took."""
        if self._registry is not None:
            self._registry.give_back(self.taken_ips, self.taken_ports)
        self.taken_ips, self.taken_ports = [], []

    def __enter__(self) -> Allocation:
        return self

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.revert()


NO_ALLOCATION: Final = Allocation()
"""The allocation of a write that is not a Service's: nothing to do."""


def _needs_cluster_ip(spec: ServiceSpec) -> bool:
    return spec.type != SERVICE_TYPE_EXTERNAL_NAME


def _node_ports(spec: ServiceSpec) -> list[int]:
    """``collectServiceNodePorts`` (with the health-check node port)."""
    found = [port.node_port for port in spec.ports or () if port.node_port]
    if spec.health_check_node_port:
        found.append(spec.health_check_node_port)
    return found


def normalize_cluster_ips(new: ServiceSpec, old: ServiceSpec | None) -> ServiceSpec:
    """``NormalizeClusterIPs``: keep ``clusterIP`` and ``clusterIPs`` in step."""
    if old is None:
        if new.cluster_ip and not new.cluster_ips:
            return evolve(new, cluster_ips=(new.cluster_ip,))
        return new
    cluster_ips = new.cluster_ips
    if old.cluster_ips and not cluster_ips and old.cluster_ip == new.cluster_ip:
        cluster_ips = old.cluster_ips
    if (old.cluster_ip or "") != (new.cluster_ip or ""):
        same = tuple(old.cluster_ips or ()) == tuple(cluster_ips or ())
        if old.cluster_ip and not new.cluster_ip:
            if same:
                cluster_ips = None
        elif same:
            cluster_ips = (new.cluster_ip or "",)
    return new if cluster_ips == new.cluster_ips else evolve(new, cluster_ips=cluster_ips)


def patch_allocated_values(new: ServiceSpec, old: ServiceSpec) -> ServiceSpec:
    """``patchAllocatedValues``: a write that leaves out allocated values keeps them."""
    changes: dict[str, Any] = {}
    if _needs_cluster_ip(old) and _needs_cluster_ip(new):
        if not new.cluster_ip:
            changes["cluster_ip"] = old.cluster_ip
        if not new.cluster_ips and old.cluster_ips:
            changes["cluster_ips"] = old.cluster_ips
    if wants_node_ports(old) and wants_node_ports(new) and new.ports:
        used = {p.node_port for p in old.ports or () if p.node_port} & {
            p.node_port for p in new.ports if p.node_port
        }
        by_name = {p.name or "": p.node_port or 0 for p in old.ports or ()}
        ports = tuple(
            evolve(p, node_port=by_name.get(p.name or "", 0) or None)
            if not p.node_port and by_name.get(p.name or "", 0) not in used
            else p
            for p in new.ports
        )
        if ports != new.ports:
            changes["ports"] = ports
    if needs_health_check(old) and needs_health_check(new) and not new.health_check_node_port:
        changes["health_check_node_port"] = old.health_check_node_port
    return evolve(new, **changes) if changes else new


def drop_type_dependent_fields(new: Service, old: Service) -> Service:
    """``dropTypeDependentFields``: values the new type does not use, and the user left as
    they were, are wiped (they are released by the allocation)."""
    spec, old_spec = new.spec or ServiceSpec(), old.spec or ServiceSpec()
    changes: dict[str, Any] = {}
    if _needs_cluster_ip(old_spec) and not _needs_cluster_ip(spec):
        if tuple(spec.cluster_ips or ()) == tuple(old_spec.cluster_ips or ()):
            changes.update(cluster_ip=None, cluster_ips=None)
        if tuple(spec.ip_families or ()) == tuple(old_spec.ip_families or ()):
            changes["ip_families"] = None
        if spec.ip_family_policy == old_spec.ip_family_policy:
            changes["ip_family_policy"] = None
    if (
        wants_node_ports(old_spec)
        and not wants_node_ports(spec)
        and [p.node_port for p in spec.ports or ()] == [p.node_port for p in old_spec.ports or ()]
    ):
        changes["ports"] = tuple(evolve(p, node_port=None) for p in spec.ports or ())
    if (
        needs_health_check(old_spec)
        and not needs_health_check(spec)
        and spec.health_check_node_port == old_spec.health_check_node_port
    ):
        changes["health_check_node_port"] = None
    if spec.type != SERVICE_TYPE_LOAD_BALANCER:
        changes["allocate_load_balancer_node_ports"] = None
    if (
        externally_accessible(old_spec)
        and not externally_accessible(spec)
        and spec.external_traffic_policy == old_spec.external_traffic_policy
    ):
        changes["external_traffic_policy"] = None
    spec = evolve(spec, **changes)
    status = new.status
    if spec.type != SERVICE_TYPE_LOAD_BALANCER and status is not None and status.load_balancer:
        status = evolve(status, load_balancer=None)
    return evolve(new, spec=spec, status=status)


class ServiceRegistry:
    """The taken cluster IPs and node ports of every stored Service."""

    def __init__(
        self,
        *,
        rng: random.Random,
        ips: ServiceIPRange | None = None,
        node_ports: NodePortRange | None = None,
    ) -> None:
        self.rng = rng
        self.ips = ips or ServiceIPRange()
        self.node_ports = node_ports or NodePortRange()

    def rebuild(self, services: Iterable[Service]) -> None:
        """Take the values of stored Services again (upstream's repair controllers)."""
        for service in services:
            spec = service.spec or ServiceSpec()
            if _needs_cluster_ip(spec):
                for ip in spec.cluster_ips or ():
                    if self.ips.contains(ip) and not self.ips.allocated(ip):
                        self.ips.allocate(ip)
            for port in _node_ports(spec):
                try:
                    self.node_ports.allocate(port)
                except AllocationError:
                    continue

    def give_back(self, ips: Iterable[str], ports: Iterable[int]) -> None:
        """Release addresses and ports."""
        for ip in ips:
            self.ips.release(ip)
        for port in ports:
            self.node_ports.release(port)

    def release(self, service: Service) -> None:
        """``releaseAllocatedResources``: a deleted Service's IPs and node ports."""
        spec = service.spec or ServiceSpec()
        ips = [ip for ip in spec.cluster_ips or () if ip != CLUSTER_IP_NONE]
        self.give_back(ips if _needs_cluster_ip(spec) else (), _node_ports(spec))

    # --- ip families ---------------------------------------------------------------------

    def _init_ip_families(self, service: Service, old: ServiceSpec | None) -> ServiceSpec:
        """``initIPFamilyFields`` for a single-stack cluster."""
        spec = service.spec or ServiceSpec()
        name = service.metadata.name or ""
        if spec.type == SERVICE_TYPE_EXTERNAL_NAME:
            return spec
        if (
            old is not None
            and spec.ip_family_policy == old.ip_family_policy == "PreferDualStack"
            and spec.type == old.type
            and tuple(spec.cluster_ips or ()) == tuple(old.cluster_ips or ())
            and tuple(spec.ip_families or ()) == tuple(old.ip_families or ())
        ):
            return spec
        policy = spec.ip_family_policy
        if policy is None:
            if old is not None and old.ip_family_policy is not None:
                policy = old.ip_family_policy
            elif spec.cluster_ip == CLUSTER_IP_NONE and not spec.selector:
                policy = REQUIRE_DUAL_STACK
            else:
                policy = SINGLE_STACK
        spec = evolve(spec, ip_family_policy=policy)
        found = cluster_ips_related_errors(spec)
        if found:
            raise errors.invalid_error(KIND, "", name, found)
        families = list(spec.ip_families or ())
        if old is not None and policy == SINGLE_STACK:
            if (
                tuple(spec.cluster_ips or ()) == tuple(old.cluster_ips or ())
                and len(spec.cluster_ips or ()) > 1
            ):
                spec = evolve(spec, cluster_ips=(spec.cluster_ips or ())[:1])
            if tuple(families) == tuple(old.ip_families or ()) and len(families) > 1:
                families = families[:1]
        if policy == SINGLE_STACK:
            for field, count in (("cluster IPs", spec.cluster_ips), ("IP families", families)):
                if len(count or ()) == 2:
                    found.append(
                        errors.invalid(
                            "spec.ipFamilyPolicy",
                            policy,
                            "must be 'RequireDualStack' or 'PreferDualStack' when multiple "
                            f"{field} are specified",
                        )
                    )
        cluster_ips = list(spec.cluster_ips or ())
        for position, ip in enumerate(cluster_ips):
            if ip == CLUSTER_IP_NONE:
                break
            parsed = parse_ip(ip)
            family = IPV6 if parsed is not None and parsed.version == 6 else IPV4
            if position >= len(families):
                if family != self.ips.family:
                    found.append(
                        errors.invalid(
                            f"spec.clusterIPs[{position}]",
                            cluster_ips,
                            f"{family} is not configured on this cluster",
                        )
                    )
                else:
                    families.append(family)
        if found:
            raise errors.invalid_error(KIND, "", name, found)
        if spec.cluster_ip == CLUSTER_IP_NONE and not spec.selector:
            if not families:
                families = [self.ips.family]
            if len(families) < 2 and policy != SINGLE_STACK:
                families.append(IPV6 if families[0] == IPV4 else IPV4)
            return evolve(spec, ip_families=tuple(families))
        if policy == REQUIRE_DUAL_STACK:
            found.append(
                errors.invalid(
                    "spec.ipFamilyPolicy",
                    policy,
                    "this cluster is not configured for dual-stack services",
                )
            )
        found.extend(
            errors.invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster")
            for i, family in enumerate(families)
            if family != self.ips.family
        )
        if found:
            raise errors.invalid_error(KIND, "", name, found)
        return evolve(spec, ip_families=tuple(families or (self.ips.family,)))

    # --- cluster IPs ---------------------------------------------------------------------

    def _alloc_cluster_ips(
        self, spec: ServiceSpec, name: str, allocation: Allocation
    ) -> ServiceSpec:
        """``allocClusterIPs``: the requested address, or a random free one."""
        if (
            spec.type == SERVICE_TYPE_EXTERNAL_NAME
            or (spec.cluster_ips or ("",))[0] == CLUSTER_IP_NONE
        ):
            return spec
        requested = (spec.cluster_ips or ("",))[0]
        if not requested:
            try:
                ip = self.ips.allocate_next(self.rng)
            except RangeFullError as exc:
                raise errors.internal_error(f"failed to allocate a serviceIP: {exc}") from None
        else:
            try:
                self.ips.allocate(requested)
            except AllocationError as exc:
                found = [
                    errors.invalid(
                        "spec.clusterIPs",
                        list(spec.cluster_ips or ()),
                        f"failed to allocate IP {requested}: {exc}",
                    )
                ]
                raise errors.invalid_error(KIND, "", name, found) from None
            ip = requested
        allocation.taken_ips.append(ip)
        return evolve(spec, cluster_ip=ip, cluster_ips=(ip, *(spec.cluster_ips or ())[1:]))

    # --- node ports ----------------------------------------------------------------------

    def _take_port(self, port: int, path: str, name: str, allocation: Allocation) -> None:
        try:
            self.node_ports.allocate(port)
        except AllocationError as exc:
            found: list[FieldError] = [errors.invalid(path, port, str(exc))]
            raise errors.invalid_error(KIND, "", name, found) from None
        allocation.taken_ports.append(port)

    def _next_port(self, allocation: Allocation) -> int:
        try:
            port = self.node_ports.allocate_next(self.rng)
        except RangeFullError as exc:
            raise errors.internal_error(f"failed to allocate a nodePort: {exc}") from None
        allocation.taken_ports.append(port)
        return port

    def _alloc_node_ports(
        self, spec: ServiceSpec, old: ServiceSpec | None, name: str, allocation: Allocation
    ) -> ServiceSpec:
        """``initNodePorts`` (create) / ``updateNodePorts`` (update): one node port per
        service port; ports sharing a number share a node port."""
        held = set(_node_ports(old)) if old is not None else set()
        by_port: dict[int, int] = {}
        ports = []
        for position, port in enumerate(spec.ports or ()):
            path = f"spec.ports[{position}].nodePort"
            node_port = port.node_port or 0
            if not node_port and not wants_node_ports(spec):
                ports.append(port)
                continue
            if node_port:
                if node_port not in held and node_port not in by_port.values():
                    self._take_port(node_port, path, name, allocation)
            elif old is None and (port.port or 0) in by_port:
                node_port = by_port[port.port or 0]
            else:
                requested = next(
                    (
                        p.node_port
                        for p in (spec.ports or ())[position + 1 :]
                        if p.port == port.port and p.node_port
                    ),
                    0,
                )
                if old is None and requested:
                    self._take_port(requested, path, name, allocation)
                    node_port = requested
                else:
                    node_port = self._next_port(allocation)
            by_port.setdefault(port.port or 0, node_port)
            ports.append(port if port.node_port == node_port else evolve(port, node_port=node_port))
        spec = evolve(spec, ports=tuple(ports)) if spec.ports else spec
        if needs_health_check(spec):
            if spec.health_check_node_port:
                if spec.health_check_node_port not in held:
                    self._take_port(
                        spec.health_check_node_port, "spec.healthCheckNodePort", name, allocation
                    )
            else:
                spec = evolve(spec, health_check_node_port=self._next_port(allocation))
        return spec

    # --- the hooks -----------------------------------------------------------------------

    def begin_create(self, service: Service, *, dry_run: bool) -> tuple[Service, Allocation]:
        """``beginCreate``: normalise, fill the families, take IPs and node ports."""
        name = service.metadata.name or ""
        allocation = Allocation(self, dry_run=dry_run)
        spec = normalize_cluster_ips(service.spec or ServiceSpec(), None)
        service = evolve(service, spec=spec)
        try:
            spec = self._init_ip_families(service, None)
            spec = self._alloc_cluster_ips(spec, name, allocation)
            if wants_node_ports(spec) or _node_ports(spec):
                spec = self._alloc_node_ports(spec, None, name, allocation)
        except BaseException:
            allocation.revert()
            raise
        return evolve(service, spec=spec), allocation

    def begin_update(
        self, service: Service, old: Service, *, dry_run: bool
    ) -> tuple[Service, Allocation]:
        """``beginUpdate``: keep allocated values, take new ones, release dropped ones on commit."""
        name = service.metadata.name or ""
        old_spec = old.spec or ServiceSpec()
        allocation = Allocation(self, dry_run=dry_run)
        spec = patch_allocated_values(service.spec or ServiceSpec(), old_spec)
        spec = normalize_cluster_ips(spec, old_spec)
        service = evolve(service, spec=spec)
        try:
            spec = self._init_ip_families(service, old_spec)
            if old_spec.type == SERVICE_TYPE_EXTERNAL_NAME and _needs_cluster_ip(spec):
                spec = self._alloc_cluster_ips(spec, name, allocation)
            if wants_node_ports(spec):
                spec = self._alloc_node_ports(spec, old_spec, name, allocation)
        except BaseException:
            allocation.revert()
            raise
        service = drop_type_dependent_fields(evolve(service, spec=spec), old)
        spec = service.spec or ServiceSpec()
        if _needs_cluster_ip(old_spec) and not _needs_cluster_ip(spec):
            allocation.freed_ips.extend(
                ip for ip in old_spec.cluster_ips or () if ip != CLUSTER_IP_NONE
            )
        kept = set(_node_ports(spec))
        allocation.freed_ports.extend(p for p in _node_ports(old_spec) if p not in kept)
        return service, allocation
