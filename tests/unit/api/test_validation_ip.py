"""v1.32's IP and CIDR validation: ``IsValidIP``/``IsValidIPv4Address``/
``IsValidIPv6Address``/``IsValidCIDR`` of ``k8s.io/apimachinery/pkg/util/validation/
validation.go`` (v0.32.9), which asked only ``netutils.ParseIPSloppy``/``ParseCIDRSloppy``
(``k8s.io/utils/internal/third_party/forked/golang/net/ip.go``), and ``ValidateNonSpecialIP``
of ``pkg/apis/core/validation/validation.go``. Includes the inputs v1.32 accepted that
v1.33's ``StrictIPCIDRValidation`` (KEP-4858) refuses, checked at every call site."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api import kinds, validation
from kubeprio.api.defaults import default_object
from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.api.serialization import from_dict
from kubeprio.api.service import Service
from kubeprio.api.validation.ip import (
    INVALID_CIDR,
    INVALID_IP,
    cidr_errors,
    ip_errors,
    non_special_ip_errors,
    parse_cidr_sloppy,
    parse_ip,
)

# (text, what ParseIPSloppy returns as Go prints it, or None for nil)
SLOPPY_IPS = [
    ("1.2.3.4", "1.2.3.4"),
    ("010.001.002.003", "10.1.2.3"),  # decimal, not octal (CVE-2021-29923's ambiguity)
    ("0000000001.2.3.4", "1.2.3.4"),  # dtoi reads any number of leading zeros
    ("255.255.255.255", "255.255.255.255"),
    ("256.1.1.1", None),
    ("1.2.3", None),
    ("1.2.3.4.", None),
    (" 1.2.3.4", None),
    ("1.2.3.-4", None),
    ("2001:db8::1", "2001:db8::1"),
    ("2001:DB8:0:0::0001", "2001:db8::1"),  # non-canonical: still valid in v1.32
    ("00002001:db8::1", "2001:db8::1"),  # xtoi: a group may have more than 4 digits
    ("::ffff:1.2.3.4", "1.2.3.4"),  # IPv4-mapped: Go's To4 makes it IPv4
    ("::ffff:010.1.2.3", "10.1.2.3"),
    ("::1.2.3.4", "::102:304"),
    ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
    ("1:2:3:4:5:1.2.3.4", None),  # the dotted tail must be the last 32 bits
    ("::", "::"),
    ("1::2::3", None),
    ("1:2:3:4:5:6:7:8::", None),  # "::" must stand for at least one group
    ("fe80::1%eth0", None),  # no zones
    ("12345::", None),  # more than 16 bits
    ("1:2:3:4:5:6:7:8:9", None),
    ("", None),
    ("abc", None),
]


@pytest.mark.parametrize(("text", "parsed"), SLOPPY_IPS)
def test_parse_ip_follows_parse_ip_sloppy(text: str, parsed: str | None) -> None:
    address = parse_ip(text)
    assert (None if address is None else str(address)) == parsed
    expected = [] if parsed else [f'ip: Invalid value: "{text}": {INVALID_IP}']
    assert [str(e) for e in ip_errors(text, "ip")] == expected


# (text, network as Go prints it, prefix length) or None
SLOPPY_CIDRS = [
    ("10.0.0.0/8", ("10.0.0.0", 8)),
    ("10.1.2.3/8", ("10.0.0.0", 8)),  # host bits masked off, not refused
    ("010.000.000.000/008", ("10.0.0.0", 8)),
    ("2001:db8::1/64", ("2001:db8::", 64)),
    ("2001:DB8::/64", ("2001:db8::", 64)),
    ("::ffff:10.0.0.0/104", ("10.0.0.0", 104)),  # mapped: a 128-bit mask over an IPv4 net
    ("10.0.0.0/33", None),
    ("10.0.0.0/", None),
    ("10.0.0.0/+8", None),
    ("10.0.0.0/8/8", None),
    ("10.0.0.0", None),
    ("2001:db8::/129", None),
    (" 10.0.0.0/8", None),
]


@pytest.mark.parametrize(("text", "parsed"), SLOPPY_CIDRS)
def test_cidr_follows_parse_cidr_sloppy(text: str, parsed: tuple[str, int] | None) -> None:
    cidr = parse_cidr_sloppy(text)
    if parsed is None:
        assert cidr is None
        assert [str(e) for e in cidr_errors(text, "c")] == [
            f'c: Invalid value: "{text}": {INVALID_CIDR}'
        ]
        return
    assert cidr is not None
    network = cidr.network[12:] if cidr.network[:12] == bytes(10) + b"\xff\xff" else cidr.network
    assert (str(ipaddress.ip_address(network)), cidr.prefix) == parsed
    assert cidr_errors(text, "c") == []


@given(st.ip_addresses())
def test_every_python_address_parses_to_itself(address: Any) -> None:
    """Canonical text of any address reads back as the same address (IPv4-mapped ones as
    their IPv4 value, as Go's To4 does)."""
    expected = getattr(address, "ipv4_mapped", None) or address
    assert parse_ip(str(address)) == expected
    assert parse_ip(address.exploded) == expected


@given(st.lists(st.integers(0, 255), min_size=4, max_size=4), st.integers(0, 3))
def test_leading_zeros_read_as_decimal(octets: list[int], zeros: int) -> None:
    padded = ".".join("0" * zeros + str(o) for o in octets)
    assert str(parse_ip(padded)) == ".".join(map(str, octets))


# ValidateNonSpecialIP with Go's IsUnspecified/IsLoopback/IsLinkLocalUnicast/IsLinkLocalMulticast.
NON_SPECIAL = [
    ("10.1.2.3", []),
    ("010.001.002.003", []),
    ("0.0.0.0", ["may not be unspecified (0.0.0.0)"]),
    ("::ffff:0.0.0.0", ["may not be unspecified (::ffff:0.0.0.0)"]),
    ("127.000.000.001", ["may not be in the loopback range (127.0.0.0/8, ::1/128)"]),
    ("::ffff:127.0.0.1", ["may not be in the loopback range (127.0.0.0/8, ::1/128)"]),
    ("::1", ["may not be in the loopback range (127.0.0.0/8, ::1/128)"]),
    ("169.254.1.1", ["may not be in the link-local range (169.254.0.0/16, fe80::/10)"]),
    ("febf::1", ["may not be in the link-local range (169.254.0.0/16, fe80::/10)"]),
    ("224.0.0.251", ["may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"]),
    ("ff12::1", ["may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"]),
    ("ff05::1", []),
    ("nope", ["must be a valid IP address"]),
]


@pytest.mark.parametrize(("text", "messages"), NON_SPECIAL)
def test_non_special_ip(text: str, messages: list[str]) -> None:
    assert [e.detail for e in non_special_ip_errors(text, "ip")] == messages


# --- call sites -----------------------------------------------------------------------------


def create_errors(kind: type, body: dict[str, Any]) -> list[str]:
    obj = default_object(from_dict(kind, body))
    return [str(e) for e in validation.validate_create(obj, kinds.for_model(kind))]


def service(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}, **spec},
    }


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # validateServiceSpec's clusterIPs loop: IsValidIP, so leading zeros pass in v1.32.
        ({"clusterIP": "010.000.000.010", "clusterIPs": ["010.000.000.010"]}, []),
        ({"clusterIP": "::ffff:10.0.0.10", "clusterIPs": ["::ffff:10.0.0.10"]}, []),
        (
            {"clusterIP": "10.0.0.300", "clusterIPs": ["10.0.0.300"]},
            [f'spec.clusterIPs[0]: Invalid value: "10.0.0.300": {INVALID_IP}'],
        ),
        # externalIPs: IsValidIP, then ValidateNonSpecialIP.
        ({"externalIPs": ["010.001.002.003", "2001:DB8::0001"]}, []),
        (
            {"externalIPs": ["127.0.0.01"]},
            [
                'spec.externalIPs[0]: Invalid value: "127.0.0.01": may not be in the loopback '
                "range (127.0.0.0/8, ::1/128)"
            ],
        ),
        # LoadBalancerSourceRanges: IsValidCIDR on the trimmed value; host bits are fine.
        ({"type": "LoadBalancer", "loadBalancerSourceRanges": [" 010.0.0.1/08 "]}, []),
        (
            {"type": "LoadBalancer", "loadBalancerSourceRanges": ["10.0.0.0/33"]},
            [f'spec.LoadBalancerSourceRanges[0]: Invalid value: "10.0.0.0/33": {INVALID_CIDR}'],
        ),
    ],
)
def test_service_ip_fields(spec: dict[str, Any], expected: list[str]) -> None:
    assert create_errors(Service, service(**spec)) == expected


