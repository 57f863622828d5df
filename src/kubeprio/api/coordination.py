"""coordination.k8s.io/v1 Lease: a named, renewable claim (node heartbeats, leader election).

Mirrors ``k8s.io/api/coordination/v1/types.go``. Every kubelet keeps one Lease named after
its Node in the ``kube-node-lease`` namespace and renews it every few seconds; ``kubectl
describe node`` prints its holder and renew time. Times are ``metav1.MicroTime`` strings
(``...T03:04:05.123456Z``). Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init

NODE_LEASE_NAMESPACE: Final = "kube-node-lease"
"""Where kubelets keep their Leases (``corev1.NamespaceNodeLease``)."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseSpec:
    """Who holds the lease, for how long, and when it was acquired and last renewed."""

    holder_identity: str | None = None
    lease_duration_seconds: Int32 | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: Int32 | None = None
    strategy: str | None = None
    preferred_holder: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Lease:
    """A Lease object."""

    api_version: str | None = "coordination.k8s.io/v1"
    kind: str | None = "Lease"
    metadata: ObjectMeta = ObjectMeta()
    spec: LeaseSpec | None = None
    extra: JsonDict = extra_field()
