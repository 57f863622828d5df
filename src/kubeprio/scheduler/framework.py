"""Scheduling framework types: status codes, cycle state, pod infos and plugin protocols.

Types only (as upstream ``staging/src/k8s.io/kube-scheduler/framework/interface.go``,
kept small): ``scheduler.runtime`` runs plugins, ``scheduler.schedulingcycle`` runs a cycle.
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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, Protocol

from kubeprio.api import selectors
from kubeprio.api.attachablevolumes import VolumeRef, pod_volume_refs
from kubeprio.api.core import Pod, PodAffinityTerm, PodSpec, WeightedPodAffinityTerm
from kubeprio.api.model import evolve
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
        return self if self.plugin == plugin else evolve(self, plugin=plugin)


def unschedulable(*reasons: str) -> Status:
    """A ``Code.UNSCHEDULABLE`` status: preemption might help."""
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    """A ``Code.UNSCHEDULABLE_AND_UNRESOLVABLE`` status: preemption cannot help."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def error(*reasons: str) -> Status:
    """A ``Code.ERROR`` status."""
    return Status(Code.ERROR, reasons)


SKIP: Final = Status(Code.SKIP)
"""PreFilter/PreScore result meaning "this plugin has nothing to do for this pod"."""


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, or 0 when unset."""
    spec = pod.spec
    return (spec.priority if spec is not None else None) or 0


DEFAULT_MILLI_CPU_REQUEST: Final = 100
"""Upstream ``schedutil.DefaultMilliCPURequest``: cpu assumed, for scoring, per container without one."""
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
"""Upstream ``schedutil.DefaultMemoryRequest`` (200Mi), likewise."""
_NON_MISSING: Final = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}


@dataclasses.dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A parsed pod (anti-)affinity term (upstream ``fwk.AffinityTerm``).

    ``namespaces`` defaults to the owning pod's namespace when the term names neither
    namespaces nor a namespace selector; a nil namespace selector matches nothing, an
    empty one every namespace.
    """

    namespaces: frozenset[str]
    selector: selectors.Selector
    topology_key: str
    namespace_selector: selectors.Selector

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str] | None) -> bool:
        """Whether ``pod`` (whose namespace has ``namespace_labels``) is selected."""
        metadata = pod.metadata
        if (metadata.namespace or "") in self.namespaces or self.namespace_selector.matches(
            namespace_labels or _NO_LABELS
        ):
            return self.selector.matches(metadata.labels or _NO_LABELS)
        return False


@dataclasses.dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    """A preferred term and its weight (upstream ``fwk.WeightedAffinityTerm``)."""

    term: AffinityTerm
    weight: int


@dataclasses.dataclass(frozen=True, slots=True)
class PodAffinityTerms:
    """A pod's parsed inter-pod affinity, as upstream ``PodInfo`` keeps it.

    A list whose terms fail to parse is empty and its error is in ``errors``
    (upstream ``PodInfo.Update`` aggregates them; the scheduler rejects such an
    incoming pod in InterPodAffinity's PreFilter and ignores the error for existing pods).
    """

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def error(self) -> str:
        """The errors as upstream's aggregate prints them (``""`` when none)."""
        if len(self.errors) <= 1:
            return "".join(self.errors)
        return "[" + ", ".join(self.errors) + "]"


NO_AFFINITY_TERMS: Final = PodAffinityTerms()
_NO_LABELS: Final[Mapping[str, str]] = {}


def _affinity_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    """Upstream ``newAffinityTerm``; raises ``SelectorError`` for a bad selector."""
    selector = selectors.label_selector_as_selector(term.label_selector)
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.metadata.namespace or "",))
    else:
        namespaces = frozenset(term.namespaces or ())
    namespace_selector = selectors.label_selector_as_selector(term.namespace_selector)
    return AffinityTerm(namespaces, selector, term.topology_key or "", namespace_selector)


def _affinity_terms(
    pod: Pod, terms: Sequence[PodAffinityTerm] | None, what: str, errors: list[str]
) -> tuple[AffinityTerm, ...]:
    """Upstream ``GetAffinityTerms``: all terms, or none if any fails to parse."""
    try:
        return tuple(_affinity_term(pod, term) for term in terms or ())
    except selectors.SelectorError as exc:
        errors.append(f"{what}: {exc}")
        return ()


def _weighted_terms(
    pod: Pod, terms: Sequence[WeightedPodAffinityTerm] | None, what: str, errors: list[str]
) -> tuple[WeightedAffinityTerm, ...]:
    """Upstream ``getWeightedAffinityTerms``: all terms, or none if any fails to parse."""
    try:
        return tuple(
            WeightedAffinityTerm(
                _affinity_term(pod, term.pod_affinity_term or PodAffinityTerm()),
                term.weight or 0,
            )
            for term in terms or ()
        )
    except selectors.SelectorError as exc:
        errors.append(f"{what}: {exc}")
        return ()


