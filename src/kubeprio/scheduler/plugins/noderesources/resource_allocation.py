"""The resource-allocation scorer shared by NodeResourcesFit and BalancedAllocation.

Mirrors upstream ``noderesources/resource_allocation.go``: for each configured resource
it takes the node's allocatable and its requested amount *including the incoming pod*,
and hands the two lists to a strategy (``strategies``). Two details decide exact
numbers:

* NodeResourcesFit scores cpu and memory with the *non-zero* requests (100m / 200Mi
  assumed per container that requests none), on the node and for the pod;
  BalancedAllocation (``use_requested``) uses the actual requests.
* An extended (scalar) resource the pod does not request is left out entirely, as is
  any resource the node has none of.

Pure computation over a NodeInfo; no cycle state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubeprio.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.noderesources.args import ResourceSpec
from kubeprio.scheduler.plugins.noderesources.strategies import Scorer
from kubeprio.scheduler.snapshot import NodeInfo

_RESOURCES_NOT_FOUND: Final = framework.error("resources not found")


class ResourceAllocationScorer:
    """Scores a node from its allocatable and requested amounts (upstream ``resourceAllocationScorer``)."""

    __slots__ = ("_kinds", "_names", "resources", "scorer", "use_requested")

    def __init__(
        self, resources: Sequence[ResourceSpec], scorer: Scorer, *, use_requested: bool
    ) -> None:
        self.resources = tuple(resources)
        self.scorer = scorer
        self.use_requested = use_requested
        self._names = tuple(spec.name for spec in self.resources)
        # How each resource is read off a node: 0 cpu, 1 memory, 2 ephemeral storage,
        # 3 scalar (extended, hugepages, ...), 4 not scorable.
        self._kinds = tuple(_kind(name) for name in self._names)

    def pod_requests(self, pod: framework.PodInfo) -> list[int]:
        """Upstream ``calculatePodResourceRequestList``: the pod's request per resource."""
        requests = pod.requests
        values = []
        for name, kind in zip(self._names, self._kinds, strict=True):
            if kind == 0 and not self.use_requested:
                values.append(pod.non_zero_cpu)
            elif kind == 1 and not self.use_requested:
                values.append(pod.non_zero_memory)
            else:
                values.append(requests.get(name, 0))
        return values

    def score(
        self, node: NodeInfo, pod_requests: Sequence[int]
    ) -> tuple[int, framework.Status | None]:
        """Upstream ``resourceAllocationScorer.score``."""
        if not self.resources:
            return 0, _RESOURCES_NOT_FOUND
        count = len(self.resources)
        requested = [0] * count
        allocatable = [0] * count
        node_allocatable = node.allocatable
        node_requested = node.requested
        for i, kind in enumerate(self._kinds):
            pod_request = pod_requests[i]
            if kind == 0:
                alloc = node_allocatable.get(CPU, 0)
                used = node_requested.get(CPU, 0) if self.use_requested else node.non_zero_cpu
            elif kind == 1:
                alloc = node_allocatable.get(MEMORY, 0)
                used = node_requested.get(MEMORY, 0) if self.use_requested else node.non_zero_memory
            elif kind == 2:
                alloc = node_allocatable.get(EPHEMERAL_STORAGE, 0)
                used = node_requested.get(EPHEMERAL_STORAGE, 0)
            elif kind == 3 and pod_request != 0:
                name = self._names[i]
                alloc = node_allocatable.get(name, 0)
                used = node_requested.get(name, 0)
            else:
                continue  # unrequested scalar or unknown resource: not scored
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = used + pod_request
        return self.scorer(requested, allocatable), None


def _kind(name: str) -> int:
    if name == CPU:
        return 0
    if name == MEMORY:
        return 1
    if name == EPHEMERAL_STORAGE:
        return 2
    return 3 if is_scalar_resource_name(name) else 4