def test_service_source_ranges_annotation_accepts_sloppy_cidrs() -> None:
    body = service(type="LoadBalancer")
    key = "service.beta.kubernetes.io/load-balancer-source-ranges"
    body["metadata"]["annotations"] = {key: "010.0.0.0/8, 192.168.1.5/24"}
    assert create_errors(Service, body) == []
    body["metadata"]["annotations"] = {key: "10.0.0.0/8,nope"}
    assert create_errors(Service, body) == [
        f'metadata.annotations[{key}]: Invalid value: "nope": {INVALID_CIDR}'
    ]


def endpoints(ip: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "web", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": ip}], "ports": [{"port": 80}]}],
    }


@pytest.mark.parametrize(
    ("ip", "expected"),
    [
        ("010.001.002.003", []),
        ("::ffff:10.1.2.3", []),
        ("2001:db8:0::1", []),
        (
            "::ffff:169.254.0.1",
            [
                'subsets[0].addresses[0].ip: Invalid value: "::ffff:169.254.0.1": may not be in '
                "the link-local range (169.254.0.0/16, fe80::/10)"
            ],
        ),
        ("1.2.3", [f'subsets[0].addresses[0].ip: Invalid value: "1.2.3": {INVALID_IP}']),
    ],
)
def test_endpoints_addresses(ip: str, expected: list[str]) -> None:
    """``validateEndpointAddress``: IsValidIP, then ValidateNonSpecialIP."""
    assert create_errors(Endpoints, endpoints(ip)) == expected


