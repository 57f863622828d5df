"""Node leases: every kubelet's heartbeat, a Lease per Node renewed every 10 seconds.

Mirrors the lease controller each kubelet runs (``k8s.io/component-helpers/apimachinery/
lease``, started by ``pkg/kubelet``) with upstream's defaults:

* the Lease is ``kube-node-lease/<node name>``, ``holderIdentity`` the node's name,
  ``leaseDurationSeconds`` 40 (``--node-lease-duration-seconds``), and it is owned by its
  Node (an ownerReference with the Node's uid, ``setNodeOwnerFunc``), so deleting the Node
  lets the garbage collector delete the Lease;
* it is renewed every quarter of the duration (10 s) with ``wait.JitterUntil``'s factor of
  0.04 (each wait is 10 to 10.4 s); a renewal sets ``renewTime`` only (no ``acquireTime``, no
  ``leaseTransitions``, as upstream's kubelet);
* a renewal updates the Lease it last wrote without reading it first; on a conflict it
  reads the Lease again and retries (at most five times), and when the Lease is gone it
  creates it again (``ensureLease``).

One component keeps the leases of every Node the node informer knows: the first sync runs
when the Node appears. Real kubelets start at different moments, while ``kubeprio serve``
registers all its nodes at once; so the second renewal of each node lands at a seeded
random point of its first interval, which spreads the renewals evenly instead of writing
every Lease in the same instant every 10 s. Each renewal then falls due on the next
quarter-second tick (a wait of 10 to 10.65 s instead of 10.4 s at most, far inside the
40 s duration): a thousand nodes renew in four groups a second, not in a hundred
separate wake-ups of the serve loop, each of which costs more than the write itself.

``kubeprio serve`` keeps every node's Lease (``kubectl describe node`` prints it). A
simulation keeps only the Leases of nodes whose kubelet can fail (``keeps_lease``: the
``kubeprio.io/fail-at`` annotation, ``kubelet.outage``), which the node lifecycle
controller watches; the others would add 1.8 million writes per virtual hour on 5,000
nodes and change nothing. A failed kubelet (``outages``) renews nothing until it is back.

A renewal (or creation) that waits on an admission webhook (``kubeprio serve``) does not
hold the loop: it is sent again once answered (``client.answeredretry``: the API service
replays it, one webhook call per review), and the renewals of that node due meanwhile
are skipped, as upstream's lease controller, whose goroutine waits in its call, renews
nothing else meanwhile. Driven like the other components
(``run_once``/``next_wakeup``, through ``sim.drive.Due``); time comes from the injected
clock.
"""

from __future__ import annotations

import functools
import heapq
import logging
import math
import random
from collections.abc import Callable
from typing import Final

from kubeprio.api import errors
from kubeprio.api.coordination import NODE_LEASE_NAMESPACE, Lease, LeaseSpec
from kubeprio.api.core import Node
from kubeprio.api.meta import ObjectMeta, OwnerReference
from kubeprio.api.model import evolve
from kubeprio.client.answeredretry import AnsweredRetry
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, rfc3339_micro
from kubeprio.kubelet.outage import NodeOutages

LOG: Final = logging.getLogger("kubeprio.kubelet")
DEFAULT_LEASE_DURATION_SECONDS: Final = 40
"""The kubelet's ``--node-lease-duration-seconds`` default."""
RENEW_FRACTION: Final = 0.25
"""``renewIntervalFraction``: renew after a quarter of the duration."""
JITTER_FACTOR: Final = 0.04
"""``JitterUntil``'s factor: each wait is up to 4 % longer."""
MAX_UPDATE_RETRIES: Final = 5
"""``maxUpdateRetries`` of upstream's lease controller."""
TICK_SECONDS: Final = 0.25
"""Renewals fall due on this grid, so one wake-up of the serve loop renews many leases."""


def node_owner(node: Node) -> OwnerReference:
    """``setNodeOwnerFunc``'s reference: the Node by name and uid (not a controller)."""
    return OwnerReference(
        api_version="v1", kind="Node", name=node.metadata.name or "", uid=node.metadata.uid
    )


def node_lease(node: Node, *, duration_seconds: int, now: float) -> Lease:
    """The Lease a kubelet creates for ``node`` (``newLease`` plus ``setNodeOwnerFunc``)."""
    name = node.metadata.name or ""
    return Lease(
        metadata=ObjectMeta(
            name=name, namespace=NODE_LEASE_NAMESPACE, owner_references=(node_owner(node),)
        ),
        spec=LeaseSpec(
            holder_identity=name,
            lease_duration_seconds=duration_seconds,
            renew_time=rfc3339_micro(now),
        ),
    )


def renewed(lease: Lease, now: float) -> Lease:
    """``lease`` with ``renewTime`` set to ``now``."""
    return evolve(lease, spec=evolve(lease.spec or LeaseSpec(), renew_time=rfc3339_micro(now)))


def _on_tick(when: float) -> float:
    """The first tick at or after ``when``."""
    return math.ceil(when / TICK_SECONDS) * TICK_SECONDS


