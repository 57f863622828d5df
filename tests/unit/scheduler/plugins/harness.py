"""Run plugins the way the framework does, on hand-built NodeInfos (no scheduler needed).

``node_infos`` builds NodeInfos from nodes and pods placed by ``spec.nodeName`` (as
upstream's ``cache.NewSnapshot(pods, nodes)``); ``run_filter`` runs PreFilter then Filter
(a PreFilter SKIP means the Filter is skipped: success); ``run_scores`` runs PreScore,
Score on every node and NormalizeScore, returning ``{node: score}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubeprio.api.core import Node, Pod
from kubeprio.scheduler import framework
from kubeprio.scheduler.snapshot import NodeInfo, NodeInfoList


def node_infos(nodes: Sequence[Node], pods: Sequence[Pod] = ()) -> list[NodeInfo]:
    """One NodeInfo per node, with the pods whose ``spec.nodeName`` names it."""
    infos = {node.metadata.name: NodeInfo(node) for node in nodes}
    for pod in pods:
        name = pod.spec.node_name if pod.spec else None
        if name in infos:
            infos[name].add_pod(framework.PodInfo.of(pod))
    return list(infos.values())


def lister(infos: Sequence[NodeInfo]) -> NodeInfoList:
    return NodeInfoList(infos)


def pre_filter(
    plugin: Any, pod: Pod, nodes: Sequence[NodeInfo] = ()
) -> tuple[framework.CycleState, framework.PreFilterResult | None, framework.Status | None]:
    state = framework.CycleState()
    result, status = plugin.pre_filter(state, framework.PodInfo.of(pod), nodes)
    return state, result, status


def run_filter(
    plugin: Any, pod: Pod, node: NodeInfo, all_nodes: Sequence[NodeInfo] = ()
) -> framework.Status | None:
    """PreFilter (if any) then Filter; a PreFilter SKIP or rejection short-circuits."""
    pod_info = framework.PodInfo.of(pod)
    state = framework.CycleState()
    if hasattr(plugin, "pre_filter"):
        _, status = plugin.pre_filter(state, pod_info, all_nodes or [node])
        if status is not None:
            return None if status.code is framework.Code.SKIP else status
    return plugin.filter(state, pod_info, node)


def run_filters(
    plugin: Any, pod: Pod, nodes: Sequence[NodeInfo]
) -> dict[str, framework.Status | None]:
    """One PreFilter over all nodes, then Filter per node."""
    pod_info = framework.PodInfo.of(pod)
    state = framework.CycleState()
    _, status = plugin.pre_filter(state, pod_info, nodes)
    if status is not None:
        verdict = None if status.code is framework.Code.SKIP else status
        return {node.name: verdict for node in nodes}
    return {node.name: plugin.filter(state, pod_info, node) for node in nodes}


def run_scores(
    plugin: Any, pod: Pod, nodes: Sequence[NodeInfo], *, normalize: bool = True
) -> dict[str, int] | framework.Status:
    """PreScore, Score per node and NormalizeScore; a PreScore status is returned as is."""
    pod_info = framework.PodInfo.of(pod)
    state = framework.CycleState()
    status = plugin.pre_score(state, pod_info, nodes)
    if status is not None:
        return status
    scores = []
    for node in nodes:
        score, status = plugin.score(state, pod_info, node)
        assert status is None, status
        scores.append(framework.NodeScore(node.name, score))
    if normalize:
        assert plugin.normalize_score(state, pod_info, scores) is None
    return {entry.name: entry.score for entry in scores}
