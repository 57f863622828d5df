"""NodeInfo: one node and the pods on it, with the aggregates filters need.

Mirrors upstream ``framework.NodeInfo``: requested resources (exact integers: cpu in
millicores), the non-zero requests used for scoring, used host ports and the pods with
(anti-)affinity. ``clone`` is cheap enough for preemption's dry runs: pod lists are
copied, pod infos shared (they are immutable).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Protocol

from kubeprio import counts
from kubeprio.api.attachablevolumes import VolumeRef
from kubeprio.api.core import Node
from kubeprio.api.resources import CONTAINER_RESTART_POLICY_ALWAYS, PODS, ResourceAmounts, amounts
from kubeprio.scheduler import framework
from kubeprio.scheduler.framework import PodInfo

DEFAULT_MILLI_CPU_REQUEST: Final = framework.DEFAULT_MILLI_CPU_REQUEST
"""Upstream ``schedutil.DefaultMilliCPURequest``: cpu assumed for scoring a container without one."""
DEFAULT_MEMORY_REQUEST: Final = framework.DEFAULT_MEMORY_REQUEST
"""Upstream ``schedutil.DefaultMemoryRequest`` (200Mi)."""

HostPort = tuple[str, str, int]
"""(host IP, protocol, port) as NodePorts compares them."""

DEFAULT_BIND_ALL_HOST_IP: Final = "0.0.0.0"
"""Upstream ``DefaultBindAllHostIP``: a host port without a host IP binds every address."""


def non_zero_requests(pod: PodInfo) -> tuple[int, int]:
    """(milli-cpu, memory) with upstream's per-container defaults (computed in ``PodInfo``)."""
    return pod.non_zero_cpu, pod.non_zero_memory


def host_ports(pod: PodInfo) -> list[HostPort]:
    """The host ports a pod uses (upstream ``schedutil.GetHostPorts``).

    Sidecars (init containers with ``restartPolicy: Always``) run for the pod's whole
    life, so their ports count too; plain init containers' ports do not.
    """
    ports: list[HostPort] = []
    spec = pod.pod.spec
    if spec is None:
        return ports
    containers = [
        c for c in spec.init_containers or () if c.restart_policy == CONTAINER_RESTART_POLICY_ALWAYS
    ]
    containers.extend(spec.containers or ())
    for container in containers:
        for port in container.ports or ():
            if port.host_port and port.host_port > 0:
                ports.append(
                    (
                        port.host_ip or DEFAULT_BIND_ALL_HOST_IP,
                        port.protocol or "TCP",
                        port.host_port,
                    )
                )
    return ports


def has_affinity(pod: PodInfo) -> bool:
    """Whether the pod has any inter-pod affinity or anti-affinity."""
    affinity = pod.pod.spec.affinity if pod.pod.spec else None
    return affinity is not None and (
        affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
    )


def has_required_anti_affinity(pod: PodInfo) -> bool:
    """Whether the pod has required inter-pod anti-affinity terms."""
    affinity = pod.pod.spec.affinity if pod.pod.spec else None
    anti = affinity.pod_anti_affinity if affinity else None
    return anti is not None and bool(anti.required_during_scheduling_ignored_during_execution)


def _remove_identical(group: list[PodInfo], stored: PodInfo) -> bool:
    """Swap-remove ``stored`` (the very object) from ``group``; whether it was there."""
    for i, candidate in enumerate(group):
        if candidate is stored:
            _swap_remove(group, i)
            return True
    return False


def _swap_remove(pods: list[PodInfo], index: int) -> PodInfo:
    """Remove ``pods[index]`` by moving the last pod into its place; return the removed."""
    removed = pods[index]
    last = pods.pop()
    if index < len(pods):
        pods[index] = last
    return removed


