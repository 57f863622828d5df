"""IP and CIDR checks shared by Services and Endpoints (``IsValidIP``, ``ValidateNonSpecialIP``).

Mirrors ``staging/src/k8s.io/apimachinery/pkg/util/validation/ip.go`` (``IsValidIP``,
``IsValidCIDR``: strict parsing, no leading zeros, no IPv4-mapped IPv6, canonical form)
and ``ValidateNonSpecialIP`` of ``pkg/apis/core/validation``. Go's ``ParseIPSloppy``
accepts IPv4 octets with leading zeros, which strict validation then refuses by name;
Python's ``ipaddress`` rejects them outright, so they are recognised here first.
Pure: no I/O.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.gotext import go_quote

INVALID_IP: Final = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
INVALID_CIDR: Final = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_SLOPPY_IPV4: Final = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _sloppy_ipv4(value: str) -> bool:
    """An IPv4 address with leading zeros, which ``ParseIPSloppy`` reads and strict parsing refuses."""
    match = _SLOPPY_IPV4.fullmatch(value)
    return match is not None and all(int(octet) <= 255 for octet in match.groups())


def parse_ip(value: str) -> IPAddress | None:
    """The address, or None when ``ParseIPSloppy`` would not parse it either."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        if _sloppy_ipv4(value):
            return ipaddress.IPv4Address(".".join(str(int(o)) for o in value.split(".")))
        return None


def ip_errors(value: str, path: str) -> list[FieldError]:
    """``IsValidIP``: a strictly valid IP in canonical form."""
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        if _sloppy_ipv4(value):
            return [errors.invalid(path, value, "must not have leading 0s")]
        return [errors.invalid(path, value, INVALID_IP)]
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return [errors.invalid(path, value, "must not be an IPv4-mapped IPv6 address")]
    if str(address) != value:
        return [
            errors.invalid(path, value, f"must be in canonical form ({go_quote(str(address))})")
        ]
    return []


def non_special_ip_errors(value: str, path: str) -> list[FieldError]:
    """``ValidateNonSpecialIP``: not unspecified, loopback or link-local."""
    address = parse_ip(value)
    if address is None:
        return [errors.invalid(path, value, "must be a valid IP address")]
    found: list[FieldError] = []
    if address.is_unspecified:
        found.append(errors.invalid(path, value, f"may not be unspecified ({value})"))
    if address.is_loopback:
        found.append(
            errors.invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)")
        )
    if address.is_link_local:
        found.append(
            errors.invalid(
                path, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
            )
        )
    if _link_local_multicast(address):
        found.append(
            errors.invalid(
                path,
                value,
                "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
            )
        )
    return found


def _link_local_multicast(address: IPAddress) -> bool:
    """Go's ``IsLinkLocalMulticast``: 224.0.0.0/24 or ff02::/16."""
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.IPv4Network("224.0.0.0/24")
    return address in ipaddress.IPv6Network("ff02::/16")


def cidr_errors(value: str, path: str) -> list[FieldError]:
    """``IsValidCIDR``: a strictly valid CIDR with no host bits, in canonical form."""
    address, slash, prefix = value.partition("/")
    if not slash or not prefix.isdigit():
        return [errors.invalid(path, value, INVALID_CIDR)]
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        if _sloppy_ipv4(address):
            return [errors.invalid(path, value, "must not have leading 0s in IP or prefix length")]
        return [errors.invalid(path, value, INVALID_CIDR)]
    if len(prefix) > 1 and prefix.startswith("0"):
        return [errors.invalid(path, value, "must not have leading 0s in IP or prefix length")]
    if ipaddress.ip_address(address) != network.network_address:
        return [errors.invalid(path, value, "must not have bits set beyond the prefix length")]
    if str(network) != value:
        return [
            errors.invalid(path, value, f"must be in canonical form ({go_quote(str(network))})")
        ]
    return []


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_cidr_sloppy(value: str) -> IPNetwork | None:
    """The network of ``value`` as ``netutils.ParseCIDRSloppy`` reads it (IPv4 octets and
    the prefix length may have leading zeros, host bits are allowed and masked off), or
    None when it does not parse."""
    address_text, slash, prefix = value.rpartition("/")
    if not slash or not prefix.isascii() or not prefix.isdigit() or "%" in address_text:
        return None
    address = parse_ip(address_text)
    if address is None or int(prefix) > address.max_prefixlen:
        return None
    return ipaddress.ip_network(f"{address}/{int(prefix)}", strict=False)


def sloppy_cidr_errors(value: str, path: str) -> list[FieldError]:
    """v1.32's ``IsValidCIDR`` (``k8s.io/apimachinery`` v0.32): anything
    ``ParseCIDRSloppy`` reads is valid; the strict rules above came in v1.33."""
    if parse_cidr_sloppy(value) is None:
        return [errors.invalid(path, value, INVALID_CIDR)]
    return []
