"""The Table cells of Services, Endpoints and EndpointSlices (``kubectl get svc/ep/endpointslices``).

Mirrors upstream's ``pkg/printers/internalversion/printers.go``: ``printService``
(``TYPE CLUSTER-IP EXTERNAL-IP PORT(S)``, wide adds ``SELECTOR``), ``getServiceExternalIP``
(``<none>``, the external IPs, a load balancer's ingress or ``<pending>``, an
ExternalName's name), ``makePortString`` (``80/TCP``, ``80:30080/TCP``),
``printEndpoints``/``formatEndpoints`` (``ENDPOINTS``: at most three ``ip:port``, then
``+ N more...``) and ``printEndpointSlice`` (``ADDRESSTYPE PORTS ENDPOINTS``, ``<unset>``
when empty). Only the middle cells are here: ``apiserver.tables`` adds NAME and AGE and
owns the column definitions. Pure.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.service import (
    SERVICE_TYPE_CLUSTER_IP,
    SERVICE_TYPE_EXTERNAL_NAME,
    SERVICE_TYPE_LOAD_BALANCER,
    SERVICE_TYPE_NODE_PORT,
    LoadBalancerStatus,
    Service,
    ServiceSpec,
)

NONE: Final = "<none>"
MAX_SHOWN: Final = 3


def _host_port(ip: str, port: int) -> str:
    """``net.JoinHostPort``: IPv6 addresses in brackets."""
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def _balancer_addresses(status: LoadBalancerStatus | None) -> str:
    """``loadBalancerStatusStringer``: the sorted ingress IPs or host names (the API
    server prints its tables wide, so the narrow cut never applies)."""
    found = sorted(
        {
            ingress.ip or ingress.hostname or ""
            for ingress in (status.ingress if status else None) or ()
        }
        - {""}
    )
    return ",".join(found)


def external_ip(service: Service) -> str:
    """``getServiceExternalIP``."""
    spec = service.spec or ServiceSpec()
    external = list(spec.external_ips or ())
    if spec.type in (SERVICE_TYPE_CLUSTER_IP, SERVICE_TYPE_NODE_PORT):
        return ",".join(external) if external else NONE
    if spec.type == SERVICE_TYPE_LOAD_BALANCER:
        balancer = service.status.load_balancer if service.status else None
        addresses = _balancer_addresses(balancer)
        if external:
            return ",".join([*(addresses.split(",") if addresses else []), *external])
        return addresses or "<pending>"
    if spec.type == SERVICE_TYPE_EXTERNAL_NAME:
        return spec.external_name or ""
    return "<unknown>"


def port_string(spec: ServiceSpec) -> str:
    """``makePortString``: ``80/TCP`` or ``80:30080/TCP``, comma-separated; ``<none>`` if none."""
    pieces = [
        f"{p.port or 0}:{p.node_port}/{p.protocol or ''}"
        if (p.node_port or 0) > 0
        else f"{p.port or 0}/{p.protocol or ''}"
        for p in spec.ports or ()
    ]
    return ",".join(pieces) or NONE


def service_cells(service: Service) -> tuple[list[str], str]:
    """TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S); and the wide SELECTOR (``labels.FormatLabels``)."""
    spec = service.spec or ServiceSpec()
    cluster_ip = (spec.cluster_ips or (NONE,))[0]
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.selector or {}).items())) or NONE
    # The server always prints wide cells (upstream's convertor passes Wide: true).
    return [
        spec.type or "",
        cluster_ip,
        external_ip(service),
        port_string(spec),
    ], selector


def endpoints_cell(endpoints: Endpoints) -> str:
    """``formatEndpoints`` with no port filter: ``ip:port`` (or ``ip`` without ports)."""
    if not endpoints.subsets:
        return NONE
    shown: list[str] = []
    count = 0
    for subset in endpoints.subsets:
        addresses = [a.ip or "" for a in subset.addresses or ()]
        if not subset.ports:
            count += len(addresses)
            shown.extend(addresses[: max(MAX_SHOWN - len(shown), 0)])
            continue
        for port in subset.ports:
            count += len(addresses)
            room = max(MAX_SHOWN - len(shown), 0)
            shown.extend(_host_port(ip, port.port or 0) for ip in addresses[:room])
    text = ",".join(shown)
    return f"{text} + {count - MAX_SHOWN} more..." if count > MAX_SHOWN else text


def _with_more(shown: list[str], count: int) -> str:
    """``listWithMoreString``."""
    text = ",".join(shown)
    if count > MAX_SHOWN:
        return f"{text} + {count - MAX_SHOWN} more..."
    return text or "<unset>"


def endpoint_slice_cells(slice_: EndpointSlice) -> list[str]:
    """ADDRESSTYPE, PORTS (``formatDiscoveryPorts``), ENDPOINTS (``formatDiscoveryEndpoints``)."""
    ports = [
        str(p.port) if p.port is not None else (p.name if p.name is not None else "*")
        for p in slice_.ports or ()
    ]
    addresses = [a for e in slice_.endpoints or () for a in e.addresses or ()]
    return [
        slice_.address_type or "",
        _with_more(ports[:MAX_SHOWN], len(ports)),
        _with_more(addresses[:MAX_SHOWN], len(addresses)),
    ]
