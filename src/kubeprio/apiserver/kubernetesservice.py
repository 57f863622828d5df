"""The ``default/kubernetes`` Service and its endpoints, as kube-apiserver's reconciler keeps them.

Mirrors ``pkg/controlplane/controller/kubernetesservice`` (``CreateOrUpdateMasterServiceIfNeeded``)
and the endpoint reconciler of ``pkg/controlplane/reconcilers``: a selector-less ClusterIP
Service named ``kubernetes`` in ``default``, labelled ``component: apiserver`` and
``provider: kubernetes``, port ``https`` 443 to the API server's own port, holding the
first address of the service range; its Endpoints (labelled
``endpointslice.kubernetes.io/skip-mirror``) and its EndpointSlice (named ``kubernetes``)
list the API server's address. So ``kubectl get all``, ``get svc -A``, ``describe svc
kubernetes`` and ``cluster-info`` look as on a real cluster.

``serve`` calls ``ensure`` once the socket listens (the port may be chosen then); a
restart on another port or address updates the objects. Neither an EndpointSlice nor an
Endpoints object may hold a loopback address (upstream's ``ValidateNonSpecialIP``, which
also keeps a real kube-apiserver from advertising 127.0.0.1): on a loopback address only
the Service is written, and ``describe svc kubernetes`` shows no endpoints. Writes go
through the API service's full write path.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.discovery import (
    ADDRESS_TYPE_IPV4,
    LABEL_SERVICE_NAME,
    Endpoint,
    EndpointConditions,
    EndpointSlice,
)
from kubeprio.api.discovery import EndpointPort as SlicePort
from kubeprio.api.endpoints import EndpointAddress, EndpointPort, Endpoints, EndpointSubset
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.service import Service, ServicePort, ServiceSpec
from kubeprio.apiserver.service import ApiService

NAME: Final = "kubernetes"
NAMESPACE: Final = "default"
SERVICE_LABELS: Final = {"component": "apiserver", "provider": "kubernetes"}
SKIP_MIRROR: Final = {"endpointslice.kubernetes.io/skip-mirror": "true"}
PORT_NAME: Final = "https"
SERVICE_PORT: Final = 443


def _service(cluster_ip: str, port: int) -> Service:
    return Service(
        metadata=ObjectMeta(name=NAME, namespace=NAMESPACE, labels=dict(SERVICE_LABELS)),
        spec=ServiceSpec(
            type="ClusterIP",
            cluster_ip=cluster_ip,
            cluster_ips=(cluster_ip,),
            session_affinity="None",
            ip_family_policy="SingleStack",
            ports=(
                ServicePort(name=PORT_NAME, protocol="TCP", port=SERVICE_PORT, target_port=port),
            ),
        ),
    )


def _endpoints(address: str, port: int) -> Endpoints:
    return Endpoints(
        metadata=ObjectMeta(name=NAME, namespace=NAMESPACE, labels=dict(SKIP_MIRROR)),
        subsets=(
            EndpointSubset(
                addresses=(EndpointAddress(ip=address),),
                ports=(EndpointPort(name=PORT_NAME, port=port, protocol="TCP"),),
            ),
        ),
    )


def _slice(address: str, port: int) -> EndpointSlice:
    return EndpointSlice(
        metadata=ObjectMeta(name=NAME, namespace=NAMESPACE, labels={LABEL_SERVICE_NAME: NAME}),
        address_type=ADDRESS_TYPE_IPV4,
        endpoints=(Endpoint(addresses=(address,), conditions=EndpointConditions(ready=True)),),
        ports=(SlicePort(name=PORT_NAME, port=port, protocol="TCP"),),
    )


def _create_or_update(api: ApiService, desired: Any, same: Any) -> None:
    """Create ``desired``, or update the stored object when ``same(stored)`` is false."""
    kind = type(desired)
    try:
        current = api.get(kind, NAME, NAMESPACE)
    except errors.NotFoundError:
        api.create_object(desired)
        return
    if not same(current):
        api.update_object(_merged(current, desired))


def _merged(current: Any, desired: Any) -> Any:
    """The stored object with the reconciled fields of ``desired`` (metadata kept)."""
    if isinstance(desired, Service):
        spec = current.spec or ServiceSpec()
        return evolve(
            current, spec=evolve(spec, ports=desired.spec.ports if desired.spec else None)
        )
    if isinstance(desired, Endpoints):
        return evolve(current, subsets=desired.subsets)
    return evolve(current, endpoints=desired.endpoints, ports=desired.ports)


def ensure(api: ApiService, *, address: str, port: int) -> None:
    """Create or fix ``default/kubernetes``: the Service, its Endpoints and EndpointSlice."""
    service = _service(api.services.ips.first(), port)
    _create_or_update(
        api,
        service,
        lambda s: (s.spec.ports if s.spec else None) == (service.spec or ServiceSpec()).ports,
    )
    slice_ = _slice(address, port)
    endpoints = _endpoints(address, port)
    try:
        _create_or_update(
            api, slice_, lambda s: s.endpoints == slice_.endpoints and s.ports == slice_.ports
        )
        _create_or_update(api, endpoints, lambda e: e.subsets == endpoints.subsets)
    except errors.InvalidError:
        # A loopback address: upstream validation (ValidateNonSpecialIP) refuses it in an
        # EndpointSlice and in an Endpoints object alike.
        return