class NodeLeases:
    """Creates and renews the Lease of every Node the informer knows."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        nodes: Informer[Node],
        outages: NodeOutages | None = None,
        keeps_lease: Callable[[Node], bool] | None = None,
    ) -> None:
        self._outages = outages
        self._keeps_lease = keeps_lease
        self._stopped: set[str] = set()
        """Nodes whose renewals stopped (kubelet down, or no lease kept): a node update may
        start them again."""
        self._client = client
        self._clock = clock
        self._rng = rng
        self.renew_interval = DEFAULT_LEASE_DURATION_SECONDS * RENEW_FRACTION
        self._nodes = nodes
        self._latest: dict[str, Lease] = {}
        """Node name -> the Lease this component last wrote (updated without a read)."""
        self._due: list[tuple[float, str, str, bool]] = []
        """(when, node name, node uid, first sync of that Node): a timer per running kubelet."""
        self.failures = 0
        self.api_writes = AnsweredRetry("kubelet lease controller")
        """Renewals waiting on webhook answers, by node name and uid."""
        nodes.add_handler(
            FuncHandler(
                on_add=self._node_started,
                on_update=self._node_updated,
                on_delete=self._node_gone,
            )
        )

    def _node_started(self, node: Node) -> None:
        """A new Node (or one deleted and created again): its kubelet starts now."""
        name = node.metadata.name or ""
        self._latest.pop(name, None)
        heapq.heappush(self._due, (self._clock.now(), name, node.metadata.uid or "", True))

    def _node_updated(self, old: Node, new: Node) -> None:
        name = new.metadata.name or ""
        if old.metadata.uid != new.metadata.uid:
            self._node_started(new)
        elif name in self._stopped and self._runs(new):
            # The kubelet is back (or now keeps a lease): renew at once.
            self._stopped.discard(name)
            heapq.heappush(self._due, (self._clock.now(), name, new.metadata.uid or "", False))

    def _runs(self, node: Node) -> bool:
        """Whether this node's kubelet renews a Lease now."""
        if self._keeps_lease is not None and not self._keeps_lease(node):
            return False
        return self._outages is None or not self._outages.failed(node.metadata.name or "")

    def _node_gone(self, node: Node) -> None:
        self._latest.pop(node.metadata.name or "", None)
        self._stopped.discard(node.metadata.name or "")

    def run_once(self) -> bool:
        """Sync every lease that is due; False if none was."""
        now = self._clock.now()
        due = False
        while self._due and self._due[0][0] <= now:
            _, name, uid, first = heapq.heappop(self._due)
            node = self._nodes.get(name)
            if node is None or (node.metadata.uid or "") != uid:
                continue  # that Node is gone (its kubelet stopped), perhaps replaced
            if not self._runs(node):
                self._stopped.add(name)
                continue
            due = True
            self.api_writes.run((name, uid), functools.partial(self._sync, node, now))
            wait = self.renew_interval * (
                self._rng.random() if first else 1.0 + JITTER_FACTOR * self._rng.random()
            )
            heapq.heappush(self._due, (_on_tick(now + wait), name, uid, False))
        return due

    def next_wakeup(self) -> float | None:
        """When the next lease is due."""
        return self._due[0][0] if self._due else None

    # --- one sync (upstream's controller.sync and retryUpdateLease) --------------------------

    def _sync(self, node: Node, now: float) -> None:
        """Renew from the Lease last written; read (or create) it when there is none."""
        name = node.metadata.name or ""
        base = self._latest.pop(name, None)
        try:
            for attempt in range(MAX_UPDATE_RETRIES):
                if base is None:
                    base, created = self._ensure(node, now)
                    if created:
                        self._latest[name] = base
                        return
                try:
                    lease = self._with_owner(node, renewed(base, now))
                    self._latest[name] = self._client.update(lease)
                    return
                except (errors.ConflictError, errors.NotFoundError):
                    if attempt == MAX_UPDATE_RETRIES - 1:
                        raise
                    # Someone else wrote it (read it again), or it is gone (create it again).
                    base = None
        except errors.StatusError as exc:
            # Upstream logs and tries again at the next interval.
            self.failures += 1
            LOG.warning("failed to renew the lease of node %s: %s", name, exc)

    def _ensure(self, node: Node, now: float) -> tuple[Lease, bool]:
        """``ensureLease``: the stored Lease, or a new one; True when it was created."""
        name = node.metadata.name or ""
        try:
            return self._client.get(Lease, name, NODE_LEASE_NAMESPACE), False
        except errors.NotFoundError:
            pass
        lease = node_lease(node, duration_seconds=DEFAULT_LEASE_DURATION_SECONDS, now=now)
        return self._client.create(lease), True

    @staticmethod
    def _with_owner(node: Node, lease: Lease) -> Lease:
        """``setNodeOwnerFunc``: a Lease without owners gets its Node as owner."""
        if lease.metadata.owner_references:
            return lease
        return evolve(lease, metadata=evolve(lease.metadata, owner_references=(node_owner(node),)))
