"""The TTL controller: the ``node.alpha.kubernetes.io/ttl`` annotation on every Node.

Mirrors ``pkg/controller/ttl/ttl_controller.go``: the kubelet may cache the Secrets and
ConfigMaps its pods use for this many seconds, chosen by cluster size. Nodes are counted
as they come and go; the count moves a step through ``TTL_BOUNDARIES`` (0 s up to 100
nodes, 15 s up to 500, 30 s up to 1,000, 60 s up to 2,000, then 300 s; the steps
overlap so a cluster at a boundary does not flap). A Node added or updated whose
annotation is not the current TTL gets it by a strategic merge PATCH of that annotation
alone (``patchNodeWithAnnotation``), which never conflicts with the kubelet's own Node
writes (``client.nodestatuspatch``). So ``kubectl
describe node`` lists ``node.alpha.kubernetes.io/ttl: 0`` as on a real small cluster.

One deviation: when the step changes, every Node is queued at once (upstream waits for
each Node's next update, which a real kubelet's status updates bring soon).

Event-driven, one informer lookup per sync. ``sim.controlplane`` wires it, for both
drivers (kube-controller-manager runs it by default). Must not import ``apiserver``,
``store``, ``admission``.
"""

from __future__ import annotations

import random
from typing import Final, NamedTuple

from kubeprio.api.core import Node
from kubeprio.api.meta import ApiObject
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client, PatchType
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller

TTL_ANNOTATION: Final = "node.alpha.kubernetes.io/ttl"
"""``v1.ObjectTTLAnnotationKey``."""


class TtlBoundary(NamedTuple):
    """Cluster sizes from ``size_min`` to ``size_max`` nodes get ``ttl_seconds``."""

    size_min: int
    size_max: int
    ttl_seconds: int


TTL_BOUNDARIES: Final = (
    TtlBoundary(0, 100, 0),
    TtlBoundary(90, 500, 15),
    TtlBoundary(450, 1000, 30),
    TtlBoundary(900, 2000, 60),
    TtlBoundary(1800, 2**31 - 1, 300),
)
"""``ttlBoundaries``."""


class TtlController(Controller):
    """``Controller`` of ``ttl_controller.go``: keeps each Node's TTL annotation current."""

    name = "ttl-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        nodes: Informer[Node],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.nodes = nodes
        self.node_count = 0
        self.step = 0
        nodes.add_handler(
            FuncHandler(
                on_add=self._node_added,
                on_update=lambda _old, node: self._enqueue(node),
                on_delete=self._node_deleted,
            )
        )

    @property
    def desired_ttl_seconds(self) -> int:
        return TTL_BOUNDARIES[self.step].ttl_seconds

    def _enqueue(self, node: Node) -> None:
        self.queue.add(node.metadata.name or "")

    def _node_added(self, node: Node) -> None:
        """``addNode``: count it; past the step's maximum, the next step."""
        self.node_count += 1
        if self.node_count > TTL_BOUNDARIES[self.step].size_max:
            self.step += 1
            self._enqueue_all()
        self._enqueue(node)

    def _node_deleted(self, _node: Node) -> None:
        """``deleteNode``: below the step's minimum, the step before."""
        self.node_count -= 1
        if self.node_count < TTL_BOUNDARIES[self.step].size_min:
            self.step -= 1
            self._enqueue_all()

    def _enqueue_all(self) -> None:
        for node in self.nodes.list():
            self._enqueue(node)

    def event_target(self, key: str) -> ApiObject | None:
        """The Node."""
        return self.nodes.get(key)

    def reconcile(self, key: str) -> None:
        """``updateNodeIfNeeded``: write the desired TTL if the annotation differs."""
        node = self.nodes.get(key)
        if node is None:
            return
        desired = str(self.desired_ttl_seconds)
        if node.metadata.annotation(TTL_ANNOTATION) == desired:
            return
        # patchNodeWithAnnotation: a strategic merge patch of the annotation alone (what
        # upstream's two-way diff of the Node before and after yields), without a
        # resourceVersion, so it never conflicts with the kubelet's status writes.
        patch = {"metadata": {"annotations": {TTL_ANNOTATION: desired}}}
        self.client.patch(Node, key, patch, patch_type=PatchType.STRATEGIC_MERGE_PATCH)
