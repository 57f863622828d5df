"""Scheduling framework types: status codes, cycle state, pod infos and plugin protocols.

Types only (as upstream ``staging/src/k8s.io/kube-scheduler/framework/interface.go``,
kept small): ``scheduler.runtime`` runs plugins, ``scheduler.scheduler`` drives a cycle.
Plugins return a ``Status`` (``None`` means success) and raise only on bugs; the
runtime turns an exception into ``Code.ERROR`` stamped with the plugin name.

Extension points, in cycle order::

    PreEnqueue -> (queue, ordered by QueueSort) -> PreFilter -> Filter -> [PostFilter]
        -> PreScore -> Score -> NormalizeScore -> Reserve -> Permit -> PreBind -> Bind

Filters read only the ``NodeInfo`` they are handed, so preemption can hand them a clone
with victims removed (upstream ``FilterPlugin`` contract).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Protocol

from kubeprio.api.core import Pod
from kubeprio.api.resources import CPU, MEMORY, ResourceAmounts, pod_requests

if TYPE_CHECKING:
    from kubeprio.scheduler.snapshot import NodeInfo


class Code(enum.IntEnum):
    """A plugin's verdict (upstream ``fwk.Code``)."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


@dataclasses.dataclass(frozen=True, slots=True)
class Status:
    """A non-success outcome with its reasons and the plugin that produced it."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def message(self) -> str:
        """Reasons joined as upstream ``Status.Message`` does (``", "``)."""
        return ", ".join(self.reasons)

    def is_rejected(self) -> bool:
        """Unschedulable, unresolvable or pending: the pod does not fit (not an error)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def with_plugin(self, plugin: str) -> Status:
        """This status attributed to ``plugin``."""
        return self if self.plugin == plugin else dataclasses.replace(self, plugin=plugin)


def unschedulable(*reasons: str) -> Status:
    """A ``Code.UNSCHEDULABLE`` status: preemption might help."""
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    """A ``Code.UNSCHEDULABLE_AND_UNRESOLVABLE`` status: preemption cannot help."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def error(*reasons: str) -> Status:
    """A ``Code.ERROR`` status."""
    return Status(Code.ERROR, reasons)


DEFAULT_MILLI_CPU_REQUEST: Final = 100
"""Upstream ``schedutil.DefaultMilliCPURequest``: cpu assumed, for scoring, per container without one."""
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
"""Upstream ``schedutil.DefaultMemoryRequest`` (200Mi)."""
NON_MISSING_DEFAULTS: Final = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}

SKIP: Final = Status(Code.SKIP)
"""PreFilter/PreScore result meaning "this plugin has nothing to do for this pod"."""


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, or 0 when unset."""
    spec = pod.spec
    return (spec.priority if spec is not None else None) or 0


@dataclasses.dataclass(frozen=True, slots=True)
class PodInfo:
    """A pod plus what the scheduler precomputes once about it."""

    pod: Pod
    key: str
    uid: str
    priority: int
    requests: ResourceAmounts
    non_zero_cpu: int
    non_zero_memory: int

    @classmethod
    def of(cls, pod: Pod) -> PodInfo:
        """Precompute the scheduling view of ``pod``."""
        metadata = pod.metadata
        spec = pod.spec
        requests = pod_requests(spec) if spec is not None else {}
        non_zero = pod_requests(spec, non_missing=NON_MISSING_DEFAULTS) if spec is not None else {}
        return cls(
            pod=pod,
            key=f"{metadata.namespace or ''}/{metadata.name or ''}",
            uid=metadata.uid or "",
            priority=pod_priority(pod),
            requests=requests,
            non_zero_cpu=non_zero.get(CPU, 0),
            non_zero_memory=non_zero.get(MEMORY, 0),
        )


@dataclasses.dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue (upstream ``QueuedPodInfo``).

    ``timestamp`` is when the pod was (last) added to the queue — refreshed every time it
    is put back after a failed attempt (semantics §3.2) — not its creation time.
    """

    pod_info: PodInfo
    timestamp: float
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    unschedulable_plugins: set[str] = dataclasses.field(default_factory=set)
    pending_plugins: set[str] = dataclasses.field(default_factory=set)
    gating_plugin: str = ""

    @property
    def pod(self) -> Pod:
        """The queued pod."""
        return self.pod_info.pod

    @property
    def priority(self) -> int:
        """The pod's priority (0 when unset)."""
        return self.pod_info.priority


class StateData(Protocol):
    """Per-cycle plugin data; cloned when preemption copies the cycle state."""

    def clone(self) -> StateData:
        """A copy safe to mutate independently."""
        ...


