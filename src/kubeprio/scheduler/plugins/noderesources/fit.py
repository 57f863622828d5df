"""NodeResourcesFit: does the node have room for the pod? (upstream ``noderesources/fit.go``).

* PreFilter computes the pod's effective requests (``api.resources.pod_requests``:
  containers summed, init containers maxed, sidecars accumulated, overhead added) into
  the cycle state under ``PreFilterNodeResourcesFit``.
* Filter compares them with the node's allocatable minus what its pods request, and
  reports every shortage, in upstream's order: ``Too many pods``, ``Insufficient cpu``,
  ``Insufficient memory``, ``Insufficient ephemeral-storage``, then
  ``Insufficient <extended resource>`` (sorted by name, where Go iterates a map in
  random order). A pod requesting nothing is checked only against the pod count; a
  resource the pod requests 0 of is never short (even on an over-committed node). The
  status is Unschedulable, or UnschedulableAndUnresolvable when some request exceeds
  the node's whole allocatable, since evicting pods cannot help then (upstream
  ``InsufficientResource.Unresolvable``).
* PreScore/Score: the configured strategy (``args.ScoringStrategy``) over the
  configured resources, with non-zero requests for cpu and memory.

Ignored resources (``ignoredResources``, ``ignoredResourceGroups``) only apply to
extended resources. Filter reads only the NodeInfo it is handed and allocates nothing
unless the pod does not fit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from kubeprio.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    is_extended_resource_name,
    is_scalar_resource_name,
)
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.noderesources import strategies
from kubeprio.scheduler.plugins.noderesources.args import (
    NodeResourcesFitArgs,
    ScoringStrategyType,
    validate_fit_args,
)
from kubeprio.scheduler.plugins.noderesources.resource_allocation import ResourceAllocationScorer
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "NodeResourcesFit"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
REASON_TOO_MANY_PODS: Final = "Too many pods"
REASON_INSUFFICIENT_CPU: Final = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"


@dataclasses.dataclass(frozen=True, slots=True)
class PodResourceRequest:
    """What the pod asks for, as Filter checks it (upstream ``preFilterState``)."""

    cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalars: tuple[tuple[str, int, str], ...] = ()
    """(name, amount, reason) of the non-zero scalar requests that are checked, by name."""
    empty: bool = True
    """Nothing requested at all: only the pod count is checked."""

    def clone(self) -> PodResourceRequest:
        return self  # immutable


@dataclasses.dataclass(frozen=True, slots=True)
class InsufficientResource:
    """One shortage (upstream ``InsufficientResource``)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


