"""The local APIServices of ``kubeprio serve``: kube-apiserver's autoregistration.

What kube-apiserver's ``kube-apiserver-autoregistration`` post-start hook and the
aggregator's availability controllers do, over kubeprio's store (v1.32:
``cmd/kube-apiserver/app/aggregator.go``, ``pkg/controlplane/controller/crdregistration``,
``kube-aggregator/pkg/controllers/autoregister`` and ``.../controllers/status``):

* at start, every group/version the server serves and upstream's ``apiVersionPriorities``
  lists gets a local APIService ``<version>.<group>`` (``v1.`` for core) with that table's
  priorities and the label ``kube-aggregator.kubernetes.io/automanaged: onstart``; one
  already stored is left alone (an admin's edit survives until the next start, as
  upstream's sync-on-start), and one deleted later is not recreated until then. Groups
  the table does not list (kubeprio.io, metrics.k8s.io) get none, as upstream skips them
  (``makeAPIService``); nor does apiregistration.k8s.io, which the aggregator serves
  itself;
* every served version of every CustomResourceDefinition gets a local APIService with
  ``groupPriorityMinimum: 1000``, ``versionPriority: 100`` and the label value ``true``,
  kept in sync as CRDs come and go: one no CRD serves any more is deleted;
* APIServices without the label are the admin's and are never touched;
* a new local APIService is ``Available`` at once (``apiserver.strategy``; the local
  availability controller puts the condition back should a local one lose it); one naming a
  Service is given ``Available=False``: ``ServiceNotFound`` while the Service does not
  exist, else ``FailedDiscoveryCheck``, because kubeprio does not proxy to aggregated API
  servers.

Driven like ``apiserver.flowcontrolconfig``: ``start``, then ``pump`` (notes writes to
APIServices, CRDs and Services) and ``run_once``. Nothing runs per request or on the
scheduling path. Writes go through the API service as the system; a failed write is
logged and left to the next change.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from kubeprio.api import errors, kinds
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.apiregistration import (
    AUTOMANAGED_LABEL,
    AUTOMANAGED_ON_START,
    AUTOMANAGED_TRUE,
    CONDITION_AVAILABLE,
    APIService,
    APIServiceCondition,
    APIServiceSpec,
    APIServiceStatus,
    api_service_name,
    available_condition,
    is_local,
    local_available_condition,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.service import Service
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.writefollower import WriteFollower
from kubeprio.clock import Clock, rfc3339

LOG: Final = logging.getLogger("kubeprio.apiserver")
WATCHED: Final = ("apiservices", "customresourcedefinitions", "services")

API_VERSION_PRIORITIES: Final[dict[tuple[str, str], tuple[int, int]]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
"""(group, version) -> (groupPriorityMinimum, versionPriority): upstream's
``apiVersionPriorities`` for the v1.32 group/versions kubeprio serves."""
CRD_GROUP_PRIORITY: Final = 1000
CRD_VERSION_PRIORITY: Final = 100
"""crdregistration: CRDs rank below every built-in group; versions sort kube-like."""


def _api_service(group: str, version: str, priorities: tuple[int, int], managed: str) -> APIService:
    return APIService(
        metadata=ObjectMeta(
            name=api_service_name(group, version), labels={AUTOMANAGED_LABEL: managed}
        ),
        spec=APIServiceSpec(
            group=group,
            version=version,
            group_priority_minimum=priorities[0],
            version_priority=priorities[1],
        ),
    )


def built_in_api_services(served: Iterable[kinds.ResourceInfo]) -> list[APIService]:
    """The on-start APIServices of the served group/versions upstream's table lists, in
    serving order."""
    seen: dict[tuple[str, str], APIService] = {}
    for info in served:
        key = (info.group, info.version)
        priorities = API_VERSION_PRIORITIES.get(key)
        if priorities is not None and key not in seen:
            seen[key] = _api_service(info.group, info.version, priorities, AUTOMANAGED_ON_START)
    return list(seen.values())


def crd_api_services(
    crds: Iterable[CustomResourceDefinition], built_in: Iterable[str]
) -> dict[str, APIService]:
    """Name -> the APIService of each served CRD version (``crdregistration``), skipping
    names a built-in group/version already has."""
    taken = set(built_in)
    wanted: dict[str, APIService] = {}
    for crd in crds:
        spec = crd.spec
        # A terminating CRD keeps its APIService until it is gone, as upstream's
        # crdregistration controller only looks at the served versions.
        if spec is None:
            continue
        for version in spec.versions or ():
            if not version.served:
                continue
            name = api_service_name(spec.group or "", version.name or "")
            if name not in taken and name not in wanted:
                wanted[name] = _api_service(
                    spec.group or "",
                    version.name or "",
                    (CRD_GROUP_PRIORITY, CRD_VERSION_PRIORITY),
                    AUTOMANAGED_TRUE,
                )
    return wanted


@dataclass(frozen=True, slots=True)
class Plan:
    """The writes that bring the CRD-managed APIServices in line."""

    create: tuple[APIService, ...] = ()
    update: tuple[APIService, ...] = ()
    delete: tuple[str, ...] = ()


def plan_crd_sync(stored: Mapping[str, APIService], wanted: Mapping[str, APIService]) -> Plan:
    """autoregister's ``checkAPIService`` for the continuously synced (``true``) ones:
    create the missing, put back a changed spec, delete the unwanted; objects without the
    automanaged label are the admin's."""
    create: list[APIService] = []
    update: list[APIService] = []
    for name, desired in wanted.items():
        current = stored.get(name)
        if current is None:
            create.append(desired)
        elif _managed(current) == AUTOMANAGED_TRUE and current.spec != desired.spec:
            update.append(evolve(current, spec=desired.spec))
    delete = tuple(
        name
        for name, current in stored.items()
        if _managed(current) == AUTOMANAGED_TRUE and name not in wanted
    )
    return Plan(tuple(create), tuple(update), delete)


