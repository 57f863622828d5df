"""The Pod Table: ``kubectl get pods`` (``printPod`` in upstream's
``pkg/printers/internalversion/printers.go``).

NAME READY STATUS RESTARTS AGE, and with ``-o wide`` IP NODE NOMINATED NODE READINESS
GATES; the STATUS cell follows upstream's reasons in its order (init containers, waiting
and terminated containers, ``Terminating``, ``NodeLost``, ``Completed``), and a finished
pod's row carries the ``Completed`` condition kubectl uses to hide it.

Who drives it: ``apiserver.tables`` (the printer registry). Pure; ``now`` is the caller's.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.core import Pod
from kubeprio.api.model import JsonDict
from kubeprio.apiserver.tableformat import (
    NONE,
    Cells,
    Column,
    RowConditions,
    age_column,
    human_duration,
    name_column,
    since,
)
from kubeprio.clock import parse_rfc3339

POD_COLUMNS: Final = (
    name_column(),
    Column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", "string", "The aggregate status of the containers in this pod."),
    Column(
        "Restarts",
        "string",
        "The number of times the containers in this pod have been restarted and when the "
        "last container in this pod has restarted.",
    ),
    age_column(),
    Column("IP", "string", "IP address allocated to the pod.", priority=1),
    Column("Node", "string", "NodeName is the name of the node the pod is scheduled on.", 1),
    Column(
        "Nominated Node",
        "string",
        "nominatedNodeName is set only when this pod preempts other pods on the node.",
        1,
    ),
    Column("Readiness Gates", "string", "If specified, all readiness gates will be evaluated.", 1),
)


def _state(status: Any, key: str) -> JsonDict:
    value = status.extra.get(key) if status is not None else None
    return value if isinstance(value, dict) else {}


def print_pod(pod: Pod, now: float) -> tuple[Cells, RowConditions]:
    """``printPod``: READY ``n/m``, STATUS as kubectl shows it, RESTARTS, AGE, wide cells."""
    spec = pod.spec
    status = pod.status
    containers = (spec.containers if spec else None) or ()
    init_containers = (spec.init_containers if spec else None) or ()
    phase = (status.phase if status else None) or ""
    reason = phase
    if status is not None and status.reason:
        reason = status.reason
    conditions = (status.conditions if status else None) or ()
    for condition in conditions:
        if condition.type == "PodScheduled" and condition.reason == "SchedulingGated":
            reason = "SchedulingGated"
    restarts = 0
    ready = 0
    last_restart: float | None = None
    initializing = False
    init_statuses = (status.extra.get("initContainerStatuses") if status else None) or []
    for index, init in enumerate(init_statuses if isinstance(init_statuses, list) else []):
        restarts += int(init.get("restartCount") or 0)
        state = init.get("state") or {}
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        if terminated and terminated.get("exitCode", 0) == 0:
            continue
        if terminated:
            if terminated.get("reason"):
                reason = "Init:" + terminated["reason"]
            elif terminated.get("signal"):
                reason = f"Init:Signal:{terminated['signal']}"
            else:
                reason = f"Init:ExitCode:{terminated.get('exitCode', 0)}"
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{index}/{len(init_containers)}"
        initializing = True
        break
    if not initializing:
        restarts = 0
        has_running = False
        for container in reversed((status.container_statuses if status else None) or ()):
            restarts += container.restart_count or 0
            state = _state(container, "state")
            last_terminated = _state(container, "lastState").get("terminated")
            if isinstance(last_terminated, dict) and last_terminated.get("finishedAt"):
                try:
                    finished = parse_rfc3339(last_terminated["finishedAt"])
                except ValueError:
                    finished = None
                if finished is not None and (last_restart is None or finished > last_restart):
                    last_restart = finished
            waiting = state.get("waiting")
            terminated = state.get("terminated")
            if waiting and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated:
                if terminated.get("signal"):
                    reason = f"Signal:{terminated['signal']}"
                else:
                    reason = f"ExitCode:{terminated.get('exitCode', 0)}"
            elif container.ready and "running" in state:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(c.type == "Ready" and c.status == "True" for c in conditions)
            reason = "Running" if pod_ready else "NotReady"
    if pod.metadata.deletion_timestamp:
        if status is not None and status.reason == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    restarts_text = str(restarts)
    if last_restart is not None:
        restarts_text = f"{restarts} ({human_duration(now - last_restart)} ago)"
    gates = (spec.extra.get("readinessGates") if spec else None) or []
    gates_text = NONE
    if gates:
        true_conditions = {c.type for c in conditions if c.status == "True"}
        passed = sum(1 for gate in gates if gate.get("conditionType") in true_conditions)
        gates_text = f"{passed}/{len(gates)}"
    cells: Cells = [
        pod.metadata.name or "",
        f"{ready}/{len(containers)}",
        reason,
        restarts_text,
        since(pod.metadata.creation_timestamp, now),
        (status.pod_ip if status else None) or NONE,
        (spec.node_name if spec else None) or NONE,
        (status.nominated_node_name if status else None) or NONE,
        gates_text,
    ]
    row_conditions: RowConditions = None
    if phase == "Succeeded":
        row_conditions = [_completed(phase, "The pod has completed successfully.")]
    elif phase == "Failed":
        row_conditions = [_completed(phase, "The pod failed.")]
    return cells, row_conditions


def _completed(phase: str, message: str) -> JsonDict:
    return {"type": "Completed", "status": "True", "reason": phase, "message": message}