def pod_affinity_terms(pod: Pod) -> PodAffinityTerms | None:
    """Parse ``spec.affinity.podAffinity``/``podAntiAffinity`` (None when the pod has neither)."""
    affinity = pod.spec.affinity if pod.spec is not None else None
    if affinity is None or (affinity.pod_affinity is None and affinity.pod_anti_affinity is None):
        return None
    pod_affinity = affinity.pod_affinity
    anti = affinity.pod_anti_affinity
    errors: list[str] = []
    terms = PodAffinityTerms(
        required_affinity=_affinity_terms(
            pod,
            pod_affinity.required_during_scheduling_ignored_during_execution
            if pod_affinity
            else None,
            "requiredAffinityTerms",
            errors,
        ),
        required_anti_affinity=_affinity_terms(
            pod,
            anti.required_during_scheduling_ignored_during_execution if anti else None,
            "requiredAntiAffinityTerms",
            errors,
        ),
        preferred_affinity=_weighted_terms(
            pod,
            pod_affinity.preferred_during_scheduling_ignored_during_execution
            if pod_affinity
            else None,
            "preferredAffinityTerms",
            errors,
        ),
        preferred_anti_affinity=_weighted_terms(
            pod,
            anti.preferred_during_scheduling_ignored_during_execution if anti else None,
            "preferredAntiAffinityTerms",
            errors,
        ),
    )
    return evolve(terms, errors=tuple(errors)) if errors else terms


def _requests_cpu_and_memory(spec: PodSpec) -> bool:
    """Whether every container names both a cpu and a memory request (no defaults apply)."""
    for containers in (spec.containers, spec.init_containers):
        for container in containers or ():
            resources = container.resources
            requests = resources.requests if resources is not None else None
            if not requests or CPU not in requests or MEMORY not in requests:
                return False
    return True


@dataclasses.dataclass(frozen=True, slots=True)
class PodInfo:
    """A pod plus what the scheduler precomputes once about it.

    ``non_zero_cpu``/``non_zero_memory`` are the requests with upstream's defaults
    (100m, 200Mi) for every container that requests none (upstream ``NonZeroRequested``,
    used for scoring). ``affinity`` holds the parsed inter-pod affinity terms, or None.
    """

    pod: Pod
    key: str
    uid: str
    priority: int
    requests: ResourceAmounts
    non_zero_cpu: int = 0
    non_zero_memory: int = 0
    affinity: PodAffinityTerms | None = None
    volume_refs: tuple[VolumeRef, ...] = ()
    """The pod's volumes that NodeVolumeLimits may count (``api.attachablevolumes``);
    empty for the pods without volumes, which the cache then skips at no cost."""

    @classmethod
    def of(cls, pod: Pod) -> PodInfo:
        """Precompute the scheduling view of ``pod``."""
        metadata = pod.metadata
        spec = pod.spec
        requests = pod_requests(spec) if spec is not None else {}
        non_zero = requests
        if spec is not None and not _requests_cpu_and_memory(spec):
            non_zero = pod_requests(spec, _NON_MISSING)
        return cls(
            pod=pod,
            key=f"{metadata.namespace or ''}/{metadata.name or ''}",
            uid=metadata.uid or "",
            priority=pod_priority(pod),
            requests=requests,
            non_zero_cpu=non_zero.get(CPU, 0),
            non_zero_memory=non_zero.get(MEMORY, 0),
            affinity=pod_affinity_terms(pod),
            volume_refs=pod_volume_refs(pod),
        )

    def updated(self, pod: Pod) -> PodInfo:
        """The view of a newer object of the same pod.

        A status or metadata write keeps the stored spec object (the API service never
        rebuilds it), and every precomputed part depends only on the spec and the pod's
        identity, so those are kept; anything else is computed afresh (``of``).
        """
        old = self.pod
        if (
            pod.spec is not old.spec
            or pod.metadata.uid != old.metadata.uid
            or pod.metadata.name != old.metadata.name
            or pod.metadata.namespace != old.metadata.namespace
        ):
            return PodInfo.of(pod)
        return evolve(self, pod=pod)

    @property
    def affinity_terms(self) -> PodAffinityTerms:
        """The parsed affinity terms (empty ones when the pod has none)."""
        return self.affinity or NO_AFFINITY_TERMS


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


class SignedPodUpdateExtensions:
    """PreFilter extensions whose AddPod and RemovePod are one update counted +1 or -1.

    InterPodAffinity and PodTopologySpread keep per-topology counts; adding a pod and
    removing it differ only in the sign, so both hooks route to ``update_with_pod``.
    """

    __slots__ = ()

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod keep the counts right while preemption moves pods."""
        return self

    def add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Upstream ``AddPod``."""
        return self.update_with_pod(state, pod, pod_to_add, node, 1)

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Upstream ``RemovePod``."""
        return self.update_with_pod(state, pod, pod_to_remove, node, -1)

    def update_with_pod(
        self, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int
    ) -> Status | None:
        """Count ``other`` on ``node`` with weight ``delta`` (+1 added, -1 removed)."""
        raise NotImplementedError


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
    """Filter outcomes of a cycle: rejected nodes and the status of nodes not listed.

    ``statuses`` is read-only once built; the fast path passes a ``rowstatus.RowStatuses``.
    """

    statuses: Mapping[str, Status]
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