class CycleState:
    """Data plugins share within one scheduling cycle, keyed by plugin-owned names."""

    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, StateData] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def read(self, key: str) -> StateData | None:
        """Return the data stored under ``key``."""
        return self._data.get(key)

    def write(self, key: str, value: StateData) -> None:
        """Store ``value`` under ``key``."""
        self._data[key] = value

    def clone(self) -> CycleState:
        """A deep-enough copy: every ``StateData`` is cloned."""
        copy = CycleState()
        copy._data = {key: value.clone() for key, value in self._data.items()}
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        return copy


# --- plugin protocols -------------------------------------------------------------------------


class Plugin(Protocol):
    """Every plugin has an upstream name (``plugins.names``)."""

    @property
    def name(self) -> str:
        """The plugin's name."""
        ...


class PreEnqueuePlugin(Plugin, Protocol):
    """Gates a pod before it may enter activeQ."""

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """``None`` lets the pod in; a status keeps it in the unschedulable pool."""
        ...


class QueueSortPlugin(Plugin, Protocol):
    """Orders activeQ."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` should be popped before ``b``."""
        ...


class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state when pods are added or removed (preemption)."""

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Account for ``pod_to_add`` appearing on ``node``."""
        ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Account for ``pod_to_remove`` leaving ``node``."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Restricts the nodes worth filtering (``None`` node names: all nodes)."""

    node_names: frozenset[str] | None = None


class PreFilterPlugin(Plugin, Protocol):
    """Precomputes per-pod state; may return SKIP to skip its Filter."""

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Precompute; a rejection makes every node fail with this status."""
        ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """Add/remove-pod hooks, or None."""
        ...


class FilterPlugin(Plugin, Protocol):
    """Decides whether a pod fits one node; reads only the given NodeInfo."""

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """``None`` if the pod fits ``node``."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class NodeToStatus:
    """Filter outcomes of a cycle: rejected nodes and the status of nodes not listed."""

    statuses: dict[str, Status]
    absent: Status = dataclasses.field(
        default_factory=lambda: Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    )

    def get(self, node_name: str) -> Status:
        """The node's status (``absent`` for nodes that were not evaluated)."""
        return self.statuses.get(node_name, self.absent)


@dataclasses.dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What PostFilter (preemption) decided: the node to nominate (``""`` clears it)."""

    nominated_node_name: str | None


class PostFilterPlugin(Plugin, Protocol):
    """Runs when no node fits (DefaultPreemption)."""

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Try to make the pod schedulable (by preempting)."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class NodeScore:
    """A node's score from one plugin."""

    name: str
    score: int


MAX_NODE_SCORE: Final = 100
MIN_NODE_SCORE: Final = 0


class PreScorePlugin(Plugin, Protocol):
    """Precomputes scoring state for the feasible nodes; may return SKIP."""

    def pre_score(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Precompute."""
        ...


class ScorePlugin(Plugin, Protocol):
    """Scores feasible nodes (0..100 after normalisation)."""

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        """The raw score of ``node``."""
        ...

    def normalize_score(
        self, state: CycleState, pod: PodInfo, scores: list[NodeScore]
    ) -> Status | None:
        """Rescale ``scores`` in place (no-op for plugins without ScoreExtensions)."""
        ...


class ReservePlugin(Plugin, Protocol):
    """Reserves resources for an assumed pod; unreserve undoes it."""

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Reserve."""
        ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Undo ``reserve``."""
        ...


class PermitPlugin(Plugin, Protocol):
    """Approves, denies or delays binding."""

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """``None`` approves."""
        ...


class PreBindPlugin(Plugin, Protocol):
    """Runs before binding."""

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Prepare binding."""
        ...


class BindPlugin(Plugin, Protocol):
    """Binds the pod to the node (DefaultBinder: the pods/binding subresource)."""

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Bind; SKIP passes to the next binder."""
        ...


class Handle(Protocol):
    """What plugins (DefaultPreemption above all) may use of the running scheduler.

    Upstream ``framework.Handle``, trimmed to what kubeprio's plugins need. The node
    infos are the cycle's snapshot; filters run through the profile's runtime so that
    preemption's dry runs use exactly the filters scheduling uses.
    """

    def node_infos(self) -> Sequence[NodeInfo]:
        """Every node of the snapshot, in node order."""
        ...

    def node_info(self, name: str) -> NodeInfo | None:
        """One node of the snapshot."""
        ...

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """Pods nominated to ``node_name``."""
        ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status | None:
        """The profile's filters, with nominated pods (semantics §5)."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        """PreFilter extensions: a pod joined ``node``."""
        ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        """PreFilter extensions: a pod left ``node``."""
        ...
