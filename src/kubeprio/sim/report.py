"""The simulation report: the JSON contract of docs/design.md ("kubeprio simulate").

``pods`` holds every pod that ever existed (deleted ones with ``"deleted": true``), sorted
by namespace/name; ``preemptions`` and ``events`` are in time order; times are seconds
of virtual time. Extra keys beyond the contract only add information:

* per pod: ``createdAt`` (first seen), ``pendingMessage`` (the last FailedScheduling
  message of a pod still unbound), ``terminatingAt`` (graceful deletion began, e.g. the
  preemption), ``finishedAt`` (reached Succeeded or Failed) and ``deletedAt`` (removed
  from the API); each null when it did not happen. A pod holds its node's resources
  from ``scheduledAt`` until the first of ``finishedAt``, ``deletedAt`` and ``endTime``;
* ``evictions``: pods marked for disruption by anything but preemption, in time order,
  with the ``DisruptionTarget`` reason: ``DeletionByTaintManager`` (a ``NoExecute``
  taint), ``TerminationByKubelet`` (node pressure), ``DeletionByPodGC``,
  ``EvictionByEvictionAPI``;
* ``existing``: objects that already existed when applied;
* ``waiting``: mean and max wait per priority class;
* ``nodes``: every node that ever existed, sorted by name, with its ``allocatable``
  resources (quantity text), ``createdAt`` and ``deletedAt``.

The HTML report (``sim.html``) is drawn from these keys alone. Serialised with sorted-free, fixed key
order and no floating noise so that the same inputs and seed give a byte-identical
report.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Final

from kubeprio.sim.recorder import Recorder

REPORT_VERSION: Final = 1


@dataclasses.dataclass(frozen=True, slots=True)
class Rejection:
    """An object the API refused while the scenario was applied."""

    kind: str
    namespace: str | None
    name: str | None
    code: int
    reason: str
    message: str
    source: str = ""


def _time(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def waiting_by_class(recorder: Recorder) -> list[dict[str, Any]]:
    """Per priority class: pods, how many got scheduled, mean and max wait (s)."""
    groups: dict[tuple[int, str], list[float | None]] = {}
    for record in recorder.pods.values():
        key = (record.priority, record.priority_class_name or "")
        wait = None if record.scheduled_at is None else record.scheduled_at - record.created_at
        groups.setdefault(key, []).append(wait)
    rows = []
    for (priority, name), waits in sorted(
        groups.items(), key=lambda item: (-item[0][0], item[0][1])
    ):
        done = [w for w in waits if w is not None]
        rows.append(
            {
                "priorityClassName": name or None,
                "priority": priority,
                "pods": len(waits),
                "scheduled": len(done),
                "meanWait": _time(sum(done) / len(done)) if done else None,
                "maxWait": _time(max(done)) if done else None,
            }
        )
    return rows


def build_report(
    recorder: Recorder,
    *,
    seed: int,
    end_time: float,
    rejected: list[Rejection],
    existing: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The report as a JSON-ready dict."""
    pods = sorted(recorder.pods.values(), key=lambda r: (r.namespace, r.name, r.created_at, r.uid))
    return {
        "version": REPORT_VERSION,
        "seed": seed,
        "endTime": _time(end_time),
        "pods": [
            {
                "namespace": r.namespace,
                "name": r.name,
                "priority": r.priority,
                "priorityClassName": r.priority_class_name,
                "preemptionPolicy": r.preemption_policy,
                "phase": r.phase,
                "node": r.node,
                "nominatedNode": r.nominated_node,
                "deleted": r.deleted,
                "preemptedBy": r.preempted_by,
                "scheduledAt": _time(r.scheduled_at),
                "createdAt": _time(r.created_at),
                "pendingMessage": r.pending_message if r.node is None and not r.deleted else None,
                "terminatingAt": _time(r.terminating_at),
                "finishedAt": _time(r.finished_at),
                "deletedAt": _time(r.deleted_at),
            }
            for r in pods
        ],
        "preemptions": [
            {
                "time": _time(p.time),
                "preemptor": p.preemptor,
                "node": p.node,
                "victims": list(p.victims),
            }
            for p in recorder.preemptions
        ],
        "evictions": [
            {
                "time": _time(e.time),
                "pod": e.pod,
                "node": e.node,
                "reason": e.reason,
                "message": e.message,
            }
            for e in recorder.evictions
        ],
        "rejected": [
            {
                "kind": r.kind,
                "namespace": r.namespace,
                "name": r.name,
                "code": r.code,
                "reason": r.reason,
                "message": r.message,
            }
            for r in rejected
        ],
        "existing": existing or [],
        "waiting": waiting_by_class(recorder),
        "nodes": [
            {
                "name": n.name,
                "allocatable": dict(n.allocatable),
                "createdAt": _time(n.created_at),
                "deletedAt": _time(n.deleted_at),
            }
            for n in sorted(recorder.nodes.values(), key=lambda n: n.name)
        ],
        "events": [
            {
                "time": _time(e.time),
                "type": e.type,
                "reason": e.reason,
                "object": e.object,
                "message": e.message,
            }
            for e in recorder.events
        ],
    }


def to_json(report: dict[str, Any]) -> str:
    """The report as stable JSON text (one trailing newline)."""
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
