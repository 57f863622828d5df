"""discovery.k8s.io/v1 EndpointSlice: a Service's endpoints, the form kubectl describe reads.

Mirrors ``k8s.io/api/discovery/v1/types.go``. ``kubectl describe service`` (v1.32) lists
the slices labelled ``kubernetes.io/service-name=<service>`` and prints, per Service port,
the Ready endpoints' ``address:port``. The endpointslice controller keeps one slice per
Service (``<service>-<random>``), owned by the Service. Unmodelled keys (``hints``,
``deprecatedTopology``) stay in ``extra``. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import ObjectReference
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init

LABEL_SERVICE_NAME: Final = "kubernetes.io/service-name"
"""``discoveryv1.LabelServiceName``: the Service a slice belongs to."""
LABEL_MANAGED_BY: Final = "endpointslice.kubernetes.io/managed-by"
"""``discoveryv1.LabelManagedBy``: the controller that owns a slice."""
ADDRESS_TYPE_IPV4: Final = "IPv4"
ADDRESS_TYPES: Final = ("FQDN", "IPv4", "IPv6")


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EndpointConditions:
    """Whether an endpoint is ready, serving, terminating (unset: unknown)."""

    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """One endpoint: its addresses (a pod has one), conditions and the pod it is."""

    addresses: tuple[str, ...] | None = None
    conditions: EndpointConditions | None = None
    hostname: str | None = None
    target_ref: ObjectReference | None = None
    node_name: str | None = None
    zone: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EndpointPort:
    """A port every endpoint of the slice serves."""

    name: str | None = None
    protocol: str | None = None
    port: Int32 | None = None
    app_protocol: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EndpointSlice:
    """A discovery.k8s.io/v1 EndpointSlice."""

    api_version: str | None = "discovery.k8s.io/v1"
    kind: str | None = "EndpointSlice"
    metadata: ObjectMeta = ObjectMeta()
    address_type: str | None = None
    endpoints: tuple[Endpoint, ...] | None = None
    ports: tuple[EndpointPort, ...] | None = None
    extra: JsonDict = extra_field()