def compute_pod_resource_request(
    pod: framework.PodInfo,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> PodResourceRequest:
    """The pod's requests as Filter needs them (upstream ``computePodResourceRequest``)."""
    requests = pod.requests
    scalars = []
    has_scalar = False
    for name in sorted(requests):
        if name in (CPU, MEMORY, EPHEMERAL_STORAGE) or not is_scalar_resource_name(name):
            continue
        has_scalar = True
        amount = requests[name]
        if amount == 0:
            continue
        if is_extended_resource_name(name) and (
            name in ignored_resources or (ignored_groups and name.split("/")[0] in ignored_groups)
        ):
            continue
        scalars.append((name, amount, f"Insufficient {name}"))
    cpu = requests.get(CPU, 0)
    memory = requests.get(MEMORY, 0)
    ephemeral = requests.get(EPHEMERAL_STORAGE, 0)
    return PodResourceRequest(
        cpu=cpu,
        memory=memory,
        ephemeral_storage=ephemeral,
        scalars=tuple(scalars),
        empty=not (cpu or memory or ephemeral or has_scalar),
    )


def fits_request(request: PodResourceRequest, node: NodeInfo) -> list[InsufficientResource]:
    """Every shortage of ``node`` for ``request`` (upstream ``fitsRequest``), in order."""
    found: list[InsufficientResource] = []
    allowed = node.allowed_pod_number
    pod_count = len(node.pods)
    if pod_count + 1 > allowed:
        found.append(InsufficientResource("pods", REASON_TOO_MANY_PODS, 1, pod_count, allowed))
    if request.empty:
        return found
    allocatable = node.allocatable
    requested = node.requested
    for name, amount, reason in (
        (CPU, request.cpu, REASON_INSUFFICIENT_CPU),
        (MEMORY, request.memory, REASON_INSUFFICIENT_MEMORY),
        (EPHEMERAL_STORAGE, request.ephemeral_storage, REASON_INSUFFICIENT_EPHEMERAL_STORAGE),
        *request.scalars,
    ):
        if amount <= 0:
            continue
        capacity = allocatable.get(name, 0)
        used = requested.get(name, 0)
        if amount > capacity - used:
            found.append(
                InsufficientResource(name, reason, amount, used, capacity, amount > capacity)
            )
    return found


class Fit:
    """Filters nodes without room for the pod; scores by the configured strategy."""

    name: Final = NAME

    def __init__(self, args: NodeResourcesFitArgs | None = None) -> None:
        args = args or NodeResourcesFitArgs()
        validate_fit_args(args)
        self.args = args
        self._ignored = frozenset(args.ignored_resources)
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        strategy = args.scoring_strategy
        if strategy.type == ScoringStrategyType.MOST_ALLOCATED:
            scorer = strategies.most_allocated(strategy.resources)
        elif strategy.type == ScoringStrategyType.REQUESTED_TO_CAPACITY_RATIO:
            scorer = strategies.requested_to_capacity_ratio(strategy.resources, strategy.shape)
        else:
            scorer = strategies.least_allocated(strategy.resources)
        self.scorer = ResourceAllocationScorer(strategy.resources, scorer, use_requested=False)

    # --- filtering -------------------------------------------------------------------

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Write the pod's requests to the cycle state."""
        state.write(
            PRE_FILTER_STATE_KEY,
            compute_pod_resource_request(pod, self._ignored, self._ignored_groups),
        )
        return None, None

    def pre_filter_extensions(self) -> framework.PreFilterExtensions | None:
        """None: the state does not depend on other pods."""
        return None

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``Fit.Filter``: all shortages as reasons."""
        request = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(request, PodResourceRequest):
            return framework.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        # Fast path: the common "fits" answer without building the shortage list.
        if len(node.pods) + 1 <= node.allowed_pod_number and (
            request.empty or _fits_all(request, node)
        ):
            return None
        shortages = fits_request(request, node)
        if not shortages:
            return None
        code = framework.Code.UNSCHEDULABLE
        if any(shortage.unresolvable for shortage in shortages):
            code = framework.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return framework.Status(code, tuple(shortage.reason for shortage in shortages))

    # --- scoring ---------------------------------------------------------------------

    def pre_score(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> framework.Status | None:
        """Write the pod's per-resource requests for Score."""
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(tuple(self.scorer.pod_requests(pod))))
        return None

    def score(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> tuple[int, framework.Status | None]:
        """The strategy's score of ``node`` with the pod on it."""
        data = state.read(PRE_SCORE_STATE_KEY)
        pod_requests = (
            data.pod_requests
            if isinstance(data, _PreScoreState)
            else tuple(self.scorer.pod_requests(pod))
        )
        return self.scorer.score(node, pod_requests)

    def normalize_score(
        self, state: framework.CycleState, pod: framework.PodInfo, scores: list[framework.NodeScore]
    ) -> framework.Status | None:
        """No normalisation: the strategies already score 0..100."""
        return None


def _fits_all(request: PodResourceRequest, node: NodeInfo) -> bool:
    allocatable = node.allocatable
    requested = node.requested
    if request.cpu > 0 and request.cpu > allocatable.get(CPU, 0) - requested.get(CPU, 0):
        return False
    if request.memory > 0 and request.memory > allocatable.get(MEMORY, 0) - requested.get(
        MEMORY, 0
    ):
        return False
    if request.ephemeral_storage > 0 and request.ephemeral_storage > allocatable.get(
        EPHEMERAL_STORAGE, 0
    ) - requested.get(EPHEMERAL_STORAGE, 0):
        return False
    for name, amount, _reason in request.scalars:
        if amount > allocatable.get(name, 0) - requested.get(name, 0):
            return False
    return True
