"""The unschedulable pool: pods rejected by plugins (or gated) waiting for a cluster event.

Upstream ``unschedulablePods`` is a plain map that every cluster event scans in full.
``UnschedulablePods`` keeps the same map (insertion-ordered, which also fixes the order in
which an event moves pods, where upstream's Go map order is random) plus indexes so that
``scheduler.queue`` only looks at pods an event can concern:

* by rejector plugin (``unschedulable_plugins`` + ``pending_plugins``; ``""`` for none):
  an event is only worth evaluating for pods rejected by a plugin registered for it;
* pods with required pod-affinity terms, and the parsed terms (upstream
  ``PodInfo.RequiredAffinityTerms``), for ``AssignedPodAdded``'s cross-topology filter;
* min-heaps of the timestamps of non-gated and of gated pods, for the 5-minute leftover
  flush and its wake-up;
* the keys of gated pods, so ``scheduler_pending_pods{queue="gated"}`` is a length.

Only ``scheduler.queue`` drives it. No clock, no I/O.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping

from kubeprio.api.core import Pod, PodAffinityTerm
from kubeprio.api.meta import LabelSelectorRequirement
from kubeprio.api.selectors import (
    NOTHING,
    LabelSelector,
    Nothing,
    SelectorError,
    label_selector_as_selector,
    label_selector_from_match,
)
from kubeprio.scheduler.framework import QueuedPodInfo
from kubeprio.scheduler.plugins import names

NamespaceLabels = Callable[[str], Mapping[str, str] | None]
"""Namespace name -> its labels (``None``: unknown namespace)."""

_NO_REJECTOR = ""


@dataclasses.dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A parsed required pod-affinity term (upstream ``framework.AffinityTerm``)."""

    namespaces: frozenset[str]
    namespace_selector: LabelSelector | Nothing
    selector: LabelSelector | Nothing

    def matches(self, pod: Pod, namespace_labels: NamespaceLabels | None) -> bool:
        """Upstream ``AffinityTerm.Matches``: namespace in scope and labels selected.

        Without a namespace-label source a non-nil namespace selector is taken to match
        (a spurious retry is harmless; a missed one would strand the pod).
        """
        namespace = pod.metadata.namespace or ""
        in_scope = namespace in self.namespaces
        if not in_scope and self.namespace_selector is not NOTHING:
            if namespace_labels is None:
                in_scope = True
            else:
                in_scope = self.namespace_selector.matches(namespace_labels(namespace) or {})
        return in_scope and self.selector.matches(pod.metadata.labels or {})


def _parse_term(owner: Pod, term: PodAffinityTerm) -> AffinityTerm | None:
    namespaces = frozenset(term.namespaces or ())
    if not namespaces and term.namespace_selector is None:
        namespaces = frozenset((owner.metadata.namespace or "",))
    try:
        selector = _term_selector(owner, term)
        namespace_selector = label_selector_as_selector(term.namespace_selector)
    except SelectorError:
        return None  # upstream ignores terms the API server let through unvalidated
    return AffinityTerm(namespaces, namespace_selector, selector)


def _term_selector(owner: Pod, term: PodAffinityTerm) -> LabelSelector | Nothing:
    base = term.label_selector
    if base is None:
        return NOTHING
    labels = owner.metadata.labels or {}
    extra: list[LabelSelectorRequirement] = []
    # matchLabelKeys / mismatchLabelKeys merge the owner's label values into the selector.
    for key in term.match_label_keys or ():
        if key in labels:
            extra.append(LabelSelectorRequirement(key=key, operator="In", values=(labels[key],)))
    for key in term.mismatch_label_keys or ():
        if key in labels:
            extra.append(LabelSelectorRequirement(key=key, operator="NotIn", values=(labels[key],)))
    if not extra:
        return label_selector_as_selector(base)
    expressions = [
        (req.key or "", req.operator or "", req.values)
        for req in (*(base.match_expressions or ()), *extra)
    ]
    return label_selector_from_match(base.match_labels or {}, expressions)


def required_affinity_terms(pod: Pod) -> tuple[AffinityTerm, ...]:
    """The pod's parsed required pod-affinity terms (anti-affinity excluded, as upstream)."""
    affinity = pod.spec.affinity if pod.spec else None
    pod_affinity = affinity.pod_affinity if affinity else None
    terms = (
        pod_affinity.required_during_scheduling_ignored_during_execution if pod_affinity else None
    )
    parsed = (_parse_term(pod, term) for term in terms or ())
    return tuple(term for term in parsed if term is not None)


