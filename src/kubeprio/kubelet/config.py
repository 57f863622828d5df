"""A simulated kubelet's configuration: ``KubeletConfig`` and the default node capacity.

kubeprio's reduction of upstream's ``KubeletConfiguration``
(``pkg/kubelet/apis/config/types.go``) and its flags: the eviction thresholds
(``kubelet.evictionmanager.EvictionConfig``), whether it registers its Node
(``--register-node``) and with what capacity, the node's own memory and disk usage, and
whether it records container events. Read by ``kubelet.kubelet.Kubelet`` and the
composition roots (``serve``, ``sim``). Plain data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from kubeprio.kubelet.evictionmanager import EvictionConfig

DEFAULT_CAPACITY: Final[Mapping[str, str]] = {
    "cpu": "4",
    "memory": "8Gi",
    "ephemeral-storage": "100Gi",
    "pods": "110",
}


@dataclass(frozen=True, slots=True)
class KubeletConfig:
    """How a simulated kubelet behaves."""

    eviction: EvictionConfig = field(default_factory=EvictionConfig)
    register_node: bool = True
    """Create the Node object on ``start()`` if it does not exist."""
    capacity: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    """Capacity of a node this kubelet registers (ignored for an existing Node)."""
    system_memory_usage: int = 0
    """Bytes of memory the node uses outside pods (lowers ``memory.available``)."""
    system_disk_usage: int = 0
    """Bytes of the node filesystem used outside pods (images, logs)."""
    container_events: bool = False
    """Record ``Pulled``/``Created``/``Started``/``Killing`` events (costly at scale)."""
