"""core/v1 Endpoints: the addresses behind a Service, grouped into subsets.

Mirrors ``k8s.io/api/core/v1/types.go`` (``Endpoints``, ``EndpointSubset``,
``EndpointAddress``, ``EndpointPort``). An Endpoints object has its Service's name; the
endpoints controller fills it from the Ready (``addresses``) and not-Ready
(``notReadyAddresses``) pods the Service selects, and ``kubectl get endpoints`` prints
it. Unmodelled keys stay in ``extra``. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeprio.api.core import ObjectReference
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EndpointAddress:
    """One address: the pod's IP, its node and a reference to the pod."""

    ip: str | None = None
    hostname: str | None = None
    node_name: str | None = None
    target_ref: ObjectReference | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EndpointPort:
    """A port the addresses serve (the Service port's name, the resolved target port)."""

    name: str | None = None
    port: Int32 | None = None
    protocol: str | None = None
    app_protocol: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EndpointSubset:
    """Addresses that all serve the same ports."""

    addresses: tuple[EndpointAddress, ...] | None = None
    not_ready_addresses: tuple[EndpointAddress, ...] | None = None
    ports: tuple[EndpointPort, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoints:
    """A v1 Endpoints object."""

    api_version: str | None = "v1"
    kind: str | None = "Endpoints"
    metadata: ObjectMeta = ObjectMeta()
    subsets: tuple[EndpointSubset, ...] | None = None
    extra: JsonDict = extra_field()
