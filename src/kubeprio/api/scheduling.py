"""scheduling.k8s.io/v1 PriorityClass and the priority constants of upstream Kubernetes.

Mirrors ``pkg/apis/scheduling/types.go`` and ``pkg/apis/scheduling/v1/helpers.go``:
the two built-in system classes, the user ceiling of 1e9 and the zero default.
Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init

DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS: Final = 0
HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY: Final = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX: Final = "system-"
SYSTEM_CLUSTER_CRITICAL: Final = "system-cluster-critical"
SYSTEM_NODE_CRITICAL: Final = "system-node-critical"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityClass:
    """A PriorityClass: a cluster-wide name for an integer pod priority."""

    api_version: str | None = "scheduling.k8s.io/v1"
    kind: str | None = "PriorityClass"
    metadata: ObjectMeta = ObjectMeta()
    value: Int32 | None = None
    global_default: bool | None = None
    description: str | None = None
    preemption_policy: str | None = None
    extra: JsonDict = extra_field()


SYSTEM_PRIORITY_CLASSES: Final = (
    PriorityClass(
        metadata=ObjectMeta(name=SYSTEM_NODE_CRITICAL),
        value=SYSTEM_CRITICAL_PRIORITY + 1000,
        global_default=False,
        description="Used for system critical pods that must not be moved from their current node.",
        preemption_policy="PreemptLowerPriority",
    ),
    PriorityClass(
        metadata=ObjectMeta(name=SYSTEM_CLUSTER_CRITICAL),
        value=SYSTEM_CRITICAL_PRIORITY,
        global_default=False,
        description="Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
        preemption_policy="PreemptLowerPriority",
    ),
)
"""The classes the API server bootstraps (``SystemPriorityClasses()`` upstream)."""


def system_priority_class(name: str) -> PriorityClass | None:
    """Return the built-in system class called ``name``, if there is one."""
    for pc in SYSTEM_PRIORITY_CLASSES:
        if pc.metadata.name == name:
            return pc
    return None
