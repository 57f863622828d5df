"""A DaemonSet's status: the counts ``updateDaemonSetStatus`` computes, as they are stored.

Mirrors ``updateDaemonSetStatus`` and ``storeDaemonSetStatus`` of
``pkg/controller/daemon/daemon_controller.go``. Per node the DaemonSet should run on:
``desiredNumberScheduled``; with a pod there ``currentNumberScheduled``, and the oldest
pod speaks for the node (``podByCreationTimestampAndPhase``): ``numberReady``,
``numberAvailable`` (ready for ``minReadySeconds``), ``updatedNumberScheduled`` (the current
revision's hash or template generation). A pod on a node that should not run it is
``numberMisscheduled``; ``numberUnavailable`` is desired minus available.

Stored as Go sends it: the first four counts always, ``updatedNumberScheduled``,
``numberAvailable``, ``numberUnavailable`` and ``observedGeneration`` left out when zero
(``omitempty``). Pure: no I/O, ``now`` passed in. Called by ``controllers.daemonset``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kubeprio.api.daemonset import DaemonSet, DaemonSetStatus, template_generation
from kubeprio.api.model import evolve
from kubeprio.controllers import daemonsetutil, podutil
from kubeprio.controllers.daemonsetnode import NodePods

OMITTED_WHEN_ZERO: Final = ("updated_number_scheduled", "number_available", "number_unavailable")


def calculate_counts(
    ds: DaemonSet,
    verdicts: Mapping[str, tuple[bool, bool]],
    pods: NodePods,
    hash_: str,
    now: float,
) -> dict[str, int]:
    """The seven counts, by ``DaemonSetStatus`` attribute name."""
    desired = current = misscheduled = ready = updated = available = 0
    generation = template_generation(ds)
    min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0
    for name, (should_run, _) in verdicts.items():
        on_node = pods.get(name)
        if not should_run:
            misscheduled += bool(on_node)
            continue
        desired += 1
        if not on_node:
            continue
        current += 1
        pod = min(on_node, key=daemonsetutil.creation_order)
        if podutil.is_pod_ready(pod):
            ready += 1
            available += podutil.is_pod_available(pod, min_ready, now)
        updated += daemonsetutil.is_pod_updated(pod, hash_, generation)
    return {
        "desired_number_scheduled": desired,
        "current_number_scheduled": current,
        "number_misscheduled": misscheduled,
        "number_ready": ready,
        "updated_number_scheduled": updated,
        "number_available": available,
        "number_unavailable": desired - available,
    }


def up_to_date(ds: DaemonSet, counts: Mapping[str, int]) -> bool:
    """``storeDaemonSetStatus``'s early return: same counts, this generation observed."""
    status = ds.status or DaemonSetStatus()
    same = all((getattr(status, attr) or 0) == value for attr, value in counts.items())
    return same and (status.observed_generation or 0) >= (ds.metadata.generation or 0)


def with_counts(ds: DaemonSet, counts: Mapping[str, int], *, observed: bool) -> DaemonSet:
    """``ds`` with the counts (and ``observedGeneration`` when ``observed``), as stored."""
    values: dict[str, int | None] = dict(counts)
    for attr in OMITTED_WHEN_ZERO:
        values[attr] = values[attr] or None
    if observed:
        values["observed_generation"] = ds.metadata.generation or None
    return evolve(ds, status=evolve(ds.status or DaemonSetStatus(), **values))
