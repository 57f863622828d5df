"""A DaemonSet's rolling update: which old pods to delete, which nodes get a new pod now.

Mirrors ``rollingUpdate``, ``findUpdatedPodsOnNode`` and ``updatedDesiredNodeCounts`` of
``pkg/controller/daemon/update.go``. With ``desired`` nodes that should run the pod,
``maxUnavailable`` and ``maxSurge`` are scaled against it (percentages round up); both 0
with nodes to run on means ``maxUnavailable`` 1.

* **maxSurge 0** (the default): a node's old pod is deleted, and the controller's manage
  loop creates the new one once the old one is gone. Nodes without an available pod
  (missing, not ready, new but not available yet, or more than one pod) count against
  ``maxUnavailable``; an old pod that is not available is replaced at once, available old
  pods only while fewer than ``maxUnavailable`` nodes are unavailable.
* **maxSurge > 0**: a new pod is created next to the old one on up to ``maxSurge`` nodes
  (at once where the old pod is not available); the old pod is deleted when the new one
  is available. A node that no longer should run the pod loses its old pod only while
  more pods are available than nodes want one, so availability never drops.

Nodes are visited in name order (upstream walks a Go map: any order), so the same
cluster always updates the same nodes first. Pure: no I/O; ``now`` is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubeprio.api.core import Pod
from kubeprio.api.daemonset import DaemonSet
from kubeprio.controllers import daemonsetutil, podutil
from kubeprio.errors import KubeprioError


class UnknownNodeError(KubeprioError):
    """A daemon pod targets a node the node informer does not have (upstream's lister
    error): the sync fails and is retried until the node or the pod is gone."""


@dataclass(slots=True)
class UpdatePlan:
    """What ``rollingUpdate`` hands to ``syncNodes``."""

    pods_to_delete: list[str] = field(default_factory=list)
    nodes_to_create: list[str] = field(default_factory=list)


def find_updated_pods_on_node(
    pods: Sequence[Pod], hash_: str, generation: int | None
) -> tuple[Pod | None, Pod | None, bool]:
    """``findUpdatedPodsOnNode``: the node's new and old pod (not being deleted); ``ok`` is
    False when it has more than one of either (the manage loop prunes those first)."""
    new: Pod | None = None
    old: Pod | None = None
    for pod in pods:
        if pod.metadata.deletion_timestamp:
            continue
        if daemonsetutil.is_pod_updated(pod, hash_, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def desired_counts(
    ds: DaemonSet, should_run: Mapping[str, bool], node_pods: dict[str, list[Pod]]
) -> tuple[int, int, int]:
    """``updatedDesiredNodeCounts``: (maxSurge, maxUnavailable, desired); every node that
    should run the pod gets an entry in ``node_pods`` (empty when it has no pod)."""
    desired = 0
    for name, run in should_run.items():
        if run:
            desired += 1
            node_pods.setdefault(name, [])
    max_unavailable = daemonsetutil.unavailable_count(ds, desired)
    max_surge = daemonsetutil.surge_count(ds, desired)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    return max_surge, max_unavailable, desired


def rolling_update(
    ds: DaemonSet,
    hash_: str,
    generation: int | None,
    should_run: Mapping[str, bool],
    node_pods: Mapping[str, Sequence[Pod]],
    now: float,
) -> UpdatePlan:
    """``rollingUpdate``: see the module docstring. ``node_pods`` holds each node's daemon
    pods (deleted terminal ones left out); ``should_run`` every known node's verdict."""
    pods_by_node = {name: list(pods) for name, pods in node_pods.items()}
    max_surge, max_unavailable, desired = desired_counts(ds, should_run, pods_by_node)
    min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0

    def available(pod: Pod) -> bool:
        return podutil.is_pod_available(pod, min_ready, now)

    plan = UpdatePlan()
    if max_surge == 0:
        unavailable = 0
        replacements: list[str] = []
        candidates: list[str] = []
        for name in sorted(pods_by_node):
            new, old, ok = find_updated_pods_on_node(pods_by_node[name], hash_, generation)
            if not ok or (new is None) == (old is None):
                unavailable += 1  # the manage loop creates or prunes here
            elif new is not None:
                if not available(new):
                    unavailable += 1
            elif old is not None and not available(old):
                replacements.append(old.metadata.name or "")
                unavailable += 1
            elif old is not None and unavailable < max_unavailable:
                candidates.append(old.metadata.name or "")
        remaining = min(max(max_unavailable - unavailable, 0), len(candidates))
        plan.pods_to_delete = replacements + candidates[:remaining]
        return plan

    surge = 0
    available_count = 0
    allowed_new: list[str] = []
    candidate_new: list[str] = []
    should_not_run: list[str] = []
    for name in sorted(pods_by_node):
        new, old, ok = find_updated_pods_on_node(pods_by_node[name], hash_, generation)
        if not ok:
            surge += 1
            continue
        if old is not None:
            available_count += available(old)
        elif new is not None:
            available_count += available(new)
        if old is None:
            continue  # nothing to replace; the manage loop handles an empty node
        if new is None:
            if name not in should_run:
                raise UnknownNodeError(f'couldn\'t get node for nodeName "{name}"')
            if not available(old):
                if not should_run[name]:
                    plan.pods_to_delete.append(old.metadata.name or "")
                else:
                    allowed_new.append(name)
            elif not should_run[name]:
                should_not_run.append(old.metadata.name or "")
            elif surge < max_surge:
                candidate_new.append(name)
        elif not available(new):
            surge += 1
        else:
            plan.pods_to_delete.append(old.metadata.name or "")
    deletable = min(available_count - desired, len(should_not_run))
    if deletable > 0:
        plan.pods_to_delete.extend(should_not_run[:deletable])
    remaining = min(max(max_surge - surge, 0), len(candidate_new))
    plan.nodes_to_create = allowed_new + candidate_new[:remaining]
    return plan
