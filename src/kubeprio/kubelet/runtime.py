"""The fake container runtime: what a simulated pod does once the kubelet starts it.

A pod's behaviour is scripted by its annotations (``api.annotations``):

* ``kubeprio.io/duration``: the containers exit 0 that long after the start (the pod
  then ``Succeeded``); without it they run until killed;
* ``kubeprio.io/termination-seconds``: after SIGTERM the containers take that long to
  exit (code 143, 128 + SIGTERM); without it they ignore SIGTERM and are killed (code
  137, 128 + SIGKILL) when the grace period runs out;
* ``kubeprio.io/usage``: the memory working set and ephemeral storage they use while
  running (``eviction.PodStats``, read by ``api.podusage``, which the API server's
  resource metrics read too); without it they use nothing.

Shutdown timing mirrors ``pkg/kubelet/kuberuntime/kuberuntime_container.go``
``killContainer``: SIGTERM, then SIGKILL after the grace period, where the grace period
is never shorter than ``minimumGracePeriodInSeconds`` (2 s) "to avoid unnecessary
SIGKILLs" (so a hard eviction's 1 s override gives the containers 2 s). A pod whose
``duration`` ends during its shutdown exits then, successfully.

Pure: no clock, no I/O. ``kubelet.Kubelet`` asks it when things happen.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final

from kubeprio.api import annotations as script_annotations
from kubeprio.api import podusage
from kubeprio.api.core import Pod
from kubeprio.kubelet.eviction import ContainerStats, PodStats

MINIMUM_GRACE_PERIOD_SECONDS: Final = 2
EXIT_CODE_SUCCESS: Final = 0
EXIT_CODE_SIGTERM: Final = 143
EXIT_CODE_SIGKILL: Final = 137


@dataclass(frozen=True, slots=True)
class Script:
    """What a pod's annotations say it does; ``errors`` lists annotations that did not parse."""

    duration: float | None = None
    termination_seconds: float | None = None
    stats: PodStats = PodStats()
    errors: tuple[str, ...] = ()


def read_script(pod: Pod) -> Script:
    """Parse the ``kubeprio.io/*`` annotations of ``pod``; bad values are reported, not fatal."""
    meta = pod.metadata
    problems: list[str] = []
    duration: float | None = None
    termination: float | None = None
    text = meta.annotation(script_annotations.DURATION)
    if text is not None:
        try:
            duration = max(script_annotations.parse_duration(text.strip()), 0.0)
        except script_annotations.AnnotationError as exc:
            problems.append(f"{script_annotations.DURATION}: {exc}")
    text = meta.annotation(script_annotations.TERMINATION_SECONDS)
    if text is not None:
        try:
            termination = max(script_annotations.parse_seconds(text), 0.0)
        except script_annotations.AnnotationError as exc:
            problems.append(f"{script_annotations.TERMINATION_SECONDS}: {exc}")
    try:
        usage = podusage.declared_usage(pod)
    except script_annotations.AnnotationError as exc:
        problems.append(str(exc))
        usage = tuple(podusage.ContainerUsage(name) for name in podusage.container_names(pod))
    # CPU usage is for the resource metrics only: the kubelet has no CPU eviction signal.
    stats = PodStats(
        tuple(ContainerStats(c.name, c.memory_bytes, c.ephemeral_storage_bytes) for c in usage)
    )
    return Script(duration, termination, stats, tuple(problems))


def kill_window(grace_period_seconds: float) -> float:
    """Seconds from SIGTERM to SIGKILL (``killContainer``: at least 2 s)."""
    return max(grace_period_seconds, MINIMUM_GRACE_PERIOD_SECONDS)


@dataclass(frozen=True, slots=True)
class Exit:
    """When the containers exit, and with which code."""

    at: float
    exit_code: int


def exit_after_sigterm(
    script: Script, *, sigterm_at: float, kill_at: float, finishes_at: float | None
) -> Exit:
    """The earliest of: the run ending by itself, exiting on SIGTERM, SIGKILL at ``kill_at``.

    ``sigterm_at`` is the first SIGTERM (``termination-seconds`` counts from it);
    ``kill_at`` the SIGKILL deadline, which a later, shorter grace period may advance.
    """
    exit_ = Exit(kill_at, EXIT_CODE_SIGKILL)
    if script.termination_seconds is not None:
        voluntary = sigterm_at + script.termination_seconds
        if voluntary < exit_.at:
            exit_ = Exit(voluntary, EXIT_CODE_SIGTERM)
    if finishes_at is not None and finishes_at <= exit_.at:
        exit_ = Exit(max(finishes_at, sigterm_at), EXIT_CODE_SUCCESS)
    return exit_


def container_id(pod_uid: str, container: str) -> str:
    """A stable ``containerd://<64 hex>`` id for a container of a pod (no randomness)."""
    digest = hashlib.sha256(f"{pod_uid}/{container}".encode()).hexdigest()
    return f"containerd://{digest}"
