"""Endpoints (core/v1) and EndpointSlice (discovery.k8s.io/v1) validation.

Mirrors ``ValidateEndpoints``/``validateEndpointSubsets`` of
``pkg/apis/core/validation/validation.go`` and ``ValidateEndpointSlice`` of
``pkg/apis/discovery/validation/validation.go`` for the modelled fields: every address a
valid, non-special IP (as v1.32 parsed them: ``validation.ip``), a slice's IPv4/IPv6
addresses of that family; ports named (DNS-1123 labels) when a subset has several, valid
numbers, a supported protocol; a slice's ``addressType`` known and immutable, each
endpoint with 1 to 100 addresses of that type. Hostnames, topology and hints are not
checked. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.discovery import ADDRESS_TYPES, EndpointSlice
from kubeprio.api.endpoints import EndpointAddress, EndpointPort, Endpoints
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.ip import ip_errors, ipv4_errors, ipv6_errors, non_special_ip_errors
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    dns1123_label_errors,
    validate_immutable,
)
from kubeprio.api.validation.podspec import PORT_PROTOCOLS, port_number_errors

MAX_ADDRESSES: Final = 100
"""``maxAddresses`` of an EndpointSlice endpoint."""


def _address_errors(address: EndpointAddress, path: str) -> list[FieldError]:
    """``validateEndpointAddress``: a valid IP that is not special."""
    ip = address.ip or ""
    found = ip_errors(ip, f"{path}.ip")
    return found or non_special_ip_errors(ip, f"{path}.ip")


def _port_errors(
    name: str | None, port: int | None, protocol: str | None, path: str, *, require_name: bool
) -> list[FieldError]:
    """``validateEndpointPort``: name, number, protocol."""
    found: list[FieldError] = []
    if require_name and not name:
        found.append(errors.required(f"{path}.name"))
    elif name:
        found.extend(errors.invalid(f"{path}.name", name, m) for m in dns1123_label_errors(name))
    found.extend(
        errors.invalid(f"{path}.port", port or 0, m) for m in port_number_errors(port or 0)
    )
    if not protocol:
        found.append(errors.required(f"{path}.protocol"))
    elif protocol not in PORT_PROTOCOLS:
        found.append(errors.not_supported(f"{path}.protocol", protocol, PORT_PROTOCOLS))
    return found


def _subset_port_errors(ports: tuple[EndpointPort, ...], path: str) -> list[FieldError]:
    return [
        error
        for position, port in enumerate(ports)
        for error in _port_errors(
            port.name, port.port, port.protocol, f"{path}[{position}]", require_name=len(ports) > 1
        )
    ]


def validate_endpoints(endpoints: Endpoints) -> list[FieldError]:
    """``ValidateEndpoints`` beyond object metadata."""
    found: list[FieldError] = []
    for index, subset in enumerate(endpoints.subsets or ()):
        path = f"subsets[{index}]"
        if not subset.addresses and not subset.not_ready_addresses:
            found.append(errors.required(path, "must specify `addresses` or `notReadyAddresses`"))
        for field, addresses in (
            ("addresses", subset.addresses),
            ("notReadyAddresses", subset.not_ready_addresses),
        ):
            for position, address in enumerate(addresses or ()):
                found.extend(_address_errors(address, f"{path}.{field}[{position}]"))
        found.extend(_subset_port_errors(subset.ports or (), f"{path}.ports"))
    return found


def validate_endpoint_slice(slice_: EndpointSlice) -> list[FieldError]:
    """``ValidateEndpointSlice`` beyond object metadata."""
    found: list[FieldError] = []
    address_type = slice_.address_type
    if not address_type:
        found.append(errors.required("addressType"))
    elif address_type not in ADDRESS_TYPES:
        found.append(errors.not_supported("addressType", address_type, ADDRESS_TYPES))
    for index, endpoint in enumerate(slice_.endpoints or ()):
        path = f"endpoints[{index}].addresses"
        addresses = endpoint.addresses or ()
        if not addresses:
            found.append(errors.required(path, "must contain at least 1 address"))
        elif len(addresses) > MAX_ADDRESSES:
            found.append(
                FieldError(
                    errors.ErrorType.TOO_MANY,
                    path,
                    len(addresses),
                    f"must have at most {MAX_ADDRESSES} items",
                )
            )
        if address_type in ("IPv4", "IPv6"):
            # v1.32 appends both verdicts: the family check, then ValidateNonSpecialIP.
            family_errors = ipv4_errors if address_type == "IPv4" else ipv6_errors
            for position, address in enumerate(addresses):
                found.extend(family_errors(address, f"{path}[{position}]"))
                found.extend(non_special_ip_errors(address, f"{path}[{position}]"))
    names: set[str] = set()
    for position, port in enumerate(slice_.ports or ()):
        path = f"ports[{position}]"
        if port.name:
            found.extend(
                errors.invalid(f"{path}.name", port.name, m)
                for m in dns1123_label_errors(port.name)
            )
        if (port.name or "") in names:
            found.append(errors.duplicate(f"{path}.name", port.name or ""))
        names.add(port.name or "")
        if port.port is not None:
            found.extend(
                errors.invalid(f"{path}.port", port.port, m) for m in port_number_errors(port.port)
            )
        if port.protocol is None:
            found.append(errors.required(f"{path}.protocol"))
        elif port.protocol not in PORT_PROTOCOLS:
            found.append(errors.not_supported(f"{path}.protocol", port.protocol, PORT_PROTOCOLS))
    return found


def validate_endpoint_slice_update(new: EndpointSlice, old: EndpointSlice) -> list[FieldError]:
    """``ValidateEndpointSliceUpdate``: the address type is immutable."""
    found = validate_endpoint_slice(new)
    found.extend(validate_immutable(new.address_type or "", old.address_type or "", "addressType"))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {
    Endpoints: validate_endpoints,
    EndpointSlice: validate_endpoint_slice,
}
"""Model class -> create validator, for ``validation``'s table."""
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    EndpointSlice: validate_endpoint_slice_update
}
"""Model class -> update validator (Endpoints updates take the create rules)."""
