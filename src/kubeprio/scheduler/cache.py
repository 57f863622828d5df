"""The scheduler's cache of nodes and the pods assigned to them, with assumed pods.

Mirrors upstream ``pkg/scheduler/backend/cache``. Informer handlers feed it bound
pods and nodes; the scheduling cycle *assumes* a pod onto a node before binding, so
the next cycle already sees the room taken, and the informer event for the binding
later *confirms* it::

        assume_pod            add_pod (informer, same node)
    ( ) ----------> Assumed -------------------------------> Added
                      |  forget_pod (bind failed)             |  update_pod / remove_pod
                      v                                       v
                   (gone)                                  (updated / gone)

Terminal pods (Succeeded/Failed) hold no resources: the scheduler treats them as removed.
The cycle runs between informer pumps, so the cache does not change during a cycle and
its NodeInfos double as the snapshot (no copy per cycle); preemption clones the few
NodeInfos it dry-runs. Node order is the order Node objects arrived, as upstream's
single-zone node tree lists nodes. A NodeInfo without a Node object (pods seen before
their node, or a deleted node whose pods are not gone yet: upstream's *ghost*) keeps
its pods out of the snapshot and is dropped with its last pod. Every change refreshes the
node's row of the ``NodeTable`` (the vectorised fast path reads it) in O(1), and the
node's row of the ``VictimTable`` (pods in importance order, for indexed preemption) in
O(pods on the node). A node's pods are in upstream's order, which breaks ties between equal
victims: added pods go last, a removed pod's place goes to the node's last pod, and an
update moves the pod last (upstream's ``updatePod`` is remove then add).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from kubeprio import counts
from kubeprio.api.core import Node, Pod
from kubeprio.api.model import evolve
from kubeprio.api.storagehelpers import pod_persistent_claim_names
from kubeprio.scheduler.framework import PodInfo
from kubeprio.scheduler.nodetable import NodeTable
from kubeprio.scheduler.snapshot import NodeInfo, has_affinity, has_required_anti_affinity
from kubeprio.scheduler.victimtable import VictimTable


@dataclasses.dataclass(slots=True)
class _PodState:
    pod_info: PodInfo
    node_name: str
    assumed: bool


def _same_for_scheduling(old: PodInfo, new: PodInfo) -> bool:
    """Whether ``new`` counts exactly as ``old`` on its node: same spec object (so the
    same requests, ports and affinity), labels (affinity and PDB selectors) and start
    time (victim order). Such an update only moves the pod to the end of its node's list
    (``NodeInfo.move_to_end``); the node's sums and indexes stay."""
    before, after = old.pod, new.pod
    return (
        before.spec is after.spec
        and new.requests is old.requests
        and before.metadata.labels == after.metadata.labels
        and (before.status.start_time if before.status else None)
        == (after.status.start_time if after.status else None)
    )


