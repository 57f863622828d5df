"""Which active pods a replica controller deletes first: ``ActivePodsWithRanks``.

Mirrors ``pkg/controller/controller_utils.go`` (``ActivePodsWithRanks.Less``) and
``pkg/controller/replicaset/replica_set.go`` (``getPodsToDelete``,
``getPodsRankedByRelatedPodsOnSameNode``): unassigned before assigned; Pending before
Unknown before Running; not ready before ready; lower
``controller.kubernetes.io/pod-deletion-cost`` first; more active pods of the same
controller(s) on its node first; ready for less time first, then more restarts, then
newer (times compared on a log2 scale, ties by UID).

Used by the ReplicaSet controller (and so the ReplicationController's). Pure functions.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Final

from kubeprio.api.core import Pod
from kubeprio.clock import parse_rfc3339
from kubeprio.controllers import podutil

_PHASE_ORDINAL: Final = {"Pending": 0, "Unknown": 1, "Running": 2}


def _time(text: str | None) -> float | None:
    return parse_rfc3339(text) if text else None


def _log_rank(at: float, now: float) -> int:
    """``logarithmicRankDiff`` operand: floor(log2(age in ns)), -1 for no age."""
    age = (now - at) * 1e9
    return int(math.log2(age)) if age > 0 else -1


def _after_or_zero(t1: float | None, t2: float | None) -> bool:
    """``afterOrZero``: a missing time sorts first, then the later one."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _max_restarts(pod: Pod) -> int:
    statuses = (pod.status.container_statuses if pod.status else None) or ()
    return max((c.restart_count or 0 for c in statuses), default=0)


def pod_deletion_less(p1: Pod, p2: Pod, rank1: int, rank2: int, now: float) -> bool:
    """``ActivePodsWithRanks.Less``: whether ``p1`` should be deleted before ``p2``."""
    n1 = (p1.spec.node_name if p1.spec else None) or ""
    n2 = (p2.spec.node_name if p2.spec else None) or ""
    if n1 != n2 and (not n1 or not n2):
        return not n1
    o1 = _PHASE_ORDINAL.get(podutil.phase(p1), 0)
    o2 = _PHASE_ORDINAL.get(podutil.phase(p2), 0)
    if o1 != o2:
        return o1 < o2
    ready1, ready2 = podutil.is_pod_ready(p1), podutil.is_pod_ready(p2)
    if ready1 != ready2:
        return not ready1
    cost1, cost2 = podutil.deletion_cost(p1), podutil.deletion_cost(p2)
    if cost1 != cost2:
        return cost1 < cost2
    if rank1 != rank2:
        return rank1 > rank2
    uid1, uid2 = p1.metadata.uid or "", p2.metadata.uid or ""
    if ready1 and ready2:
        r1 = _time(podutil.ready_condition_time(p1))
        r2 = _time(podutil.ready_condition_time(p2))
        if r1 != r2:
            if r1 is None or r2 is None:
                return _after_or_zero(r1, r2)
            diff = _log_rank(r1, now) - _log_rank(r2, now)
            if diff == 0:
                return uid1 < uid2
            return diff < 0
    restarts1, restarts2 = _max_restarts(p1), _max_restarts(p2)
    if restarts1 != restarts2:
        return restarts1 > restarts2
    c1, c2 = _time(p1.metadata.creation_timestamp), _time(p2.metadata.creation_timestamp)
    if c1 != c2:
        if c1 is None or c2 is None:
            return _after_or_zero(c1, c2)
        diff = _log_rank(c1, now) - _log_rank(c2, now)
        if diff == 0:
            return uid1 < uid2
        return diff < 0
    return False


def pods_to_delete(
    pods: Sequence[Pod], related: Sequence[Pod], count: int, now: float
) -> list[Pod]:
    """``getPodsToDelete``: the ``count`` pods ranked first (rank: active related pods on
    the same node, ``getPodsRankedByRelatedPodsOnSameNode``). Ties keep name order."""
    if count >= len(pods):
        return list(pods)
    on_node: dict[str, int] = {}
    for pod in related:
        if podutil.is_pod_active(pod):
            node = (pod.spec.node_name if pod.spec else None) or ""
            on_node[node] = on_node.get(node, 0) + 1
    ranked = [
        (pod, on_node.get((pod.spec.node_name if pod.spec else None) or "", 0))
        for pod in sorted(pods, key=lambda p: (p.metadata.namespace or "", p.metadata.name or ""))
    ]

    def compare(a: tuple[Pod, int], b: tuple[Pod, int]) -> int:
        if pod_deletion_less(a[0], b[0], a[1], b[1], now):
            return -1
        if pod_deletion_less(b[0], a[0], b[1], a[1], now):
            return 1
        return 0

    ranked.sort(key=functools.cmp_to_key(compare))
    return [pod for pod, _ in ranked[:count]]
