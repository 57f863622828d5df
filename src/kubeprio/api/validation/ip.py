"""IP and CIDR checks as v1.32's validation made them (``IsValidIP``, ``IsValidCIDR``,
``ValidateNonSpecialIP``).

In v1.32 ``k8s.io/apimachinery/pkg/util/validation/validation.go`` (v0.32) had no strict
IP rules: ``IsValidIP`` and ``IsValidCIDR`` asked only whether ``netutils.ParseIPSloppy``
and ``netutils.ParseCIDRSloppy`` read the text, so leading zeros (``010.001.002.003``),
IPv4-mapped IPv6 addresses, non-canonical IPv6 and CIDRs with host bits set were all
valid. (The refusals of those forms came with KEP-4858's ``StrictIPCIDRValidation`` in
v1.33.) ``IsValidIPv4Address``/``IsValidIPv6Address`` add Go's family test, where an
IPv4-mapped address counts as IPv4. ``ValidateNonSpecialIP`` is the one of
``pkg/apis/core/validation``, with Go's ``net.IP`` range predicates. The parsers live in
``validation.sloppyip``. Driven by Service, Endpoints, EndpointSlice, Ingress and
NetworkPolicy validation and by the Service IP allocator. Pure: no I/O.
"""

from __future__ import annotations

import ipaddress
from typing import Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.sloppyip import (
    IPAddress,
    SloppyCIDR,
    parse_cidr_sloppy,
    parse_ip_sloppy,
)

__all__ = [
    "INVALID_CIDR",
    "INVALID_IP",
    "IPAddress",
    "SloppyCIDR",
    "cidr_errors",
    "ip_errors",
    "ipv4_errors",
    "ipv6_errors",
    "non_special_ip_errors",
    "parse_cidr_sloppy",
    "parse_ip",
]

INVALID_IP: Final = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
INVALID_CIDR: Final = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"

_IPV6_LOOPBACK: Final = ipaddress.IPv6Address("::1")


def parse_ip(value: str) -> IPAddress | None:
    """The address as ``ParseIPSloppy`` reads it (IPv4-mapped ones as IPv4), or None."""
    return parse_ip_sloppy(value)


def ip_errors(value: str, path: str) -> list[FieldError]:
    """v1.32's ``IsValidIP``: anything ``ParseIPSloppy`` reads."""
    if parse_ip_sloppy(value) is None:
        return [errors.invalid(path, value, INVALID_IP)]
    return []


def ipv4_errors(value: str, path: str) -> list[FieldError]:
    """v1.32's ``IsValidIPv4Address``: parses and ``To4`` succeeds."""
    if not isinstance(parse_ip_sloppy(value), ipaddress.IPv4Address):
        return [errors.invalid(path, value, "must be a valid IPv4 address")]
    return []


def ipv6_errors(value: str, path: str) -> list[FieldError]:
    """v1.32's ``IsValidIPv6Address``: parses and ``To4`` fails."""
    if not isinstance(parse_ip_sloppy(value), ipaddress.IPv6Address):
        return [errors.invalid(path, value, "must be a valid IPv6 address")]
    return []


def cidr_errors(value: str, path: str) -> list[FieldError]:
    """v1.32's ``IsValidCIDR``: anything ``ParseCIDRSloppy`` reads (host bits allowed)."""
    if parse_cidr_sloppy(value) is None:
        return [errors.invalid(path, value, INVALID_CIDR)]
    return []


def non_special_ip_errors(value: str, path: str) -> list[FieldError]:
    """``ValidateNonSpecialIP``: not unspecified, loopback, link-local unicast or
    link-local multicast, by Go's ``net.IP`` predicates on the sloppily parsed address."""
    address = parse_ip_sloppy(value)
    if address is None:
        return [errors.invalid(path, value, "must be a valid IP address")]
    found: list[FieldError] = []
    if address.is_unspecified:
        found.append(errors.invalid(path, value, f"may not be unspecified ({value})"))
    if _loopback(address):
        found.append(
            errors.invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)")
        )
    if _link_local_unicast(address):
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


def _loopback(address: IPAddress) -> bool:
    """Go's ``IsLoopback``: 127.0.0.0/8, or exactly ::1."""
    if isinstance(address, ipaddress.IPv4Address):
        return address.packed[0] == 127
    return address == _IPV6_LOOPBACK


def _link_local_unicast(address: IPAddress) -> bool:
    """Go's ``IsLinkLocalUnicast``: 169.254.0.0/16 or fe80::/10."""
    packed = address.packed
    if isinstance(address, ipaddress.IPv4Address):
        return packed[0] == 169 and packed[1] == 254
    return packed[0] == 0xFE and packed[1] & 0xC0 == 0x80


def _link_local_multicast(address: IPAddress) -> bool:
    """Go's ``IsLinkLocalMulticast``: 224.0.0.0/24, or ff02::/16 under any multicast
    flags (Go tests only the scope nibble, so ff12:: counts too)."""
    packed = address.packed
    if isinstance(address, ipaddress.IPv4Address):
        return packed[:3] == b"\xe0\x00\x00"
    return packed[0] == 0xFF and packed[1] & 0x0F == 0x02
