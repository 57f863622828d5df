"""Go's ``net/netip`` address and prefix parsing, with Go's error texts.

What it is: ``ParseAddr`` and ``ParsePrefix`` as Go 1.23 (Kubernetes v1.32's toolchain)
implements them, for the CEL ``ip``/``cidr`` libraries (``api.celnet``), whose errors
embed Go's texts (``ParseAddr("1.2.3"): IPv4 address too short``,
``netip.ParsePrefix("10.0.0.0"): no '/'``). IPv4 is parsed here field by field, as Go
does (no leading zeros, exactly four fields); IPv6 by Python's ``ipaddress``, whose
canonical text is RFC 5952's, as ``netip.Addr.String()`` prints it. An IPv6 address Go
rejects gets Go's most common texts; rarer IPv6 errors may word the reason differently.

Also the ``netip.Addr`` predicates (``IsLoopback``, ``IsGlobalUnicast``...) with Go's
definitions, which differ from Python's (Go's ``IsGlobalUnicast`` is true for private
addresses). Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import ipaddress

from kubeprio.api.gotext import go_quote


class NetipError(ValueError):
    """A text Go's ``netip`` refuses; the message is Go's ``err.Error()``."""


@dataclasses.dataclass(frozen=True, slots=True)
class Addr:
    """A parsed address: its 16 or 4 bytes as an int, the family's bit length, a zone."""

    value: int
    bits: int
    zone: str = ""

    @property
    def is4(self) -> bool:
        return self.bits == 32

    @property
    def is4in6(self) -> bool:
        return self.bits == 128 and self.value >> 32 == 0xFFFF

    def text(self) -> str:
        """``netip.Addr.String()``."""
        if self.is4:
            return str(ipaddress.IPv4Address(self.value))
        if self.is4in6:
            shown = "::ffff:" + str(ipaddress.IPv4Address(self.value & 0xFFFFFFFF))
        else:
            shown = str(ipaddress.IPv6Address(self.value))
        return f"{shown}%{self.zone}" if self.zone else shown

    def _in(self, network: str) -> bool:
        net = ipaddress.ip_network(network)
        if net.max_prefixlen != self.bits:
            return False
        return self.value >> (self.bits - net.prefixlen) == int(net.network_address) >> (
            self.bits - net.prefixlen
        )

    def is_unspecified(self) -> bool:
        return self.value == 0

    def is_loopback(self) -> bool:
        return self._in("127.0.0.0/8") or (self.bits == 128 and self.value == 1)

    def is_multicast(self) -> bool:
        return self._in("224.0.0.0/4") or self._in("ff00::/8")

    def is_link_local_multicast(self) -> bool:
        return self._in("224.0.0.0/24") or self._in("ff02::/16")

    def is_link_local_unicast(self) -> bool:
        return self._in("169.254.0.0/16") or self._in("fe80::/10")

    def is_global_unicast(self) -> bool:
        """Go's definition: not unspecified, broadcast, loopback, multicast or link-local."""
        if self.is4 and self.value == 0xFFFFFFFF:
            return False
        return not (
            self.is_unspecified()
            or self.is_loopback()
            or self.is_multicast()
            or self.is_link_local_unicast()
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Prefix:
    """A parsed prefix: the address as written and the prefix length."""

    addr: Addr
    length: int

    def text(self) -> str:
        """``netip.Prefix.String()`` (the address is not masked)."""
        return f"{self.addr.text()}/{self.length}"

    def masked(self) -> Prefix:
        host_bits = self.addr.bits - self.length
        value = (self.addr.value >> host_bits) << host_bits
        return Prefix(Addr(value, self.addr.bits), self.length)

    def contains(self, addr: Addr) -> bool:
        """``netip.Prefix.Contains``: same family, no zone, equal in the first bits."""
        if addr.zone or addr.bits != self.addr.bits:
            return False
        host_bits = self.addr.bits - self.length
        return addr.value >> host_bits == self.addr.value >> host_bits


def _addr_error(text: str, message: str, at: str | None = None) -> NetipError:
    suffix = f" (at {go_quote(at)})" if at is not None else ""
    return NetipError(f"ParseAddr({go_quote(text)}): {message}{suffix}")


def _parse_ipv4(text: str) -> Addr:
    fields: list[int] = []
    value = 0
    digits = 0
    for i, ch in enumerate(text):
        if "0" <= ch <= "9":
            if digits == 1 and value == 0:
                raise _addr_error(text, "IPv4 field has octet with leading zero")
            value = value * 10 + int(ch)
            digits += 1
            if value > 255:
                raise _addr_error(text, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(text) - 1 or text[i - 1] == ".":
                raise _addr_error(text, "IPv4 field must have at least one digit", text[i:])
            if len(fields) == 3:
                raise _addr_error(text, "IPv4 address too long")
            fields.append(value)
            value = 0
            digits = 0
        else:
            raise _addr_error(text, "unexpected character", text[i:])
    if len(fields) < 3:
        raise _addr_error(text, "IPv4 address too short")
    fields.append(value)
    return Addr(int.from_bytes(bytes(fields), "big"), 32)


def _parse_ipv6(text: str) -> Addr:
    address, _, zone = text.partition("%")
    if "%" in text and not zone:
        raise _addr_error(text, "zone must be a non-empty string")
    try:
        parsed = ipaddress.IPv6Address(address)
    except ValueError:
        if address.count("::") > 1:
            raise _addr_error(text, "multiple :: in address", address) from None
        if "::" not in address and address.count(":") < 7 and "." not in address:
            raise _addr_error(text, "address string too short") from None
        raise _addr_error(text, "unable to parse IP") from None
    return Addr(int(parsed), 128, zone)


def parse_addr(text: str) -> Addr:
    """``netip.ParseAddr``: the family is chosen by the first ``.``, ``:`` or ``%``."""
    for ch in text:
        if ch == ".":
            return _parse_ipv4(text)
        if ch == ":":
            return _parse_ipv6(text)
        if ch == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


def _prefix_error(text: str, message: str) -> NetipError:
    return NetipError(f"netip.ParsePrefix({go_quote(text)}): {message}")


def parse_prefix(text: str) -> Prefix:
    """``netip.ParsePrefix``: ``<address>/<bits>``, no zone, bits without sign or zeros."""
    slash = text.rfind("/")
    if slash < 0:
        raise _prefix_error(text, "no '/'")
    try:
        addr = parse_addr(text[:slash])
    except NetipError as failure:
        raise _prefix_error(text, str(failure)) from None
    if addr.zone:
        raise _prefix_error(text, "IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1 :]
    bad_bits = _prefix_error(text, "bad bits after slash: " + go_quote(bits_text))
    if len(bits_text) > 1 and not "1" <= bits_text[0] <= "9":
        raise bad_bits
    if not bits_text.isascii() or not bits_text.isdigit():
        raise bad_bits
    length = int(bits_text)
    if length > addr.bits:
        raise _prefix_error(text, "prefix length out of range")
    return Prefix(addr, length)
