"""Pod statuses the simulated kubelet reports, shaped as the real kubelet's.

Mirrors ``generateAPIPodStatus`` (``pkg/kubelet/kubelet_pods.go``) and the status
manager's ``mergePodStatus`` (``pkg/kubelet/status/status_manager.go``):

* the kubelet owns the conditions ``PodReadyToStartContainers``, ``Initialized``,
  ``Ready``, ``ContainersReady`` and ``PodScheduled`` and writes them in that order
  after the conditions it does not own (``DisruptionTarget`` from the scheduler stays);
  ``DisruptionTarget`` is shared: a kubelet-set one replaces the existing one;
* a condition keeps its ``lastTransitionTime`` while its status does not change;
* ``startTime`` never changes once set;
* container statuses carry ``containerID``, ``image``, ``imageID`` and a ``running`` or
  ``terminated`` state (exit code, reason ``Completed`` or ``Error``);
* ephemeral containers (``kubectl debug``) start as soon as the kubelet sees them in a
  running pod: the same shape, never ``ready``, no ``started``, never restarted; when the
  pod stops they are killed (137, ``Error``). They count in no condition.

Pure: times are passed in (RFC 3339 strings); no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

from kubeprio.api.core import (
    PHASE_FAILED,
    PHASE_RUNNING,
    PHASE_SUCCEEDED,
    ContainerStatus,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
)
from kubeprio.api.model import evolve
from kubeprio.api.resources import qos_class
from kubeprio.kubelet.runtime import EXIT_CODE_SIGKILL, EXIT_CODE_SUCCESS, container_id

POD_READY_TO_START_CONTAINERS: Final = "PodReadyToStartContainers"
POD_INITIALIZED: Final = "Initialized"
POD_READY: Final = "Ready"
CONTAINERS_READY: Final = "ContainersReady"
POD_SCHEDULED: Final = "PodScheduled"
DISRUPTION_TARGET: Final = "DisruptionTarget"
KUBELET_CONDITIONS: Final = (
    POD_READY_TO_START_CONTAINERS,
    POD_INITIALIZED,
    POD_READY,
    CONTAINERS_READY,
    POD_SCHEDULED,
)
"""``PodConditionsByKubelet``, in the order ``generateAPIPodStatus`` appends them."""
REASON_POD_COMPLETED: Final = "PodCompleted"
REASON_TERMINATION_BY_KUBELET: Final = "TerminationByKubelet"


@functools.lru_cache(maxsize=64)
def _condition(type_: str, status: bool, reason: str | None = None) -> PodCondition:
    """A kubelet-owned condition: type, status and reason only. Models are immutable, so
    every pod shares the few there are."""
    return PodCondition(type=type_, status="True" if status else "False", reason=reason)


@functools.lru_cache(maxsize=1024)
def _kubelet_condition(type_: str, status: str, reason: str | None, stamp: str) -> PodCondition:
    """A kubelet-owned condition with its transition time: pods started in the same
    second share one object."""
    return PodCondition(type=type_, status=status, reason=reason, last_transition_time=stamp)


def _stamped(condition: PodCondition, stamp: str) -> PodCondition:
    """``condition`` with ``lastTransitionTime`` (built directly: this runs per pod start)."""
    if condition.last_transition_time == stamp:
        return condition
    return PodCondition(
        type=condition.type,
        status=condition.status,
        observed_generation=condition.observed_generation,
        last_probe_time=condition.last_probe_time,
        last_transition_time=stamp,
        reason=condition.reason,
        message=condition.message,
        extra=condition.extra,
    )


def merge_conditions(
    old: Sequence[PodCondition] | None,
    kubelet: Sequence[PodCondition],
    shared: Sequence[PodCondition] = (),
    *,
    now: str,
) -> tuple[PodCondition, ...]:
    """``mergePodStatus`` for conditions, stamping transition times as the status manager.

    ``kubelet`` holds conditions as ``_condition`` builds them (type, status, reason)."""
    previous = {c.type: c for c in old or ()}
    result: list[PodCondition] = [c for c in old or () if c.type not in KUBELET_CONDITIONS]
    for condition in shared:
        stamped = _stamped(condition, condition.last_transition_time or now)
        for index, existing in enumerate(result):
            if existing.type == condition.type:
                result[index] = stamped
                break
        else:
            result.append(stamped)
    for condition in kubelet:
        before = previous.get(condition.type)
        if before is not None and before.status == condition.status and before.last_transition_time:
            stamp = before.last_transition_time
        else:
            stamp = now
        result.append(
            _kubelet_condition(
                condition.type or "", condition.status or "", condition.reason, stamp
            )
        )
    return tuple(result)


def _terminated(
    cid: object, exit_code: int, *, finished_at: str, started_at: object
) -> dict[str, object]:
    """A ``terminated`` state: reason ``Completed`` for exit code 0, ``Error`` otherwise."""
    return {
        "terminated": {
            "containerID": cid,
            "exitCode": exit_code,
            "finishedAt": finished_at,
            "reason": "Completed" if exit_code == EXIT_CODE_SUCCESS else "Error",
            "startedAt": started_at,
        }
    }


def _status(
    cid: str,
    name: str,
    image: str,
    state: dict[str, object],
    *,
    ready: bool,
    started: bool | None,
) -> ContainerStatus:
    """A container's status: its ID (``container_id``), image, empty ``lastState`` and
    ``state``; never restarted."""
    return ContainerStatus(
        name=name,
        ready=ready,
        restart_count=0,
        started=started,
        extra={
            "containerID": cid,
            "image": image,
            "imageID": image,
            "lastState": {},
            "state": state,
        },
    )


def _container_statuses(
    pod: Pod, *, started_at: str, finished_at: str | None, exit_code: int | None
) -> tuple[ContainerStatus, ...]:
    spec = pod.spec or PodSpec()
    statuses: list[ContainerStatus] = []
    for container in spec.containers or ():
        name = container.name or ""
        # One SHA-256 per container and status: the terminated state repeats the id.
        cid = container_id(pod.metadata.uid or "", name)
        if finished_at is None or exit_code is None:
            state: dict[str, object] = {"running": {"startedAt": started_at}}
            ready = True
        else:
            state = _terminated(cid, exit_code, finished_at=finished_at, started_at=started_at)
            ready = False
        statuses.append(
            _status(cid, name, container.image or "", state, ready=ready, started=ready)
        )
    return tuple(statuses)


def ephemeral_container_statuses(pod: Pod, *, now: str) -> tuple[ContainerStatus, ...] | None:
    """The ephemeral container statuses of a running pod: those already reported stay as
    they are, every ephemeral container without one starts ``now`` (``running`` with
    ``startedAt``), in the order of ``spec.ephemeralContainers``. Ephemeral containers are
    never restarted."""
    spec = pod.spec or PodSpec()
    old = (pod.status.ephemeral_container_statuses if pod.status else None) or ()
    if not spec.ephemeral_containers:
        return old or None
    known = {s.name: s for s in old}
    # Never ready, no ``started``: the prober manager sets those for regular and init
    # containers only.
    statuses = [
        known.get(c.name)
        or _status(
            container_id(pod.metadata.uid or "", c.name or ""),
            c.name or "",
            c.image or "",
            {"running": {"startedAt": now}},
            ready=False,
            started=None,
        )
        for c in spec.ephemeral_containers
    ]
    named = {c.name for c in spec.ephemeral_containers}
    # Statuses of names the spec no longer has (never, through the API) are kept.
    statuses.extend(s for s in old if s.name not in named)
    return tuple(statuses)


def _killed_ephemeral_statuses(pod: Pod, *, now: str) -> tuple[ContainerStatus, ...] | None:
    """When the pod stops, its still-running ephemeral containers are killed: a debugging
    shell is PID 1 of its container and ignores SIGTERM, so they end with SIGKILL
    (exit code 137, reason ``Error``). One that never started stays unreported."""
    statuses = pod.status.ephemeral_container_statuses if pod.status else None
    if not statuses:
        return statuses
    ended: list[ContainerStatus] = []
    for entry in statuses:
        state = entry.extra.get("state")
        running = state.get("running") if isinstance(state, dict) else None
        if not isinstance(running, dict):
            ended.append(entry)
            continue
        terminated = _terminated(
            entry.extra.get("containerID"),
            EXIT_CODE_SIGKILL,
            finished_at=now,
            started_at=running.get("startedAt"),
        )
        ended.append(evolve(entry, extra={**entry.extra, "state": terminated}))
    return tuple(ended)


def _addresses(status: PodStatus, *, host_ip: str | None, pod_ip: str | None) -> PodStatus:
    extra = dict(status.extra)
    if host_ip:
        extra["hostIPs"] = [{"ip": host_ip}]
    if pod_ip:
        extra["podIPs"] = [{"ip": pod_ip}]
    return evolve(status, host_ip=host_ip, pod_ip=pod_ip, extra=extra)


def running_status(
    pod: Pod, *, now: str, start_time: str, host_ip: str | None, pod_ip: str | None
) -> PodStatus:
    """The status of a started pod: Running, every container ready."""
    old = pod.status or PodStatus()
    kubelet = [
        _condition(POD_READY_TO_START_CONTAINERS, True),
        _condition(POD_INITIALIZED, True),
        _condition(POD_READY, True),
        _condition(CONTAINERS_READY, True),
        _condition(POD_SCHEDULED, True),
    ]
    status = evolve(
        old,
        phase=PHASE_RUNNING,
        conditions=merge_conditions(old.conditions, kubelet, now=now),
        reason=None,
        message=None,
        start_time=old.start_time or start_time,
        container_statuses=_container_statuses(
            pod, started_at=start_time, finished_at=None, exit_code=None
        ),
        qos_class=old.qos_class or qos_class(pod.spec or PodSpec()),
        ephemeral_container_statuses=ephemeral_container_statuses(pod, now=now),
    )
    return _addresses(status, host_ip=host_ip, pod_ip=pod_ip)


def terminal_status(
    pod: Pod,
    *,
    now: str,
    start_time: str,
    exit_code: int,
    reason: str | None = None,
    message: str | None = None,
    disruption: PodCondition | None = None,
) -> PodStatus:
    """The status once every container exited: Succeeded if all exited 0, else Failed."""
    old = pod.status or PodStatus()
    kubelet = [
        _condition(POD_READY_TO_START_CONTAINERS, False),
        _condition(POD_INITIALIZED, True, REASON_POD_COMPLETED),
        _condition(POD_READY, False, REASON_POD_COMPLETED),
        _condition(CONTAINERS_READY, False, REASON_POD_COMPLETED),
        _condition(POD_SCHEDULED, True),
    ]
    shared = [disruption] if disruption is not None else []
    return evolve(
        old,
        phase=PHASE_SUCCEEDED if exit_code == EXIT_CODE_SUCCESS else PHASE_FAILED,
        conditions=merge_conditions(old.conditions, kubelet, shared, now=now),
        reason=reason if reason is not None else old.reason,
        message=message if message is not None else old.message,
        start_time=old.start_time or start_time,
        container_statuses=_container_statuses(
            pod, started_at=start_time, finished_at=now, exit_code=exit_code
        ),
        ephemeral_container_statuses=_killed_ephemeral_statuses(pod, now=now),
    )


def evicted_status(pod: Pod, *, now: str, message: str, disruption: PodCondition) -> PodStatus:
    """The status the eviction manager writes as the kill starts: Failed, reason Evicted.

    ``killPodNow``'s status function sets phase, reason and message and adds the
    ``DisruptionTarget`` condition before the containers are stopped.
    """
    old = pod.status or PodStatus()
    return evolve(
        old,
        phase=PHASE_FAILED,
        reason="Evicted",
        message=message,
        conditions=merge_conditions(
            old.conditions,
            [c for c in old.conditions or () if c.type in KUBELET_CONDITIONS],
            [disruption],
            now=now,
        ),
    )


def rejected_status(pod: Pod, *, now: str, reason: str, message: str) -> PodStatus:
    """``rejectPod``: phase Failed, the admission reason, ``Pod was rejected: <message>``."""
    old = pod.status or PodStatus()
    return PodStatus(
        phase=PHASE_FAILED,
        reason=reason,
        message="Pod was rejected: " + message,
        conditions=merge_conditions(old.conditions, [], now=now) or None,
        start_time=old.start_time or now,
        qos_class=old.qos_class or qos_class(pod.spec or PodSpec()),
        nominated_node_name=old.nominated_node_name,
    )
