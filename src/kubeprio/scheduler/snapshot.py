"""NodeInfo: one node and the pods on it, with the aggregates filters need.

Mirrors upstream ``framework.NodeInfo``: requested resources (exact integers: cpu in
millicores), the non-zero requests used for scoring, used host ports and the pods with
(anti-)affinity. ``clone`` is cheap enough for preemption's dry runs: pod lists are
copied, pod infos shared (they are immutable).
"""

from __future__ import annotations

from collections.abc import Iterable

from kubeprio.api.core import Node
from kubeprio.api.resources import PODS, ResourceAmounts, amounts
from kubeprio.scheduler.framework import PodInfo

HostPort = tuple[str, str, int]
"""(host IP, protocol, port) as NodePorts compares them."""


def host_ports(pod: PodInfo) -> list[HostPort]:
    """The host ports a pod's containers ask for."""
    ports: list[HostPort] = []
    spec = pod.pod.spec
    for container in (spec.containers or ()) if spec else ():
        for port in container.ports or ():
            if port.host_port:
                ports.append((port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port))
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
        self.non_zero_cpu += pod.non_zero_cpu
        self.non_zero_memory += pod.non_zero_memory
        for port in host_ports(pod):
            self.used_ports[port] = self.used_ports.get(port, 0) + 1
        if has_affinity(pod):
            self.pods_with_affinity.append(pod)
        if has_required_anti_affinity(pod):
            self.pods_with_required_anti_affinity.append(pod)
        self.generation += 1

    def remove_pod(self, pod: PodInfo) -> bool:
        """Forget a pod (matched by uid, then key); False if it was not here."""
        index = self._index_of(pod)
        if index < 0:
            return False
        stored = self.pods.pop(index)
        requested = self.requested
        for name, value in stored.requests.items():
            requested[name] = requested.get(name, 0) - value
        self.non_zero_cpu -= stored.non_zero_cpu
        self.non_zero_memory -= stored.non_zero_memory
        for port in host_ports(stored):
            count = self.used_ports.get(port, 0) - 1
            if count > 0:
                self.used_ports[port] = count
            else:
                self.used_ports.pop(port, None)
        for group in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for i, candidate in enumerate(group):
                if candidate is stored:
                    del group[i]
                    break
        self.generation += 1
        return True

    def _index_of(self, pod: PodInfo) -> int:
        for i, candidate in enumerate(self.pods):
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
        copy.generation = self.generation
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, requested={self.requested})"
