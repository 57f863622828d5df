"""The pod IPs of one node: addresses of its pod CIDR, handed out and taken back.

* ``PodIpPool``: the host addresses of a pod CIDR in order, skipping the first (the
  bridge's), made when asked for.
* ``PodIps``: what a host-local IPAM plugin does for the kubelet's pods. Each pod started
  gets the next free address of the node's ``spec.podCIDR`` (a stable ``/24`` for a node
  without one, ``kubelet.node.default_pod_cidr``), round robin, so a freed address is not
  handed out again at once; a pod that already has an IP (a snapshot of a live cluster)
  keeps it; a host-network pod's IPs are the node's (``generateAPIPodStatus``). An address
  is freed when the pod's containers are gone. A change of the node's CIDR starts a new
  pool.

Driven by ``kubelet.kubelet``. Pure: no I/O.
"""

from __future__ import annotations

import ipaddress

from kubeprio.api.core import Node, Pod
from kubeprio.kubelet import node


class PodIpPool:
    """Host addresses of a pod CIDR in order, skipping the first (the bridge's).

    The hosts are those of ``ipaddress``'s ``hosts()``: every address of a /31, /32,
    /127 or /128; otherwise all but the network address, and for IPv4 the broadcast
    address. Addresses are made when asked for: a node's /24 holds 253 of them and a
    simulated cluster thousands of nodes, most of which never start that many pods.
    """

    def __init__(self, pod_cidr: str) -> None:
        network = ipaddress.ip_network(pod_cidr, strict=False)
        size = network.num_addresses
        if size <= 2:
            start, count = 0, size
        else:
            start, count = 1, size - 2 if network.version == 4 else size - 1
        if count > 1:
            start, count = start + 1, count - 1
        self._first = int(network.network_address) + start
        self.count = count
        """How many addresses the pool holds (2^64 - 2 for an IPv6 /64: not a ``len``)."""
        self._address = type(network.network_address)

    def __getitem__(self, index: int) -> str:
        if not 0 <= index < self.count:
            raise IndexError(index)
        return str(self._address(self._first + index))


class PodIps:
    """The pod IPs of one node (see the module docstring)."""

    def __init__(self, node_name: str) -> None:
        self.node_name = node_name
        self.host_ip: str | None = None
        """The node's own address (``status.hostIP`` of its pods)."""
        self._cidr: str | None = None
        self._pool: PodIpPool | None = None
        self._next = 0
        self._in_use: set[str] = set()

    def on_node(self, current: Node) -> None:
        """The Node object changed (or was read): its address and pod CIDR."""
        self.host_ip = node.host_ip(current)
        cidr = (current.spec.pod_cidr if current.spec else None) or node.default_pod_cidr(
            self.node_name
        )
        if self._pool is None or cidr != self._cidr:
            self._cidr = cidr
            self._pool = PodIpPool(cidr)

    def assign(self, pod: Pod) -> str | None:
        """The IP of a pod starting here: the one it has, the node's for a host-network pod,
        else the next free one (None when the pool is exhausted)."""
        existing = pod.status.pod_ip if pod.status else None
        if pod.spec is not None and pod.spec.host_network:
            existing = self.host_ip
        assigned = existing or self._allocate()
        if existing and existing != self.host_ip:
            self._in_use.add(existing)
        return assigned

    def release(self, ip: str | None) -> None:
        """A pod's containers are gone: its address is free again."""
        if ip:
            self._in_use.discard(ip)

    def _allocate(self) -> str | None:
        pool = self._pool
        if pool is None:
            return None
        # Among any len(in use) + 1 consecutive addresses one is free (if the pool has one).
        for _ in range(min(pool.count, len(self._in_use) + 1)):
            ip = pool[self._next % pool.count]
            self._next += 1
            if ip not in self._in_use:
                self._in_use.add(ip)
                return ip
        return None