class UnschedulablePods:
    """Pods waiting for an event, keyed ``namespace/name``, with the indexes described above."""

    __slots__ = (
        "_affinity",
        "_by_plugin",
        "_gated",
        "_gated_timestamps",
        "_indexed",
        "_next_seq",
        "_pods",
        "_seq",
        "_timestamps",
    )

    def __init__(self) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self._seq: dict[str, int] = {}
        self._next_seq = 0
        self._by_plugin: dict[str, dict[str, None]] = {}
        self._indexed: dict[str, tuple[str, ...]] = {}
        self._affinity: dict[str, tuple[AffinityTerm, ...]] = {}
        self._timestamps: list[tuple[float, str]] = []
        self._gated_timestamps: list[tuple[float, str]] = []
        self._gated: set[str] = set()

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, key: object) -> bool:
        return key in self._pods

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        """A snapshot of the pods, in the order they entered the pool."""
        return iter(list(self._pods.values()))

    @property
    def gated_count(self) -> int:
        """How many of the pods a PreEnqueue plugin holds back (upstream: `Gated`)."""
        return len(self._gated)

    def get(self, key: str) -> QueuedPodInfo | None:
        """The pod stored under ``key``."""
        return self._pods.get(key)

    def add_or_update(self, qpi: QueuedPodInfo) -> None:
        """Store ``qpi`` (keeping its place if already present) and refresh its indexes."""
        key = qpi.pod_info.key
        if key not in self._seq:
            self._next_seq += 1
            self._seq[key] = self._next_seq
        self._pods[key] = qpi
        self._unindex(key)
        plugins = tuple(qpi.unschedulable_plugins | qpi.pending_plugins) or (_NO_REJECTOR,)
        self._indexed[key] = plugins
        for plugin in plugins:
            self._by_plugin.setdefault(plugin, {})[key] = None
        terms = required_affinity_terms(qpi.pod)
        if terms:
            self._affinity[key] = terms
        gated = bool(qpi.gating_plugin)
        if gated:
            self._gated.add(key)
        else:
            self._gated.discard(key)
        heap = self._gated_timestamps if gated else self._timestamps
        heapq.heappush(heap, (qpi.timestamp, key))
        if len(heap) > 2 * len(self._pods) + 64:
            heap[:] = [
                (pod.timestamp, k)
                for k, pod in self._pods.items()
                if bool(pod.gating_plugin) == gated
            ]
            heapq.heapify(heap)

    def delete(self, key: str) -> QueuedPodInfo | None:
        """Remove and return the pod under ``key``."""
        qpi = self._pods.pop(key, None)
        if qpi is not None:
            del self._seq[key]
            self._gated.discard(key)
            self._unindex(key)
            if not self._pods:
                self._timestamps.clear()
                self._gated_timestamps.clear()
        return qpi

    def _unindex(self, key: str) -> None:
        for plugin in self._indexed.pop(key, ()):
            bucket = self._by_plugin[plugin]
            del bucket[key]
            if not bucket:
                del self._by_plugin[plugin]
        self._affinity.pop(key, None)

    def _ordered(self, keys: dict[str, None]) -> list[QueuedPodInfo]:
        if len(keys) == len(self._pods):
            return list(self._pods.values())
        return [self._pods[key] for key in sorted(keys, key=self._seq.__getitem__)]

    def rejected_by(self, plugins: Iterable[str]) -> list[QueuedPodInfo]:
        """Pods rejected by any of ``plugins`` or by none, in pool order."""
        keys: dict[str, None] = dict(self._by_plugin.get(_NO_REJECTOR, {}))
        for plugin in plugins:
            bucket = self._by_plugin.get(plugin)
            if bucket:
                keys.update(bucket)
        return self._ordered(keys) if keys else []

    def with_cross_topology_term(
        self, pod: Pod, namespace_labels: NamespaceLabels | None
    ) -> list[QueuedPodInfo]:
        """Upstream ``getUnschedulablePodsWithCrossTopologyTerm``, in pool order.

        Pods rejected by PodTopologySpread in ``pod``'s namespace, and pods with a required
        affinity term that ``pod`` matches.
        """
        namespace = pod.metadata.namespace or ""
        keys: dict[str, None] = {}
        for key in self._by_plugin.get(names.POD_TOPOLOGY_SPREAD, {}):
            if (self._pods[key].pod.metadata.namespace or "") == namespace:
                keys[key] = None
        for key, terms in self._affinity.items():
            if key not in keys and any(term.matches(pod, namespace_labels) for term in terms):
                keys[key] = None
        return self._ordered(keys) if keys else []

    def earliest_timestamp(self, *, gated: bool = False) -> float | None:
        """The oldest queue timestamp among non-gated pods (for the leftover flush's
        wake-up), or with ``gated`` among gated ones."""
        heap = self._gated_timestamps if gated else self._timestamps
        while heap:
            timestamp, key = heap[0]
            qpi = self._pods.get(key)
            if qpi is not None and bool(qpi.gating_plugin) == gated and qpi.timestamp == timestamp:
                return timestamp
            heapq.heappop(heap)
        return None