class Cache:
    """Nodes, their pods, and pods assumed by the scheduler but not yet confirmed."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._order: list[str] = []
        self._order_dirty = False
        self._node_list: list[NodeInfo] = []
        self._pods: dict[str, _PodState] = {}
        self.generation = 0
        self.table = NodeTable()
        self.victims = VictimTable(self.table)
        self.pods_with_affinity = 0
        self._affinity_nodes: dict[str, int] = {}
        self._anti_affinity_nodes: dict[str, int] = {}
        self._claim_refs: dict[str, int] = {}
        """``namespace/claim`` -> how many accounted pods name it in a
        ``persistentVolumeClaim`` volume (upstream's ``PVCRefCounts``, summed over nodes)."""

    # --- nodes ------------------------------------------------------------------------------

    def add_node(self, node: Node) -> NodeInfo:
        """Add or refresh a node."""
        name = node.metadata.name or ""
        info = self._nodes.get(name)
        if info is None:
            info = NodeInfo()
            self._nodes[name] = info
            self._order.append(name)
            self._order_dirty = True
        elif info.node is None:
            # A placeholder (pods arrived before their Node): the node joins the order now.
            self._order.remove(name)
            self._order.append(name)
            self._order_dirty = True
        is_new = info.node is None
        info.set_node(node)
        if is_new:
            self.table.append(info)
            self.victims.attach(name)
        else:
            self.table.refresh_node(info)
        self.generation += 1
        return info

    def update_node(self, node: Node) -> NodeInfo:
        """Refresh a node's object (labels, taints, allocatable...)."""
        return self.add_node(node)

    def remove_node(self, name: str) -> None:
        """Forget a node; a node that still has pods stays as a *ghost* until they go.

        Upstream ``cacheImpl.RemoveNode``: pod deletions arrive on another watch and may
        be observed after the node's, so the NodeInfo keeps its pods (without its Node
        object, so it is skipped from the snapshot) until the last one is removed. A
        Node re-created under the same name meanwhile finds them still accounted.
        """
        info = self._nodes.get(name)
        if info is None or info.node is None:
            return
        if info.pods:
            info.node = None
            info.generation += 1
        else:
            del self._nodes[name]
            self._order.remove(name)
            self.victims.drop_node(name)
        self._order_dirty = True
        self.generation += 1
        self.table.rebuild(self.node_infos())
        self.victims.relayout()

    def node_info(self, name: str) -> NodeInfo | None:
        """The NodeInfo of ``name`` (None if the node is unknown)."""
        return self._nodes.get(name)

    def node_infos(self) -> list[NodeInfo]:
        """All NodeInfos with a Node object, in node order."""
        if self._order_dirty:
            self._node_list = [
                self._nodes[n] for n in self._order if self._nodes[n].node is not None
            ]
            self._order_dirty = False
        return self._node_list

    def __len__(self) -> int:
        return len(self.node_infos())

    # --- pods --------------------------------------------------------------------------------

    def _node_for(self, name: str) -> NodeInfo:
        info = self._nodes.get(name)
        if info is None:
            # A pod bound to a node the cache has not seen yet: keep a placeholder so its
            # resources are counted once the Node arrives (upstream does the same).
            info = NodeInfo()
            info.name = name
            self._nodes[name] = info
            self._order.append(name)
            self._order_dirty = True
        return info

    def _add_to_node(self, node: NodeInfo, pod_info: PodInfo) -> None:
        node.add_pod(pod_info)
        self.victims.add(node.name, pod_info)
        if has_affinity(pod_info):
            self.pods_with_affinity += 1
            counts.adjust(self._affinity_nodes, node.name, 1)
        if has_required_anti_affinity(pod_info):
            counts.adjust(self._anti_affinity_nodes, node.name, 1)
        self._count_claims(pod_info, 1)
        self.table.refresh_usage(node)

    def _remove_from_node(self, node: NodeInfo | None, pod_info: PodInfo) -> None:
        if node is None or not node.pods:
            return
        last = node.pods[-1]
        removed = node.remove_pod(pod_info)
        if removed is not None:
            # Before anything else: the victim table mirrors NodeInfo.pods, ghosts included.
            # The node's last pod took the removed one's place (upstream swaps).
            moved = None if last is removed else last
            self.victims.remove(node.name, pod_info, moved)
            if has_affinity(pod_info):
                self.pods_with_affinity -= 1
                counts.adjust(self._affinity_nodes, node.name, -1)
            if has_required_anti_affinity(pod_info):
                counts.adjust(self._anti_affinity_nodes, node.name, -1)
            self._count_claims(removed, -1)
            if node.node is None:
                if not node.pods:
                    # The last pod of a ghost (or placeholder) node: drop it (upstream
                    # ``removePod``).
                    del self._nodes[node.name]
                    self._order.remove(node.name)
                    self._order_dirty = True
                    self.victims.drop_node(node.name)
                return
            self.table.refresh_usage(node)

    def _count_claims(self, pod_info: PodInfo, delta: int) -> None:
        pod = pod_info.pod
        names = pod_persistent_claim_names(pod)
        if names:
            namespace = pod.metadata.namespace or ""
            for name in names:
                counts.adjust(self._claim_refs, f"{namespace}/{name}", delta)

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Upstream ``StorageInfoLister.IsPVCUsedByPods``: a pod on some node names the
        claim ``namespace/name`` in a ``persistentVolumeClaim`` volume."""
        return key in self._claim_refs

    def _move_to_end_in_node(self, node_name: str, old: PodInfo, new: PodInfo) -> None:
        """Upstream ``updatePod`` for an update that changes none of the node's sums:
        the pod goes last in its node's list, the last pod takes its place."""
        node = self._nodes.get(node_name)
        if node is None:
            return
        moved = node.move_to_end(old, new)
        self.victims.move_to_end(node_name, old, new, moved)

    # --- SharedLister (the plugins' view of the snapshot) ----------------------------------

    def _in_order(self, names: dict[str, int]) -> list[NodeInfo]:
        index = self.table.index
        rows = sorted(index[name] for name in names if name in index)
        nodes = self.node_infos()
        return [nodes[row] for row in rows]

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        """Nodes hosting a pod with inter-pod (anti-)affinity, in node order."""
        return self._in_order(self._affinity_nodes)

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        """Nodes hosting a pod with required anti-affinity, in node order."""
        return self._in_order(self._anti_affinity_nodes)

    def assume_pod(self, pod_info: PodInfo, node_name: str) -> None:
        """Account for a pod the scheduler just placed, before the binding is confirmed."""
        self._add_to_node(self._node_for(node_name), pod_info)
        self._pods[pod_info.uid or pod_info.key] = _PodState(pod_info, node_name, True)
        self.generation += 1

    def forget_pod(self, pod_info: PodInfo) -> None:
        """Undo ``assume_pod`` (binding failed)."""
        state = self._pods.get(pod_info.uid or pod_info.key)
        if state is None or not state.assumed:
            return
        self._remove_from_node(self._nodes.get(state.node_name), state.pod_info)
        del self._pods[pod_info.uid or pod_info.key]
        self.generation += 1

    def is_assumed(self, pod: Pod) -> bool:
        """Whether ``pod`` is assumed and not yet confirmed by an informer event."""
        state = self._pods.get(pod.metadata.uid or "")
        return state is not None and state.assumed

    def add_pod(self, pod: Pod) -> None:
        """A bound pod appeared (or an assumed one was confirmed)."""
        node_name = (pod.spec.node_name if pod.spec else None) or ""
        key = pod.metadata.uid or f"{pod.metadata.namespace or ''}/{pod.metadata.name or ''}"
        state = self._pods.get(key)
        if state is not None and state.assumed and state.node_name == node_name:
            # The binding of an assumed pod arrived: its requests are already accounted;
            # only the object is newer (upstream's cache confirms the assumed pod).
            previous = state.pod_info
            state.pod_info = evolve(previous, pod=pod)
            state.assumed = False
            self._move_to_end_in_node(node_name, previous, state.pod_info)
            self.generation += 1
            return
        pod_info = state.pod_info.updated(pod) if state is not None else PodInfo.of(pod)
        if (
            state is not None
            and state.node_name == node_name
            and _same_for_scheduling(state.pod_info, pod_info)
        ):
            # A status write (the kubelet's, a DisruptionTarget condition, a deletion
            # mark): nothing the node's sums or indexes depend on changed; the pod only
            # moves to the end of its node's list, as upstream's remove-then-add moves it.
            previous = state.pod_info
            state.pod_info = pod_info
            self._move_to_end_in_node(node_name, previous, pod_info)
            self.generation += 1
            return
        if state is not None:
            self._remove_from_node(self._nodes.get(state.node_name), state.pod_info)
        self._add_to_node(self._node_for(node_name), pod_info)
        self._pods[key] = _PodState(pod_info, node_name, False)
        self.generation += 1

    def update_pod(self, pod: Pod) -> None:
        """A bound pod changed (requests do not change, but the object does)."""
        self.add_pod(pod)

    def remove_pod(self, pod: Pod) -> None:
        """A bound pod is gone (deleted or terminal)."""
        key = pod.metadata.uid or f"{pod.metadata.namespace or ''}/{pod.metadata.name or ''}"
        state = self._pods.pop(key, None)
        if state is None:
            return
        self._remove_from_node(self._nodes.get(state.node_name), state.pod_info)
        self.generation += 1

    def pod_count(self) -> int:
        """Number of pods accounted (assumed or confirmed)."""
        return len(self._pods)

    def iter_pods(self) -> Iterator[tuple[PodInfo, str]]:
        """Every accounted pod with its node name."""
        for state in self._pods.values():
            yield state.pod_info, state.node_name
