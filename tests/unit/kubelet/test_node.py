"""Node registration: the Node a kubelet posts, and how it treats an existing one.

Upstream: ``pkg/kubelet/kubelet_node_status.go`` ``initialNode`` and the status setters
in ``pkg/kubelet/nodestatus/setters.go`` (condition reasons and messages).
"""

from __future__ import annotations

import dataclasses
import ipaddress

import pytest

from kubeprio.api.core import Node, NodeCondition
from kubeprio.kubelet import podips
from tests.builders import node
from tests.unit.kubelet.conftest import Cluster


def conditions(current: Node) -> dict[str, tuple[str, str, str]]:
    return {
        c.type or "": (c.status or "", c.reason or "", c.message or "")
        for c in (current.status.conditions if current.status else None) or ()
    }


def test_registered_node_looks_like_a_kubelets(cluster: Cluster) -> None:
    cluster.kubelet("worker-1", capacity={"cpu": "8", "memory": "16Gi"})
    registered = cluster.api.get(Node, "worker-1")
    labels = registered.metadata.labels or {}
    assert labels["kubernetes.io/hostname"] == "worker-1"
    assert labels["kubernetes.io/os"] == "linux"
    status = registered.status
    assert status is not None
    assert {k: str(v) for k, v in (status.capacity or {}).items()} == {
        "cpu": "8",
        "memory": "16Gi",
        "pods": "110",
    }
    assert status.allocatable == status.capacity
    assert conditions(registered) == {
        "MemoryPressure": (
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
    }
    assert status.node_info is not None
    assert status.node_info.kubelet_version == "v1.32.0-kubeprio"  # the API server's release
    assert [a.type for a in status.addresses or ()] == ["InternalIP", "Hostname"]


def test_existing_node_keeps_its_capacity_and_gains_conditions(cluster: Cluster) -> None:
    cluster.kubelet("n1", node=node("n1").allocatable(cpu="3", memory="5Gi", pods="7").build())
    existing = cluster.api.get(Node, "n1")
    assert str((existing.status.allocatable or {})["cpu"]) == "3"  # type: ignore[union-attr]
    assert conditions(existing)["Ready"][0] == "True"


def test_node_reporting_ready_false_is_left_alone(cluster: Cluster) -> None:
    """A dumped node that was NotReady stays so: the kubelet does not revive it."""
    built = node("n1").allocatable(cpu="3", pods="7").build()
    down = NodeCondition(
        type="Ready", status="False", reason="KubeletNotReady", message="PLEG is not healthy"
    )
    built = dataclasses.replace(built, status=dataclasses.replace(built.status, conditions=(down,)))  # type: ignore[arg-type]
    cluster.kubelet("n1", node=built)
    assert conditions(cluster.api.get(Node, "n1")) == {
        "Ready": ("False", "KubeletNotReady", "PLEG is not healthy")
    }


def test_register_node_helper_creates_once(cluster: Cluster) -> None:
    from kubeprio.kubelet.registration import register_node

    first = register_node(
        cluster.api, "n9", clock=cluster.clock, capacity={"cpu": "2"}, pod_cidr="10.244.9.0/24"
    )
    again = register_node(cluster.api, "n9", clock=cluster.clock, capacity={"cpu": "64"})
    assert first.metadata.uid == again.metadata.uid
    assert first.spec is not None
    assert first.spec.pod_cidr == "10.244.9.0/24"
    assert [a.address for a in first.status.addresses or ()] == ["10.244.9.1", "n9"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "cidr",
    [
        "10.1.2.0/24",
        "10.1.2.0/30",
        "10.1.2.0/31",
        "10.1.2.7/32",
        "10.9.0.0/22",
        "fd00::/120",
        "fd00::/127",
        "fd00::1/128",
        "10.1.2.9/24",
    ],
)
def test_pod_ip_pool_is_the_hosts_after_the_bridge_address(cidr: str) -> None:
    """The pool is the network's hosts (ipaddress ``hosts()``), less the first one, which
    the node's bridge takes; a single-address network keeps its only address."""
    hosts = [str(h) for h in ipaddress.ip_network(cidr, strict=False).hosts()]
    expected = hosts[1:] if len(hosts) > 1 else hosts
    pool = podips.PodIpPool(cidr)
    assert pool.count == len(expected)
    assert [pool[i] for i in range(pool.count)] == expected
    with pytest.raises(IndexError):
        pool[pool.count]


def test_pod_ip_pool_of_an_ipv6_64_is_not_listed() -> None:
    """A /64 (the usual IPv6 pod CIDR) holds 2^64 - 2 hosts; the pool counts them without
    listing them, and the addresses are the network's hosts in order."""
    pool = podips.PodIpPool("fd00:10:244:1::/64")
    assert pool.count == 2**64 - 2
    assert pool[0] == "fd00:10:244:1::2"
    assert pool[pool.count - 1] == "fd00:10:244:1:ffff:ffff:ffff:ffff"