class NodeInfo:
    """A node with its pods and their aggregate requests."""

    __slots__ = (
        "allocatable",
        "generation",
        "name",
        "node",
        "non_zero_cpu",
        "non_zero_memory",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
        "volume_refs",
    )

    def __init__(self, node: Node | None = None, pods: Iterable[PodInfo] = ()) -> None:
        self.node: Node | None = None
        self.name = ""
        self.allocatable: ResourceAmounts = {}
        self.pods: list[PodInfo] = []
        self.requested: ResourceAmounts = {}
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.used_ports: dict[HostPort, int] = {}
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.volume_refs: dict[VolumeRef, int] = {}
        """Each attachable volume reference of the node's pods (claims, ephemeral claims,
        translated inline volumes) -> how many pods hold it: NodeVolumeLimits resolves
        these instead of walking the pods."""
        self.generation = 0
        if node is not None:
            self.set_node(node)
        for pod in pods:
            self.add_pod(pod)

    def set_node(self, node: Node) -> None:
        """Attach (or refresh) the Node object and its allocatable resources."""
        self.node = node
        self.name = node.metadata.name or ""
        status = node.status
        self.allocatable = amounts(status.allocatable if status else None)
        self.generation += 1

    @property
    def allowed_pod_number(self) -> int:
        """Allocatable ``pods``."""
        return self.allocatable.get(PODS, 0)

    def add_pod(self, pod: PodInfo) -> None:
        """Account for a pod on this node."""
        self.pods.append(pod)
        requested = self.requested
        for name, value in pod.requests.items():
            requested[name] = requested.get(name, 0) + value
        cpu, memory = non_zero_requests(pod)
        self.non_zero_cpu += cpu
        self.non_zero_memory += memory
        for port in host_ports(pod):
            self.used_ports[port] = self.used_ports.get(port, 0) + 1
        if has_affinity(pod):
            self.pods_with_affinity.append(pod)
        if has_required_anti_affinity(pod):
            self.pods_with_required_anti_affinity.append(pod)
        if pod.volume_refs:
            refs = self.volume_refs
            for ref in pod.volume_refs:
                refs[ref] = refs.get(ref, 0) + 1
        self.generation += 1

    def remove_pod(self, pod: PodInfo) -> PodInfo | None:
        """Forget a pod (matched by uid, then key); return the stored one, None if it was
        not here.

        As upstream's ``removeFromSlice``, the node's last pod moves into the hole: the
        order of ``pods`` decides ties between equal victims, so it must be upstream's.
        """
        index = self._index_of(pod)
        if index < 0:
            return None
        stored = _swap_remove(self.pods, index)
        requested = self.requested
        for name, value in stored.requests.items():
            requested[name] = requested.get(name, 0) - value
        cpu, memory = non_zero_requests(stored)
        self.non_zero_cpu -= cpu
        self.non_zero_memory -= memory
        for port in host_ports(stored):
            counts.adjust(self.used_ports, port, -1)
        for group in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            _remove_identical(group, stored)
        for ref in stored.volume_refs:
            counts.adjust(self.volume_refs, ref, -1)
        self.generation += 1
        return stored

    def move_to_end(self, old: PodInfo, new: PodInfo) -> PodInfo | None:
        """Upstream ``updatePod`` (remove, then add) for a pod whose new object counts
        exactly as the old one: ``new`` goes last and the last pod takes ``old``'s place;
        the sums stay. Returns the pod that moved into the hole (None if ``old`` was last).
        """
        index = self._index_of(old)
        if index < 0:
            return None
        pods = self.pods
        stored = _swap_remove(pods, index)
        moved = pods[index] if index < len(pods) else None
        pods.append(new)
        for group in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if _remove_identical(group, stored):
                group.append(new)
        self.generation += 1
        return moved

    def _index_of(self, pod: PodInfo) -> int:
        pods = self.pods
        if pods and pods[-1] is pod:
            # The common case, without a scan: the pod added last (an assumed pod whose
            # binding is being confirmed).
            return len(pods) - 1
        for i, candidate in enumerate(pods):
            if (pod.uid and candidate.uid == pod.uid) or (not pod.uid and candidate.key == pod.key):
                return i
        return -1

    def clone(self) -> NodeInfo:
        """A copy whose pod lists and aggregates can change independently."""
        copy = NodeInfo.__new__(NodeInfo)
        copy.node = self.node
        copy.name = self.name
        copy.allocatable = self.allocatable
        copy.pods = list(self.pods)
        copy.requested = dict(self.requested)
        copy.non_zero_cpu = self.non_zero_cpu
        copy.non_zero_memory = self.non_zero_memory
        copy.used_ports = dict(self.used_ports)
        copy.pods_with_affinity = list(self.pods_with_affinity)
        copy.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        copy.volume_refs = dict(self.volume_refs) if self.volume_refs else {}
        copy.generation = self.generation
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, requested={self.requested})"


class SharedLister(Protocol):
    """The node infos of the cycle's snapshot (upstream ``framework.NodeInfoLister``).

    Plugins that look beyond the node they filter or score (PodTopologySpread,
    InterPodAffinity) read the whole cluster through this; the scheduler hands every
    plugin one that always answers for the current cycle.
    """

    def node_infos(self) -> Sequence[NodeInfo]:
        """Every node, in snapshot order."""
        ...

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        """The nodes hosting at least one pod with inter-pod (anti-)affinity."""
        ...

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        """The nodes hosting at least one pod with required anti-affinity."""
        ...


class NodeInfoList:
    """A :class:`SharedLister` over a fixed list of node infos (tests, simple drivers)."""

    __slots__ = ("_nodes",)

    def __init__(self, nodes: Iterable[NodeInfo]) -> None:
        self._nodes = list(nodes)

    def node_infos(self) -> Sequence[NodeInfo]:
        """The nodes, in the order given."""
        return self._nodes

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]:
        """The nodes with pods that have (anti-)affinity, computed on each call."""
        return [node for node in self._nodes if node.pods_with_affinity]

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]:
        """The nodes with pods that have required anti-affinity, computed on each call."""
        return [node for node in self._nodes if node.pods_with_required_anti_affinity]
