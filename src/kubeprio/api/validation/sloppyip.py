"""Go's pre-1.17 IP and CIDR parsers, as ``k8s.io/utils/net`` keeps them for Kubernetes.

v1.32's API validation asks ``netutils.ParseIPSloppy`` and ``netutils.ParseCIDRSloppy``
(``k8s.io/utils/internal/third_party/forked/golang/net``) whether an address or CIDR is
valid. They differ from Python's ``ipaddress`` in ways that change verdicts, so they are
re-implemented here over bytes rather than approximated:

* IPv4 octets are decimal with any number of leading zeros (``010.001.002.003`` is
  10.1.2.3, not octal), up to 255 each;
* an IPv6 group is any run of hex digits whose value fits 16 bits (``00000001::`` is
  valid), and the last 32 bits may be written as dotted IPv4 (leading zeros allowed);
* no zone (``fe80::1%eth0`` is refused), no surrounding space;
* a CIDR's prefix length is decimal with any leading zeros; host bits are masked off;
* an IPv4-mapped IPv6 address (``::ffff:1.2.3.4``) *is* an IPv4 address to Go
  (``IP.To4`` succeeds), so families, loopback and the like follow its IPv4 value.

Callers read results through ``ipaddress`` types; CIDRs keep Go's byte layout because
``IPNet.Contains`` mixes 4- and 16-byte forms. Driven by ``validation.ip``. Pure: no I/O.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final

_BIG: Final = 0xFFFFFF
"""Go's ``big``: a number that reaches it while being read is an overflow."""

_DIGITS: Final = "0123456789"
_HEX_DIGITS: Final = "0123456789abcdefABCDEF"
_V4_IN_V6_PREFIX: Final = bytes(10) + b"\xff\xff"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _read_number(text: str, base: int) -> tuple[int, int] | None:
    """Go's ``dtoi``/``xtoi``: the leading digits of ``text`` as (value, characters read),
    or None when there are none or they overflow ``big``."""
    alphabet = _DIGITS if base == 10 else _HEX_DIGITS
    value = 0
    used = 0
    for character in text:
        if character not in alphabet:
            break
        value = value * base + int(character, base)
        used += 1
        if value >= _BIG:
            return None
    return (value, used) if used else None


def ipv4_bytes(text: str) -> bytes | None:
    """Go's forked ``parseIPv4``: four decimal octets, leading zeros allowed."""
    octets = bytearray()
    rest = text
    for position in range(4):
        if position > 0:
            if not rest.startswith("."):
                return None
            rest = rest[1:]
        read = _read_number(rest, 10)
        if read is None or read[0] > 0xFF:
            return None
        octets.append(read[0])
        rest = rest[read[1] :]
    return bytes(octets) if not rest else None


def ipv6_bytes(text: str) -> bytes | None:
    """Go's forked ``parseIPv6``: 16 bytes, with at most one ``::`` and an optional
    dotted IPv4 tail."""
    address = bytearray(16)
    ellipsis = -1
    rest = text
    if rest.startswith("::"):
        ellipsis = 0
        rest = rest[2:]
        if not rest:
            return bytes(address)
    filled = 0
    while filled < 16:
        read = _read_number(rest, 16)
        if read is None or read[0] > 0xFFFF:
            return None
        value, used = read
        if used < len(rest) and rest[used] == ".":
            # A dotted tail must land on the last 4 bytes (or be stretched there by ``::``).
            if (ellipsis < 0 and filled != 12) or filled + 4 > 16:
                return None
            tail = ipv4_bytes(rest)
            if tail is None:
                return None
            address[filled : filled + 4] = tail
            rest = ""
            filled += 4
            break
        address[filled] = value >> 8
        address[filled + 1] = value & 0xFF
        filled += 2
        rest = rest[used:]
        if not rest:
            break
        if rest[0] != ":" or len(rest) == 1:
            return None
        rest = rest[1:]
        if rest[0] == ":":
            if ellipsis >= 0:
                return None
            ellipsis = filled
            rest = rest[1:]
            if not rest:
                break
    if rest:
        return None
    if filled < 16:
        if ellipsis < 0:
            return None
        gap = 16 - filled
        address[ellipsis + gap : 16] = address[ellipsis:filled]
        address[ellipsis : ellipsis + gap] = bytes(gap)
    elif ellipsis >= 0:
        return None  # "::" must stand for at least one zero group
    return bytes(address)


def parse_ip_bytes(text: str) -> bytes | None:
    """``ParseIPSloppy`` as Go's 16-byte form (IPv4 as ``::ffff:a.b.c.d``): the first
    ``.`` or ``:`` decides which parser reads the whole text."""
    for character in text:
        if character == ".":
            parsed = ipv4_bytes(text)
            return None if parsed is None else _V4_IN_V6_PREFIX + parsed
        if character == ":":
            return ipv6_bytes(text)
    return None


def as_address(raw: bytes) -> IPAddress:
    """Go's view of a 16-byte address: IPv4 whenever ``IP.To4`` succeeds."""
    if raw[:12] == _V4_IN_V6_PREFIX:
        return ipaddress.IPv4Address(raw[12:])
    return ipaddress.IPv6Address(raw)


def parse_ip_sloppy(text: str) -> IPAddress | None:
    """``netutils.ParseIPSloppy``, or None where it returns nil."""
    raw = parse_ip_bytes(text)
    return None if raw is None else as_address(raw)


@dataclass(frozen=True, slots=True)
class SloppyCIDR:
    """Go's ``*net.IPNet`` from ``ParseCIDRSloppy``: the masked network number (4 bytes
    for an IPv4 text, 16 for an IPv6 one, IPv4-mapped included) and the prefix length out
    of ``bits`` (32 or 128), as ``IPMask.Size`` reports them."""

    network: bytes
    prefix: int
    bits: int

    def mask(self) -> bytes:
        ones = (1 << self.bits) - (1 << (self.bits - self.prefix))
        return ones.to_bytes(self.bits // 8, "big")

    def contains(self, raw: bytes) -> bool:
        """``IPNet.Contains``: both sides reduced to 4 bytes where Go's ``To4`` can."""
        network, mask = self.network, self.mask()
        if network[:12] == _V4_IN_V6_PREFIX and len(network) == 16:
            network, mask = network[12:], mask[12:]
        if len(raw) == 16 and raw[:12] == _V4_IN_V6_PREFIX:
            raw = raw[12:]
        if len(raw) != len(network):
            return False
        return all(n & m == a & m for n, m, a in zip(network, mask, raw, strict=True))


def parse_cidr_sloppy(text: str) -> SloppyCIDR | None:
    """``netutils.ParseCIDRSloppy``: an address, ``/`` (the first one), a decimal prefix
    length that fits the address's family; None where Go returns an error."""
    address_text, slash, prefix_text = text.partition("/")
    if not slash:
        return None
    raw = ipv4_bytes(address_text)
    bits = 32
    if raw is None:
        raw = ipv6_bytes(address_text)
        bits = 128
    read = _read_number(prefix_text, 10)
    if raw is None or read is None or read[1] != len(prefix_text) or read[0] > bits:
        return None
    cidr = SloppyCIDR(b"", read[0], bits)
    masked = bytes(a & m for a, m in zip(raw, cidr.mask(), strict=True))
    return SloppyCIDR(masked, read[0], bits)
