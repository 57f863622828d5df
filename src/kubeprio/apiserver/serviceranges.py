"""The service IP range and the node port range: which values are taken, which are free.

Mirrors upstream's bitmap allocators (``pkg/registry/core/service/ipallocator`` and
``portallocator``, over ``allocator.NewAllocationMapWithOffset``). A dynamic allocation
(``AllocateNext``) picks a random free value from the upper part of the range first
(``randomScanStrategyWithOffset``: a random start, then a forward scan), and only then
from the lower part, which is thereby kept for values users ask for by number (the
``kubernetes`` Service's first IP, kube-dns's ``.10``). The lower part's size is
``calculateRangeOffset``: range/16 clamped to [16, 256] for IPs, range/32 clamped to
[16, 128] for ports. An IPv4 range excludes its network and broadcast addresses; an IPv6
range its network address.

Errors carry upstream's texts (``ErrAllocated``, ``ErrNotInRange``, ``ErrFull``). The
caller (``apiserver.serviceregistry``) owns the randomness: ``rng`` is passed per call.
"""

from __future__ import annotations

import ipaddress
import random
from typing import Final

from kubeprio.errors import KubeprioError

DEFAULT_SERVICE_CIDR: Final = "10.96.0.0/12"
"""kubeadm's ``--service-cluster-ip-range`` (kube-apiserver's own default is 10.0.0.0/24)."""
DEFAULT_NODE_PORT_RANGE: Final = "30000-32767"
"""kube-apiserver's ``--service-node-port-range``."""
RANGE_FULL: Final = "range is full"


class AllocationError(KubeprioError):
    """A value could not be taken; the message is upstream's error text."""


class RangeFullError(AllocationError):
    """``ErrFull``: no free value left."""

    def __init__(self) -> None:
        super().__init__(RANGE_FULL)


def range_offset(size: int, *, step: int, maximum: int, minimum: int = 16) -> int:
    """``calculateRangeOffset``: how many low values dynamic allocation avoids."""
    if size < minimum:
        return 0
    return max(minimum, min(size // step, maximum))


class _Bitmap:
    """Taken offsets of a range of ``size`` values (``AllocationBitmap``)."""

    def __init__(self, size: int, offset: int) -> None:
        self.size = size
        self.offset = offset
        self.taken: set[int] = set()

    def next_free(self, rng: random.Random) -> int:
        """``randomScanStrategyWithOffset.AllocateBit``."""
        if len(self.taken) >= self.size:
            raise RangeFullError
        upper = self.size - self.offset
        start = rng.randrange(upper)
        for step in range(upper):
            at = self.offset + (start + step) % upper
            if at not in self.taken:
                return at
        start = rng.randrange(self.offset)
        for step in range(self.offset):
            at = (start + step) % self.offset
            if at not in self.taken:
                return at
        raise RangeFullError


class ServiceIPRange:
    """``--service-cluster-ip-range``: cluster IPs for Services."""

    def __init__(self, cidr: str = DEFAULT_SERVICE_CIDR) -> None:
        self.network = ipaddress.ip_network(cidr)
        self.cidr = str(self.network)
        self.family = "IPv6" if self.network.version == 6 else "IPv4"
        # IPv4 excludes the network and broadcast addresses, IPv6 the network address.
        reserved = 2 if self.network.version == 4 else 1
        size = max(self.network.num_addresses - reserved, 0)
        self._base = int(self.network.network_address) + 1
        self._bitmap = _Bitmap(size, range_offset(size, step=16, maximum=256))

    def _offset_of(self, ip: str) -> int:
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            address = None
        offset = int(address) - self._base if address is not None else -1
        if (
            address is None
            or address.version != self.network.version
            or not 0 <= offset < self._bitmap.size
        ):
            raise AllocationError(
                f"provided IP is not in the valid range. The range of valid IPs is {self.cidr}"
            )
        return offset

    def first(self) -> str:
        """The first usable address (the ``kubernetes`` Service's)."""
        return str(ipaddress.ip_address(self._base))

    def contains(self, ip: str) -> bool:
        """Whether ``ip`` is a usable address of the range."""
        try:
            self._offset_of(ip)
        except AllocationError:
            return False
        return True

    def allocated(self, ip: str) -> bool:
        """Whether ``ip`` is taken."""
        return self.contains(ip) and self._offset_of(ip) in self._bitmap.taken

    def allocate(self, ip: str) -> None:
        """``Allocate``: take ``ip`` or raise ``AllocationError``."""
        offset = self._offset_of(ip)
        if offset in self._bitmap.taken:
            raise AllocationError("provided IP is already allocated")
        self._bitmap.taken.add(offset)

    def allocate_next(self, rng: random.Random) -> str:
        """``AllocateNext``: a random free address (upper band first)."""
        offset = self._bitmap.next_free(rng)
        self._bitmap.taken.add(offset)
        return str(ipaddress.ip_address(self._base + offset))

    def release(self, ip: str) -> None:
        """``Release``: free ``ip`` (a no-op for addresses outside the range or not taken)."""
        if self.contains(ip):
            self._bitmap.taken.discard(self._offset_of(ip))


class NodePortRange:
    """``--service-node-port-range``: node ports for NodePort and LoadBalancer Services."""

    def __init__(self, ports: str = DEFAULT_NODE_PORT_RANGE) -> None:
        low, _, high = ports.partition("-")
        self.base = int(low)
        last = int(high) if high else self.base
        if not 0 < self.base <= last <= 65535:
            raise ValueError(f"invalid port range {ports!r}")
        size = last - self.base + 1
        self.text = f"{self.base}-{last}"
        self._bitmap = _Bitmap(size, range_offset(size, step=32, maximum=128))

    def _offset_of(self, port: int) -> int:
        offset = port - self.base
        if not 0 <= offset < self._bitmap.size:
            raise AllocationError(
                f"provided port is not in the valid range. The range of valid ports is {self.text}"
            )
        return offset

    def allocated(self, port: int) -> bool:
        """Whether ``port`` is taken."""
        return 0 <= port - self.base < self._bitmap.size and (
            port - self.base in self._bitmap.taken
        )

    def allocate(self, port: int) -> None:
        """``Allocate``: take ``port`` or raise ``AllocationError``."""
        offset = self._offset_of(port)
        if offset in self._bitmap.taken:
            raise AllocationError("provided port is already allocated")
        self._bitmap.taken.add(offset)

    def allocate_next(self, rng: random.Random) -> int:
        """``AllocateNext``: a random free port (upper band first)."""
        offset = self._bitmap.next_free(rng)
        self._bitmap.taken.add(offset)
        return self.base + offset

    def release(self, port: int) -> None:
        """``Release``: free ``port`` (a no-op outside the range)."""
        if 0 <= port - self.base < self._bitmap.size:
            self._bitmap.taken.discard(port - self.base)
