"""apiregistration.k8s.io/v1 APIService: which server answers one API group/version.

Mirrors ``k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/types.go`` (v1.32). An
APIService named ``<version>.<group>`` (``v1.`` for the core group) either says that the
API server itself serves the group/version (``spec.service`` unset: a *local* service)
or names the in-cluster Service of an aggregated API server. ``groupPriorityMinimum``
and ``versionPriority`` order groups and versions in discovery. ``status.conditions``
holds the ``Available`` condition the aggregator's availability controllers write.

kubeprio keeps a local APIService for each group/version it serves
(``apiserver.autoregister``) and does not proxy to aggregated servers. Validation is in
``api.validation.apiregistration``, the Table in ``apiserver.apiregistrationtables``. Pure
data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init, json_name

GROUP: Final = "apiregistration.k8s.io"
CONDITION_AVAILABLE: Final = "Available"
LOCAL_REASON: Final = "Local"
LOCAL_MESSAGE: Final = "Local APIServices are always available"
"""``NewLocalAvailableAPIServiceCondition``: a local APIService is always available."""
AUTOMANAGED_LABEL: Final = "kube-aggregator.kubernetes.io/automanaged"
"""The label autoregister puts on the APIServices it keeps: ``onstart`` for the built-in
group/versions (synced once, at start), ``true`` for CRD ones (kept in sync)."""
AUTOMANAGED_ON_START: Final = "onstart"
AUTOMANAGED_TRUE: Final = "true"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceReference:
    """The Service of an aggregated API server (port defaults to 443)."""

    namespace: str | None = None
    name: str | None = None
    port: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class APIServiceSpec:
    """``spec`` of an APIService."""

    service: ServiceReference | None = None
    group: str | None = None
    version: str | None = None
    insecure_skip_tls_verify: bool | None = json_name("insecureSkipTLSVerify")
    ca_bundle: bytes | None = None
    group_priority_minimum: Int32 | None = None
    version_priority: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class APIServiceCondition:
    """One condition of an APIService (``Available``)."""

    type: str | None = None
    status: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class APIServiceStatus:
    """``status`` of an APIService."""

    conditions: tuple[APIServiceCondition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class APIService:
    """An apiregistration.k8s.io/v1 APIService (cluster-scoped)."""

    api_version: str | None = "apiregistration.k8s.io/v1"
    kind: str | None = "APIService"
    metadata: ObjectMeta = ObjectMeta()
    spec: APIServiceSpec | None = None
    status: APIServiceStatus | None = None
    extra: JsonDict = extra_field()


def api_service_name(group: str, version: str) -> str:
    """``<version>.<group>``, the only name validation accepts (``v1.`` for core)."""
    return f"{version}.{group}"


def local_available_condition(now: str) -> APIServiceCondition:
    """``NewLocalAvailableAPIServiceCondition``."""
    return APIServiceCondition(
        type=CONDITION_AVAILABLE,
        status="True",
        last_transition_time=now,
        reason=LOCAL_REASON,
        message=LOCAL_MESSAGE,
    )


def available_condition(service: APIService) -> APIServiceCondition | None:
    """The ``Available`` condition, when the status has one."""
    status = service.status
    for condition in (status.conditions if status else None) or ():
        if condition.type == CONDITION_AVAILABLE:
            return condition
    return None


def is_local(service: APIService) -> bool:
    """Whether the API server itself serves this group/version (no ``spec.service``)."""
    return service.spec is None or service.spec.service is None
