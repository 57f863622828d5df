"""NodePorts, ported from upstream ``nodeports/node_ports_test.go`` (``TestNodePorts``,
``TestPreFilterDisabled``) and ``types_test.go`` (``HostPortInfo.CheckConflict``)."""

from __future__ import annotations

import pytest

from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.nodeports import NodePorts
from tests.builders import node, pod
from tests.unit.scheduler.plugins.harness import node_infos, pre_filter, run_filter

CONFLICT = framework.Status(
    framework.Code.UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",)
)


def _pod(name, *ports, node_name=None):
    """Upstream ``newPod("m1", "UDP/127.0.0.1/8080", ...)``: protocol/hostIP/port."""
    builder = pod(name)
    for spec in ports:
        protocol, ip, port = spec.split("/")
        builder = builder.host_port(int(port), protocol, ip)
    if node_name:
        builder = builder.on(node_name)
    return builder.build()


CASES = [
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], None),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], CONFLICT),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], CONFLICT),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], None),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], None),
    (
        "second udp port conflict",
        ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"],
        ["UDP/127.0.0.1/8080"],
        CONFLICT,
    ),
    (
        "first tcp port conflict",
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        CONFLICT,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        ["TCP/0.0.0.0/8001"],
        ["TCP/127.0.0.1/8001"],
        CONFLICT,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
        ["TCP/127.0.0.1/8001"],
        CONFLICT,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        ["TCP/127.0.0.1/8001"],
        ["TCP/0.0.0.0/8001"],
        CONFLICT,
    ),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], None),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ["UDP/127.0.0.1/8001"],
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        CONFLICT,
    ),
]


@pytest.mark.parametrize(("name", "wanted", "used", "want"), CASES, ids=[c[0] for c in CASES])
def test_node_ports(name, wanted, used, want):
    [info] = node_infos([node("n1").build()], [_pod("m0", *used, node_name="n1")])
    assert run_filter(NodePorts(), _pod("m1", *wanted), info) == want


def test_pod_without_host_ports_skips_the_filter():
    """``TestNodePorts`` "skip filter": PreFilter returns Skip for a pod with no host ports."""
    _, _, status = pre_filter(NodePorts(), pod("p").build())
    assert status == framework.SKIP


def test_missing_host_ip_binds_every_address():
    """A port without hostIP is 0.0.0.0 (``HostPortInfo.sanitize``), so it conflicts."""
    [info] = node_infos([node("n1").build()], [_pod("m0", "TCP/10.0.0.1/80", node_name="n1")])
    assert run_filter(NodePorts(), pod("p").host_port(80).build(), info) == CONFLICT


def test_sidecar_ports_count_but_init_container_ports_do_not():
    """Upstream ``GetHostPorts``: restartable init containers' ports are used ports."""
    sidecar = pod("m0").on("n1").init_container({}, sidecar=True, host_port=80).build()
    plain = pod("m0").on("n1").init_container({}, host_port=80).build()
    wanted = pod("p").host_port(80).build()
    [with_sidecar] = node_infos([node("n1").build()], [sidecar])
    [with_init] = node_infos([node("n1").build()], [plain])
    assert run_filter(NodePorts(), wanted, with_sidecar) == CONFLICT
    assert run_filter(NodePorts(), wanted, with_init) is None
