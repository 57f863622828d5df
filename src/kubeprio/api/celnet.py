"""Kubernetes' CEL IP and CIDR libraries: ``ip()``, ``cidr()`` and their methods.

Mirrors v1.32's ``k8s.io/apiserver/pkg/cel/library/ip.go`` and ``cidr.go``:

* ``ip(string)`` (``IP Address "x" parse error during conversion from string: ...``;
  zones and IPv4-mapped IPv6 addresses refused), ``isIP``, ``ip.isCanonical``,
  ``string(ip)``, and the methods ``family``, ``isUnspecified``, ``isLoopback``,
  ``isLinkLocalMulticast``, ``isLinkLocalUnicast``, ``isGlobalUnicast`` (Go's
  ``netip.Addr`` definitions);
* ``cidr(string)`` (whose error repeats upstream's prefix ``network address parse error
  during conversion from string:`` twice, as ``stringToCIDR`` wraps ``parseCIDR``'s
  already-prefixed error), ``isCIDR``, and the methods
  ``containsIP`` and ``containsCIDR`` (of a value or a string), ``ip``, ``masked``,
  ``prefixLength`` and ``string(cidr)``.

A string argument that does not parse behaves as upstream's: ``containsIP`` answers
``no such overload``, ``containsCIDR`` the parse error. Parsing is ``api.netipparse``;
values are ``api.celtypes`` messages. ``string(ip)`` and ``string(cidr)`` (``netip``'s
``String()`` of the value) share one runtime overload (``api.celenv``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from cel_expr_python import cel

from kubeprio.api import celenv, celtypes
from kubeprio.api.gotext import go_quote
from kubeprio.api.netipparse import Addr, NetipError, Prefix, parse_addr, parse_prefix

CIDR_PARSE_ERROR: Final = "network address parse error during conversion from string: "


def _parse_ip(text: str) -> Addr:
    """Upstream ``parseIPAddr``."""
    try:
        addr = parse_addr(text)
    except NetipError as failure:
        raise ValueError(
            f"IP Address {go_quote(text)} parse error during conversion from string: {failure}"
        ) from None
    if addr.zone:
        raise ValueError(f"IP address {go_quote(text)} with zone value is not allowed")
    if addr.is4in6:
        raise ValueError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return addr


def _parse_cidr(text: str) -> Prefix:
    """Upstream ``parseCIDR`` (its errors already carry the conversion prefix)."""
    try:
        prefix = parse_prefix(text)
    except NetipError as failure:
        raise ValueError(CIDR_PARSE_ERROR + str(failure)) from None
    if prefix.addr.is4in6:
        raise ValueError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return prefix


def _addr(value: Any) -> Addr:
    return parse_addr(celtypes.carried(value))


def _prefix(value: Any) -> Prefix:
    return parse_prefix(celtypes.carried(value))


def _to_ip(text: str) -> Any:
    return celtypes.ip_value(_parse_ip(text).text())


def _to_cidr(text: str) -> Any:
    try:
        prefix = _parse_cidr(text)
    except ValueError as failure:
        raise ValueError(CIDR_PARSE_ERROR + str(failure)) from None
    return celtypes.cidr_value(prefix.text())


def _succeeds(parse: Callable[[str], object]) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            parse(text)
        except ValueError:
            return False
        return True

    return check


def _is_canonical(text: str) -> bool:
    return _parse_ip(text).text() == text


def _family(value: Any) -> int:
    return 4 if _addr(value).is4 else 6


def _contains_cidr(outer: Prefix, inner: Prefix) -> bool:
    """Upstream ``cidrContainsCIDR``: same masked network at the outer length, and the
    inner prefix no shorter."""
    if outer.addr.bits != inner.addr.bits:
        return False
    same_network = outer.masked() == Prefix(inner.addr, outer.length).masked()
    return same_network and outer.length <= inner.length


def _contains_ip_string(cidr: Any, text: str) -> bool:
    try:
        addr = _parse_ip(text)
    except ValueError:
        raise ValueError(celenv.NO_SUCH_OVERLOAD) from None
    return _prefix(cidr).contains(addr)


def _contains_cidr_string(cidr: Any, text: str) -> bool:
    try:
        inner = _parse_cidr(text)
    except ValueError as failure:
        raise ValueError(CIDR_PARSE_ERROR + str(failure)) from None
    return _contains_cidr(_prefix(cidr), inner)


def _ip_predicate(test: Callable[[Addr], bool]) -> Callable[[Any], bool]:
    return lambda value: test(_addr(value))


def _member(overload: str, result: Any, params: list[Any], impl: Any) -> Any:
    return cel.Overload(overload, result, params, is_member=True, impl=impl)


def _global(overload: str, result: Any, params: list[Any], impl: Any) -> Any:
    return cel.Overload(overload, result, params, is_member=False, impl=impl)


def declarations() -> list[Any]:
    """The two libraries' function declarations but ``string`` (``shared_declarations``;
    the global ``ip`` shares its name with the ``cidr.ip()`` method)."""
    ip, cidr = celtypes.IP, celtypes.CIDR
    string, boolean = cel.Type.STRING, cel.Type.BOOL
    predicates: list[tuple[str, str, Callable[[Addr], bool]]] = [
        ("isUnspecified", "ip_is_unspecified", Addr.is_unspecified),
        ("isLoopback", "ip_is_loopback", Addr.is_loopback),
        ("isLinkLocalMulticast", "ip_is_link_local_multicast", Addr.is_link_local_multicast),
        ("isLinkLocalUnicast", "ip_is_link_local_unicast", Addr.is_link_local_unicast),
        ("isGlobalUnicast", "ip_is_global_unicast", Addr.is_global_unicast),
    ]
    table: list[tuple[str, list[Any]]] = [
        (
            "ip",
            [
                _global("string_to_ip", ip, [string], _to_ip),
                _member(
                    "cidr_ip",
                    ip,
                    [cidr],
                    lambda value: celtypes.ip_value(_prefix(value).addr.text()),
                ),
            ],
        ),
        ("isIP", [_global("is_ip", boolean, [string], _succeeds(_parse_ip))]),
        ("ip.isCanonical", [_global("ip_is_canonical", boolean, [string], _is_canonical)]),
        ("family", [_member("ip_family", cel.Type.INT, [ip], _family)]),
        *(
            (name, [_member(overload, boolean, [ip], _ip_predicate(test))])
            for name, overload, test in predicates
        ),
        ("cidr", [_global("string_to_cidr", cidr, [string], _to_cidr)]),
        ("isCIDR", [_global("is_cidr", boolean, [string], _succeeds(_parse_cidr))]),
        (
            "containsIP",
            [
                _member("cidr_contains_ip_string", boolean, [cidr, string], _contains_ip_string),
                _member(
                    "cidr_contains_ip_ip",
                    boolean,
                    [cidr, ip],
                    lambda value, addr: _prefix(value).contains(_addr(addr)),
                ),
            ],
        ),
        (
            "containsCIDR",
            [
                _member(
                    "cidr_contains_cidr_string", boolean, [cidr, string], _contains_cidr_string
                ),
                _member(
                    "cidr_contains_cidr",
                    boolean,
                    [cidr, cidr],
                    lambda outer, inner: _contains_cidr(_prefix(outer), _prefix(inner)),
                ),
            ],
        ),
        (
            "prefixLength",
            [_member("cidr_prefix_length", cel.Type.INT, [cidr], lambda v: _prefix(v).length)],
        ),
        (
            "masked",
            [
                _member(
                    "cidr_masked",
                    cidr,
                    [cidr],
                    lambda v: celtypes.cidr_value(_prefix(v).masked().text()),
                )
            ],
        ),
    ]
    return [cel.FunctionDecl(name, overloads) for name, overloads in table]


def shared_declarations() -> list[celenv.SharedFunction]:
    """``string(ip)`` and ``string(cidr)``: both take a message, so the runtime holds one
    overload that dispatches on the message's type (``api.celenv``)."""
    string = cel.Type.STRING
    variants = (
        celenv.Variant("ip_to_string", string, (celtypes.IP,), celtypes.carried),
        celenv.Variant("cidr_to_string", string, (celtypes.CIDR,), celtypes.carried),
    )
    return [celenv.SharedFunction("string", False, variants)]