def endpoint_slice(address_type: str, *addresses: str) -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "namespace": "default"},
        "addressType": address_type,
        "endpoints": [{"addresses": list(addresses)}],
    }


@pytest.mark.parametrize(
    ("address_type", "address", "expected"),
    [
        ("IPv4", "010.001.002.003", []),
        ("IPv4", "::ffff:10.1.2.3", []),  # To4 succeeds: an IPv4 address to Go
        ("IPv6", "2001:DB8::1", []),
        (
            "IPv6",
            "::ffff:10.1.2.3",
            ['endpoints[0].addresses[0]: Invalid value: "::ffff:10.1.2.3": must be a valid IPv6 address'],
        ),
        (
            "IPv4",
            "2001:db8::1",
            ['endpoints[0].addresses[0]: Invalid value: "2001:db8::1": must be a valid IPv4 address'],
        ),
        (
            "IPv4",
            "nope",
            [
                'endpoints[0].addresses[0]: Invalid value: "nope": must be a valid IPv4 address',
                'endpoints[0].addresses[0]: Invalid value: "nope": must be a valid IP address',
            ],
        ),
        (
            "IPv4",
            "127.0.0.1",
            [
                'endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the '
                "loopback range (127.0.0.0/8, ::1/128)"
            ],
        ),
        ("FQDN", "010.001.002.003", []),
    ],
)  # fmt: skip
def test_endpoint_slice_addresses(address_type: str, address: str, expected: list[str]) -> None:
    """``validateEndpoints`` of ``pkg/apis/discovery/validation``: IsValidIPv4Address or
    IsValidIPv6Address, and ValidateNonSpecialIP appended after it."""
    assert create_errors(EndpointSlice, endpoint_slice(address_type, address)) == expected


def ip_block(cidr: str, *excepts: str) -> dict[str, Any]:
    block: dict[str, Any] = {"cidr": cidr}
    if excepts:
        block["except"] = list(excepts)
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"podSelector": {}, "ingress": [{"from": [{"ipBlock": block}]}]},
    }


EXCEPT_PATH = "spec.ingress[0].from[0].ipBlock.except[0]"


@pytest.mark.parametrize(
    ("cidr", "excepts", "expected"),
    [
        ("010.0.0.0/8", ("010.001.0.0/16",), []),
        ("10.0.0.0/8", ("10.1.2.3/16",), []),
        # Contains reduces both to IPv4, but IPMask.Size compares 104 (of 128) with 16 (of 32).
        ("::ffff:10.0.0.0/104", ("10.1.0.0/16",), [f'{EXCEPT_PATH}: Invalid value: "10.1.0.0/16": must be a strict subset of `cidr`']),
        ("10.0.0.0/8", ("::ffff:10.1.0.0/112",), []),
        ("10.0.0.0/8", ("10.0.0.0/8",), [f'{EXCEPT_PATH}: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`']),
        ("10.0.0.0/8", ("11.0.0.0/16",), [f'{EXCEPT_PATH}: Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`']),
        ("2001:db8::/32", ("10.0.0.0/16",), [f'{EXCEPT_PATH}: Invalid value: "10.0.0.0/16": must be a strict subset of `cidr`']),
        ("10.0.0.0/8", ("10.0.0.0/040",), [f'{EXCEPT_PATH}: Invalid value: "10.0.0.0/040": {INVALID_CIDR}']),
    ],
)  # fmt: skip
def test_network_policy_ip_block(cidr: str, excepts: tuple[str, ...], expected: list[str]) -> None:
    """``ValidateIPBlock`` (``pkg/apis/networking/validation``): IsValidCIDR on each, and
    each exception's network number inside ``cidr`` by Go's ``IPNet.Contains``."""
    assert create_errors(NetworkPolicy, ip_block(cidr, *excepts)) == expected
