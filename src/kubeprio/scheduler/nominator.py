"""Which pods are nominated to which node (upstream ``pkg/scheduler/backend/queue/nominator.go``).

A preemptor that evicted victims is *nominated* to their node: until it is bound, pods of
lower or equal priority must treat the room as taken (semantics §5). The nominator holds
two maps, node name -> pods (in nomination order) and pod UID -> node name, and follows
the rules of semantics §3.6:

* adding first drops any existing entry of the pod; the node comes from the
  ``NominatingInfo`` (mode *override*) or from the pod's ``status.nominatedNodeName``
  (mode *noop*, also when no info is given); an empty node name just clears;
* nothing is recorded for a pod the informer cache no longer has or that is already bound
  (``spec.nodeName`` set) — checked only when a pod lister is wired in, as upstream;
* on an update where neither the old nor the new object carries a nominated node but the
  nominator remembers one, the remembered nomination is kept (the preemption may have
  nominated the pod before its status patch arrives);
* deleting or binding the pod removes its nomination.

``SchedulingQueue`` owns one and resolves each nomination to the freshest ``PodInfo`` it
holds; the nominator itself remembers the ``PodInfo`` it was last given, which the queue
falls back to (upstream falls back to a bare name/UID stub). No clock, no I/O.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Protocol

from kubeprio.api.core import Pod
from kubeprio.client.informer import Lister
from kubeprio.scheduler.framework import PodInfo


class NominatingMode(enum.Enum):
    """Whether a nomination comes from the caller or from the pod's status (upstream ``fwk.NominatingMode``)."""

    NOOP = 0
    OVERRIDE = 1


@dataclasses.dataclass(frozen=True, slots=True)
class NominatingInfo:
    """The node to nominate (upstream ``fwk.NominatingInfo``); ``""`` with OVERRIDE clears."""

    nominated_node_name: str
    mode: NominatingMode = NominatingMode.OVERRIDE


def nominated_node_name(pod: Pod) -> str:
    """The pod's ``status.nominatedNodeName`` (``""`` when unset)."""
    status = pod.status
    return (status.nominated_node_name if status is not None else None) or ""


class NominationObserver(Protocol):
    """Told of every nomination change (the fast path keeps nominated requests as columns)."""

    def nominated(self, pod: PodInfo, node_name: str) -> None:
        """``pod`` is now nominated to ``node_name``."""
        ...

    def unnominated(self, uid: str) -> None:
        """The pod with ``uid`` is no longer nominated."""
        ...


class Nominator:
    """Node -> nominated pods and UID -> node (upstream ``nominator``)."""

    __slots__ = ("_by_node", "_node_of", "_pod_lister", "observer")

    def __init__(self, pod_lister: Lister[Pod] | None = None) -> None:
        self._pod_lister = pod_lister
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}
        self.observer: NominationObserver | None = None

    def __len__(self) -> int:
        return len(self._node_of)

    def add_nominated_pod(self, pod_info: PodInfo, info: NominatingInfo | None = None) -> None:
        """Record ``pod_info``'s nomination (upstream ``addNominatedPodUnlocked``)."""
        self._delete(pod_info.uid)
        if info is not None and info.mode is NominatingMode.OVERRIDE:
            node = info.nominated_node_name
        else:
            node = nominated_node_name(pod_info.pod)
        if not node:
            return
        if not self._still_pending(pod_info.pod):
            return  # deleted, or already bound: nothing left to reserve room for
        self._node_of[pod_info.uid] = node
        self._by_node.setdefault(node, {})[pod_info.uid] = pod_info
        if self.observer is not None:
            self.observer.nominated(pod_info, node)

    def update_nominated_pod(self, old: Pod, new_info: PodInfo) -> None:
        """Replace ``old``'s entry with ``new_info`` (upstream ``UpdateNominatedPod``)."""
        info: NominatingInfo | None = None
        uid = old.metadata.uid or ""
        if self._replace_in_place(uid, new_info):
            return
        if not nominated_node_name(old) and not nominated_node_name(new_info.pod):
            remembered = self._node_of.get(uid)
            if remembered is not None:
                # Neither object carries the nomination, yet we made one: keep it.
                info = NominatingInfo(remembered, NominatingMode.OVERRIDE)
        self._delete(uid)
        self.add_nominated_pod(new_info, info)

    def _replace_in_place(self, uid: str, new_info: PodInfo) -> bool:
        """The outcome of delete-then-add, without either, when it is a replacement: the
        pod stays nominated to the node it is nominated to (its status names that node),
        it is already that node's last nominated pod (where the add would put it again),
        the lister still has it unbound, and it counts as before (same priority and
        requests, so the observer's totals would come back to what they are). The
        preemptor's own status write (its nomination, after the scheduler nominated it)
        arrives this way on every preemption."""
        node = self._node_of.get(uid)
        if node is None or new_info.uid != uid or nominated_node_name(new_info.pod) != node:
            return False
        pods = self._by_node[node]
        previous = pods[uid]
        if next(reversed(pods)) != uid or not (
            previous.priority == new_info.priority and previous.requests == new_info.requests
        ):
            return False
        if not self._still_pending(new_info.pod):
            return False
        pods[uid] = new_info
        return True

    def _still_pending(self, pod: Pod) -> bool:
        """Whether the lister (when there is one) still has ``pod``, unbound."""
        if self._pod_lister is None:
            return True
        metadata = pod.metadata
        current = self._pod_lister.get(metadata.name or "", metadata.namespace)
        return current is not None and not (current.spec is not None and current.spec.node_name)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        """Forget ``pod``'s nomination (upstream ``DeleteNominatedPodIfExists``)."""
        self._delete(pod.metadata.uid or "")

    def _delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        pods = self._by_node[node]
        pods.pop(uid, None)
        if not pods:
            del self._by_node[node]
        if self.observer is not None:
            self.observer.unnominated(uid)

    def nominated_node(self, uid: str) -> str | None:
        """The node ``uid`` is nominated to, if any."""
        return self._node_of.get(uid)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name``, in nomination order, as last recorded here."""
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []

    def nodes(self) -> list[str]:
        """Nodes that have nominated pods, in first-nomination order."""
        return list(self._by_node)