def _managed(service: APIService) -> str:
    return (service.metadata.labels or {}).get(AUTOMANAGED_LABEL, "")


def remote_condition(
    api_service: APIService, services: Mapping[tuple[str, str], Service], now: str
) -> APIServiceCondition:
    """The Available condition of an APIService that names a Service: upstream's remote
    availability check, up to the discovery request kubeprio does not make."""
    spec = api_service.spec or APIServiceSpec()
    ref = spec.service
    namespace = ref.namespace or "" if ref else ""
    name = ref.name or "" if ref else ""
    service = services.get((namespace, name))
    if service is None:
        return APIServiceCondition(
            type=CONDITION_AVAILABLE,
            status="False",
            last_transition_time=now,
            reason="ServiceNotFound",
            message=f'service/{name} in "{namespace}" is not present',
        )
    port = ref.port if ref is not None and ref.port is not None else 443
    host = (service.spec.cluster_ip if service.spec else None) or f"{name}.{namespace}.svc"
    url = f"https://{host}:{port}/apis/{spec.group or ''}/{spec.version or ''}"
    if api_service.metadata.name == "v1.":
        url = f"https://{host}:{port}/api/{spec.version or ''}"
    return APIServiceCondition(
        type=CONDITION_AVAILABLE,
        status="False",
        last_transition_time=now,
        reason="FailedDiscoveryCheck",
        message=(
            f"failing or missing response from {url}: "
            "kubeprio does not proxy to aggregated API servers"
        ),
    )


def with_condition(api_service: APIService, desired: APIServiceCondition) -> APIService | None:
    """``SetAPIServiceCondition``: the status with ``desired`` in place of the Available
    condition (the old transition time kept when the status did not change), or None when
    status, reason and message are already those."""
    current = available_condition(api_service)
    if current is not None:
        if (current.status, current.reason, current.message) == (
            desired.status,
            desired.reason,
            desired.message,
        ):
            return None
        if current.status == desired.status:
            desired = evolve(desired, last_transition_time=current.last_transition_time)
    others = [
        condition
        for condition in (api_service.status.conditions if api_service.status else None) or ()
        if condition.type != CONDITION_AVAILABLE
    ]
    return evolve(api_service, status=APIServiceStatus(conditions=(*others, desired)))


class APIServiceRegistration(WriteFollower):
    """Keeps the local APIServices and the availability of the others current."""

    def __init__(self, api: ApiService, *, clock: Clock) -> None:
        super().__init__(api.store)
        self._api = api
        self._clock = clock

    def start(self) -> None:
        """Register the built-in group/versions once, then follow the watched kinds."""
        self.follow(WATCHED)
        stored = self._stored()
        for desired in built_in_api_services(kinds.SERVED):
            if desired.metadata.name not in stored:
                self._write(partial(self._api.create_object, desired))
        self.reconcile()

    def _stored(self) -> dict[str, APIService]:
        return {obj.metadata.name or "": obj for obj in self._api.list(APIService).items}

    def reconcile(self) -> None:
        """Sync the CRD APIServices, then the conditions of those naming a Service."""
        built_in = [s.metadata.name or "" for s in built_in_api_services(kinds.SERVED)]
        wanted = crd_api_services(self._api.list(CustomResourceDefinition).items, built_in)
        plan = plan_crd_sync(self._stored(), wanted)
        for obj in plan.create:
            self._write(partial(self._api.create_object, obj))
        for obj in plan.update:
            self._write(partial(self._api.update_object, obj))
        for name in plan.delete:
            self._write(partial(self._api.delete_object, APIService, name))
        stored = self._stored().values()
        services: dict[tuple[str, str], Service] = {}
        if any(not is_local(s) for s in stored):
            services = {
                (s.metadata.namespace or "", s.metadata.name or ""): s
                for s in self._api.list(Service).items
            }
        now = rfc3339(self._clock.now())
        for api_service in stored:
            desired = (
                local_available_condition(now)
                if is_local(api_service)
                else remote_condition(api_service, services, now)
            )
            updated = with_condition(api_service, desired)
            if updated is not None:
                self._write(partial(self._api.update_object, updated, subresource="status"))

    def _write(self, write: Callable[[], Any]) -> None:
        try:
            write()
        except errors.StatusError as exc:
            LOG.warning("APIService registration write failed: %s", exc)
