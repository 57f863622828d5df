"""What a DaemonSet wants on one node: create a pod, delete some, or leave it be.

Mirrors ``podsShouldBeOnNode`` and ``getNodesToDaemonPods`` of
``pkg/controller/daemon/daemon_controller.go``. Given the node's verdict
(``NodeShouldRunDaemonPod``) and the DaemonSet's pods there:

* should run and has none: create one;
* should not even keep running: delete every pod there (not already being deleted);
* otherwise: Failed pods are deleted when the caller's per-node backoff allows it
  (Warning ``FailedDaemonPod``), Succeeded pods are deleted (Normal
  ``SucceededDaemonPod``); of the pods left running, without surge only the oldest stays
  (none left: the next sync creates one), with surge the oldest pod of the current
  revision and the oldest older pod stay, the older one only while it is ready and the new
  one not yet available.

Pure but for the ``may_replace_failed`` callback (the controller's backoff): no I/O,
``now`` passed in. Called by ``controllers.daemonset``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from kubeprio.api.core import PHASE_FAILED, PHASE_SUCCEEDED, TERMINAL_PHASES, Pod
from kubeprio.api.daemonset import CONTROLLER_REVISION_HASH_LABEL, DaemonSet
from kubeprio.client import record
from kubeprio.controllers import daemonsetutil, podutil

FAILED_DAEMON_POD: Final = "FailedDaemonPod"
SUCCEEDED_DAEMON_POD: Final = "SucceededDaemonPod"

NodePods = dict[str, list[Pod]]
"""Node name -> the DaemonSet's pods targeting it."""


def node_pods(pods: Sequence[Pod], *, include_deleted_terminal: bool) -> NodePods:
    """``getNodesToDaemonPods``: the claimed pods by target node (``GetTargetNodeName``);
    finished pods already being deleted are left out unless asked for."""
    grouped: NodePods = {}
    for pod in pods:
        if (
            not include_deleted_terminal
            and podutil.phase(pod) in TERMINAL_PHASES
            and pod.metadata.deletion_timestamp
        ):
            continue  # the kubelet or pod GC removes it; nothing left to do with it
        node = daemonsetutil.target_node(pod)
        if node is not None:
            grouped.setdefault(node, []).append(pod)
    return grouped


@dataclass(slots=True)
class NodeDecision:
    """The outcome for one node, and the events that explain it: (type, reason, message)."""

    create: bool = False
    delete: list[str] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)


def pods_should_be_on_node(
    node: str,
    verdict: tuple[bool, bool],
    pods: Sequence[Pod] | None,
    ds: DaemonSet,
    hash_: str,
    now: float,
    may_replace_failed: Callable[[], bool],
) -> NodeDecision:
    """``podsShouldBeOnNode``; ``pods`` is None when the node has none at all."""
    should_run, should_continue = verdict
    decision = NodeDecision()
    if should_run and pods is None:
        decision.create = True
        return decision
    if not should_continue:
        live = (p for p in pods or () if not p.metadata.deletion_timestamp)
        decision.delete.extend(p.metadata.name or "" for p in live)
        return decision
    running: list[Pod] = []
    for pod in pods or ():
        if pod.metadata.deletion_timestamp:
            continue
        phase = podutil.phase(pod)
        where = f"{pod.metadata.namespace}/{pod.metadata.name} on node {node}"
        if phase == PHASE_FAILED:
            if not may_replace_failed():
                continue
            decision.events.append(
                (
                    record.EVENT_TYPE_WARNING,
                    FAILED_DAEMON_POD,
                    f"Found failed daemon pod {where}, will try to kill it",
                )
            )
            decision.delete.append(pod.metadata.name or "")
        elif phase == PHASE_SUCCEEDED:
            decision.events.append(
                (
                    record.EVENT_TYPE_NORMAL,
                    SUCCEEDED_DAEMON_POD,
                    f"Found succeeded daemon pod {where}, will try to delete it",
                )
            )
            decision.delete.append(pod.metadata.name or "")
        else:
            running.append(pod)
    running.sort(key=daemonsetutil.creation_order)
    if not daemonsetutil.allows_surge(ds):
        decision.delete.extend(p.metadata.name or "" for p in running[1:])
        return decision
    if len(running) <= 1:
        decision.create = not running and should_run
        return decision
    oldest_new: Pod | None = None
    oldest_old: Pod | None = None
    for pod in running:
        if pod.metadata.label(CONTROLLER_REVISION_HASH_LABEL) == hash_:
            if oldest_new is None:
                oldest_new = pod
                continue
        elif oldest_old is None:
            oldest_old = pod
            continue
        decision.delete.append(pod.metadata.name or "")
    if oldest_new is not None and oldest_old is not None:
        min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0
        if not podutil.is_pod_ready(oldest_old) or podutil.is_pod_available(
            oldest_new, min_ready, now
        ):
            decision.delete.append(oldest_old.metadata.name or "")
    return decision
