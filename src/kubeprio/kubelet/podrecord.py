"""What a kubelet knows about one pod it started: its ``Record`` and where it is (``State``).

The per-pod bookkeeping of ``kubelet.kubelet.Kubelet`` (upstream keeps it in the pod
workers' ``podSyncStatus`` and the status manager's cache, ``pkg/kubelet/pod_workers.go``):
the pod as last seen, its simulated run (``kubelet.runtime.Script``), the requests it
holds against allocatable, its IP, and the SIGTERM/SIGKILL times and exit once it is
stopping. The life cycle is drawn in ``kubelet.kubelet``'s docstring. Plain data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from kubeprio.api.core import Pod
from kubeprio.api.resources import ResourceAmounts
from kubeprio.kubelet import runtime


class State:
    """Where a pod is in its life on this node (see ``kubelet.kubelet``'s docstring)."""

    RUNNING: Final = "Running"
    TERMINATING: Final = "Terminating"
    TERMINATED: Final = "Terminated"


@dataclass(slots=True)
class Record:
    """What the kubelet knows about one pod it started."""

    pod: Pod
    state: str
    script: runtime.Script
    requests: ResourceAmounts
    started_at: float
    start_time: str
    finishes_at: float | None
    pod_ip: str | None
    counted: bool = True
    """Counts against allocatable for admission (admitted, API-visible, not terminal)."""
    evicted: bool = False
    gone: bool = False
    """Removed from the API while its containers still run."""
    sigterm_at: float | None = None
    kill_at: float | None = None
    exit: runtime.Exit | None = None
    evicted_message: str | None = None
    ephemeral_started: set[str] = field(default_factory=set)
    """Ephemeral containers reported started (their status write may still wait)."""

    @property
    def uid(self) -> str:
        """The pod's UID."""
        return self.pod.metadata.uid or ""

    def wake_at(self) -> float | None:
        """When this pod next needs the kubelet: its exit, or its run ending."""
        if self.exit is not None:
            return self.exit.at
        return self.finishes_at
