"""Hand-built report dicts (the shape of ``sim.report.build_report``) for the HTML tests."""

from __future__ import annotations

from typing import Any


def pod(
    name: str,
    *,
    node: str | None = None,
    namespace: str = "default",
    priority: int = 0,
    klass: str | None = None,
    scheduled: float | None = None,
    created: float = 0.0,
    terminating: float | None = None,
    finished: float | None = None,
    deleted: float | None = None,
    phase: str | None = None,
    message: str | None = None,
) -> dict[str, Any]:
    """One entry of ``pods``."""
    if phase is None:
        phase = "Running" if node else "Pending"
    return {
        "namespace": namespace,
        "name": name,
        "priority": priority,
        "priorityClassName": klass,
        "preemptionPolicy": "PreemptLowerPriority",
        "phase": phase,
        "node": node,
        "nominatedNode": None,
        "deleted": deleted is not None,
        "preemptedBy": None,
        "scheduledAt": scheduled if scheduled is not None else (created if node else None),
        "createdAt": created,
        "pendingMessage": message,
        "terminatingAt": terminating,
        "finishedAt": finished,
        "deletedAt": deleted,
    }


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    """One entry of ``nodes``."""
    return {
        "name": name,
        "allocatable": {"cpu": cpu, "memory": "8Gi"},
        "createdAt": 0.0,
        "deletedAt": None,
    }


def report(
    pods: list[dict[str, Any]],
    *,
    nodes: list[dict[str, Any]] | None = None,
    preemptions: list[dict[str, Any]] | None = None,
    rejected: list[dict[str, Any]] | None = None,
    end: float = 100.0,
) -> dict[str, Any]:
    """A whole report; ``waiting`` is derived from ``pods`` as ``sim.report`` does."""
    groups: dict[tuple[int, str], list[float | None]] = {}
    for p in pods:
        wait = None if p["scheduledAt"] is None else p["scheduledAt"] - p["createdAt"]
        groups.setdefault((p["priority"], p["priorityClassName"] or ""), []).append(wait)
    waiting = []
    for (priority, name), waits in sorted(groups.items(), key=lambda i: (-i[0][0], i[0][1])):
        done = [w for w in waits if w is not None]
        waiting.append(
            {
                "priorityClassName": name or None,
                "priority": priority,
                "pods": len(waits),
                "scheduled": len(done),
                "meanWait": sum(done) / len(done) if done else None,
                "maxWait": max(done) if done else None,
            }
        )
    return {
        "version": 1,
        "seed": 0,
        "endTime": end,
        "pods": sorted(pods, key=lambda p: (p["namespace"], p["name"])),
        "preemptions": preemptions or [],
        "rejected": rejected or [],
        "existing": [],
        "waiting": waiting,
        "nodes": nodes if nodes is not None else [],
        "events": [],
    }
